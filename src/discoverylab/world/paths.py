"""NPC path finding: a plain A* on the 32x32 grid (4-connected); at this size it costs tens of
microseconds, cheaper than building a graph with a general library every tick. Results are
remembered per world while the tiles they depend on stay the same (`_PathCache`).
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from mypy_extensions import mypyc_attr

from discoverylab.world.objects import WorldObject
from discoverylab.world.unpickle import FastState

if TYPE_CHECKING:
    from discoverylab.world.world import World

_STEPS = ((0, -1), (1, 0), (0, 1), (-1, 0))  # the expansion order (ties between equal paths)
_INF = float("inf")
_PASSABLE_NOW = WorldObject.is_passable_now  # the engine's own rule: `passable` (`walk_if_free`)
_UNKNOWN = -1.0  # `_find_path_off_grid`'s marker of a tile whose cost is not looked up yet


def find_path(world: World, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
    """Cheapest 4-connected path (excluding start). Closed, unlocked doors cost 20 (NPCs open
    them); locked or impassable tiles are blocked. None if the goal is unreachable. A new list
    each call (callers may consume it); the search itself is `_search`, remembered per world by
    `_PathCache` while the costs of the tiles it looked at stay the same."""
    size = world.size
    if not (0 <= start[0] < size and 0 <= start[1] < size):
        return _find_path_off_grid(world, start, goal)
    cache = world.caches.get("npc_paths")
    if cache is None:
        cache = world.caches["npc_paths"] = _PathCache(world)
    assert isinstance(cache, _PathCache)
    return cache.path(start, goal)


def walk_unheard(world: World, mover: WorldObject, x: int, y: int) -> None:
    """`world.walk(mover, x, y)` for a character's step. A passable mover carrying only passable
    things that hold nothing (a dog with its stick) changes no tile's step cost by stepping
    (`_tile_cost` reads the first impassable thing on a tile, closed contents included, and
    none of those is one), so the world's path cache, if any, is not told of the step (its
    watcher is the walk's `quiet` one): `_sync` does not re-cost both tiles afterwards. Anything
    carried that holds something goes the plain way. tests/test_world_fast_paths.py checks the
    paths against the plain search while characters walk, carry walls and open doors."""
    cache = world.caches.get("npc_paths")
    if cache is None or not mover.is_passable_now() or (mover.contents and not _light(mover.contents)):
        world.walk(mover, x, y)
        return
    assert isinstance(cache, _PathCache)
    world.walk(mover, x, y, cache.changed)


def _light(carried: list[WorldObject]) -> bool:
    """Whether everything a character carries is passable and holds nothing (`walk_unheard`)."""
    for child in carried:
        if child.contents or not child.is_passable_now():
            return False
    return True


def walk_if_free(world: World, mover: WorldObject, x: int, y: int) -> bool:
    """`world.blocker_at(x, y) is None` and then `walk_unheard(world, mover, x, y)` for an
    on-grid tile, in one call (a wandering character's step, several every tick): the tile's
    objects are read in place while each holds nothing and follows the engine's own
    passability rule (`passable`), in `blocker_at`'s order; any other object sends the tile to
    `blocker_at`. Whether it walked. tests/test_world_fast_paths.py compares it with the plain
    calls on tiles of every kind."""
    for obj in world.stacks[x][y]:
        if obj.contents or type(obj).is_passable_now is not _PASSABLE_NOW:
            if world.blocker_at(x, y) is not None:
                return False
            break
        if not obj.passable:
            return False
    walk_unheard(world, mover, x, y)
    return True


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class _PathCache(FastState):
    """Per world (`world.caches["npc_paths"]`): each tile's step cost once looked up, and each
    search's result by (start, goal). NPCs walking somewhere re-plan every tick, mostly between
    the same few places (a dog fetching, animals going home), and nearly every tick nothing that
    a path depends on changes: characters do not block, so their steps change no cost. A search
    reads only the costs of the tiles it looks up (`costs` holds every tile any search looked
    up), so its result stands while none of those costs changes. `World.watch_tiles` reports
    every tile whose objects change (placed, taken, opened: the passability the observation
    shows, `objects.TEXT_ATTRS`); `_sync` recomputes the cost of each reported tile a search
    looked up and forgets all results when one differs. A path read off an open rectangle is
    kept for each of its tiles too (`_plan`): one search for a walk home. Same paths as the
    plain search (tests/test_world_fast_paths.py compares them after doors and walls change)."""

    LIMIT = 4096  # results kept at most (then forgotten all at once)

    def __init__(self, world: World) -> None:
        self.world = world
        self.changed = world.watch_tiles()  # (its `mover` is set only during `walk_unheard`)
        self.costs: dict[int, float] = {}  # tile number -> 1, 20 (closed door), 0 (blocked)
        # (start tile * tiles + goal tile) -> the path (on-grid goals only)
        self.paths: dict[int, tuple[tuple[int, int], ...] | None] = {}

    def path(self, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]] | None:
        if self.changed:
            self._sync()
        size = self.world.size
        gx, gy = goal
        if not (0 <= gx < size and 0 <= gy < size):  # (no character heads off the grid: not kept)
            return _plan(self.world, start, goal, self.costs)[0]
        # Keyed by an int, start and goal tile numbers: compiled, no tuples boxed to hash.
        count = size * size
        goal_tile = gx * size + gy
        key = (start[0] * size + start[1]) * count + goal_tile
        paths = self.paths
        if key in paths:
            found = paths[key]
            return None if found is None else list(found)
        path, straight = _plan(self.world, start, goal, self.costs)
        if len(paths) >= self.LIMIT:
            paths.clear()
        if path is None:
            paths[key] = None
            return None
        found = paths[key] = tuple(path)
        if straight:  # a path read off an open rectangle: each of its tiles' own path is its rest
            for i in range(len(found) - 1):
                x, y = found[i]
                paths[(x * size + y) * count + goal_tile] = found[i + 1 :]
        return path

    def _sync(self) -> None:
        """Catch up with the reported tiles: new costs for those looked up, results forgotten
        if any of them changed."""
        costs, size, world = self.costs, self.world.size, self.world
        stale = False
        for x, y in self.changed:
            tile = x * size + y
            old = costs.get(tile)
            if old is not None:
                new = _tile_cost(world, x, y)
                if new != old:
                    costs[tile] = new
                    stale = True
        self.changed.clear()
        if stale:
            self.paths.clear()


def _tile_cost(world: World, x: int, y: int) -> float:
    """The cost of stepping onto an on-grid tile: 1, 20 through a closed unlocked door, 0 if blocked."""
    blocker = world.blocker_at(x, y)
    if blocker is None:
        return 1.0
    if blocker.is_passage and not blocker.requires_key:
        return 20.0
    return 0.0


def _search(
    world: World, start: tuple[int, int], goal: tuple[int, int], costs: dict[int, float]
) -> list[tuple[int, int]] | None:
    """A* from an on-grid start (`_astar`), or its path read off an open rectangle
    (`_open_rectangle`): a character walking home re-plans from each tile it steps on, a
    new start each time, and most of those searches cross open ground."""
    return _plan(world, start, goal, costs)[0]


def _plan(
    world: World, start: tuple[int, int], goal: tuple[int, int], costs: dict[int, float]
) -> tuple[list[tuple[int, int]] | None, bool]:
    """`_search`'s path, and whether it was read off an open rectangle. Then the path from any
    of its tiles to the goal is the rest of it (`_PathCache.path` keeps those too, so a character
    walking it home searches once, not from every tile it steps on): that tile and the goal
    span a smaller rectangle inside the first, as open, with the same two directions to go
    (or one, on the second leg), so `_open_rectangle` from there runs the same legs."""
    sx, sy = start
    gx, gy = goal
    size = world.size
    if 0 <= gx < size and 0 <= gy < size and (sx != gx or sy != gy):
        path = _open_rectangle(world, sx, sy, gx, gy, costs)
        if path is not None:
            return path, True
    return _astar(world, start, goal, costs), False


_RECTANGLE = 64  # `_open_rectangle` looks at rectangles of at most this many tiles


def _open_rectangle(world: World, sx: int, sy: int, gx: int, gy: int, costs: dict[int, float]) -> list[tuple[int, int]] | None:
    """`_astar`'s path when every tile of the rectangle spanned by start and goal but those two
    costs 1 (None otherwise, or for a rectangle over `_RECTANGLE` tiles). Then every rectangle
    tile has f = g + h = d (the distance) and every other tile f >= d + 2, so the search pops
    the rectangle's tiles in push order (ties go by the counter) and reaches the goal through
    them: each tile's parent is the one of its two rectangle predecessors pushed first, which
    makes the path run fully along the direction `_STEPS` lists first (north, east, south,
    west) among the two that lead to the goal, then along the other. The goal's own cost
    changes nothing (an impassable goal counts 1, a closed door 20 from any side), nor the
    start's. The result depends only on the costs looked up here (all stored in `costs`, as
    `_astar` stores its own), so `_PathCache` keeps it while they stay; the look-up stops at
    the first tile that does not cost 1. tests/test_world_fast_paths.py compares it with the
    plain search."""
    if (abs(gx - sx) + 1) * (abs(gy - sy) + 1) > _RECTANGLE:
        return None
    size = world.size
    get = costs.get
    for x in range(min(sx, gx), max(sx, gx) + 1):
        for y in range(min(sy, gy), max(sy, gy) + 1):
            tile = x * size + y
            step = get(tile)
            if step is None:
                step = costs[tile] = _tile_cost(world, x, y)
            if step != 1.0 and (x != gx or y != gy) and (x != sx or y != sy):
                return None
    ux = 1 if gx > sx else -1
    uy = 1 if gy > sy else -1
    if gx > sx and gy > sy:  # east before south: along x first
        return [(x, sy) for x in range(sx + ux, gx + ux, ux)] + [(gx, y) for y in range(sy + uy, gy + uy, uy)]
    # north before east and west, south before west: along y first
    return [(sx, y) for y in range(sy + uy, gy + uy, uy)] + [(x, gy) for x in range(sx + ux, gx + ux, ux)]


def _astar(
    world: World, start: tuple[int, int], goal: tuple[int, int], costs: dict[int, float]
) -> list[tuple[int, int]] | None:
    """A* from an on-grid start. A tile's cost is looked up once (`costs`, shared by the
    searches of a world while it is current: see `_PathCache`), not once per neighbour
    expanded; tiles are numbered x * size + y, their neighbours listed once per size. Ties go
    by push order, so the path is the one the plain search takes.

    Costs are whole numbers (1, 20; `_tile_cost`) and the distance to the goal is a consistent
    estimate, so no tile pushed has a lower f than the one expanded: the frontier is a bucket
    per f, each popped in push order (the plain search's (f, push counter) order, without a
    heap of tuples: a search through a closed door expands ~300 tiles, ~1.2M instructions
    compiled with `heapq` and float tuples). Per-search tables are lists by tile number."""
    size = world.size
    sx, sy = start
    gx, gy = goal
    target = gx * size + gy if 0 <= gx < size and 0 <= gy < size else -1
    origin = sx * size + sy
    neighbours = _neighbours(size)
    count = size * size
    known: list[int] = [-1] * count  # this search's copy of `costs` (-1: not read yet)
    best: list[int] = [_FAR] * count
    came: list[int] = [0] * count
    best[origin] = 0
    buckets: list[list[int]] = [[origin]]  # tiles pushed, by f (the start's f counts as 0)
    level = 0  # the f being expanded
    bucket = buckets[0]
    index = 0
    waiting = 1  # tiles pushed and not popped yet
    while waiting:
        while index == len(bucket):
            level += 1
            bucket = buckets[level]
            index = 0
        cur = bucket[index]
        index += 1
        waiting -= 1
        if cur == target:
            path: list[tuple[int, int]] = []
            while cur != origin:
                path.append((cur // size, cur % size))
                cur = came[cur]
            return path[::-1]
        here = best[cur]
        around = neighbours[cur]
        if around is None:
            around = neighbours[cur] = _around(cur, size)
        for tile, nx, ny in around:
            step = known[tile]
            if step < 0:
                cost = costs.get(tile, -1.0)
                if cost < 0.0:
                    cost = costs[tile] = _tile_cost(world, nx, ny)
                step = known[tile] = int(cost)
            if not step:
                if tile != target:
                    continue
                step = 1  # an impassable goal is reached by standing beside it
            new = here + step
            if new < best[tile]:
                best[tile] = new
                came[tile] = cur
                dx, dy = gx - nx, gy - ny
                f = new + (dx if dx >= 0 else -dx) + (dy if dy >= 0 else -dy)
                while len(buckets) <= f:
                    buckets.append([])
                buckets[f].append(tile)  # (f >= level: the estimate is consistent)
                waiting += 1
    return None


_FAR = 1 << 60  # `_astar`'s cost of a tile not reached yet

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
    """`_tile_cost` with None for a blocked tile (`_find_path_off_grid`'s marker)."""
    return _tile_cost(world, x, y) or None
