"""Map-building helpers shared by scenarios: terrain fill, one-room buildings, trees, plants."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from discoverylab.world import spare_check, spares
from discoverylab.world.catalog import (
    Inline,
    Rect,
    all_cells,
    build_plain,
    inline_plan,
    place,
    place_each,
    spawn,
)
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World


def fill_grass(world: World, under: tuple[Rect, ...] = ()) -> None:
    """Grass on every tile but those of `under`: the rects (x, y, w, h) of the buildings the
    caller lays next (`building` clears the grass under its floor: that grass is not built at
    all). Their grass UUIDs are taken all the same, so every UUID is the one the full fill
    gives. Nothing may read those tiles before the buildings cover them."""
    place_each(world, "grass", all_cells(world.size), holes=under)


_WORLD = Layer.WORLD
Cell = tuple[int, int]
Picker = Callable[[Sequence[Any]], tuple[Any, ...]]


def clear_ground(world: World, x: int, y: int) -> None:
    """Remove grass under a floor, path or wall (the original's initial filter), and any plant
    scattered there earlier (a building laid over a meadow must not keep plants indoors)."""
    stack = world.stacks[x][y]
    if not stack:  # a tile `fill_grass` left bare for this building: nothing to clear
        return
    if len(stack) == 1 and not world._watchers:  # most calls: a tile of the grass fill alone
        obj = stack[0]
        if obj.type == "grass" and obj.layer == _WORLD and _unattached(obj):
            _drop(world, stack, obj)
            return
    for obj in [o for o in stack if o.type == "grass" and o.layer == _WORLD]:
        if world._watchers or not _unattached(obj):
            obj.remove_from_world()
        else:
            _drop(world, stack, obj)
    if stack:
        for obj in [o for o in stack if o.type == "plant" and o.layer == Layer.OBJECTS]:
            obj.remove_from_world()


def _unattached(obj: WorldObject) -> bool:
    """Whether removing `obj` is only taking it off its tile and out of the registry."""
    return not (obj.contents or obj.parts or obj.parent is not None or obj.needs_tick)


def _drop(world: World, stack: list[WorldObject], obj: WorldObject) -> None:
    """`obj.remove_from_world()` of plain grass (`_unattached`) while nobody watches, inline: ~200
    tiles per reset go under buildings."""
    stack.remove(obj)
    obj.layer, obj.alive = None, False
    world.objects.pop(obj.uuid, None)


def ground(world: World, kind: str, x: int, y: int) -> WorldObject:
    clear_ground(world, x, y)
    return place(world, kind, x, y)


def ground_each(world: World, kind: str, cells: list[tuple[int, int]]) -> None:
    """`ground(world, kind, x, y)` for each cell in order (paths: ~15-74 tiles per reset), as
    one `place_each`: a `place` call cost ~4,000 instructions more per object. Clearing every
    cell first is the same as clearing each just before its object when clearing takes no UUID
    and never removes what `kind` builds (grass, plants) and nobody watches the tiles."""
    plan = inline_plan(kind)
    if plan is None or plan[3] in ("grass", "plant") or world._watchers:
        for x, y in cells:
            ground(world, kind, x, y)
        return
    for x, y in cells:
        clear_ground(world, x, y)
    place_each(world, kind, cells)


def building(
    world: World, x: int, y: int, w: int, h: int, name: str, key_id: int = 0, door: bool = True
) -> WorldObject | None:
    """A one-room building: walls on the border, floor inside (and under the walls), a door
    in the bottom wall at x + w//2 (locked if `key_id`), a sign with the name beside it."""
    if not _bare_shell(world, x, y, w, h):
        for i in range(x, x + w):
            for j in range(y, y + h):
                ground(world, "floor", i, j)
                if i in (x, x + w - 1) or j in (y, y + h - 1):
                    place(world, "wall", i, j)
    front = None
    if door:
        dx, dy = x + w // 2, y + h - 1
        for wall in [o for o in world.layer_at(dx, dy, Layer.BUILDING) if o.type == "wall"]:
            wall.remove_from_world()
        front = place(world, "door", dx, dy, requires_key=key_id)
    place(world, "sign", x + w // 2 - 1, y + h - 1, document=name)
    return front


def _bare_shell(world: World, x: int, y: int, w: int, h: int) -> bool:
    """`building`'s floors and walls laid inline when every tile is bare (`fill_grass` left
    them so) and nobody watches: the objects, UUIDs, registry order and stacks of its loop of
    `ground` and `place` (floor, then the wall on a border tile), without ~250 calls. Whether
    it did; else the caller's loop does the work (and raises the clear errors)."""
    floor, wall = inline_plan("floor"), inline_plan("wall")
    size, stacks = world.size, world.stacks
    if floor is None or wall is None or world._watchers or w < 1 or h < 1:
        return False
    if x < 0 or y < 0 or x + w > size or y + h > size or any(any(col[y : y + h]) for col in stacks[x : x + w]):
        return False
    f_pick, w_pick, order = _shell_plan(w, h)
    # The tiles of each kind in the loop's order: slices of `all_cells` (x-major) column by column.
    grid = all_cells(size)
    f_cells: list[Cell] = []
    w_cells: list[Cell] = []
    for i in range(x, x + w):
        start = i * size + y
        column = grid[start : start + h]
        f_cells += column
        if i == x or i == x + w - 1 or h <= 2:
            w_cells += column
        else:
            w_cells.append(column[0])
            w_cells.append(column[-1])
    all_uuids = world.take_uuids(len(f_cells) + len(w_cells))
    f_uuids, w_uuids = list(f_pick(all_uuids)), list(w_pick(all_uuids))
    floors = _shell_objects(world, floor, "floor", f_cells, f_uuids)
    walls = _shell_objects(world, wall, "wall", w_cells, w_uuids)
    # Onto the bare stacks, the higher layer's kind first: every object of the other goes last
    # on its tile, the stack order `place` gives (top layer first; a floor first when the
    # layers are equal, as it was placed first), so `put` never scans a stack.
    low, high = (floors, f_cells, f_uuids, floor[0]), (walls, w_cells, w_uuids, wall[0])
    if wall[0] <= floor[0]:
        low, high = high, low
    if spare_check.COMPILED:  # typed field writes
        spare_check.put(high[0], world, high[1], high[2], high[3])
        spare_check.put(low[0], world, low[1], low[2], low[3])
    else:  # two loops, each with its own attribute caches (a floor's class is not a wall's)
        for obj, (i, j), uuid in zip(high[0], high[1], high[2], strict=True):
            obj.world = world
            obj.x = i
            obj.y = j
            obj.uuid = uuid
            stacks[i][j].append(obj)
        for obj, (i, j), uuid in zip(low[0], low[1], low[2], strict=True):
            obj.world = world
            obj.x = i
            obj.y = j
            obj.uuid = uuid
            stacks[i][j].append(obj)
    spare_check.file_all(world.objects, all_uuids, list(order(floors + walls)))  # in creation order
    if not floor[5]:
        world.record_fill("floor", floors, f_uuids)
    if not wall[5]:
        world.record_fill("wall", walls, w_uuids)
    return True


def _shell_objects(world: World, plan: Inline, kind: str, cells: list[Cell], uuids: list[int]) -> list[WorldObject]:
    """The objects of `cells` (UUIDs `uuids`), off the grid: a disposed world's untouched ones
    first (`world/spares.py`, as `place_each` takes them; the caller sets their world, tile
    and UUID), then new ones."""
    layer, cls, name, type_, materials, fresh, attrs = plan
    if fresh:
        objs: list[WorldObject] = []
    else:
        spare = spares.ready(kind, cls, name, type_, materials, layer, attrs)
        objs = spare[: len(cells)]
        del spare[: len(cells)]
    for i in range(len(objs), len(cells)):
        x, y = cells[i]
        objs.append(build_plain(world, cls, name, type_, materials, fresh, attrs, x, y, layer, uuids[i]))
    return objs


@lru_cache(maxsize=256)  # a few building sizes per task
def _shell_plan(w: int, h: int) -> tuple[Picker, Picker, Picker]:
    """For a w x h shell, whose loop makes a floor per tile and then its wall on a border tile
    (column by column): pickers of the floors' UUIDs and of the walls' from the shell's UUIDs,
    and one that puts floors + walls (each in the loop's order) into the loop's order."""
    f_at: list[int] = []
    w_at: list[int] = []
    for i in range(w):
        for j in range(h):
            f_at.append(len(f_at) + len(w_at))
            if i in (0, w - 1) or j in (0, h - 1):
                w_at.append(len(f_at) + len(w_at))
    order = [0] * (len(f_at) + len(w_at))
    for n, at in enumerate(f_at + w_at):
        order[at] = n
    return _picker(f_at), _picker(w_at), _picker(order)


def _picker(indexes: list[int]) -> Picker:
    """`lambda seq: tuple(seq[i] for i in indexes)`, in C (`itemgetter` of one index gives the item)."""
    if len(indexes) == 1:
        only = indexes[0]
        return lambda seq: (seq[only],)
    return itemgetter(*indexes)


def wall_segment(world: World, x: int, y: int) -> None:
    ground(world, "floor", x, y)
    place(world, "wall", x, y)


def door_at(world: World, x: int, y: int, key_id: int = 0) -> WorldObject:
    """Replace a wall segment by a door."""
    for wall in [o for o in world.layer_at(x, y, Layer.BUILDING) if o.type == "wall"]:
        wall.remove_from_world()
    return place(world, "door", x, y, requires_key=key_id)


def tree(world: World, x: int, y: int) -> None:
    """A big tree: impassable trunk, passable leaves on the air layer above it."""
    place(world, "tree_trunk", x, y)
    if y > 0:
        place(world, "tree_leaves", x, y - 1)


def table_with(world: World, x: int, y: int, *items: WorldObject, kind: str = "table") -> WorldObject:
    table = place(world, kind, x, y)
    for item in items:
        table.add(item)
    return table


def scatter_plants(world: World, count: int = 15, kind: str = "plant_generic") -> None:
    """Plants on tiles holding nothing but grass, drawn from the build stream."""
    if inline_plan(kind) is None:  # a constructor might draw from the build stream between the tries
        _scatter_one_by_one(world, count, kind)
        return
    # The tries' coordinates in batches: `integers(0, size, size=n)` gives the values and stream
    # state of n scalar draws (tested), and a scalar draw costs about as much as a batch of 40.
    # The draws of a batch left unused are given back: the stream is left where the scalar
    # draws of the tries made leave it.
    placed, tries, used, batch = 0, 0, 0, 2 * (count + 8)
    rng, size, stacks = world.rng_build, world.size, world.stacks
    bitgen, start = rng.bit_generator, None
    cells: list[tuple[int, int]] = []  # placed at the end in one `place_each`: the same UUIDs, in order
    taken: set[tuple[int, int]] = set()  # a tile given a plant holds more than grass from then on
    while placed < count and tries < 2000:
        start, values, used = bitgen.state, rng.integers(0, size, size=batch).tolist(), 0
        while used < batch and placed < count and tries < 2000:
            tries += 1
            x, y = values[used], values[used + 1]
            used += 2
            stack = stacks[x][y]
            if not stack or (x, y) in taken:
                continue
            # (most tiles hold one object: its type read without `all`'s generator)
            if stack[0].type == "grass" if len(stack) == 1 else all(o.type == "grass" for o in stack):
                cells.append((x, y))
                taken.add((x, y))
                placed += 1
    if start is not None and used < batch:
        bitgen.state = start
        rng.integers(0, size, size=used)
    place_each(world, kind, cells)


def _scatter_one_by_one(world: World, count: int, kind: str) -> None:
    """`scatter_plants` drawing each try's two coordinates when it makes it."""
    placed, tries = 0, 0
    draw, size = world.rng_build.integers, world.size
    while placed < count and tries < 2000:
        tries += 1
        # Two scalar draws are the same values and stream state as one `size=2` draw (tested).
        x, y = int(draw(0, size)), int(draw(0, size))
        stack = world.stacks[x][y]
        if stack and all(o.type == "grass" for o in stack):
            place(world, kind, x, y)
            placed += 1


__all__ = [
    "building",
    "clear_ground",
    "door_at",
    "fill_grass",
    "ground",
    "ground_each",
    "place",
    "place_each",
    "scatter_plants",
    "spawn",
    "table_with",
    "tree",
    "wall_segment",
]
