"""Object templates (data/objects.json) and the factory that builds objects from them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from discoverylab.world import instruments, spare_check, spares, things
from discoverylab.world.materials import Material, material, shared_material
from discoverylab.world.objects import Container, Layer, WorldObject, stack_insert
from discoverylab.world.world import World

Rect = tuple[int, int, int, int]
"""A rectangle of cells: (x, y, width, height)."""

CLASSES: dict[str, type[WorldObject]] = {
    "WorldObject": WorldObject,
    "Container": Container,
    "Terrain": things.Terrain,
    "Wall": things.Wall,
    "Door": things.Door,
    "Sign": things.Sign,
    "Jar": things.Jar,
    "Pot": things.Pot,
    "Appliance": things.Appliance,
    "Food": things.Food,
    "Mold": things.Mold,
    "SoilTile": things.SoilTile,
    "Shovel": things.Shovel,
    "FertilizerBag": things.FertilizerBag,
    "Key": things.Key,
    "Instrument": instruments.Instrument,
}


@lru_cache(maxsize=1)
def templates() -> dict[str, dict[str, Any]]:
    raw = json.loads(resources.files("discoverylab.data").joinpath("objects.json").read_text("utf-8"))
    return {k: v for k, v in raw.items() if not k.startswith("_")}


@cache
def _plan(kind: str) -> tuple[type[WorldObject], str, str, dict[str, Any], tuple[Any, ...] | None, tuple[str, ...], dict[str, Any]]:
    """What `spawn` needs of a template, parsed once: (class, name, type, other attributes, the
    shared materials of scenery (None: fresh copies of `material_keys`), material keys, props)."""
    try:
        tpl = templates()[kind]
    except KeyError:
        raise KeyError(f"Unknown object kind {kind!r}; known: {sorted(templates())}") from None
    cls = CLASSES[tpl["class"]]
    attrs = dict(tpl.get("attrs", {}))
    for key in ("name", "type_"):  # the template's own name and type win
        attrs.pop(key, None)
    if "layer" in tpl:
        attrs["layer_hint"] = Layer[tpl["layer"]]
    props = dict(tpl.get("props", {}))
    if "props" in attrs:  # props given as an attribute: added after the template's own, as overrides are
        props.update(attrs.pop("props"))
    material_keys = tuple(tpl.get("materials", []))
    shared = tuple(shared_material(m) for m in material_keys) if issubclass(cls, things.Terrain) else None
    return cls, tpl["name"], tpl["type"], attrs, shared, material_keys, props


def spawn(world: World, kind: str, **overrides: Any) -> WorldObject:
    """Create an object from its template. `name`/`type_` and any attribute can be overridden."""
    cls, name, type_, attrs, shared, material_keys, tpl_props = _plan(kind)
    props = None
    if overrides:
        attrs = {**attrs, **overrides}
        name, type_, props = attrs.pop("name", name), attrs.pop("type_", type_), attrs.pop("props", None)
    materials = list(shared) if shared is not None else [material(m) for m in material_keys]
    obj = cls(world, name, type_, materials, **attrs)
    if tpl_props:
        obj.props.update(tpl_props)
    if props:
        obj.props.update(props)
    if kind == "soil":
        obj.add(spawn(world, "dirt"))
    return obj


def spawn_some(world: World, kinds: tuple[str, ...] | list[str], keep: list[int]) -> dict[int, WorldObject]:
    """What `[spawn(world, k) for k in kinds]` then `remove_from_world` of all but the indexes
    `keep` leaves, without building the others: the kept objects by index, made in index order
    (the registry's) with the UUIDs the full list gives them. A pool of which a level keeps a
    few (5 of 16 objects) costs a spawn and a removal per object it drops otherwise. Each kind
    must take exactly one UUID (a template's object holds nothing new: not "soil")."""
    start = world._uuid_index
    world.take_uuids(len(kinds))  # the whole block, as the full list takes it
    end = world._uuid_index
    kept: dict[int, WorldObject] = {}
    try:
        for i in sorted(set(keep)):
            world._uuid_index = start + i
            kept[i] = spawn(world, kinds[i])
            if world._uuid_index != start + i + 1:
                raise ValueError(f"spawn_some: a {kinds[i]!r} takes more than one UUID; spawn the list.")
    finally:
        world._uuid_index = end
    return kept


Inline = tuple[Layer, type[WorldObject], str, str, tuple[Material, ...], bool, dict[str, Any]]
"""What `build_plain` needs of a plain kind: (layer, class, name, type, materials, whether each
object gets copies of them (`spawn`'s `material`) rather than the shared ones, attributes)."""


@cache
def inline_plan(kind: str) -> Inline | None:
    """How `place` and `place_each` build an object of `kind` inline when it is plain (no
    props, parts or tick, the base constructor, template attributes its class declares,
    nothing `World.dispose` must untie: it never visits objects that are not registered),
    else None: grass, floors and walls, and also trees, plants and tables (~40 per reset)."""
    cls, name, type_, attrs, shared, keys, props = _plan(kind)
    if props or kind == "soil" or cls.needs_tick or cls.__init__ is not WorldObject.__init__:
        return None
    if cls.release is not WorldObject.release or any(attrs.get(key) for key in ("needs_tick", "is_agent", "dialogable")):
        return None
    if not all(hasattr(cls, key) for key in attrs):  # `WorldObject.__init__` raises the clear error
        return None
    hint = attrs.get("layer_hint")  # no class sets `layer_hint` but `WorldObject` (None): templates do
    layer = Layer(hint if hint is not None else cls.default_layer)
    if shared is None:  # the table's own materials, copied per object as `spawn` does
        return layer, cls, name, type_, tuple(shared_material(m) for m in keys), True, attrs
    return layer, cls, name, type_, shared, False, attrs


def build_plain(
    world: World, cls: type[WorldObject], name: str, type_: str, materials: tuple[Any, ...], fresh: bool,
    attrs: dict[str, Any], x: int, y: int, layer: Layer, uuid: int,
) -> WorldObject:  # fmt: skip
    """A plain scenery object built inline, off the grid: what `spawn` + `World.place` build,
    attributes in the order `WorldObject.__init__` sets them (so instances share one key
    table), one statement each (tuple assignments cost a fifth more of a grass fill); `cls.__new__`
    is `object.__new__`, or a compiled (mypyc) class's own. `place` repeats this body, and
    `place_each` in its loop (`new` bound once there saves another 5%): keep all three the same (`tests/test_speed_paths.py` compares each with `spawn` for every template)."""
    obj: WorldObject = cls.__new__(cls)
    obj.world = world
    obj.name = name
    obj.type = type_
    obj.materials = [m.copy() for m in materials] if fresh else [*materials]
    obj.contents = []
    obj.parts = []
    obj.parent = None
    obj.x = x
    obj.y = y
    obj.layer = layer
    obj.alive = True
    obj.props = {}
    if attrs:
        for key, value in attrs.items():
            setattr(obj, key, value)
    obj.uuid = uuid
    return obj


# Overrides `place` never builds inline: what `build_plain` sets itself, what changes the name, type,
# props or layer, and what makes an object tick, talk or act (`inline_plan`'s exclusions).
_NOT_INLINE = frozenset({"world", "name", "type", "type_", "materials", "contents", "parts", "parent", "x", "y",
                         "layer", "alive", "props", "uuid", "layer_hint", "needs_tick", "is_agent", "dialogable"})  # fmt: skip



def place(world: World, kind: str, x: int, y: int, **overrides: Any) -> WorldObject:
    """Spawn and put on the grid on the template's layer."""
    if not world._watchers and 0 <= x < world.size and 0 <= y < world.size:
        plan = inline_plan(kind)
        if plan is not None and overrides:  # e.g. a door's key, a sign's text: ~10 per reset
            cls = plan[1]
            if _NOT_INLINE.isdisjoint(overrides) and all(hasattr(cls, key) for key in overrides):
                plan = (*plan[:6], {**plan[6], **overrides})  # in `spawn`'s order
            else:
                plan = None  # the general path (and its clear errors)
        if plan is not None:  # plain scenery (most objects of a map), built inline: a third of the time
            layer, cls, name, type_, materials, fresh, attrs = plan
            uuid = world.next_uuid()
            spare = None if fresh or overrides else spares.ready(kind, cls, name, type_, materials, layer, attrs)
            if spare:  # shared scenery (paths, fences, walls): a disposed world's untouched one first
                obj = spare.pop()
                obj.world = world
                obj.x = x
                obj.y = y
                obj.uuid = uuid
            else:  # `build_plain`'s body, inline (as in `place_each`): its call cost ~2,000 instructions
                obj = cls.__new__(cls)  # `object.__new__`, or a compiled class's own
                obj.world = world
                obj.name = name
                obj.type = type_
                obj.materials = [m.copy() for m in materials] if fresh else [*materials]
                obj.contents = []
                obj.parts = []
                obj.parent = None
                obj.x = x
                obj.y = y
                obj.layer = layer
                obj.alive = True
                obj.props = {}
                if attrs:
                    for key, value in attrs.items():
                        setattr(obj, key, value)
                obj.uuid = uuid
            if spare is not None:  # own material copies or attributes of its own: never recycled
                world.record_fill(kind, [obj], [uuid])
            world.objects[uuid] = obj
            stack = world.stacks[x][y]  # as `World.place` puts it (nobody watches)
            if stack and stack[-1].layer < layer:  # type: ignore[operator]  # else last: `stack_insert` without the call
                stack_insert(stack, obj, layer)
            else:
                stack.append(obj)
            return obj
    return world.place(spawn(world, kind, **overrides), x, y)


@cache
def all_cells(size: int) -> list[tuple[int, int]]:
    """Every tile of a size x size map, x-major (shared: do not change it)."""
    return [(x, y) for x in range(size) for y in range(size)]


def place_each(world: World, kind: str, cells: Iterable[tuple[int, int]], holes: Iterable[Rect] = ()) -> None:
    """`place(world, kind, x, y)` for every cell in order, the template looked up once: a map
    of grass is a thousand objects per reset (`place`'s inline work in one loop).

    `holes` (rects (x, y, w, h), only with `all_cells`): cells left bare whose UUIDs are taken
    all the same, in order, so every later object gets the UUID it gets without holes. For
    ground a building covers at once (`layout.fill_grass`): the grass there would only be
    removed again (~200 of 1,024 objects per unit-test reset).

    The objects of a kind with shared materials are recorded on the world (`World.record_fill`):
    the next world's builds of `kind` reuse those left untouched (`world/spares.py`) before
    building new ones; so does `place`."""
    plan = inline_plan(kind)
    cells = cells if isinstance(cells, list) else list(cells)
    size = world.size
    kept = _kept_cells(cells, size, holes) if holes else None
    if plan is None or world._watchers or (
        cells is not all_cells(size) and not all(0 <= x < size and 0 <= y < size for x, y in cells)
    ):  # fmt: skip
        bare = set() if kept is None else set(range(len(cells))).difference(*(range(len(cells))[run] for run in kept[1]))
        for i, (x, y) in enumerate(cells):  # the general path (it also raises the clear errors)
            if i in bare:
                world.take_uuids(1)
            else:
                place(world, kind, x, y)
        return
    layer, cls, name, type_, materials, fresh, attrs = plan
    stacks = world.stacks
    uuids = world.take_uuids(len(cells))
    if kept is not None:  # the cells outside the holes, and their UUIDs
        kept_uuids: list[int] = []
        for run in kept[1]:  # a slice per run of cells between holes: in C (`compress` cost ~80 instructions a cell)
            kept_uuids += uuids[run]
        cells, uuids = kept[0], kept_uuids
    # One zip of three flat iterators, not a zip of `objs` and a zip of pairs: the nested tuple
    # and its unpacking cost ~200 instructions per object, 0.17-0.33M per unit-test grass fill.
    cell_iter, uuid_iter = iter(cells), iter(uuids)
    # The last disposed world's untouched objects of this kind first (`world/spares.py`): only
    # their world, tile and UUID differ from a new object's. `objs` first: zip stops on it
    # without taking a cell or a UUID.
    spare = spares.ready(kind, cls, name, type_, materials, layer, attrs) if not fresh else []
    objs: list[WorldObject] = spare[: len(cells)]  # the first cells' objects, then the new ones
    del spare[: len(cells)]
    filed = 0  # how many of `objs` are in the registry already
    if objs and spare_check.COMPILED:  # the loop below, typed, filing them too (`spare_check.put`)
        spare_check.put(objs, world, cells, uuids, layer, file=True)
        filed = len(objs)
        cell_iter, uuid_iter = iter(cells[filed:]), iter(uuids[filed:])
        objs_iter: list[WorldObject] = []
    else:
        objs_iter = objs
    for obj, (x, y), uuid in zip(objs_iter, cell_iter, uuid_iter, strict=False):
        obj.world = world
        obj.x = x
        obj.y = y
        obj.uuid = uuid
        stack = stacks[x][y]
        if stack and stack[-1].layer < layer:  # type: ignore[operator]  # as in `place`
            stack_insert(stack, obj, layer)
        else:
            stack.append(obj)
    new = cls.__new__  # `object.__new__`, or a compiled class's own
    for (x, y), uuid in zip(cell_iter, uuid_iter, strict=True):  # the rest, as `place`
        # `build_plain`'s body, inline: the call with its twelve arguments cost ~1,000 instructions
        # per object, ~1M per grass fill (`tests/test_speed_paths.py` compares every template).
        obj = new(cls)
        obj.world = world
        obj.name = name
        obj.type = type_
        obj.materials = [m.copy() for m in materials] if fresh else [*materials]
        obj.contents = []
        obj.parts = []
        obj.parent = None
        obj.x = x
        obj.y = y
        obj.layer = layer
        obj.alive = True
        obj.props = {}
        if attrs:
            for key, value in attrs.items():
                setattr(obj, key, value)
        obj.uuid = uuid
        stack = stacks[x][y]
        if stack and stack[-1].layer < layer:  # type: ignore[operator]  # as in `place`
            stack_insert(stack, obj, layer)
        else:
            stack.append(obj)
        objs.append(obj)
    if filed:  # the new ones after the spares, in order
        spare_check.file_all(world.objects, uuids[filed:], objs[filed:])
    else:
        spare_check.file_all(world.objects, uuids, objs)
    if not fresh:  # own material copies: never recycled
        world.record_fill(kind, objs, uuids)


# `_kept_cells`' answers per (size, holes): a layout has a few sets of buildings (Moving Agents:
# 20; a unit test's house stands at one of ~150 sites). Emptied when it grows past `_KEPT_LIMIT`
# entries (a task whose holes are drawn freely).
_KEPT: dict[tuple[int, tuple[tuple[int, ...], ...]], tuple[list[tuple[int, int]], list[slice]]] = {}
_KEPT_LIMIT = 512


def _kept_cells(cells: list[tuple[int, int]], size: int,
                holes: Iterable[Rect]) -> tuple[list[tuple[int, int]], list[slice]]:  # fmt: skip
    """For a fill of `all_cells(size)` (x-major) with `holes`: the cells outside the holes in
    order, and the runs of them between holes (as slices of the cells' indices). Worked out
    from each hole column's span of cell indices, sorted and merged (a byte mask cut by slices
    and read back by a regular expression cost ~0.14M instructions per new house site), then
    kept. Shared: never change them."""
    if cells is not all_cells(size):
        raise ValueError("place_each: holes are only for a fill of all_cells(world.size).")
    key = (size, tuple(sorted([tuple(hole) for hole in holes])))  # the same cells, whatever the rects' order
    known = _KEPT.get(key)
    if known is None:
        spans: list[tuple[int, int]] = []  # per column of a hole, its cells' indices [start, stop)
        for hole in key[1]:
            x0, y0, w, h = hole
            if w < 1 or h < 1 or x0 < 0 or y0 < 0 or x0 + w > size or y0 + h > size:
                raise ValueError(f"place_each: hole {(x0, y0, w, h)} is empty or leaves the {size}x{size} map.")
            for x in range(x0, x0 + w):
                spans.append((x * size + y0, x * size + y0 + h))
        spans.sort()
        runs: list[slice] = []  # the gaps between the merged spans
        at = 0
        for start, stop in spans:
            if start > at:
                runs.append(slice(at, start))
            if stop > at:
                at = stop
        if at < size * size:
            runs.append(slice(at, size * size))
        kept: list[tuple[int, int]] = []
        for run in runs:
            kept += cells[run]
        known = (kept, runs)
        if len(_KEPT) >= _KEPT_LIMIT:
            _KEPT.clear()
        _KEPT[key] = known
    return known


# Every plain kind's names in its class's shared key table before any object exists (`spares.share_key_tables`).
spares.share_key_tables((plan[1], plan[6]) for plan in map(inline_plan, templates()) if plan is not None)
