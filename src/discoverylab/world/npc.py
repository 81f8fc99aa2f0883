"""Non-player characters: dialog trees plus an autopilot queue of small goal-directed actions.

Path finding (`find_path`) lives in world/paths.py.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final

from mypy_extensions import mypyc_attr

from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.dialog import DialogTree
from discoverylab.world.paths import find_path, walk_if_free, walk_unheard
from discoverylab.world.streams import NpcDraws

if TYPE_CHECKING:
    from discoverylab.world.world import World

_DIR_BY_DELTA = {delta: name for name, delta in DIRECTIONS.items()}
_DIRECTION_NAMES = tuple(DIRECTIONS)
_RUNNERS: dict[tuple[type, str], Any] = {}  # (NPC class, task kind) -> its method "_run_" + kind
_NEVER = 1 << 62  # a wait that outlasts any episode (a wander that never steps)
_GIVE_UP: Final = 200  # ticks without a path a goto tries before it gives up (`_run_goto`, and `tick`'s direct call)
__all__ = ["NPC", "Task", "draw_quarter", "draw_unit", "draw_wait", "find_path"]


def draw_quarter(draws: NpcDraws) -> int:
    """`int(rng.integers(0, 4))` of the NPC stream, the same value from the same draw (a
    wandering animal's direction; ten wander every tick), read off the block of raw words
    `NpcDraws` draws ahead. tests/test_world_npc.py compares both ways, interleaved with other
    draws."""
    return draws.quarter()


def draw_unit(draws: NpcDraws) -> float:
    """`rng.random()` of the NPC stream, the same value from the same draw (`NpcDraws.unit`)."""
    return draws.unit()


def draw_wait(draws: NpcDraws, probability: float) -> int:
    """How many ticks in a row a wander draws "stay" before the tick that decides to step, with
    one draw instead of one per tick: the count of failures before the first success of coins
    that each succeed with `probability` is geometric, P(wait >= k) = (1 - probability)**k, which
    `floor(log(1 - u) / log(1 - probability))` gives from one uniform `u` (inverse transform)."""
    if probability >= 1.0:
        return 0
    if probability <= 0.0:
        return _NEVER
    return int(math.log(1.0 - draws.unit()) / math.log(1.0 - probability))


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class Task:
    """An autopilot entry; higher priority runs first, ties in insertion order (by `sort_key`;
    the order is written out as `order=True` would make it, without a tuple per comparison)."""

    sort_key: tuple[int, int]
    kind: str = field(compare=False)
    args: dict[str, Any] = field(compare=False, default_factory=dict)

    def __lt__(self, other: Task) -> bool:
        return self.sort_key < other.sort_key

    def __le__(self, other: Task) -> bool:
        return self.sort_key <= other.sort_key

    def __gt__(self, other: Task) -> bool:
        return self.sort_key > other.sort_key

    def __ge__(self, other: Task) -> bool:
        return self.sort_key >= other.sort_key

    @property
    def priority(self) -> int:
        return -self.sort_key[0]


@mypyc_attr(allow_interpreted_subclasses=True)
class NPC(Agent):
    """A scripted character. Its inventory is closed unless a scenario opens it."""

    is_npc = True
    is_open = False
    # Whether `tick` may run `_run_wander` / `_run_move` written out (`__init_subclass__`). A class
    # attribute by declaration (a compiled class keeps it on the class) and not `_inline`: mypyc
    # names the C field `__inline`, a GCC keyword.
    _written_out: ClassVar[bool] = True
    _plain_goto: ClassVar[bool] = True  # whether `tick` may call `NPC._run_goto` directly

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._written_out = cls._run_wander is _WANDER and cls._run_move is _MOVE
        cls._plain_goto = cls._run_goto is _GOTO

    def __init__(self, world: World, name: str, x: int, y: int, facing: str = "south", **attrs: Any) -> None:
        super().__init__(world, name, x, y, facing, **attrs)
        self.dialog_tree = DialogTree(self.states)
        self.queue: list[Task] = []
        self._counter = 0
        self._door_to_close: Any = None
        self._nap = 0  # ticks until a lone wander's step drawn ahead (`_wander_ahead`); 0: none pending

    # ---- autopilot --------------------------------------------------------------------
    def enqueue(self, kind: str, priority: int | None = None, **args: Any) -> None:
        """Queue an autopilot task. Default priority: 0 for "wander" (it must sit below the
        one-tile moves it queues at priority 1), else 1. Priorities above 1 make the NPC busy."""
        if priority is None:
            priority = 0 if kind == "wander" else 1
        self._counter += 1
        self._nap = 0  # a step drawn ahead was the lone wander's: a new task comes first now
        heapq.heappush(self.queue, Task((-priority, self._counter), kind, args))

    def clear_queue(self, kind: str | None = None) -> None:
        self.queue = [t for t in self.queue if kind is not None and t.kind != kind]
        heapq.heapify(self.queue)

    def is_busy(self) -> bool:
        return any(task.priority > 1 for task in self.queue)

    def tick(self) -> None:
        if self.poison_counter < 0 or self.poisoned:  # else `Agent.tick` (the poison clock) does nothing
            super().tick()
        nap = self._nap
        if nap:  # a lone wander's ticks of "stay", drawn ahead (`_wander_ahead`): nothing to do but wait
            if nap > 1:
                self._nap = nap - 1
                return
            self._nap = 0
            queue = self.queue
            if self.dialog_partner is None and len(queue) == 1 and queue[0].kind == "wander":
                self._wander_ahead(queue[0].args)  # else dropped: the wander draws afresh once it runs
            return
        queue = self.queue
        if self.dialog_partner is not None or not queue:
            return
        task = queue[0]
        kind = task.kind
        if self._written_out:  # `_run_wander` and `_run_move`, written out (ten animals wander every tick)
            if kind == "wander":
                if len(queue) != 1:  # the wander waits (`_run_wander` returns False)
                    return
                args = task.args
                hx: int = args["x"]  # (typed, as in `_wander_ahead`)
                hy: int = args["y"]
                dx, dy = self.x - hx, self.y - hy
                if dx * dx + dy * dy > 16:
                    self.enqueue("goto", priority=1, x=hx, y=hy, give_up=40)
                    return
                # The draws of "stay" until the tick that decides to step, all at once: the step
                # comes on the tick after that one, as the queued move of `_run_wander` would.
                self._nap = draw_wait(self.world.npc_draws, args.get("probability", 0.5)) + 1
                return
            if kind == "move":
                direction = task.args["direction"]
                dx, dy = DIRECTIONS[direction]
                nx, ny = self.x + dx, self.y + dy
                self.facing = direction
                world = self.world  # `world.is_passable(nx, ny)` and the walk in one call
                if 0 <= nx < world.size and 0 <= ny < world.size:
                    walk_if_free(world, self, nx, ny)
                if len(queue) < 3:  # `heappop` of a heap of one or two: the other one is left
                    del queue[0]
                else:
                    heapq.heappop(queue)
                return
        if kind == "goto" and self._plain_goto:  # a direct call, no keywords packed (characters walk home often)
            args = task.args
            done = NPC._run_goto(self, args["x"], args["y"], args.get("give_up", _GIVE_UP))
        else:
            run = _RUNNERS.get((type(self), kind))
            if run is None:
                run = _RUNNERS[(type(self), kind)] = getattr(type(self), "_run_" + kind)
            done = run(self, **task.args)
        queue = self.queue  # (a runner may have replaced it: `clear_queue`)
        if done and queue and queue[0] is task:
            heapq.heappop(queue)

    def _wander_ahead(self, args: dict[str, Any]) -> None:
        """The step a lone wander drew ahead is due: back home first if something carried this
        character away meanwhile, else one tile in a random direction (as `_run_move`), then
        the next wait drawn at once (the distance check of the next tick needs only where it
        now stands). Same in distribution as `_run_wander` and `_run_move` tick by tick: a
        geometric number of "stay" ticks, a decision tick, a step tick, uniform directions;
        only a lone wander naps (a task queued drops the nap; a queue changed otherwise, or a
        dialog, when the step falls due drops the step), and a geometric wait has no memory, so
        a nap cut short and drawn afresh keeps that law. Ten animals wander every tick: most of their ticks are now
        a countdown instead of a draw each (docs/performance.md)."""
        x: int = args["x"]  # (typed: int arithmetic compiled; `_run_goto` takes ints too)
        y: int = args["y"]
        dx, dy = self.x - x, self.y - y
        if dx * dx + dy * dy > 16:  # (moved by someone else during the nap)
            self.enqueue("goto", priority=1, x=x, y=y, give_up=40)
            return
        draws = self.world.npc_draws
        self._run_move(_DIRECTION_NAMES[draws.quarter()])  # (a class that has its own never naps: `_written_out`)
        dx, dy = self.x - x, self.y - y
        if dx * dx + dy * dy <= 16:  # else the next tick, a plain one, heads home
            self._nap = draw_wait(draws, args.get("probability", 0.5)) + 2

    def _run_wander(self, x: int, y: int, probability: float = 0.5) -> bool:
        """Drift around (x, y): go back if further than 4 tiles, else maybe step randomly.

        Enqueue wandering at priority 0: the one-tile moves it queues run at priority 1, ahead
        of it, and it stays idle while they are pending (so it never floods the queue)."""
        if len(self.queue) > 1:
            return False
        dx, dy = self.x - x, self.y - y
        if dx * dx + dy * dy > 16:
            self.enqueue("goto", priority=1, x=x, y=y, give_up=40)
            return False
        draws = self.world.npc_draws
        if draws.unit() < probability:
            self.enqueue("move", priority=1, direction=_DIRECTION_NAMES[draws.quarter()])
        return False

    def _run_move(self, direction: str) -> bool:
        dx, dy = DIRECTIONS[direction]
        nx, ny = self.x + dx, self.y + dy
        self.facing = direction
        world = self.world  # `world.is_passable(nx, ny)` and the walk in one call (ten animals step often)
        if 0 <= nx < world.size and 0 <= ny < world.size:
            walk_if_free(world, self, nx, ny)
        return True

    def _close_door_behind(self) -> bool:
        """Close the door this NPC opened once it has left both the doorway and the tile it
        opened it from. Returns whether it did."""
        if self._door_to_close is None:
            return False
        door, opened_from = self._door_to_close
        if (self.x, self.y) in (door.location(), opened_from):
            return False
        door.is_open = False
        door.text_changed()
        self._door_to_close = None
        return True

    def _run_goto(self, x: int, y: int, give_up: int = _GIVE_UP) -> bool:
        """One tick of walking towards (x, y): turn, open a door, close it behind, or step.
        An impassable goal (a table, a locked door) is reached by standing beside it, facing it."""
        if self._door_to_close is not None and self._close_door_behind():  # (no call without a door)
            return self.x == x and self.y == y
        if self.x == x and self.y == y:
            return True
        path = find_path(self.world, (self.x, self.y), (x, y))
        if not path:
            task = self.queue[0]
            task.args["give_up"] = give_up - 1
            return give_up <= 0
        nx, ny = path[0]
        step = self.advance_to(nx, ny)
        if step == "blocked":
            return (nx, ny) == (x, y)
        if step == "moved":
            return (nx, ny) == (x, y) and self._door_to_close is None  # else one more tick to close it
        return False

    def advance_to(self, nx: int, ny: int) -> str:
        """One tick towards the adjacent tile (nx, ny): "turned" to face it, "opened" the door on
        it (closed again once passed), "blocked" by something, or "moved" onto it."""
        direction = _DIR_BY_DELTA[(nx - self.x, ny - self.y)]
        if self.facing != direction:
            self.facing = direction
            return "turned"
        blocker = self.world.blocker_at(nx, ny)
        if blocker is not None:
            if blocker.is_passage and not blocker.is_open and not blocker.requires_key:
                blocker.is_open = True
                blocker.text_changed()
                self._door_to_close = (blocker, (self.x, self.y))
                return "opened"
            return "blocked"
        walk_unheard(self.world, self, nx, ny)
        return "moved"


_WANDER = NPC._run_wander  # `NPC.tick` runs these two inline when a class does not override them
_MOVE = NPC._run_move
_GOTO = NPC._run_goto
