"""Door zones: the 4-connected regions of the grid between walls and closed doors, labelled on
runs of free tiles per column joined by a union-find (teleports ask again whenever a door
opens or closes, so this must be cheap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def door_zones(world: World, locked_only: bool) -> list[list[int]] | None:
    """`World.door_zones`: per tile its zone number between walls and closed doors (locked ones
    only if `locked_only`), None when no such door exists; kept per set of closed doors on the
    world (`_zones`; walls never move once built, so they are read once)."""
    if world._passages is None:  # built lazily, after the scenario's builder ran: one pass
        passages: list[WorldObject] = []
        walls: set[tuple[int, int]] = set()
        for o in world.objects.values():
            if o.is_passage:
                passages.append(o)
            if o.type == "wall" and o.layer is not None:
                walls.add((o.x, o.y))
        world._passages, world._walls = passages, walls
    closed: list[tuple[int, int]] = []  # a loop, not a generator: every teleport to an object asks
    for o in world._passages:
        if o.alive and not o.is_open and o.layer is not None and (o.requires_key or not locked_only):
            closed.append((o.x, o.y))
    if not closed:
        return None
    # Keyed by the doors in `_passages`' fixed order: the same closed doors, the same key (a
    # tuple hashes and compares at a fraction of a frozenset's cost).
    key = (locked_only, tuple(closed))
    zones = world._zones.get(key)
    if zones is None:
        zones = world._label_zones(world._walls.union(closed))
        world._zones[key] = zones
    return zones
