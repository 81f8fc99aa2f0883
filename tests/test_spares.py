"""Grass recycled from a disposed world (`world/spares.py`) against grass built anew: a world
built from spares must equal, attribute by attribute, the world built without them, and an
object the episode touched (or that someone still holds) must never be reused."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from tests.world_kit import UNIT_TESTS, play_masked, readable_kinds

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import make_rl_env
from discoverylab.scenarios import layout
from discoverylab.world import spare_check, spares
from discoverylab.world.catalog import inline_plan, spawn
from discoverylab.world.materials import Material
from discoverylab.world.objects import Layer, WorldObject
from discoverylab.world.world import World


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
    play_masked(played, 60, seed=3)
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
    play_masked(played, 80, seed=5)
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
    play_masked(env, 150, seed=8)
    env.reset(seed=9)
    assert taken


def test_a_container_held_elsewhere_is_found() -> None:
    world = _meadow(3)
    grass = world.stacks[2][2][0]
    kept = grass.contents
    assert spares.containers_held_elsewhere([grass]) == [grass]
    assert spares.containers_held_elsewhere([world.stacks[2][3][0]]) == []
    assert kept == []


@pytest.mark.parametrize("held", [0, 1, 200, 1024])
def test_a_fill_with_fewer_spares_than_tiles_equals_one_without_spares(held: int) -> None:
    """`place_each` takes the spares' tiles and UUIDs from the same iterators as the new
    objects' (one flat zip): with no spare, some, or all of them, the next tile and UUID go
    to the first new object. Holes make the fill shorter than the spare list."""
    world = _meadow(7)
    kept = [tile[0] for column in world.stacks for tile in column][:held]  # held: never reused
    world.dispose()
    holes = ((5, 5, 4, 3), (20, 1, 2, 9))
    again = World(8)
    layout.fill_grass(again, under=holes)
    live = {id(o) for o in again.objects.values()}
    assert not any(id(obj) in live for obj in kept)
    assert len(again.objects) == 1024 - 12 - 18
    spares.clear()
    fresh = World(8)
    layout.fill_grass(fresh, under=holes)
    assert _state(again) == _state(fresh)


def _changed(value: Any, world: World) -> list[Any]:
    """Values that differ from `value` in the eyes of `spare_check.untouched` (one per way)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, float):
        return [value + 1.5, -value] if value == 0.0 else [value + 1.5]
    if isinstance(value, int):  # a layer too
        return [Layer((value + 1) % len(Layer)), None] if isinstance(value, Layer) else [value + 1]
    if isinstance(value, str):
        return [value + "x"]
    if isinstance(value, World):
        return [World(99)]
    if isinstance(value, list):
        more = [*value, spawn(world, "coin")]
        return [more, [m.copy() for m in value], [spawn(world, "coin") for _ in value]] if value else [more]
    if isinstance(value, dict):
        return [{"wet": True}]
    assert value is None
    return [spawn(world, "coin"), Layer.AIR]


@pytest.mark.parametrize("kind", ["grass", "path", "wall", "fence", "floor"])
def test_the_compiled_check_sees_a_change_to_any_field(kind: str) -> None:
    """`spare_check.untouched` (the compiled engine's check, plain Python here) compares every
    field of `CHECKED_FIELDS`: changing any one of them, in every way, fails it; so does
    `passing`, which reads the model's fields once for a whole list."""
    world = _meadow(5)
    layer, cls, name, type_, materials, fresh, attrs = inline_plan(kind)  # type: ignore[misc]
    like = spare_check.model(world, cls, name, type_, materials, layer, attrs)
    assert spare_check.untouched(spare_check.model(world, cls, name, type_, materials, layer, attrs), like)
    for field in spare_check.CHECKED_FIELDS:
        for value in _changed(getattr(like, field), world):
            obj = spare_check.model(world, cls, name, type_, materials, layer, attrs)
            setattr(obj, field, value)
            assert not spare_check.untouched(obj, like), (field, value)
            assert spare_check.passing([like, obj, like], like) == [like, like], (field, value)  # its own reads


def test_the_typed_check_measures_its_reference_count_or_reuses_nothing() -> None:
    """`spare_check.sole_refs` measures the reference count `passing` reads for an object that
    only its list holds, on a model of the kind. Where the model itself fails the check (here:
    the pure engine's objects keep their attributes in a `__dict__`) it finds none and gives 0,
    and `spares._take_compiled` then reuses nothing rather than trust a count it never saw."""
    world = World(1)
    layout.fill_grass(world)
    plan = inline_plan("grass")
    assert plan is not None
    layer, cls, name, type_, materials, _, attrs = plan
    sole = spare_check.sole_refs(world, cls, name, type_, materials, layer, attrs)
    objs = [obj for column in world.stacks for stack in column for obj in stack]
    if spare_check.COMPILED:  # the compiled engine (`tests/test_native.py` runs it)
        assert sole > 0
        return
    assert sole == 0
    assert spares._take_compiled(world, objs, cls, name, type_, materials, layer, attrs) == []


def test_put_filing_equals_put_then_file_all() -> None:
    """`spare_check.put(..., file=True)` (the compiled `place_each`'s loop over its spares) leaves
    the grid and the registry as `put` then `file_all` of the same objects do: same tiles, same
    layer order in each stack, the same registry order."""
    states = []
    for filed in (False, True):
        world = _meadow(3)  # grass everywhere: a wall put on it goes under or over by layer
        plan = inline_plan("wall")
        assert plan is not None
        layer, cls, name, type_, materials, _, attrs = plan
        objs = [spare_check.model(world, cls, name, type_, materials, layer, attrs) for _ in range(6)]
        cells = [(1, 1), (1, 2), (30, 4), (2, 2), (0, 31), (31, 0)]
        uuids = world.take_uuids(len(objs))
        if filed:
            spare_check.put(objs, world, cells, uuids, layer, file=True)
        else:
            spare_check.put(objs, world, cells, uuids, layer)
            spare_check.file_all(world.objects, uuids, objs)
        assert [(o.x, o.y, o.uuid) for o in objs] == [(*cell, uuid) for cell, uuid in zip(cells, uuids, strict=True)]
        states.append(_state(world))
    assert states[0] == states[1]
