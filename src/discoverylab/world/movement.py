"""Moves, turns and teleports of an agent: the movement half of `ActionExecutor`
(`world/actions.py`), kept apart because the rules of where an agent may go (world edges,
blockers, the door zones that decide which side of a door a teleport lands on) are a topic of
their own, and the executor's module stays readable."""

from __future__ import annotations

from typing import Any, Final

from mypy_extensions import mypyc_attr

from discoverylab.world.action_input import MAX_ECHO_CHARS
from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.objects import ActionResult, WorldObject
from discoverylab.world.paths import walk_unheard
from discoverylab.world.unpickle import FastState
from discoverylab.world.world import World
from discoverylab.world.zones import tile_bit

_CLOCKWISE: Final = ["north", "east", "south", "west"]
_CW: Final = {d: _CLOCKWISE[(i + 1) % 4] for i, d in enumerate(_CLOCKWISE)}  # facing -> facing after a turn
_CCW: Final = {d: _CLOCKWISE[(i + 3) % 4] for i, d in enumerate(_CLOCKWISE)}
_OPPOSITE: Final = {d: _CLOCKWISE[(i + 2) % 4] for i, d in enumerate(_CLOCKWISE)}
_SIDES: Final = tuple((d, *DIRECTIONS[d]) for d in _CLOCKWISE)  # (facing, dx, dy): never the object's own tile
_ROTATED: Final = {d: f"I rotated to face {d}." for d in _CLOCKWISE}  # a turn's message (one per step: no f-string)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class MovementActions(FastState):
    """The `_do_move_*`, `_do_rotate_*` and `_do_teleport_*` handlers; `ActionExecutor` provides
    `agent`, `world` and `_done` (which records the action)."""

    agent: Agent
    world: World

    def _done(self, action: str, arg1: Any, arg2: Any, success: bool, message: str, important: bool = False) -> ActionResult:
        raise NotImplementedError  # ActionExecutor's

    def _move(self, direction: str, face: bool) -> ActionResult:
        agent, world = self.agent, self.world
        dx, dy = DIRECTIONS[direction]
        nx, ny = agent.x + dx, agent.y + dy
        size = world.size
        if not (0 <= nx < size and 0 <= ny < size):
            return self._done("MOVE_DIRECTION", direction, None, False, "That would take me beyond the edge of the world.")
        blocker = world.blocker_at(nx, ny)
        if blocker is not None:
            msg = f"I can't move there. There is something in the way ({blocker.name})."
            return self._done("MOVE_DIRECTION", direction, None, False, msg)
        walk_unheard(world, agent, nx, ny)  # characters planning paths: a light player's step changes no cost
        if face:
            agent.facing = direction
        return self._done("MOVE_DIRECTION", direction, None, True, f"I moved to ({nx}, {ny}).")

    def _do_move_direction(self, direction: str) -> ActionResult:
        return self._move(direction, face=True)

    def _do_move_forward(self) -> ActionResult:
        return self._move(self.agent.facing, face=True)

    def _do_move_backward(self) -> ActionResult:
        return self._move(_OPPOSITE[self.agent.facing], face=False)

    def _do_rotate_direction(self, direction: str) -> ActionResult:
        self.agent.facing = direction
        return self._done("ROTATE_DIRECTION", direction, None, True, _ROTATED[direction])

    def _do_rotate_cw(self) -> ActionResult:
        agent = self.agent
        agent.facing = direction = _CW[agent.facing]
        return self._done("ROTATE_DIRECTION", direction, None, True, _ROTATED[direction])

    def _do_rotate_ccw(self) -> ActionResult:
        agent = self.agent
        agent.facing = direction = _CCW[agent.facing]
        return self._done("ROTATE_DIRECTION", direction, None, True, _ROTATED[direction])

    def _do_teleport_to_location(self, name: str) -> ActionResult:
        if name not in self.world.teleports:
            known = sorted(self.world.teleports)
            shown = name if len(name) <= MAX_ECHO_CHARS else name[:MAX_ECHO_CHARS] + "..."
            if not shown.isprintable():  # control codes, lone surrogates: escaped, as every other echo is
                shown = repr(shown)[1:-1]
            msg = f"That's not a known teleport location ('{shown}'). I know about the following locations: {known}"
            return self._done("TELEPORT_TO_LOCATION", shown, None, False, msg)
        tx, ty = self.world.teleports[name]
        x, y = _nearest_passable(self.world, tx, ty)
        walk_unheard(self.world, self.agent, x, y)  # `place` for a character already on the grid
        return self._done("TELEPORT_TO_LOCATION", name, None, True, f"I teleported to {name} at {x}, {y}.")

    def _do_teleport_to_object(self, obj: WorldObject) -> ActionResult:
        ox, oy = obj.location()
        if ox < 0:
            return self._done("TELEPORT_TO_OBJECT", obj, None, False, f"The {obj.name} does not have a valid location.")
        # The tiles north, east, south and west of the object (the original's order), facing it:
        # the first on the agent's side of every closed door, else the first on its side of every
        # locked door (teleporting out of, or into, a locked room would skip finding its key).
        # (Loops, not comprehensions and generators: a random policy teleports every ~12 steps.)
        world = self.world
        free: list[tuple[str, int, int]] = []
        for side in _SIDES:
            x, y = ox + side[1], oy + side[2]
            if world.is_passable(x, y):
                free.append((side[0], x, y))
        agent = self.agent
        for locked_only in (False, True):
            if not free:
                break
            reach = world.door_reach(locked_only, agent.x, agent.y)  # the agent's zone, as a mask
            found = free[0] if reach is None else None
            if reach is not None:
                for candidate in free:
                    if reach & tile_bit(world.size, candidate[1], candidate[2]):
                        found = candidate
                        break
            if found is not None:
                facing, x, y = found
                walk_unheard(world, self.agent, x, y)
                self.agent.facing = _OPPOSITE[facing]
                msg = f"I teleported to the object with UUID {obj.uuid} ({obj.name}) at ({x}, {y})."
                return self._done("TELEPORT_TO_OBJECT", obj, None, True, msg)
        msg = f"I couldn't find a valid location beside the object ({obj.name}, uuid: {obj.uuid}) to teleport to."
        return self._done("TELEPORT_TO_OBJECT", obj, None, False, msg)


def _nearest_passable(world: Any, x: int, y: int) -> tuple[int, int]:
    """The passable tile closest to (x, y) in straight-line distance (ties: smallest (x, y)).
    Searches square rings outwards and stops once no further ring can hold a closer tile."""
    best: tuple[int, tuple[int, int]] | None = None
    for radius in range(2 * world.size):
        if best is not None and best[0] < radius * radius:
            break
        for dx in range(-radius, radius + 1):
            for dy in range(-radius, radius + 1):
                if max(abs(dx), abs(dy)) == radius and world.is_passable(x + dx, y + dy):
                    candidate = (dx * dx + dy * dy, (x + dx, y + dy))
                    if best is None or candidate < best:
                        best = candidate
    return best[1] if best is not None else (x, y)
