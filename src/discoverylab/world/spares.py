"""Plain scenery recycled from a disposed world into the next world this process builds.

Why: a unit test's reset builds ~830 grass objects (`catalog.place_each`) while the previous
world frees as many; making and freeing one (with its four containers) costs ~5,000
instructions, a third of the reset. A grass object the episode left as the fill made it, and
that nothing outside its disposed world still holds, cannot be told from a new one once its
world, tile and UUID are set again: `place_each` reuses such objects instead.

The check that an object is untouched must be complete (a scenario or an action may set any
attribute of any object: a heater warms its target) and cheap (it runs on every grass object,
every reset). `gc.get_referents` lists exactly the values of an object's instance attributes,
then its class, without materialising its `__dict__`; per object, that list must equal what the
fill stored: the same world, name, type, materials, empty contents, parts and props, no
parent, the fill's layer, alive, the template's attributes and its own UUID, and nothing else
(an added attribute makes the list longer; a deleted one shifts the values after it, and the
checks of layer, alive, props and UUID fail). Values compare by `==` (an equal string or
material is as good as the same one). An object is reused only if the spare list alone holds
it (`sys.getrefcount`): no caller can see an object change worlds. Its containers are not
counted (a third of what reuse saves): no code keeps another object's lists, and
`tests/test_spares.py` plays every unit test to check that (`containers_held_elsewhere`).
Whatever fails is left to the garbage collector and built anew.

One entry per kind, the last disposed world's (a later disposal replaces it), taken whole by
the next fill of that kind; an entry nobody takes keeps one disposed world's fill alive.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable
from itertools import compress
from operator import is_, ne, or_
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discoverylab.world.objects import Layer, WorldObject
    from discoverylab.world.world import World

Fill = tuple[str, list["WorldObject"], list[int]]
"""What a world records of a fill (`World.record_fill`): the kind, its objects and their UUIDs."""

_SPARE: dict[str, tuple[World, list[WorldObject], list[int]]] = {}
_CONTAINERS = (3, 4, 5, 11)  # materials, contents, parts, props in `_row`'s order
_X, _Y = 7, 8  # overwritten on reuse: not compared
# Per class and template attributes: whether `_row` is its objects' layout (`_layout_known`).
_layouts: dict[tuple[type, tuple[str, ...]], bool] = {}


def _sole_refs() -> tuple[int, int]:
    """What `sys.getrefcount` reports, in `take`'s expressions, for an object held by one list
    only and for a container held by one object only (measured, not assumed: it differs across
    Python versions)."""
    once = max(map(sys.getrefcount, [[]]))
    holder: list[list[Any]] = [[]]
    refs = gc.get_referents(holder)  # kept, as `containers_held_elsewhere`'s `refs` is
    sole = max(map(sys.getrefcount, refs[0::1]))
    return once, sole


_ONCE, _SOLE = _sole_refs()


def offer(world: World, fills: Iterable[Fill], registered: dict[int, WorldObject]) -> None:
    """Keep a disposed world's fills for the next world's (`World.dispose`), without the objects
    no longer in its registry `registered` (grass under a path: Dialog's build removes some every
    reset, and each would cost `take` a comparison per column)."""
    for kind, objs, uuids in fills:
        found = list(map(registered.get, uuids))
        if found != objs:  # objects compare by identity
            keep = list(map(is_, found, objs))
            objs, uuids = list(compress(objs, keep)), list(compress(uuids, keep))
        _SPARE[kind] = (world, objs, uuids)


def clear() -> None:
    """Forget every kept fill (tests; a process that wants the memory back)."""
    _SPARE.clear()


def _row(world: World, cls: type, name: str, type_: str, materials: list[Any], layer: Layer,
         attrs: dict[str, Any], uuid: Any) -> list[Any]:  # fmt: skip
    """An untouched fill object's referents, in the order `catalog.build_plain` stores its attributes."""
    return [world, name, type_, materials, [], [], None, None, None, layer, True, {}, *attrs.values(), uuid, cls]


