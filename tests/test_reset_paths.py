"""Reset fast paths (session 11, round 2) against the plain code they replace: each test
fails when its fast path takes other draws or builds other objects than the plain one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.symbolic import DEPTH
from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.unit import _common, _house, instrument_measurement, pick_and_give
from discoverylab.scenarios.unit.instrument_measurement import InstrumentMeasurementTest
from discoverylab.scenarios.unit.moving_agents import MovingAgentsTest
from discoverylab.world import catalog
from discoverylab.world.catalog import all_cells, place, place_each
from discoverylab.world.materials import Material
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World


def _plain_scatter(world: World, count: int = 15, kind: str = "plant_generic") -> None:
    """`layout.scatter_plants` as it was: one `size=2` draw per try."""
    placed, tries = 0, 0
    while placed < count and tries < 2000:
        tries += 1
        x, y = world.rng_build.integers(0, world.size, size=2).tolist()
        stack = world.stacks[x][y]
        if stack and all(o.type == "grass" for o in stack):
            place(world, kind, x, y)
            placed += 1


def _meadow(seed: int) -> World:
    world = World(seed)
    world.reseed_build("meadow")
    layout.fill_grass(world)
    for x in range(3, 20):  # tiles the plants must skip
        layout.ground(world, "path", x, 7)
    return world


def test_scatter_plants_draws_what_one_size_two_draw_per_try_draws() -> None:
    for seed in range(6):
        fast, plain = _meadow(seed), _meadow(seed)
        layout.scatter_plants(fast, count=25)
        _plain_scatter(plain, count=25)
        spots = [(o.uuid, o.x, o.y, o.type) for o in fast.objects.values()]
        assert spots == [(o.uuid, o.x, o.y, o.type) for o in plain.objects.values()]
        assert fast.rng_build.bit_generator.state == plain.rng_build.bit_generator.state
        assert int(fast.rng_build.integers(1 << 30)) == int(plain.rng_build.integers(1 << 30))


def _crowded(seed: int) -> World:
    """A meadow with paths over three rows in four: most tries of `scatter_plants` miss."""
    world = World(seed)
    world.reseed_build("crowded")
    layout.fill_grass(world)
    for y in range(32):
        if y % 4:
            for x in range(32):
                layout.ground(world, "path", x, y)
    return world


@pytest.mark.parametrize("count", [0, 1, 7, 15, 40])
def test_scatter_plants_in_batches_draws_what_draws_per_try_draw(count: int) -> None:
    """The batched draws (several batches when most tries miss, the unused draws given back)
    place the plants and leave the stream as one draw per coordinate does; so does the
    one-by-one path of a kind built by its constructor."""
    for seed in range(5):
        for world_of in (_meadow, _crowded):
            for kind in ("plant_generic", "soil"):
                fast, plain = world_of(seed), world_of(seed)
                layout.scatter_plants(fast, count=count, kind=kind)
                _plain_scatter(plain, count=count, kind=kind)
                spots = [(o.uuid, o.x, o.y, o.type) for o in fast.objects.values()]
                assert spots == [(o.uuid, o.x, o.y, o.type) for o in plain.objects.values()]
                assert fast.rng_build.bit_generator.state == plain.rng_build.bit_generator.state


UNIT_TESTS = ("DoorsTest", "DialogTest", "NavigationHouseTest", "MovingAgentsTest", "SearchTest",
              "InstrumentMeasurementTest", "PickAndPlaceTest", "PickAndGiveTest", "DoorsWithKeysTest",
              "DiscoveryFeedTest")  # fmt: skip


def _built(task: str, difficulty: str, seed: int) -> tuple[list[tuple[object, ...]], list[list[int]], object]:
    """What a reset builds: every object in registry order, every tile's stack, the streams."""
    env = DiscoveryWorldEnv(task, difficulty)
    env.reset(seed=seed)
    world = env.world
    assert world is not None
    objs = [(u, o.uuid, o.name, o.type, o.x, o.y, o.layer, o.alive, len(o.contents)) for u, o in world.objects.items()]
    stacks = [[o.uuid for o in world.stacks[x][y]] for x in range(world.size) for y in range(world.size)]
    return objs, stacks, (world._uuid_index, world.rng_build.bit_generator.state)


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_grass_left_bare_under_buildings_builds_the_full_fill_s_world(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The holes `fill_grass(under=...)` leaves give the world the full fill and the buildings'
    `clear_ground` give: same objects, UUIDs, registry order, stacks and draws (so a scenario
    that reads a tile before its building covers it fails here)."""
    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 7)]
    fast = [_built(task, d, s) for d, s in cases]
    full = layout.fill_grass
    monkeypatch.setattr(layout, "fill_grass", lambda world, under=(): full(world))
    assert [_built(task, d, s) for d, s in cases] == fast


def _plain_village(self: MovingAgentsTest) -> None:
    """`MovingAgentsTest._village` as it was: a tile read per fence, one scalar draw per jitter."""
    world = self.world
    for i in range(28):
        layout.ground(world, "path", 17, 2 + i)
        layout.ground(world, "path", 2 + i, 17)
    for i in range(9):
        layout.ground(world, "path", 13 + i, 9)
        layout.ground(world, "path", 13 + i, 24)
    for x0 in (9, 19):
        for i in range(7):
            layout.place(world, "fence", x0 + i, 2)
            layout.place(world, "fence", x0 + i, 28)
    for x in (9, 25):
        for y in [*range(2, 15), *range(19, 28)]:
            if not any(o.type == "fence" for o in world.top_level_at(x, y)):
                layout.place(world, "fence", x, y)

    def jitter(n: int) -> int:
        return int(world.rng_build.integers(0, n + 1))

    for x in (10, 23):
        for y in (10, 4, 22):
            layout.tree(world, x + jitter(1), y + jitter(1))
    for x in (13, 19):
        layout.tree(world, x + jitter(1), 3)
    for x in (13, 19):
        layout.tree(world, x + jitter(1), 29 + jitter(1))
    for x in (2, 28):
        for y in (2, 12, 22):
            layout.tree(world, x + jitter(2), y + jitter(2))
    layout.place(world, "plant_generic", 15, 1)
    layout.scatter_plants(world)


def test_moving_agents_village_with_one_draw_for_the_trees_builds_what_draws_per_tree_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The village's batched tree jitter and its known fence corners against one scalar draw
    per jitter and a tile read per fence: the same objects, UUIDs, stacks and stream state."""
    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 5, 9)]
    fast = [_built("MovingAgentsTest", d, s) for d, s in cases]
    monkeypatch.setattr(MovingAgentsTest, "_village", _plain_village)
    assert [_built("MovingAgentsTest", d, s) for d, s in cases] == fast


