"""Grass recycled from a disposed world (`world/spares.py`) against grass built anew: a world
built from spares must equal, attribute by attribute, the world built without them, and an
object the episode touched (or that someone still holds) must never be reused."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from tests.world_kit import readable_kinds

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import make_rl_env
from discoverylab.scenarios import layout
from discoverylab.world import spares
from discoverylab.world.catalog import inline_plan, place, spawn, templates
from discoverylab.world.materials import Material
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World

UNIT_TESTS = ("DoorsTest", "DialogTest", "NavigationHouseTest", "MovingAgentsTest", "SearchTest",
              "InstrumentMeasurementTest", "PickAndPlaceTest", "PickAndGiveTest", "DoorsWithKeysTest",
              "DiscoveryFeedTest")  # fmt: skip


@pytest.fixture(autouse=True)
def _no_spares() -> Iterator[None]:
    spares.clear()
    yield
    spares.clear()


def _norm(value: Any) -> Any:
    """A comparable form of an attribute value: objects by UUID, the world by a tag."""
    if isinstance(value, WorldObject):
        return ("obj", value.uuid)
    if isinstance(value, World):
        return "world"
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return [(k, _norm(v)) for k, v in value.items()]
    if isinstance(value, Material):
        return repr(value)
    if isinstance(value, int | float | str | bool | type(None)):
        return value
    return type(value).__name__  # callbacks, generators: their kind only


def _state(world: World) -> tuple[Any, ...]:
    """Every object (registry order, class, each attribute in its `__dict__` order) and stack."""
    objects = [(u, type(o).__name__, [(k, _norm(v)) for k, v in vars(o).items()]) for u, o in world.objects.items()]
    stacks = [[[o.uuid for o in stack] for stack in column] for column in world.stacks]
    return objects, stacks


def _play(env: Any, steps: int, seed: int) -> None:
    """Random masked steps (moves and turns two steps of three, as `rl_speed.py`)."""
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for i in range(steps):
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
        *_, term, trunc, info = env.step(int(allowed[int(rng.integers(len(allowed)))]))
        if term or trunc:
            _, info = env.reset(seed=seed + 1 + i)


def _fill_ids(world: World) -> set[int]:
    return {id(obj) for objs, _ in (world._fills or {}).values() for obj in objs}


def _village(seed: int, huts: tuple[tuple[int, int, int, int], ...]) -> World:
    """Grass with holes for `huts` (x, y, w, h), the huts, a path and a fence laid by `place`."""
    world = World(seed)
    layout.fill_grass(world, under=huts)
    for x, y, w, h in huts:
        layout.building(world, x, y, w, h, "Hut")
    for i in range(20):
        layout.ground(world, "path", 2 + i, 30)
        layout.place(world, "fence", 2 + i, 31)
    layout.place(world, "wall", 30, 2)
    return world


def test_leftover_spares_serve_the_next_builds_and_build_the_same_world() -> None:
    """A disposed world's floors and walls serve the next world's buildings one after another
    (what the first does not use stays ready for the second and for walls `place` lays), and
    the world equals one built without spares."""
    first = _village(1, ((3, 3, 9, 8),))
    old = _fill_ids(first)
    first.dispose()
    huts = ((2, 2, 4, 4), (10, 12, 5, 6), (20, 3, 3, 5))
    again = _village(2, huts)
    reused = {kind: sum(id(o) in old for o in objs) for kind, (objs, _) in (again._fills or {}).items()}
    assert reused["floor"] == 16 + 30 + 15  # every hut's floors: the second and third from what was left
    assert reused["wall"] == 29 + 1  # all of the first: 30 walls round 9x8, one gave way to the door; `place`'s
    assert reused["path"] == 20 and reused["fence"] == 20
    assert _state(again) == _state(_rebuilt_village(2, huts))


def _rebuilt_village(seed: int, huts: tuple[tuple[int, int, int, int], ...]) -> World:
    spares.clear()
    return _village(seed, huts)


def test_touched_or_held_floors_walls_paths_and_fences_are_never_reused() -> None:
    """`take`'s check on the kinds `place` and `layout.building` recycle: a changed or held
    object is built anew, the world equals one built without spares."""
    world = _village(3, ((4, 4, 6, 6),))
    floor, wall = world.layer_at(6, 6, Layer.WORLD)[0], world.layer_at(4, 5, Layer.BUILDING)[0]
    path, fence = world.layer_at(5, 30, Layer.WORLD)[0], world.layer_at(5, 31, Layer.BUILDING)[0]
    floor.props["wet"] = True
    wall.obscures_below = False
    path.name = "track"
    touched = [weakref.ref(o) for o in (floor, wall, path)]
    held = [fence]
    del floor, wall, path, fence
    world.dispose()
    again = _village(4, ((4, 4, 6, 6),))
    live = {id(o) for o in again.objects.values()}
    assert all(ref() is None or id(ref()) not in live for ref in touched)
    assert id(held[0]) not in live
    assert _state(again) == _state(_rebuilt_village(4, ((4, 4, 6, 6),)))


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_a_world_built_from_spares_equals_one_built_anew(task: str) -> None:
    played = make_rl_env(task)
    _play(played, 60, seed=3)
    before = _fill_ids(played.unwrapped.world)
    played.reset(seed=11)  # disposes the played world: its untouched scenery is reused
    world = played.unwrapped.world
    reused = {kind: sum(id(o) in before for o in objs) for kind, (objs, _) in world._fills.items()}
    assert reused["grass"] > 500 and reused["floor"] > 10  # the fast paths ran (not silently off)
    if task == "MovingAgentsTest":  # `place`'s: walls, paths and fences
        kinds = readable_kinds("wall", "path", "fence")  # all three in a fresh process (test_reset_recycling)
        assert "path" in kinds and min(reused[kind] for kind in kinds) > 10
    spares.clear()
    fresh = DiscoveryWorldEnv(task)
    fresh.reset(seed=11)
    assert fresh.world is not None
    assert _state(world) == _state(fresh.world)


def test_spares_of_another_task_build_the_same_world() -> None:
    played = make_rl_env("MovingAgentsTest")
    _play(played, 80, seed=5)
    played.unwrapped.world.dispose()
    env = DiscoveryWorldEnv("DoorsTest")
    env.reset(seed=2)
    spares.clear()
    fresh = DiscoveryWorldEnv("DoorsTest")
    fresh.reset(seed=2)
    assert env.world is not None and fresh.world is not None
    assert _state(env.world) == _state(fresh.world)


def _meadow(seed: int) -> World:
    world = World(seed)
    layout.fill_grass(world)
    return world


def _touch(world: World) -> tuple[dict[str, weakref.ref[WorldObject]], list[WorldObject]]:
    """Touch grass in every way the engine allows: which one each way touched (weakly: a
    reference would keep it from reuse by itself), and the one a caller still holds."""
    grass = [world.stacks[x][0][0] for x in range(15)]
    ways = ("contents", "part", "props", "added", "name", "materials", "material", "removed", "parent", "layer",
            "alive", "world", "moved")  # fmt: skip
    touched = dict(zip(ways, grass, strict=False))
    touched["contents"].add(spawn(world, "coin"))
    touched["part"].add_part(spawn(world, "coin"))
    touched["props"].props["wet"] = True
    touched["added"].temperature_c += 5.0  # a new instance attribute (what a heater does to its target)
    touched["name"].name = "lawn"
    touched["materials"].materials.append(touched["materials"].materials[0])
    touched["material"].materials[0] = touched["material"].materials[0].copy()
    touched["material"].materials[0].ph = 3.0
    touched["removed"].remove_from_world()
    touched["parent"].parent = spawn(world, "table")  # the attribute alone, without `add`
    touched["layer"].layer = None
    touched["alive"].alive = False
    touched["world"].world = World(99)
    world.place(touched["moved"], 20, 20)  # moved, otherwise as new: may be reused
    return {how: weakref.ref(obj) for how, obj in touched.items()}, [grass[-1]]


def test_touched_or_held_grass_is_never_reused() -> None:
    world = _meadow(4)
    touched, held = _touch(world)
    untouched = [weakref.ref(world.stacks[x][5][0]) for x in range(32)]
    world.dispose()
    again = _meadow(6)
    live = {id(o) for o in again.objects.values()}
    assert all(id(ref()) in live for ref in untouched)  # the rest is reused
    for how, ref in touched.items():
        if how not in ("contents", "part", "moved"):  # emptied by `dispose`, or only elsewhere: as new
            assert ref() is None or id(ref()) not in live, how
    assert id(held[0]) not in live
    assert _state(again) == _state(_rebuilt(6))


def _rebuilt(seed: int) -> World:
    spares.clear()
    return _meadow(seed)


def test_an_attribute_deleted_or_added_is_seen_one_object_at_a_time() -> None:
    world = _meadow(1)
    extra, gone = world.stacks[3][3][0], world.stacks[4][4][0]
    extra.sprite = "lawn"  # one value more than the others: `take` checks each object alone
    del gone.props  # and one less, made up by another: the values after it shift
    gone.quirk = {}
    changed = [weakref.ref(extra), weakref.ref(gone)]
    untouched = [weakref.ref(world.stacks[x][9][0]) for x in range(32)]
    del extra, gone
    world.dispose()
    again = _meadow(2)
    live = {id(o) for o in again.objects.values()}
    assert all(ref() is None or id(ref()) not in live for ref in changed)
    assert all(id(ref()) in live for ref in untouched)
    assert _state(again) == _state(_rebuilt(2))


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_no_container_of_a_reused_object_is_held_elsewhere(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`take` does not count the containers' references (see `world/spares.py`): no code path
    of a played unit test may keep one."""
    taken: list[WorldObject] = []
    plain_take = spares.take

    def take(*args: Any) -> list[WorldObject]:
        objs = plain_take(*args)
        assert spares.containers_held_elsewhere(objs) == []
        taken.extend(objs)
        return objs

    monkeypatch.setattr(spares, "take", take)
    env = make_rl_env(task)
    _play(env, 150, seed=8)
    env.reset(seed=9)
    assert taken


