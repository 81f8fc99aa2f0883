"""Building blocks for scripted oracle solvers.

Oracles are generators: `solve(first_obs)` yields actions and receives the next observation
(`obs = yield action`). They use only what an agent sees: observations, the task text and
action messages. `yield from step(...)` runs one action and returns the next observation.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from typing import Any, TypeVar

Obs = dict[str, Any]
Action = dict[str, Any]
Steps = Generator[Action, Obs, Obs]
T = TypeVar("T")


class OracleFailure(RuntimeError):
    """The solver met a situation it cannot handle (a bug in the oracle or the task)."""


def act(action: str, arg1: Any = None, arg2: Any = None) -> Action:
    packet: Action = {"action": action}
    if arg1 is not None:
        packet["arg1"] = arg1
    if arg2 is not None:
        packet["arg2"] = arg2
    return packet


def step(action: Action) -> Steps:
    obs = yield action
    return obs


def task_text(obs: Obs) -> str:
    return str(obs["taskProgress"][0]["description"])


def quoted(text: str) -> list[str]:
    """Names the task text puts in backticks, e.g. "pick up the `flag`"."""
    return re.findall(r"`([^`]+)`", text)


def nearby_entries(obs: Obs) -> Iterator[tuple[str, dict[str, Any]]]:
    for group, entries in obs["nearbyObjects"]["objects"].items():
        for entry in entries:
            yield group, entry


def find_nearby(obs: Obs, name: str) -> dict[str, Any] | None:
    """The closest nearby object with exactly this name (ties: scan order)."""
    matches = [e for _, e in nearby_entries(obs) if e["name"] == name]
    return min(matches, key=lambda e: e["distance"]) if matches else None


def find_accessible(obs: Obs, name: str) -> dict[str, Any] | None:
    for entry in obs["accessibleEnvironmentObjects"]:
        if entry["name"] == name:
            return entry
    return None


def find_inventory(obs: Obs, name: str) -> dict[str, Any] | None:
    for entry in obs["inventoryObjects"]:
        if entry["name"] == name:
            return entry
    return None


def require(entry: dict[str, Any] | None, what: str) -> dict[str, Any]:
    if entry is None:
        raise OracleFailure(f"oracle could not find {what}")
    return entry


def must_succeed(obs: Obs, action: Action) -> None:
    """Oracles act only when they know the action is valid; a failure is a bug to surface."""
    msg = obs["lastActionMessage"]
    if msg.startswith(("I can't", "That ", "Unknown", "Missing", "arg", "Could not", "You can't", "No ")):
        raise OracleFailure(f"action {action} failed: {msg}")


def checked(action: Action) -> Steps:
    obs = yield action
    must_succeed(obs, action)
    return obs


def go_to_object(obs: Obs, name: str) -> Steps:
    """Teleport beside the nearest visible object called `name`, facing it."""
    entry = require(find_nearby(obs, name), f"a visible {name!r}")
    return (yield from checked(act("TELEPORT_TO_OBJECT", entry["uuid"])))


def take(obs: Obs, name: str) -> Steps:
    """Walk to a visible object and pick it up."""
    obs = yield from go_to_object(obs, name)
    entry = require(find_accessible(obs, name), f"an accessible {name!r}")
    return (yield from checked(act("PICKUP", entry["uuid"])))


def put_into(obs: Obs, item: str, container: str) -> Steps:
    """Carry an inventory item to a visible container and put it in."""
    item_entry = require(find_inventory(obs, item), f"{item!r} in the inventory")
    obs = yield from go_to_object(obs, container)
    target = require(find_accessible(obs, container), f"an accessible {container!r}")
    return (yield from checked(act("PUT", item_entry["uuid"], target["uuid"])))


def talk_choose(obs: Obs, npc_name: str, pick: Any) -> Steps:
    """TALK to an accessible NPC, then keep choosing options with `pick(options) -> int`
    until the dialog ends."""
    npc = require(find_accessible(obs, npc_name), f"{npc_name!r} within reach")
    obs = yield from checked(act("TALK", npc["uuid"]))
    while obs["dialog_box"].get("is_in_dialog"):
        options: dict[str, str] = obs["dialog_box"]["dialogOptions"]
        obs = yield {"chosen_dialog_option_int": pick(options)}
    return obs


def option_index(options: dict[str, str], text: str) -> int:
    for key, value in options.items():
        if value == text:
            return int(key)
    raise OracleFailure(f"dialog option {text!r} not offered: {options}")


# ---- characters, dialogs and getting around (appended for the dialog/NPC unit tasks) ----------
_PURE_OFFSETS = {"north": (0, -1), "south": (0, 1), "east": (1, 0), "west": (-1, 0)}


def nearby_agents(obs: Obs) -> dict[int, str]:
    """Other characters in the nearby window, uuid -> name (from `nearbyAgents`)."""
    found: dict[int, str] = {}
    for key in obs["nearbyAgents"]["list_of_agents"]:
        name, _, uid = key.rpartition(" uuid ")
        if uid.isdigit():
            found[int(uid)] = name
    return found


def is_accessible(obs: Obs, uuid: int) -> bool:
    return any(entry["uuid"] == uuid for entry in obs["accessibleEnvironmentObjects"])


def converse(obs: Obs, uuid: int, pick: Any) -> Steps:
    """TALK to the character `uuid` (which must be accessible), then answer with
    `pick(dialog_box) -> option number` until the dialog ends."""
    obs = yield from checked(act("TALK", uuid))
    while obs["dialog_box"].get("is_in_dialog"):
        obs = yield {"chosen_dialog_option_int": pick(obs["dialog_box"])}
    return obs


def entry_offset(group: str, distance: int) -> tuple[int, int] | None:
    """The exact (dx, dy) of a nearby entry when its group and distance determine it: pure
    directions always, corners only at distance 2 (diagonal neighbour) or 6 (far corner)."""
    if group == "same_location":
        return 0, 0
    if group in _PURE_OFFSETS:
        ux, uy = _PURE_OFFSETS[group]
        return ux * distance, uy * distance
    ns, _, ew = group.partition("-")
    if distance not in (2, 6):
        return None
    half = distance // 2
    return (half if ew == "east" else -half), (half if ns == "south" else -half)


def known_positions(obs: Obs) -> list[tuple[int, int, dict[str, Any]]]:
    """Absolute (x, y, entry) of every nearby entry whose tile is determined (see `entry_offset`)."""
    ax, ay = obs["agentLocation"]["x"], obs["agentLocation"]["y"]
    out = []
    for group, entry in nearby_entries(obs):
        offset = entry_offset(group, entry["distance"])
        if offset is not None:
            out.append((ax + offset[0], ay + offset[1], entry))
    return out


def hop_toward(obs: Obs, x: int, y: int) -> Action | None:
    """One action that brings the agent closer to (x, y): teleport beside the known-position
    object nearest the goal if that gains at least two tiles, else a free step. None when no
    move helps (arrived, or boxed in)."""
    loc = obs["agentLocation"]
    here = abs(loc["x"] - x) + abs(loc["y"] - y)
    if here == 0:
        return None
    best: tuple[int, int] | None = None
    for ox, oy, entry in known_positions(obs):
        if (ox, oy) == (loc["x"], loc["y"]):
            continue
        # Landing is on a tile beside the object, so count one tile less gained.
        gain = here - (abs(ox - x) + abs(oy - y) + 1)
        if gain >= 2 and (best is None or gain > best[0]):
            best = (gain, entry["uuid"])
    if best is not None:
        return act("TELEPORT_TO_OBJECT", best[1])
    for direction in loc["directions_you_can_move"]:
        dx, dy = _PURE_OFFSETS[direction]
        if abs(loc["x"] + dx - x) + abs(loc["y"] + dy - y) < here:
            return act("MOVE_DIRECTION", direction)
    return None


def step_to_room_centre(obs: Obs, floor: str = "floor") -> Action | None:
    """One action towards the middle of the visible floor (to see a whole room)."""
    tiles = [(x, y) for x, y, entry in known_positions(obs) if entry["name"] == floor]
    if not tiles:
        return None
    cx = round(sum(x for x, _ in tiles) / len(tiles))
    cy = round(sum(y for _, y in tiles) / len(tiles))
    return hop_toward(obs, cx, cy)


def need(value: T | None, what: str) -> T:
    """`require` for any value (regex matches, parsed numbers...)."""
    if value is None:
        raise OracleFailure(f"oracle could not find {what}")
    return value