def _plain_soil_plot(sc: Scenario, fx: int, fy: int) -> None:
    """`_house._soil_plot` as it was: one `randint` per tile."""
    for i in range(3):
        for j in range(3):
            layout.ground(sc.world, "soil", fx + i, fy + j)
            if sc.randint(0, 2) == 0:
                layout.place(sc.world, "plant_generic", fx + i, fy + j)


def _plain_table_and_chairs(sc: Scenario, x: int, y: int) -> WorldObject:
    """`_house._table_and_chairs` as it was: one `randint` per side."""
    sides = [side for side in "nsew" if sc.randint(0, 1) == 0]
    table = layout.place(sc.world, "table", x, y)
    offsets = {"n": (0, -1), "s": (0, 1), "w": (-1, 0), "e": (1, 0)}
    for side in "nswe":
        if side in sides:
            layout.place(sc.world, "chair", x + offsets[side][0], y + offsets[side][1])
    return table


@pytest.mark.parametrize("task", ["NavigationHouseTest", "SearchTest"])
def test_the_house_with_batched_draws_builds_what_draws_per_tile_build(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The soil plot's and the chairs' draws in one call each against one `randint` per tile
    and side: the same world and stream state."""
    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 3, 6)]
    fast = [_built(task, d, s) for d, s in cases]
    monkeypatch.setattr(_house, "_soil_plot", _plain_soil_plot)
    monkeypatch.setattr(_house, "_table_and_chairs", _plain_table_and_chairs)
    assert [_built(task, d, s) for d, s in cases] == fast


def _plain_shuffled_kept(sc: Scenario, kinds: tuple[str, ...], count: int) -> list[WorldObject]:
    """`_common.shuffled_kept` as the builds did it: spawn every object, shuffle, remove the rest."""
    objects = sc.shuffled(_common.spawn_pool(sc.world, kinds))
    for unused in objects[count:]:
        unused.remove_from_world()
    return objects[:count]


@pytest.mark.parametrize("task", ["PickAndPlaceTest", "PickAndGiveTest", "DiscoveryFeedTest", "InstrumentMeasurementTest"])
def test_pools_spawning_only_what_they_keep_build_what_the_whole_pool_builds(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The object pools built without the objects a level drops: the same objects, UUIDs,
    registry order, stacks and draws as spawning the whole pool and removing the rest."""
    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 2, 8)]
    fast = [_built(task, d, s) for d, s in cases]
    for module in (_common, pick_and_give, instrument_measurement):
        monkeypatch.setattr(module, "shuffled_kept", _plain_shuffled_kept)
    assert [_built(task, d, s) for d, s in cases] == fast


