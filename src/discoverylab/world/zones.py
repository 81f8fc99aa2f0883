"""Door zones: the 4-connected regions of the grid between walls and closed doors, labelled on
runs of free tiles per column joined by a union-find (`label_zones`, `door_zones`), and, for
teleports, which ask on nearly every episode's first door-crossing teleport, the region of the
agent's tile alone as a bit mask grown by whole column runs at once (`door_reach`: ~40 us
against ~250 us for a labelling of a 32x32 map)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from types import FunctionType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from discoverylab.world.objects import WorldObject
    from discoverylab.world.world import World


def label_zones(size: int, barrier: set[tuple[int, int]]) -> list[list[int]]:
    """Label the 4-connected non-barrier regions, numbered in x-major scan order of their
    first tile (-1 on the barrier). Works on runs of free tiles per column joined by a
    union-find, not tile by tile: teleports ask again whenever a door opens or closes."""
    n = size
    cuts: list[list[int]] = [[] for _ in range(n)]
    for x, y in barrier:
        if 0 <= x < n and 0 <= y < n:
            cuts[x].append(y)
    runs: list[list[tuple[int, int]]] = []  # per column, its free runs [y0, y1)
    for column in cuts:
        column.sort()
        spans, y0 = [], 0
        for y in (*column, n):
            if y > y0:
                spans.append((y0, y))
            y0 = max(y0, y + 1)
        runs.append(spans)
    parent: list[int] = []  # union-find over runs numbered in scan order
    first: list[int] = []  # per column, the number of its first run
    for x, spans in enumerate(runs):
        first.append(len(parent))
        parent.extend(range(len(parent), len(parent) + len(spans)))
        if x:
            _join_runs(parent, runs[x - 1], first[x - 1], spans, first[x])
    labels: dict[int, int] = {}
    zones = []
    for x, spans in enumerate(runs):
        row = [-1] * n
        for i, (y0, y1) in enumerate(spans):
            root = _find(parent, first[x] + i)
            label = labels.setdefault(root, len(labels))
            row[y0:y1] = [label] * (y1 - y0)
        zones.append(row)
    return zones


def _find(parent: list[int], i: int) -> int:
    """Union-find root of `i` (with path halving)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _join_runs(parent: list[int], left: list[tuple[int, int]], left_first: int, right: list[tuple[int, int]], right_first: int) -> None:
    """Union the runs of two neighbouring columns that share a row (both lists sorted by y)."""
    i = j = 0
    while i < len(left) and j < len(right):
        (a0, a1), (b0, b1) = left[i], right[j]
        if a0 < b1 and b0 < a1:
            ra, rb = _find(parent, left_first + i), _find(parent, right_first + j)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        if a1 <= b1:
            i += 1
        else:
            j += 1


def _closed_doors(world: World, locked_only: bool) -> list[tuple[int, int]]:
    """The tiles of the closed doors (locked ones only if `locked_only`), in `_passages`' fixed
    order; finds the world's passages and walls on first use (after the scenario's builder
    ran: one pass; walls never move once built, so they are read once)."""
    if world._passages is None:
        _find_passages(world)
    closed: list[tuple[int, int]] = []  # a loop, not a generator: every teleport to an object asks
    for o in world._passages or ():
        if o.alive and not o.is_open and o.layer is not None and (o.requires_key or not locked_only):
            closed.append((o.x, o.y))
    return closed


def _find_passages(world: World) -> None:
    """The world's passages on the grid and its walls' tiles (`_passages`, `_walls`), and the
    walls' zone mask (`_wall_free`): an episode's first door-crossing teleport pays it. Compiled,
    one walk over the grid's stacks, tile by tile, each column's walls set as it goes (a copy of
    the registry's values read by index cost ~190k instructions a unit-test world, the dict walk
    alone ~47 an object); the pure engine reads the registry (its loops cost ~400 instructions
    a tile: the walk cost it ~60k more). Either way a passage counts only where it stands on the
    grid (`_closed_doors` asks its layer anyway)."""
    size = world.size
    passages: list[WorldObject] = []
    walls: list[tuple[int, int]] = []  # a list (a set's add cost ~340 instructions a wall compiled)
    if not _COMPILED:
        for o in list(world.objects.values()):
            if o.is_passage and o.layer is not None:
                passages.append(o)
            if o.type == "wall" and o.layer is not None:
                walls.append((o.x, o.y))
        world._passages, world._walls = passages, walls
        world._wall_free = _full_mask(size) & ~_mask_of(size, walls)
        return
    stride = size + 1
    wall_mask = 0
    x = 0
    for column in world.stacks:
        bits = 0  # this column's walls
        y = 0
        for stack in column:
            for o in stack:
                if o.is_passage:
                    passages.append(o)
                if o.type == "wall" and o.layer is not None:
                    walls.append((o.x, o.y))
                    bits |= 1 << y
            y += 1
        if bits:
            wall_mask |= bits << (x * stride)
        x += 1
    world._passages, world._walls = passages, walls
    world._wall_free = _full_mask(size) & ~wall_mask