def take(kind: str, cls: type, name: str, type_: str, materials: tuple[Any, ...], layer: Layer,
         attrs: dict[str, Any]) -> list[WorldObject]:  # fmt: skip
    """The last disposed fill's objects of `kind` that can be reused as new ones (see the module
    docstring), in no particular order; [] when there are none. `materials` etc.: the kind's
    plan (`catalog.inline_plan`), as the fill builds its objects."""
    entry = _SPARE.pop(kind, None)
    if entry is None:
        return []
    old, objs, uuids = entry
    del entry
    mats = list(materials)
    if not _layout_known(old, cls, name, type_, mats, layer, attrs):
        return []
    if objs and max(map(sys.getrefcount, objs)) > _ONCE:  # held elsewhere (a scenario's list, a cache)
        keep = [count <= _ONCE for count in map(sys.getrefcount, objs)]
        objs, uuids = list(compress(objs, keep)), list(compress(uuids, keep))
    row = _row(old, cls, name, type_, mats, layer, attrs, None)
    refs = gc.get_referents(*objs)
    if len(refs) != len(row) * len(objs):  # some object gained or lost an attribute: one at a time
        del refs
        return [obj for obj, uuid in zip(objs, uuids, strict=True) if _pristine([obj], [uuid], row)]
    bad = _mismatches(refs, len(objs), uuids, row)
    del refs
    return objs if bad is None else list(compress(objs, [not b for b in bad]))


def _pristine(objs: list[WorldObject], uuids: list[int], row: list[Any]) -> bool:
    """Whether every one of `objs` (few) is untouched: `take`'s check, for a list it cannot do at once."""
    refs = gc.get_referents(*objs)
    if len(refs) != len(row) * len(objs):
        return False
    return _mismatches(refs, len(objs), uuids, row) is None


def _mismatches(refs: list[Any], n: int, uuids: list[int], row: list[Any]) -> list[bool] | None:
    """Per object, whether its referents differ from `row` (with its own UUID, any tile); None
    when none does. `refs`: the objects' referents, `len(row)` each. One comparison of the whole
    list (mostly identities) in the usual case; else one per column (slicing per object cost
    twice as much: Dialog's build removes some grass every reset)."""
    width = len(row)
    expected = row * n
    expected[_X::width] = refs[_X::width]
    expected[_Y::width] = refs[_Y::width]
    expected[width - 2 :: width] = uuids
    if refs == expected:
        return None
    bad: list[bool] | None = None  # some object differs (e.g. grass the build removed): per column
    for slot in range(width):
        column, want = refs[slot::width], expected[slot::width]
        if column != want:
            found = list(map(ne, column, want))
            bad = found if bad is None else list(map(or_, bad, found))
    return bad


def containers_held_elsewhere(objs: list[WorldObject]) -> list[WorldObject]:
    """Those of `objs` with a container (materials, contents, parts, props) that something other
    than the object holds. `take` does not check this (it would cost a third of what reuse saves):
    no code keeps another object's containers, and `tests/test_spares.py` plays every unit test
    to check that none of the objects `take` accepts has one."""
    out = []
    for obj in objs:
        refs = gc.get_referents(obj)
        if max(map(sys.getrefcount, [refs[slot] for slot in _CONTAINERS])) > _SOLE:  # as `_sole_refs` counts
            out.append(obj)
    return out


def _layout_known(world: World, cls: type, name: str, type_: str, materials: list[Any], layer: Layer,
                  attrs: dict[str, Any]) -> bool:  # fmt: skip
    """Whether objects of `cls` list their referents in `_row`'s order on this Python (checked
    once per class and template attributes, on a probe built as `catalog.build_plain` builds); if
    not, nothing of the kind is reused."""
    key = (cls, tuple(attrs))
    known = _layouts.get(key)
    if known is None:
        probe: Any = object.__new__(cls)
        values: tuple[Any, ...] = (world, name, type_, [*materials], [], [], None, 3, 4, layer, True, {})
        for attr, value in zip(_FIELDS, values, strict=True):
            setattr(probe, attr, value)
        for attr, value in attrs.items():
            setattr(probe, attr, value)
        probe.uuid = 12345
        want = _row(world, cls, name, type_, materials, layer, attrs, 12345)
        want[_X], want[_Y] = 3, 4
        known = _layouts[key] = gc.get_referents(probe) == want
    return known


_FIELDS = ("world", "name", "type", "materials", "contents", "parts", "parent", "x", "y", "layer", "alive", "props")