def test_spawn_some_gives_the_kept_objects_the_whole_list_s_uuids() -> None:
    kinds = ["coin", "seed", "jar", "key", "coin"]
    whole = World(3)
    made = [catalog.spawn(whole, k) for k in kinds]
    for obj in (made[0], made[2], made[4]):
        obj.remove_from_world()
    left = [(u, o.type) for u, o in whole.objects.items()]
    after = place(whole, "tree_trunk", 1, 1).uuid
    some = World(3)
    kept = catalog.spawn_some(some, kinds, [3, 1, 3])
    assert sorted(kept) == [1, 3]
    assert [(u, o.type) for u, o in some.objects.items()] == left
    assert place(some, "tree_trunk", 1, 1).uuid == after  # the index continues after the block
    with pytest.raises(ValueError, match="more than one UUID"):
        catalog.spawn_some(some, ["coin", "soil"], [1])
    assert some._uuid_index == len(kinds) + 1 + 2  # restored after the error


def _plain_randomise(self: InstrumentMeasurementTest, obj: WorldObject, surfaces: list[str]) -> None:
    """`InstrumentMeasurementTest._randomise` as it was: one `_uniform` draw per value."""
    obj.density = self._uniform()
    ph = self._uniform()
    obj.temperature_c = self._uniform()
    spectrum = tuple(self._uniform() for _ in range(5))
    surface = self.choice(surfaces)
    surfaces.remove(surface)
    obj.materials = [Material(key="generated", name="material", microscope=f"a {surface} surface", spectrum=spectrum, ph=ph)]


def test_measured_objects_drawn_in_one_call_are_drawn_as_one_draw_per_value_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """Instrument Measurement's eight values per object in one draw against one scalar draw
    each: the same objects (their values and materials), world and stream state."""

    def measured(d: str, s: int) -> tuple[object, ...]:
        env = DiscoveryWorldEnv("InstrumentMeasurementTest", d)
        env.reset(seed=s)
        sc = env.scenario
        assert isinstance(sc, InstrumentMeasurementTest)
        values = (sc.target.density, sc.target.temperature_c, repr(sc.target.materials), sc.pot.name)
        return values, _built("InstrumentMeasurementTest", d, s)

    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 3, 7)]
    fast = [measured(d, s) for d, s in cases]
    monkeypatch.setattr(InstrumentMeasurementTest, "_randomise", _plain_randomise)
    assert [measured(d, s) for d, s in cases] == fast