def door_zones(world: World, locked_only: bool) -> list[list[int]] | None:
    """`World.door_zones`: per tile its zone number between walls and closed doors (locked ones
    only if `locked_only`), None when no such door exists; kept per set of closed doors on the
    world (`_zones`)."""
    closed = _closed_doors(world, locked_only)
    if not closed:
        return None
    # Keyed by the doors in `_passages`' fixed order: the same closed doors, the same key (a
    # tuple hashes and compares at a fraction of a frozenset's cost).
    key = (locked_only, tuple(closed))
    zones = world._zones.get(key)
    if zones is None:
        zones = world._label_zones({*world._walls, *closed})
        world._zones[key] = zones
    return zones


# ---- one zone as a bit mask (teleports) ----------------------------------------------------------
# Tile (x, y) is bit x * (size + 1) + y: each column a run of `size` bits with a guard bit above it
# that is never free, so an addition's carry stops at the column's end. Growing a set R of free
# tiles (R within the free mask F) to the top of each free run it touches is one addition:
# ((F + R) ^ F) & F | R (the carry runs up through the run and dies at its first barrier); to the
# bottom of each run the same in the bit-reversed masks (`_reverse`). Across columns, along each
# row, it grows by doubling shifts (a Kogge-Stone fill: shifts by 1, 2, 4, ... columns, each
# through the tiles whose whole span back is free). Repeated until nothing changes: one round per
# turn between a column and a row that the zone's paths need.

# Each byte's bits in reverse order: a mask's bits reversed as a whole are its bytes reversed in
# order (`to_bytes` big-endian, read back little-endian) and each byte translated through this.
_REVERSED_BYTE = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))

# (free, free reversed, width in bytes, per doubling (shift, tiles free that far east, that far west))
ReachPlan = tuple[int, int, int, tuple[tuple[int, int, int], ...]]


def tile_bit(size: int, x: int, y: int) -> int:
    """The bit of tile (x, y) (on the map) in a zone mask."""
    return 1 << (x * (size + 1) + y)


def _reverse(mask: int, width: int) -> int:
    """`mask`'s bits in reverse order over `width` bytes (an involution for masks that fit)."""
    return int.from_bytes(mask.to_bytes(width, "big").translate(_REVERSED_BYTE), "little")


def _plan(size: int, free: int) -> ReachPlan:
    """What growing zones within `free` reuses (`ReachPlan`)."""
    stride, width = size + 1, (size * (size + 1) + 7) // 8
    steps, east, west, shift = [], free, free, stride
    while True:
        steps.append((shift, east, west))
        # Fills through 1 + 2 + ... + c = 2c - 1 columns (c = shift // stride): enough once that
        # reaches size - 1 (a shift by c >= size, as the last step was once, moves every tile off the map).
        if 2 * shift >= size * stride:
            break
        east, west = east & (east << shift), west & (west >> shift)
        shift *= 2
    return free, _reverse(free, width), width, tuple(steps)


def _grow(plan: ReachPlan, seeds: int) -> int:
    """The tiles of the plan's free mask joined to a tile of `seeds`: column runs, then row runs,
    grown in turn until one of them adds nothing (the other's result is closed under it: the
    zone), not until a whole round adds nothing (one round less of ~5)."""
    free, free_back, width, steps = plan
    reach = seeds & free
    rows_closed = False  # `reach` fills every row run it touches (after the first round)
    while True:
        grown = reach | ((free + reach) ^ free) & free  # up every touched column run
        back = _reverse(grown, width)
        back |= ((free_back + back) ^ free_back) & free_back  # and down
        grown = east = west = _reverse(back, width)
        if rows_closed and grown == reach:
            return reach
        for shift, east_free, west_free in steps:  # along every touched row run
            east |= east_free & (east << shift)
            west |= west_free & (west >> shift)
        reach = east | west
        if reach == grown:
            return reach
        rows_closed = True


