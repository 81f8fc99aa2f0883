"""Typed commands -> actions, for people: the browser's command line and terminal play.

`parse_command("use meter on prismatic beast", obs, seen)` names objects as a person does: by
UUID or by name/description, resolved against what the observation lists (inventory first,
then within reach, then nearby by distance, then nearby agents) and objects `seen` earlier.
Teleport names match case-insensitively (a unique prefix is enough). Anything it cannot turn
into a valid action raises ValueError with a hint, so a typo never costs a step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from discoverylab.world.action_specs import ACTION_SPECS

ONE_OBJECT = {
    "take": "PICKUP", "pickup": "PICKUP", "get": "PICKUP", "pick": "PICKUP", "drop": "DROP", "open": "OPEN",
    "close": "CLOSE", "activate": "ACTIVATE", "on": "ACTIVATE", "deactivate": "DEACTIVATE", "off": "DEACTIVATE",
    "talk": "TALK", "eat": "EAT", "read": "READ", "tpo": "TELEPORT_TO_OBJECT", "goto": "TELEPORT_TO_OBJECT",
}  # fmt: skip
DIRECTIONS = {"n": "north", "e": "east", "s": "south", "w": "west", "north": "north", "east": "east",
              "south": "south", "west": "west"}  # fmt: skip
TWO_OBJECTS = {"put": ("PUT", ("in", "into", "on", "to")), "give": ("PUT", ("to",)), "use": ("USE", ("on", "with"))}

HELP = """Commands: objects by name or UUID (as listed), e.g. 'take meter', 'use 12 on 34'
  n | e | s | w | move north      move one tile (and face that way);  rotate east  turn without moving
  forward | back | left | right   move forward / backward, turn counter-clockwise / clockwise
  take X / drop X                 pick up / drop an object
  put X in Y / give X to Y        put an item into a container, or give it to someone
  use X on Y                      use an object (e.g. an instrument) on another
  open X / close X / activate X / deactivate X / talk X / eat X / read X
  tp <location>                   teleport to a named location (any case; a unique prefix will do)
  goto X                          teleport beside an object you have seen
  feed | articles | post 3        DiscoveryFeed updates, articles, one post by its ID
  wait                            do nothing for a step
  1, 2, ...                       choose a dialog option (while in a dialog)
  {"action": ...}                 any raw JSON action
  help / quit"""

_SIMPLE = {"forward": "MOVE_FORWARD", "fwd": "MOVE_FORWARD", "back": "MOVE_BACKWARD", "backward": "MOVE_BACKWARD",
           "left": "ROTATE_CCW", "right": "ROTATE_CW", "wait": "WAIT", "feed": "DISCOVERY_FEED_GET_UPDATES",
           "updates": "DISCOVERY_FEED_GET_UPDATES", "articles": "DISCOVERY_FEED_GET_ARTICLES"}  # fmt: skip
_AGENT = re.compile(r"^(.*) uuid (\d+)$")


def candidates(obs: Mapping[str, Any] | None, seen: Mapping[int, str] | None = None) -> list[tuple[int, str, str]]:
    """(uuid, name, description) of every object a person may name now, in the order names
    resolve: inventory, within reach, nearby (closest first), nearby agents, seen earlier."""
    out: list[tuple[int, str, str]] = []
    if obs:
        for key in ("inventoryObjects", "accessibleEnvironmentObjects"):
            out += [(o["uuid"], o["name"], o.get("description", o["name"])) for o in obs.get(key) or []]
        near = [o for objs in ((obs.get("nearbyObjects") or {}).get("objects") or {}).values() for o in objs]
        out += [(o["uuid"], o["name"], o.get("description", o["name"])) for o in sorted(near, key=lambda o: o.get("distance", 0))]
        for label in ((obs.get("nearbyAgents") or {}).get("list_of_agents") or {}):
            found = _AGENT.match(str(label))
            if found:
                out.append((int(found[2]), found[1], found[1]))
    out += [(uuid, name, name) for uuid, name in (seen or {}).items()]
    return out


def resolve_object(text: str, obs: Mapping[str, Any] | None, seen: Mapping[int, str] | None = None) -> int:
    """A UUID, or the first object whose name or description is `text` (then: starts with it,
    then: contains it), case-insensitive."""
    text = text.strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    want = text.lower().removeprefix("the ").strip()
    if not want:
        raise ValueError("Say which object (a name or a UUID).")
    objs = candidates(obs, seen)
    for test in (lambda s: s == want, lambda s: s.startswith(want), lambda s: want in s):
        for uuid, name, description in objs:
            if test(name.lower()) or test(description.lower()):
                return uuid
    raise ValueError(f"No object called {text[:60]!r} is in view or was seen; use a listed name or a UUID.")


def resolve_location(text: str, obs: Mapping[str, Any] | None) -> str:
    """A teleport location, case-insensitive; a unique prefix is enough."""
    names = [str(n) for n in (obs or {}).get("teleportLocations") or []]
    if not names:
        return text.strip()
    want = text.strip().lower()
    exact = [n for n in names if n.lower() == want]
    prefix = [n for n in names if n.lower().startswith(want)]
    if exact or len(prefix) == 1:
        return (exact or prefix)[0]
    hint = "several match" if prefix else "no such place"
    raise ValueError(f"Teleport where? {hint} for {text[:60]!r}; places: {', '.join(names)}.")


def parse_command(text: str, obs: Mapping[str, Any] | None = None, seen: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Human command -> action dict. Raises ValueError with a hint on anything else."""
    text = text.strip()
    if not text:
        raise ValueError("Empty command; type 'help'.")
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"Bad JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("A raw action must be a JSON object.")
        return data
    if text.isdigit():
        return {"chosen_dialog_option_int": int(text)}
    verb, _, rest = text.partition(" ")
    verb, rest = verb.lower(), rest.strip()
    if verb in DIRECTIONS and not rest:
        return {"action": "MOVE_DIRECTION", "arg1": DIRECTIONS[verb]}
    if verb in _SIMPLE and not rest:
        return {"action": _SIMPLE[verb]}
    if verb in ("move", "go", "rotate", "turn", "face"):
        if rest.lower() not in DIRECTIONS:
            raise ValueError(f"Say which way: '{verb} north'.")
        return {"action": "MOVE_DIRECTION" if verb in ("move", "go") else "ROTATE_DIRECTION", "arg1": DIRECTIONS[rest.lower()]}
    if verb in ("tp", "teleport"):
        if not rest:
            raise ValueError("Say where: 'tp kitchen'.")
        if rest.lower().startswith("to "):
            rest = rest[3:]
        return {"action": "TELEPORT_TO_LOCATION", "arg1": resolve_location(rest, obs)}
    if verb in ("post", "article") or (verb == "read" and rest.lower().split(" ")[0] in ("post", "article")):
        number = rest.split(" ")[-1] if rest else ""
        if not number.isdigit():
            raise ValueError("Say which post: 'post 3'.")
        return {"action": "DISCOVERY_FEED_GET_POST_BY_ID", "arg1": int(number)}
    if verb in TWO_OBJECTS:
        name, joiners = TWO_OBJECTS[verb]
        parts = re.split(rf"\s+(?:{'|'.join(joiners)})\s+", rest, maxsplit=1, flags=re.IGNORECASE)
        if len(parts) != 2:
            raise ValueError(f"Say two objects: '{verb} X {joiners[0]} Y'.")
        return {"action": name, "arg1": resolve_object(parts[0], obs, seen), "arg2": resolve_object(parts[1], obs, seen)}
    if verb in ONE_OBJECT:
        if not rest:
            raise ValueError(f"Say which object: '{verb} X'.")
        return {"action": ONE_OBJECT[verb], "arg1": resolve_object(rest, obs, seen)}
    if verb.upper() in ACTION_SPECS:
        args = rest.split() if rest else []
        action: dict[str, Any] = {"action": verb.upper()}
        for key, value in zip(("arg1", "arg2"), args, strict=False):
            action[key] = int(value) if value.lstrip("-").isdigit() else value
        return action
    raise ValueError(f"Unknown command {verb[:40]!r}; type 'help' for the commands.")