class _OneByOne:
    """A build stream that makes every array draw of `integers` one scalar draw per value (the
    plain path of the builders' batched draws); everything else is the stream's own."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def uniform(self, low: float, high: float, size: int | None = None) -> Any:
        if size is None:
            return self.rng.uniform(low, high)
        return np.array([self.rng.uniform(low, high) for _ in range(size)])

    def integers(self, low: Any, high: Any = None, size: Any = None, **kw: Any) -> Any:
        if size is None and np.ndim(high) == 0:
            return self.rng.integers(low, high, **kw)
        highs = np.broadcast_to(high, size if size is not None else np.shape(high))
        return np.array([self.rng.integers(low, int(h), **kw) for h in highs.ravel()]).reshape(highs.shape)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rng, name)


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_batched_build_draws_build_what_one_draw_per_value_builds(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every unit test's build (the village's tree jitter, the house's soil plot and chairs, the
    plants' tries, the burn-in) with each array draw of its build stream made one scalar
    draw at a time: the same world and stream state."""
    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (1, 4)]
    fast = [_built(task, d, s) for d, s in cases]
    reseed = World.reseed_build

    def one_by_one(world: World, label: str) -> None:
        reseed(world, label)
        world.rng_build = _OneByOne(world.rng_build)  # type: ignore[assignment]

    monkeypatch.setattr(World, "reseed_build", one_by_one)
    assert [_built(task, d, s) for d, s in cases] == fast


def test_holes_take_their_uuids_on_the_general_path_too() -> None:
    """`place_each` with holes: the inline loop and the general one (a kind built by `spawn`,
    or a watched world) build the same objects with the same UUIDs; bad holes are refused."""
    holes = ((3, 4, 5, 2), (20, 0, 2, 32), (4, 4, 1, 1))  # overlapping and edge holes
    made = []
    for watch in (False, True):
        world = World(5)
        if watch:
            world.watch_tiles()
        place_each(world, "grass", all_cells(world.size), holes=holes)
        place(world, "tree_trunk", 4, 5)  # the UUID after the fill
        made.append([(u, o.x, o.y) for u, o in world.objects.items()])
    assert made[0] == made[1]
    assert len(made[0]) == 1024 - 5 * 2 - 2 * 32 + 1
    bare = {(x, y) for x in range(3, 8) for y in range(4, 6)} | {(x, y) for x in (20, 21) for y in range(32)}
    assert not [c for c in made[0][:-1] if c[1:] in bare]
    plain = World(5)
    place_each(plain, "grass", all_cells(plain.size))
    place(plain, "tree_trunk", 4, 5)
    assert made[0][-1][0] == list(plain.objects)[-1]  # the same next UUID as the full fill's
    kept = {u: c for u, c in zip(plain.objects, all_cells(32), strict=False)}
    assert all(kept[u] == (x, y) for u, x, y in made[0][:-1])  # each tile its full-fill UUID
    world = World(5)
    with pytest.raises(ValueError, match="leaves"):
        place_each(world, "grass", all_cells(32), holes=((30, 30, 3, 1),))
    with pytest.raises(ValueError, match="all_cells"):
        place_each(world, "grass", [(0, 0)], holes=((0, 0, 1, 1),))


@pytest.mark.parametrize("shape", [(1, 1), (1, 4), (3, 1), (2, 2), (5, 7)])
def test_a_building_on_bare_tiles_lays_what_it_lays_over_grass(shape: tuple[int, int]) -> None:
    """`layout.building` inline on the tiles `fill_grass` left bare, against its loop of
    `ground` and `place` over grass: objects, UUIDs (also the next one), order and stacks."""
    w, h = shape
    worlds = []
    for under in (((6, 9, w, h),), ()):
        world = World(11)
        layout.fill_grass(world, under=under)
        layout.building(world, 6, 9, w, h, "Hut", door=w > 2 and h > 1)
        place(world, "tree_trunk", 0, 0)
        worlds.append(world)
    fast, plain = ([(u, o.type, o.x, o.y, o.layer) for u, o in w_.objects.items()] for w_ in worlds)
    assert fast == plain
    assert [[[o.uuid for o in s] for s in col] for col in worlds[0].stacks] == [
        [[o.uuid for o in s] for s in col] for col in worlds[1].stacks
    ]