def reach_mask(size: int, free: int, seeds: int) -> int:
    """The tiles of `free` 4-connected within `free` to a tile of `seeds` (both masks)."""
    return _grow(_plan(size, free), seeds)


@cache
def _full_mask(size: int) -> int:
    """Every tile of the map."""
    stride = size + 1
    column = (1 << size) - 1
    return sum(column << (x * stride) for x in range(size))


def _mask_of(size: int, tiles: Iterable[tuple[int, int]]) -> int:
    """The tiles on the map among `tiles`, as a mask: set per column in small ints, then one
    shift and `or` of the whole mask per column that has any (a bit per tile in a bytearray
    cost ~700 instructions a tile compiled, ~60k per world's walls)."""
    columns = [0] * size
    for x, y in tiles:
        if 0 <= x < size and 0 <= y < size:
            columns[x] |= 1 << y
    stride, mask = size + 1, 0
    for x in range(size):
        column = columns[x]
        if column:
            mask |= column << (x * stride)
    return mask


# Every zone `door_reach` grew, per (size, free mask) and across worlds: what a mask's zones are
# depends on nothing else, and a unit test's worlds repeat their layouts (a house at one of ~150
# sites, a door open or closed). Least recently used first; `_PLANS_LIMIT` entries at most
# (each ~2-3 KB).
_PLANS: dict[tuple[int, int], tuple[ReachPlan, list[int]]] = {}
_PLANS_LIMIT = 512


def _shared_plan(size: int, free: int) -> tuple[ReachPlan, list[int]]:
    """The plan of `free` (`_plan`) and the zones grown in it so far, kept in `_PLANS` (the zones
    list grows as worlds find more)."""
    key = (size, free)
    known = _PLANS.pop(key, None)
    if known is None:
        known = (_plan(size, free), [])
        if len(_PLANS) >= _PLANS_LIMIT:
            del _PLANS[next(iter(_PLANS))]  # the least recently used
    _PLANS[key] = known
    return known


def door_reach(world: World, locked_only: bool, x: int, y: int) -> int | None:
    """The tiles joined to (x, y) without crossing a wall or a closed door (locked ones only if
    `locked_only`), as a mask (`tile_bit`); from a barrier tile (where only a scripted placement
    puts the agent), the tiles joined to its free neighbours. None when no such door exists,
    as `door_zones`. The same tiles as the zones of `door_zones` that hold (x, y) (or its
    neighbours); each zone found is kept per free mask across worlds (`_PLANS`) and found per
    set of closed doors of the world (`_reach`), the walls' mask per world (walls never move
    once built)."""
    closed = _closed_doors(world, locked_only)
    if not closed:
        return None
    size = world.size
    key = (locked_only, tuple(closed))
    known = world._reach.get(key)
    if known is None:
        wall_free = world._wall_free  # (set by `_find_passages`; None in a world pickled before it ran)
        if wall_free is None:
            wall_free = world._wall_free = _full_mask(size) & ~_mask_of(size, world._walls)
        known = world._reach[key] = _shared_plan(size, wall_free & ~_mask_of(size, closed))
    plan, zones = known
    free = plan[0]
    seeds = tile_bit(size, x, y) & free if 0 <= x < size and 0 <= y < size else 0
    if not seeds:
        for a, b in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= a < size and 0 <= b < size:
                seeds |= tile_bit(size, a, b) & free
    reach = 0
    for zone in zones:
        if zone & seeds:
            reach |= zone
    seeds &= ~reach
    while seeds:  # a zone not met yet: grown from its lowest seed, then kept
        zone = _grow(plan, seeds & -seeds)
        zones.append(zone)
        reach |= zone
        seeds &= ~zone
    return reach


_COMPILED: Final = not isinstance(_grow, FunctionType)  # `_find_passages`: which walk is cheaper