def test_a_container_held_elsewhere_is_found() -> None:
    world = _meadow(3)
    grass = world.stacks[2][2][0]
    kept = grass.contents
    assert spares.containers_held_elsewhere([grass]) == [grass]
    assert spares.containers_held_elsewhere([world.stacks[2][3][0]]) == []
    assert kept == []


def _paths(seed: int) -> World:
    """Ten paths laid by `place` (recorded for the next world), the world disposed."""
    world = World(seed)
    for i in range(10):
        place(world, "path", 2 + i, 5)
    world.dispose()
    return world


def test_take_checks_each_plan_afresh_not_the_row_kept_for_the_last() -> None:
    """`take` keeps a kind's row per plan (`_KINDS`); a plan changed in place (the same dict)
    or another plan for the kind is checked as such: objects built otherwise are not reused."""
    layer, cls, name, type_, materials, _, attrs = inline_plan("path")  # type: ignore[misc]
    mine = dict(attrs)
    _paths(1)
    assert len(spares.take("path", cls, name, type_, materials, layer, mine)) == 10  # the row is kept
    _paths(2)
    mine["obscures_below"] = not attrs["obscures_below"]  # the same dict, changed
    assert spares.take("path", cls, name, type_, materials, layer, mine) == []
    _paths(3)
    assert spares.take("path", cls, name, "track", materials, layer, attrs) == []  # another type
    _paths(4)
    assert len(spares.take("path", cls, name, type_, materials, layer, attrs)) == 10


