"""The action vocabulary: names, argument kinds and the descriptions shown to agents.

This table is the single source for parsing (actions.py), the observation's action list,
the CLI help and the docs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy_extensions import mypyc_attr

OBJECT: Final = "object"
DIRECTION: Final = "direction"
LOCATION: Final = "location"
POST_ID: Final = "post_id"


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(frozen=True, slots=True)
class ActionSpec:
    name: str
    args: tuple[str, ...]
    description: str
    advertised: bool = True
    teleport: bool = False


_SPECS = [
    ActionSpec("MOVE_DIRECTION", (DIRECTION,), "Move one tile in a direction (north, east, south or west) and face it."),
    ActionSpec("ROTATE_DIRECTION", (DIRECTION,), "Turn to face a direction without moving."),
    ActionSpec("PICKUP", (OBJECT,), "Pick up an object and put it in your inventory."),
    ActionSpec("DROP", (OBJECT,), "Drop an object from your inventory onto your tile."),
    ActionSpec("PUT", (OBJECT, OBJECT), "Put an object from your inventory into a container (arg2); giving to a character also uses PUT."),
    ActionSpec("OPEN", (OBJECT,), "Open a door or a container."),
    ActionSpec("CLOSE", (OBJECT,), "Close a door or a container."),
    ActionSpec("ACTIVATE", (OBJECT,), "Switch a device on."),
    ActionSpec("DEACTIVATE", (OBJECT,), "Switch a device off."),
    ActionSpec("TALK", (OBJECT,), "Start a conversation with a character; then answer with {\"chosen_dialog_option_int\": N}."),
    ActionSpec("EAT", (OBJECT,), "Eat an edible object."),
    ActionSpec("READ", (OBJECT,), "Read a sign, book or other readable object."),
    ActionSpec("USE", (OBJECT, OBJECT), "Use an object (arg1, e.g. an instrument) on another object (arg2)."),
    ActionSpec("WAIT", (), "Do nothing for one step."),
    ActionSpec("TELEPORT_TO_LOCATION", (LOCATION,), "Teleport to a named location (see teleportLocations).", teleport=True),
    ActionSpec("TELEPORT_TO_OBJECT", (OBJECT,), "Teleport beside an object you have observed (by its UUID), facing it.", teleport=True),
    ActionSpec("DISCOVERY_FEED_GET_UPDATES", (), "Read the latest update posts on the DiscoveryFeed."),
    ActionSpec("DISCOVERY_FEED_GET_ARTICLES", (), "Read the latest scientific articles on the DiscoveryFeed."),
    ActionSpec("DISCOVERY_FEED_GET_POST_BY_ID", (POST_ID,), "Read one DiscoveryFeed post or article by its integer ID."),
    ActionSpec("MOVE_FORWARD", (), "Move one tile in the direction you face.", advertised=False),
    ActionSpec("MOVE_BACKWARD", (), "Move one tile backwards, keeping your facing.", advertised=False),
    ActionSpec("ROTATE_CW", (), "Turn clockwise.", advertised=False),
    ActionSpec("ROTATE_CCW", (), "Turn counter-clockwise.", advertised=False),
]

ACTION_SPECS: Final[dict[str, ActionSpec]] = {spec.name: spec for spec in _SPECS}


def action_list(teleport: bool = True) -> list[dict[str, object]]:
    """The advertised actions as shown in observations: name, args and description."""
    return [
        {"name": s.name, "args": [f"arg{i + 1}: {kind}" for i, kind in enumerate(s.args)], "description": s.description}
        for s in _SPECS
        if s.advertised and (teleport or not s.teleport)
    ]


ACTION_FORMAT_HELP = (
    'Send one action per step as a JSON object: {"action": NAME, "arg1": ..., "arg2": ...}. '
    "Object arguments are integer UUIDs of objects in your inventory, on your tile or on the tile you face "
    "(see inventoryObjects and accessibleEnvironmentObjects). Directions are north, east, south or west. "
    'While in a dialog, answer with {"chosen_dialog_option_int": N} instead.'
)
