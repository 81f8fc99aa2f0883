"""The compiled engine's check that a disposed world's plain object is untouched (`spares.take`).

Why: the pure engine's check reads an object's values through `gc.get_referents`, which lists
only a compiled (mypyc) object's boxed fields, never its bools, ints and floats; so without
this module the compiled engine reused nothing and built ~830 grass objects anew per unit-test
reset (4.0M of its 8.2M instructions). Reading ~40 fields through `getattr` cost more than a
new object (8.2M -> 14.2M, session 25). Here each field is read by name on a `WorldObject`:
compiled, every read is a load from the object's C struct and every comparison a few
instructions.

The check must be complete: an episode may change any field of any object (a heater warms its
target). `untouched` compares every field in `CHECKED_FIELDS` with a model object built as
`catalog.build_plain` builds one (its tile and UUID aside, which builders set anew); `spares`
reuses no object of a class whose compiled fields are not exactly those
(`tests/test_native.py` plays a unit test compiled and checks both the fields and that a change
to any one of them keeps an object from reuse). Values added outside the fields (an instance
`__dict__`: a compiled `WorldObject` has one, since its base `FastState` is interpreted) are
found by `passing` itself when `spares._take_compiled` gives it `sole` (`object.__getstate__`; a
`__dict__` emptied again counts as none), with the reference count (`sole_refs`).
"""

from __future__ import annotations

import math
import sys
from types import FunctionType
from typing import TYPE_CHECKING, Any, Final

from discoverylab.world.objects import stack_insert

if TYPE_CHECKING:
    from discoverylab.world.objects import Layer, WorldObject
    from discoverylab.world.world import World

# Every field of a compiled plain object that `untouched` compares, then those builders set anew
# (`REPLACED`): a class with any other field is never reused.
REPLACED = ("x", "y", "uuid")
CHECKED_FIELDS = (
    "movable", "passable", "obscures_below", "is_container", "container_prefix", "openable", "is_open", "is_passage",
    "activatable", "activated", "usable", "dialogable", "edible", "readable", "document", "is_agent", "is_npc",
    "poisonous", "cooked", "shovelable", "temperature_c", "key_id", "requires_key", "density", "sprite", "layer_hint",
    "world", "name", "type", "materials", "contents", "parts", "parent", "layer", "alive", "props",
)  # fmt: skip


def model(world: World, cls: type, name: str, type_: str, materials: tuple[Any, ...], layer: Layer,
          attrs: dict[str, Any]) -> WorldObject:  # fmt: skip
    """An object of the kind as `catalog.build_plain` builds it in `world` (tile -1, -1, UUID 0)."""
    from discoverylab.world.catalog import build_plain  # catalog imports spares, which imports this

    return build_plain(world, cls, name, type_, materials, False, attrs, -1, -1, layer, 0)


def untouched(obj: WorldObject, like: WorldObject) -> bool:
    """Whether every field of `obj` in `CHECKED_FIELDS` equals `like`'s (its `model`): objects,
    layers and materials by identity, strings and numbers by value, the containers empty; an
    object with a field unset is not. `passing` of one object: one set of comparisons."""
    return passing([obj], like) == [obj]


def passing(objs: list[WorldObject], like: WorldObject, sole: int = 0) -> list[WorldObject]:
    """Those of `objs` that are `untouched` (in order); one with a field unset is not. The same
    comparisons as `untouched`, with `like`'s values read once, not once per object: compiled,
    half the field reads (`untouched` alone cost ~550 instructions an object, ~0.6M per
    unit-test reset). With `sole` (`sole_refs`), also only those that `objs` alone holds
    (`sys.getrefcount` here at most `sole`) and that have no attribute beyond their fields
    (`object.__getstate__`: None when an object's `__dict__` is unset or empty;
    `gc.get_referents` would list it too, at twice the cost): `spares.take`'s whole check in one
    loop (a `map` over the objects per check cost ~250 instructions an object more)."""
    getrefcount, getstate = sys.getrefcount, _GETSTATE
    cls, world, layer, alive, hint = type(like), like.world, like.layer, like.alive, like.layer_hint
    name, type_, prefix, document, sprite = like.name, like.type, like.container_prefix, like.document, like.sprite
    materials: list[Any] = like.materials  # `Any`: compiled, an item of another type is compared, not
    count = len(materials)  # refused with a TypeError
    movable, passable, obscures_below, is_container = like.movable, like.passable, like.obscures_below, like.is_container
    openable, is_open, is_passage, activatable = like.openable, like.is_open, like.is_passage, like.activatable
    activated, usable, dialogable, edible, readable = like.activated, like.usable, like.dialogable, like.edible, like.readable
    is_agent, is_npc, poisonous, cooked, shovelable = like.is_agent, like.is_npc, like.poisonous, like.cooked, like.shovelable
    key_id, requires_key, temperature, density = like.key_id, like.requires_key, like.temperature_c, like.density
    warmth_sign, mass_sign = math.copysign(1.0, temperature), math.copysign(1.0, density)
    kept: list[WorldObject] = []
    for obj in objs:
        try:
            if sole and getrefcount(obj) > sole:  # held elsewhere (a caller, a scenario's list)
                continue
            if type(obj) is not cls or obj.world is not world or obj.parent is not None:
                continue
            if obj.contents or obj.parts or obj.props or obj.layer is not layer or obj.alive != alive:
                continue
            if obj.name != name or obj.type != type_ or obj.layer_hint is not hint:
                continue
            items: list[Any] = obj.materials
            if len(items) != count:
                continue
            same = True
            for j in range(count):  # (a `range` loop: no boxed index, no tagged-int arithmetic)
                if items[j] is not materials[j]:
                    same = False
                    break
            if not same:
                continue
            if (
                obj.movable != movable or obj.passable != passable or obj.obscures_below != obscures_below
                or obj.is_container != is_container or obj.openable != openable or obj.is_open != is_open
                or obj.is_passage != is_passage or obj.activatable != activatable or obj.activated != activated
                or obj.usable != usable or obj.dialogable != dialogable or obj.edible != edible
                or obj.readable != readable or obj.is_agent != is_agent or obj.is_npc != is_npc
                or obj.poisonous != poisonous or obj.cooked != cooked or obj.shovelable != shovelable
                or obj.key_id != key_id or obj.requires_key != requires_key
            ):  # fmt: skip
                continue
            if obj.container_prefix != prefix or obj.document != document or obj.sprite != sprite:
                continue
            warmth, mass = obj.temperature_c, obj.density  # equal, and 0.0 told from -0.0 (they print differently)
            if warmth != temperature or mass != density:
                continue
            if (warmth == 0.0 and math.copysign(1.0, warmth) != warmth_sign) or (mass == 0.0 and math.copysign(1.0, mass) != mass_sign):
                continue
            if sole and getstate(obj) is not None:  # attributes of its own
                continue
        except AttributeError:
            continue
        kept.append(obj)
    return kept