def test_the_row_kept_per_kind_is_the_plain_row_of_its_plan_for_every_template() -> None:
    world = World(1)
    for kind in templates():
        plan = inline_plan(kind)
        if plan is None:
            continue
        layer, cls, name, type_, materials, fresh, attrs = plan
        key, template, world_slot, slots = spares._kind_row((cls, name, type_, materials, layer, attrs, fresh))
        layout_ = spares._layout(cls, attrs)
        if layout_ is None:
            assert template is None, kind
            continue
        order, *plain_slots = layout_
        row = [*template]  # type: ignore[misc]
        row[world_slot] = world
        assert row == spares._row(world, cls, name, type_, list(materials), layer, attrs, order), kind
        assert slots == plain_slots + ([order.index("materials")] if fresh else []), kind
        assert key == (cls, name, type_, materials, layer, attrs, fresh), kind


def _grove(seed: int) -> World:
    """Trees, plants and tables (objects with material copies of their own), laid by `place`."""
    world = World(seed)
    for i in range(spares.FRESH_MIN + 2):
        layout.tree(world, 1 + 3 * i, 6)
        place(world, "plant_generic", 1 + 3 * i, 10)
        layout.table_with(world, 1 + 3 * i, 14, *([spawn(world, "jar")] if i % 2 else []))
    return world


