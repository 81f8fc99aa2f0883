"""Batched draws and skipped spawns in the unit tests' builds (session 13) against the plain
code they replace: each test fails when its fast path takes other draws or builds other
objects than the plain one."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios import layout
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.unit import _common, _house, instrument_measurement, pick_and_give
from discoverylab.scenarios.unit.instrument_measurement import InstrumentMeasurementTest
from discoverylab.scenarios.unit.moving_agents import MovingAgentsTest
from discoverylab.world import catalog
from discoverylab.world.catalog import place
from discoverylab.world.materials import Material
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World
from test_reset_paths import UNIT_TESTS, _built


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
