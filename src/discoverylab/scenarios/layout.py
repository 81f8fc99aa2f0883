"""Map-building helpers shared by scenarios: terrain fill, one-room buildings, trees, plants."""

from __future__ import annotations

from discoverylab.world import spares
from discoverylab.world.catalog import Rect, all_cells, build_plain, inline_plan, place, place_each, spawn
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World


def fill_grass(world: World, under: tuple[Rect, ...] = ()) -> None:
    """Grass on every tile but those of `under`: the rects (x, y, w, h) of the buildings the
    caller lays next (`building` clears the grass under its floor: that grass is not built at
    all). Their grass UUIDs are taken all the same, so every UUID is the one the full fill
    gives. Nothing may read those tiles before the buildings cover them."""
    place_each(world, "grass", all_cells(world.size), holes=under)


_WORLD = Layer.WORLD


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
    f_layer, f_cls, f_name, f_type, f_materials, f_fresh, f_attrs = floor
    w_layer, w_cls, w_name, w_type, w_materials, w_fresh, w_attrs = wall
    wall_on_top = w_layer > f_layer  # `stack_insert`: the wall before the floor iff its layer is higher
    # A disposed world's untouched floors and walls first (`world/spares.py`, as `place_each`'s
    # grass): only their world, tile and UUID are set again.
    f_spare = [] if f_fresh else spares.ready("floor", f_cls, f_name, f_type, f_materials, f_layer, f_attrs)
    w_spare = [] if w_fresh else spares.ready("wall", w_cls, w_name, w_type, w_materials, w_layer, w_attrs)
    all_uuids = world.take_uuids(2 * (w + h) - 4 + w * h if w > 1 and h > 1 else w * h * 2)
    uuids = iter(all_uuids)
    objects, right, bottom = world.objects, x + w - 1, y + h - 1
    floors: list[WorldObject] = []
    walls: list[WorldObject] = []
    for i in range(x, x + w):
        column, edge = stacks[i], i == x or i == right
        for j in range(y, y + h):
            uuid = next(uuids)
            if f_spare:
                f = f_spare.pop()
                f.world = world
                f.x = i
                f.y = j
                f.uuid = uuid
            else:
                f = build_plain(world, f_cls, f_name, f_type, f_materials, f_fresh, f_attrs, i, j, f_layer, uuid)
            objects[uuid] = f
            floors.append(f)
            if edge or j == y or j == bottom:
                uuid = next(uuids)
                if w_spare:
                    b = w_spare.pop()
                    b.world = world
                    b.x = i
                    b.y = j
                    b.uuid = uuid
                else:
                    b = build_plain(world, w_cls, w_name, w_type, w_materials, w_fresh, w_attrs, i, j, w_layer, uuid)
                objects[uuid] = b
                walls.append(b)
                column[j] += (b, f) if wall_on_top else (f, b)
            else:
                column[j].append(f)
    if not f_fresh:
        world.record_fill("floor", floors, [f.uuid for f in floors])
    if not w_fresh:
        world.record_fill("wall", walls, [b.uuid for b in walls])
    return True


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
            if stack and (x, y) not in taken and all(o.type == "grass" for o in stack):
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
    "scatter_plants",
    "spawn",
    "table_with",
    "tree",
    "wall_segment",
]