def test_trees_plants_and_tables_with_touched_or_held_material_copies_are_never_reused() -> None:
    """A fresh kind's object is reused only with copies equal to the template's, with an empty
    `extra` of their own, that nothing else holds; a table that held a jar is reused emptied."""
    world = _grove(1)
    count = spares.FRESH_MIN + 2
    trunks = [world.layer_at(1 + 3 * i, 6, Layer.OBJECTS)[0] for i in range(count)]
    plants = [world.layer_at(1 + 3 * i, 10, Layer.OBJECTS)[0] for i in range(count)]
    tables = [world.layer_at(1 + 3 * i, 14, Layer.FURNITURE)[0] for i in range(count)]
    trunks[0].materials[0].ph = 7.5  # a copy tuned
    trunks[1].materials[0].extra["lignin"] = 0.3
    plants[0].materials.append(plants[0].materials[0].copy())  # one copy more
    plants[1].materials[0] = Material(**{**vars_of(plants[1].materials[0]), "color": "red"})
    held = [tables[0].materials[0], tables[2].materials[0].extra]  # a copy and an `extra` kept elsewhere
    touched = [weakref.ref(o) for o in (trunks[0], trunks[1], plants[0], plants[1], tables[0], tables[2])]
    untouched = [weakref.ref(o) for o in (*trunks[2:], *plants[2:], tables[1], *tables[3:])]
    del trunks, plants, tables
    world.dispose()
    again = _grove(2)
    live = {id(o) for o in again.objects.values()}
    assert all(ref() is None or id(ref()) not in live for ref in touched)
    assert all(id(ref()) in live for ref in untouched)  # every other table held a jar
    assert held and _state(again) == _state(_rebuilt_grove(2))


def vars_of(material: Material) -> dict[str, Any]:
    return {name: getattr(material, name) for name in Material.__dataclass_fields__}


def _rebuilt_grove(seed: int) -> World:
    spares.clear()
    return _grove(seed)


def test_too_few_objects_of_a_fresh_kind_are_not_checked_but_built_anew() -> None:
    """`FRESH_MIN`: below it `take` returns none of a fresh kind (the check would cost more
    than the reuse saves); a shared kind's few objects are still reused."""
    world = World(1)
    for i in range(spares.FRESH_MIN - 1):
        place(world, "plant_generic", 2 + i, 4)
        place(world, "path", 2 + i, 8)
    plants = [weakref.ref(world.layer_at(2 + i, 4, Layer.OBJECTS)[0]) for i in range(spares.FRESH_MIN - 1)]
    paths = [weakref.ref(world.layer_at(2 + i, 8, Layer.WORLD)[0]) for i in range(spares.FRESH_MIN - 1)]
    world.dispose()
    again = World(2)
    for i in range(spares.FRESH_MIN - 1):
        place(again, "plant_generic", 2 + i, 4)
        place(again, "path", 2 + i, 8)
    live = {id(o) for o in again.objects.values()}
    assert all(ref() is None or id(ref()) not in live for ref in plants)
    assert all(id(ref()) in live for ref in paths)
