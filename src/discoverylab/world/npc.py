"""Non-player characters: dialog trees plus an autopilot queue of small goal-directed actions.

Path finding is a plain A* on the 32x32 grid (4-connected); at this size it costs tens of
microseconds, cheaper than building a graph with a general library every tick.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from discoverylab.world.agent import DIRECTIONS, Agent
from discoverylab.world.dialog import DialogTree

if TYPE_CHECKING:
    from discoverylab.world.world import World

_DIR_BY_DELTA = {delta: name for name, delta in DIRECTIONS.items()}
_DIRECTION_NAMES = tuple(DIRECTIONS)
_RUNNERS: dict[str, str] = {}  # task kind -> the NPC method that runs it ("_run_" + kind)
_STEPS = ((0, -1), (1, 0), (0, 1), (-1, 0))  # the expansion order (ties between equal paths)
_INF = float("inf")
_UNKNOWN = -1.0  # `find_path`'s marker of a tile whose cost is not looked up yet


def find_path(world: World, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
    """Cheapest 4-connected path (excluding start). Closed, unlocked doors cost 20 (NPCs open
    them); locked or impassable tiles are blocked. None if the goal is unreachable. (NPCs walking
    somewhere re-plan every tick: a tile's cost is looked up once per search, not once per
    neighbour expanded; tiles are numbered x * size + y, their neighbours listed once per size.
    Ties go by push order, so the path is the one the plain search takes.)"""
    size = world.size
    sx, sy = start
    gx, gy = goal
    if not (0 <= sx < size and 0 <= sy < size):
        return _find_path_off_grid(world, start, goal)
    target = gx * size + gy if 0 <= gx < size and 0 <= gy < size else -1
    origin = sx * size + sy
    neighbours = _neighbours(size)
    blocker_at = world.blocker_at
    costs: dict[int, float] = {}  # 0: blocked (dicts: most searches touch a few dozen tiles)
    best = {origin: 0.0}
    came: dict[int, int] = {}
    frontier: list[tuple[float, int, int]] = [(0.0, 0, origin)]
    heappush, heappop = heapq.heappush, heapq.heappop
    counter = 0
    while frontier:
        cur = heappop(frontier)[2]
        if cur == target:
            path = []
            while cur != origin:
                path.append(divmod(cur, size))
                cur = came[cur]
            return path[::-1]
        here = best[cur]
        around = neighbours[cur]
        if around is None:
            around = neighbours[cur] = _around(cur, size)
        for tile, nx, ny in around:
            step = costs.get(tile, -1.0)
            if step < 0.0:
                blocker = blocker_at(nx, ny)
                if blocker is None:
                    step = 1.0
                elif blocker.is_passage and not blocker.requires_key:
                    step = 20.0
                else:
                    step = 0.0
                costs[tile] = step
            if not step:
                if tile != target:
                    continue
                step = 1.0  # an impassable goal is reached by standing beside it
            new = here + step
            if new < best.get(tile, _INF):
                best[tile] = new
                came[tile] = cur
                counter += 1
                heappush(frontier, (new + abs(gx - nx) + abs(gy - ny), counter, tile))
    return None


_Around = tuple[tuple[int, int, int], ...]
_NEIGHBOURS: dict[int, list[_Around | None]] = {}


def _neighbours(size: int) -> list[_Around | None]:
    """Per tile number, its on-grid neighbours (`_around`), each filled in when first asked for."""
    table = _NEIGHBOURS.get(size)
    if table is None:
        table = _NEIGHBOURS[size] = [None] * (size * size)
    return table


def _around(tile: int, size: int) -> _Around:
    """The on-grid neighbours (number, x, y) of tile number `tile`, in `_STEPS` order."""
    x, y = divmod(tile, size)
    cells = ((x + dx, y + dy) for dx, dy in _STEPS)
    return tuple((nx * size + ny, nx, ny) for nx, ny in cells if 0 <= nx < size and 0 <= ny < size)


def _find_path_off_grid(world: World, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
    """`find_path` from a start off the grid (no NPC stands there; kept for callers that ask)."""
    costs: dict[tuple[int, int], float | None] = {}
    size = world.size
    gx, gy = goal
    frontier: list[tuple[float, int, tuple[int, int]]] = [(0.0, 0, start)]
    came: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
    best: dict[tuple[int, int], float] = {start: 0.0}
    counter = 0
    while frontier:
        _, _, cur = heapq.heappop(frontier)
        if cur == goal:
            path = []
            node: tuple[int, int] | None = cur
            while node is not None and node != start:
                path.append(node)
                node = came[node]
            return path[::-1]
        cx, cy = cur
        here = best[cur]
        for dx, dy in _STEPS:
            nx, ny = cx + dx, cy + dy
            if not (0 <= nx < size and 0 <= ny < size):
                continue
            tile = (nx, ny)
            step = costs.get(tile, _UNKNOWN)
            if step is _UNKNOWN:
                step = costs[tile] = _step_cost(world, nx, ny)
            if step is None:
                if tile != goal:
                    continue
                step = 1.0
            new = here + step
            if new < best.get(tile, _INF):
                best[tile] = new
                came[tile] = cur
                counter += 1
                heapq.heappush(frontier, (new + abs(gx - nx) + abs(gy - ny), counter, tile))
    return None


def _step_cost(world: World, x: int, y: int) -> float | None:
    """The cost of stepping onto a tile: 1, 20 through a closed unlocked door, None if blocked."""
    blocker = world.blocker_at(x, y)
    if blocker is None:
        return 1.0
    if blocker.is_passage and not blocker.requires_key:
        return 20.0
    return None


@dataclass
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


class NPC(Agent):
    """A scripted character. Its inventory is closed unless a scenario opens it."""

    is_npc = True
    is_open = False

    def __init__(self, world: World, name: str, x: int, y: int, facing: str = "south", **attrs: Any) -> None:
        super().__init__(world, name, x, y, facing, **attrs)
        self.dialog_tree = DialogTree(self.states)
        self.queue: list[Task] = []
        self._counter = 0
        self._door_to_close: Any = None

    # ---- autopilot --------------------------------------------------------------------
    def enqueue(self, kind: str, priority: int | None = None, **args: Any) -> None:
        """Queue an autopilot task. Default priority: 0 for "wander" (it must sit below the
        one-tile moves it queues at priority 1), else 1. Priorities above 1 make the NPC busy."""
        if priority is None:
            priority = 0 if kind == "wander" else 1
        self._counter += 1
        heapq.heappush(self.queue, Task((-priority, self._counter), kind, args))

    def clear_queue(self, kind: str | None = None) -> None:
        self.queue = [t for t in self.queue if kind is not None and t.kind != kind]
        heapq.heapify(self.queue)

    def is_busy(self) -> bool:
        return any(task.priority > 1 for task in self.queue)

    def tick(self) -> None:
        super().tick()
        if self.dialog_partner is not None or not self.queue:
            return
        task = self.queue[0]
        name = _RUNNERS.get(task.kind)
        if name is None:
            name = _RUNNERS[task.kind] = "_run_" + task.kind
        done = getattr(self, name)(**task.args)
        if done and self.queue and self.queue[0] is task:
            heapq.heappop(self.queue)

    def _run_wander(self, x: int, y: int, probability: float = 0.5) -> bool:
        """Drift around (x, y): go back if further than 4 tiles, else maybe step randomly.

        Enqueue wandering at priority 0: the one-tile moves it queues run at priority 1, ahead
        of it, and it stays idle while they are pending (so it never floods the queue)."""
        if len(self.queue) > 1:
            return False
        rng = self.world.rng_npc
        if (self.x - x) ** 2 + (self.y - y) ** 2 > 16:
            self.enqueue("goto", priority=1, x=x, y=y, give_up=40)
        elif rng.random() < probability:
            direction = _DIRECTION_NAMES[int(rng.integers(0, 4))]
            self.enqueue("move", priority=1, direction=direction)
        return False

    def _run_move(self, direction: str) -> bool:
        dx, dy = DIRECTIONS[direction]
        nx, ny = self.x + dx, self.y + dy
        self.facing = direction
        if self.world.is_passable(nx, ny):
            self.world.walk(self, nx, ny)
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

    def _run_goto(self, x: int, y: int, give_up: int = 200) -> bool:
        """One tick of walking towards (x, y): turn, open a door, close it behind, or step.
        An impassable goal (a table, a locked door) is reached by standing beside it, facing it."""
        if self._close_door_behind():
            return (self.x, self.y) == (x, y)
        if (self.x, self.y) == (x, y):
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
        self.world.walk(self, nx, ny)
        return "moved"