def _snapshot(world: World) -> list[object]:
    """Registry order, every attribute in order (but `world`), stacks."""
    objects = [(u, type(o).__name__, repr(tuple(vars(o).items())[1:])) for u, o in world.objects.items()]
    return [objects, repr([[[o.uuid for o in s] for s in col] for col in world.stacks])]


@pytest.mark.parametrize("kind", sorted(k for k in catalog.templates() if catalog.inline_plan(k) is not None))
def test_inline_placement_with_overrides_equals_spawn_and_place(kind: str) -> None:
    """`place` with overrides of class attributes (a door's key, a sign's text, a template's own
    attribute) builds inline what `spawn(**overrides)` + `World.place` build: attributes in
    the same order and values, UUIDs, registry order, stacks."""
    cls, _, _, attrs, *_ = catalog._plan(kind)
    overrides: dict[str, object] = {"requires_key": 5, "document": "Hut", "density": 2.5}
    overrides.update({key: value for key, value in list(attrs.items())[:1] if key != "layer_hint"})
    worlds = [World(7), World(7)]
    for world in worlds:
        layout.fill_grass(world)
    for x, y in [(3, 4), (31, 0)]:
        worlds[0].place(catalog.spawn(worlds[0], kind, **overrides), x, y)
        catalog.place(worlds[1], kind, x, y, **overrides)
    assert _snapshot(worlds[1]) == _snapshot(worlds[0])
    last = list(worlds[1].objects.values())[-1]
    assert last.requires_key == 5 and last.uuid not in worlds[1]._built  # built inline


def test_overrides_that_are_not_plain_attributes_take_the_general_path() -> None:
    """A new name, props, a layer or an attribute the class lacks: `spawn`'s path, its errors."""
    world = World(3)
    sign = catalog.place(world, "sign", 2, 2, name="notice", props={"ink": 1})
    assert (sign.name, sign.props, sign.uuid in world._built) == ("notice", {"ink": 1}, True)
    with pytest.raises(AttributeError, match="no attribute 'colour'"):
        catalog.place(world, "sign", 2, 3, colour="red")


def _mirror_state(mirror: SceneryMirror) -> tuple[object, ...]:
    return (mirror.kinds.tobytes(), mirror.state.tobytes(), mirror.has_candidates.tobytes(), mirror.marked.tobytes(),
            mirror.flags, [[[o.uuid for o in v] for v in col] for col in mirror.visible],
            [[[u for u, _ in c] for c in col] for col in mirror.candidates], mirror._looks, mirror.version,
            mirror.pending.tobytes(), mirror.unseen.tobytes())  # fmt: skip


@pytest.mark.parametrize("task", ["NavigationHouseTest", "MovingAgentsTest", "DoorsWithKeysTest", "ReactorLab"])
def test_the_first_fill_of_the_mirror_equals_tile_by_tile(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`SceneryMirror._fill_first` (tiles never computed) writes what `_tile(x, y, first=True)`
    per tile writes: cells, flags, looks, marks (with a marker that has seen some objects),
    at the reset's view and further views that reach unseen tiles."""
    states = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(SceneryMirror, "_fill_first", lambda self, tiles: [self._tile(x, y, True) for x, y, _ in tiles])
        env = DiscoveryWorldEnv(task, "normal")
        env.reset(seed=3)
        world, agent = env.world, env.scenario.player  # type: ignore[union-attr]
        assert world is not None
        mirror = SceneryMirror(world, 3, DEPTH, agent)
        mirror.marker = agent
        agent.seen.update(list(world.objects)[::3])
        trail = []
        for x, y in [(agent.x, agent.y), (5, 5), (6, 5), (20, 27), (31, 0), (agent.x, agent.y)]:
            mirror.refresh(x, y)
            trail.append(_mirror_state(mirror))
        states.append(trail)
    assert states[0] == states[1]