_GETSTATE = object.__getstate__


def sole_refs(world: World, cls: type, name: str, type_: str, materials: tuple[Any, ...], layer: Layer,
              attrs: dict[str, Any]) -> int:  # fmt: skip
    """What `passing` reads as the reference count of an object that only its list holds: measured
    once, on a `model` (arguments as for it) in a list of its own (compiled code may hold more
    references than the interpreter does: measured, not assumed). 0 when no count up to 8 lets
    the model pass (it fails another check: then nothing of the kind is reused, and the next kind
    measures again)."""
    global _SOLE
    if _SOLE <= 0:
        like = model(world, cls, name, type_, materials, layer, attrs)
        for sole in range(1, 9):
            if passing(_held_once(world, cls, name, type_, materials, layer, attrs), like, sole):
                _SOLE = sole
                break
    return _SOLE


def _held_once(world: World, cls: type, name: str, type_: str, materials: tuple[Any, ...], layer: Layer,
               attrs: dict[str, Any]) -> list[WorldObject]:  # fmt: skip
    """A new `model` that only the returned list holds (`sole_refs`)."""
    return [model(world, cls, name, type_, materials, layer, attrs)]


_SOLE = 0


def put(objs: list[WorldObject], world: World, cells: list[tuple[int, int]], uuids: list[Any], layer: Layer,
        file: bool = False) -> None:  # fmt: skip
    """`catalog.place_each`'s loop over the spares it reuses (the first `len(objs)` cells and
    UUIDs), as an index loop: compiled, the loop's `zip` of tuples cost ~200 instructions an
    object more (the pure engine keeps the `zip`: `COMPILED`). With `file`, each object is filed
    in the registry too (`place_each`: its spares come first in both the cells and the
    registry's order, so `file_all` then files only the new objects): one loop instead of two,
    ~40 instructions an object less. `Any` UUIDs: their own int objects become the keys."""
    stacks, objects = world.stacks, world.objects
    for i in range(len(objs)):
        obj = objs[i]
        x, y = cells[i]
        uuid = uuids[i]
        obj.world = world
        obj.x = x
        obj.y = y
        obj.uuid = uuid
        stack = stacks[x][y]
        if stack and stack[-1].layer < layer:  # type: ignore[operator]  # as in `place_each`
            stack_insert(stack, obj, layer)
        else:
            stack.append(obj)
        if file:
            objects[uuid] = obj


def file_all(objects: dict[Any, Any], uuids: list[Any], objs: list[WorldObject]) -> None:
    """File a builder's plain objects in the registry under their UUIDs, in order (`place_each`,
    `layout._bare_shell`). Interpreted, `objects.update(zip(...))` (its loop in C); compiled,
    an index loop: a `PyDict_SetItem` per object instead of `update`'s pass over zipped pairs
    (~400 instructions an object, ~0.4M per unit-test reset). `Any` keys: the UUIDs' own int
    objects go in (an `int` item would be unboxed and a new int made for the key)."""
    if len(uuids) != len(objs):
        raise ValueError(f"file_all: {len(uuids)} UUIDs for {len(objs)} objects.")
    if not COMPILED:
        objects.update(zip(uuids, objs, strict=True))
        return
    for i in range(len(objs)):
        objects[uuids[i]] = objs[i]


COMPILED: Final = not isinstance(put, FunctionType)
"""Whether this module runs compiled (`discoverylab.native`): `place_each` then calls `put`."""
