"""Reset fast paths (session 11, round 2) against the plain code they replace: each test
fails when its fast path takes other draws or builds other objects than the plain one."""

from __future__ import annotations

from typing import Any

import pytest
from tests.world_kit import UNIT_TESTS

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.symbolic import DEPTH
from discoverylab.scenarios import layout
from discoverylab.world import catalog
from discoverylab.world.catalog import all_cells, place, place_each
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


# ---- session 16: gymnasium's generator made on first read -------------------------------------

_ASSIGN = "assign"  # an event of the tests below: `env.np_random = np.random.default_rng(5)`


def _eager_draws(events: list[int | str | None]) -> list[int]:
    """The instance seeds `reset()` without a seed draws, for `events` (a seed: `reset(seed=k)`;
    None: `reset()`; `_ASSIGN`), with gymnasium's generator made at once by each `reset(seed=k)`
    (the plain code)."""
    import numpy as np
    from gymnasium.utils import seeding

    rng, drawn = None, []
    for event in events:
        if isinstance(event, int):
            rng = seeding.np_random(event)[0]
        elif event is None:
            assert rng is not None
            drawn.append(int(rng.integers(0, 2**31 - 1)))
        else:
            rng = np.random.default_rng(5)
    return drawn


def test_the_generator_made_on_first_read_is_the_one_reset_made_at_once() -> None:
    """`reset(seed=k)` only notes k: the generator read later, the seeds `reset()` draws and
    `np_random_seed` are those of gymnasium's reset; an assigned generator replaces a noted seed."""
    import numpy as np
    from gymnasium.utils import seeding

    env = DiscoveryWorldEnv("DoorsTest", info="lean")
    env.reset(seed=7)
    assert env.np_random_seed == 7
    assert env.np_random.bit_generator.state == seeding.np_random(7)[0].bit_generator.state
    events: list[int | str | None] = [3, None, None, 9, 9, None, 13, _ASSIGN, None, None, 11, None]
    drawn = []
    for event in events:
        if isinstance(event, int):
            env.reset(seed=event)
        elif event is None:
            env.reset()
            drawn.append(env.instance["seed"])
        else:
            env.np_random = np.random.default_rng(5)
            assert env.np_random_seed == -1
    assert drawn == _eager_draws(events)


def test_a_numpy_seed_plays_its_int_and_a_bad_seed_is_still_refused_at_reset() -> None:
    """The fast reset path hands gymnasium's seeding a Python int: a numpy integer plays the level
    of the same int (gymnasium alone refused it), and what is no whole number from 0 is refused."""
    import numpy as np

    from discoverylab.instances import InstanceError

    env = DiscoveryWorldEnv("DoorsTest", info="lean")
    assert env.reset(seed=np.int64(3))[0] == env.reset(seed=3)[0] != env.reset(seed=4)[0]
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(InstanceError, match="whole number"):
            env.reset(seed=bad)  # type: ignore[arg-type]



def test_an_instance_without_a_valid_seed_is_refused_and_a_failed_build_leaves_no_torn_episode(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """A hand-made `Instance` with seed -1 raised numpy's "expected non-negative integer" after the
    old world was disposed, and the next step raised an AttributeError from the torn episode. The
    seed is now checked first (never quoted: it may be sealed), and a build that fails later leaves
    "Call reset() before step()"."""
    from discoverylab import env as env_module
    from discoverylab.instances import Instance, InstanceError

    env = DiscoveryWorldEnv("DoorsTest", info="lean")
    env.reset(seed=0)
    for bad in (-1, "x", 1.5, True, None):
        with pytest.raises(InstanceError, match=r"^options\['instance'\] has no valid seed") as caught:
            env.reset(options={"instance": Instance("DoorsTest", "normal", "seed", 0, bad)})  # type: ignore[arg-type]
        assert repr(bad) not in str(caught.value).split("seed", 1)[1]
    assert env.step({"action": "WAIT"})[4]["step"] == 1  # the episode it had is untouched

    def broken(seed: int) -> None:
        raise ValueError("a scenario that cannot be built")

    monkeypatch.setattr(env_module, "World", broken)
    with pytest.raises(ValueError, match="cannot be built"):
        env.reset(seed=1)
    with pytest.raises(RuntimeError, match=r"Call reset\(\) before step\(\)"):
        env.step({"action": "WAIT"})
    monkeypatch.undo()
    assert env.reset(seed=1)[1]["step"] == 0 and env.step({"action": "WAIT"})[4]["step"] == 1

# ---- session 16: runs of scenery laid in one `place_each` ----------------------------------------


def _one_by_one(world: World, kind: str, cells: list[tuple[int, int]], holes: tuple[object, ...] = ()) -> None:
    """`place_each` as a `place` per cell (what the builders called before)."""
    assert not holes
    for x, y in cells:
        place(world, kind, x, y)


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_scenery_laid_in_runs_builds_what_one_call_per_tile_builds(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths (`layout.ground_each`), Doors' wall rows and columns, Moving Agents' fences and
    `scatter_plants`' plants are laid in one `place_each` each: the same objects, UUIDs,
    registry order, stacks and draws as a `ground` or `place` per tile of the same cells (a
    plant laid twice on a tile fails this; the runs' cells are checked against the builds as
    they were by `test_doors_walls_in_runs_build_what_a_place_per_wall_builds` and
    `tests/test_build_draws.py`'s plain village)."""
    from discoverylab.scenarios.unit import doors, moving_agents

    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 7)]
    fast = [_built(task, d, s) for d, s in cases]
    full = layout.place_each
    monkeypatch.setattr(layout, "place_each", lambda world, kind, cells, holes=(): (_one_by_one if not holes and cells is not all_cells(world.size) else full)(world, kind, cells, holes))
    monkeypatch.setattr(doors, "place_each", _one_by_one)
    monkeypatch.setattr(moving_agents, "place_each", _one_by_one)
    monkeypatch.setattr(layout, "ground_each", lambda world, kind, cells: [layout.ground(world, kind, x, y) for x, y in cells])
    assert [_built(task, d, s) for d, s in cases] == fast


def test_ground_each_equals_ground_per_cell_over_grass_plants_and_repeats() -> None:
    """`ground_each` clears every cell before laying the run: the same as `ground` per cell when
    the kind is not what clearing removes; a plant run (clearing would remove its own) and a
    watched world take the per-cell path."""
    cells = [(3, 3), (4, 3), (4, 3), (5, 3), (9, 9), (4, 3)]
    for kind in ("path", "floor", "wall", "plant_generic", "tree_trunk"):
        worlds = [_meadow(5), _meadow(5)]
        for world in worlds:
            layout.place(world, "plant_generic", 5, 3)  # a plant the clearing removes
        layout.ground_each(worlds[0], kind, cells)
        for x, y in cells:
            layout.ground(worlds[1], kind, x, y)
        snap = [[[(o.uuid, o.type, o.layer) for o in world.stacks[x][y]] for x in range(12) for y in range(12)] for world in worlds]
        assert snap[0] == snap[1] and list(worlds[0].objects) == list(worlds[1].objects), kind


def _plain_doors_build(self: Any) -> Any:
    """`DoorsTest.build` (Normal and Challenge) as it was: a `place` per wall tile."""
    from discoverylab.scenarios.unit import doors
    from discoverylab.world.objects import Layer

    world = self.world

    def add_wall(x: int, y: int) -> None:
        if not any(o.type == "wall" for o in world.layer_at(x, y, Layer.BUILDING)):
            place(world, "wall", x, y)

    self.burn()
    goals = self.shuffled(doors.GOALS)
    if self.difficulty == "easy":
        width, height = 8, 10
        x0, y0 = doors.doors_site(self, width, height)
        layout.fill_grass(world, under=((x0, y0, width, height),))
        layout.building(world, x0, y0, width, height, "Door Dilemma")
        rows = [self.randint(3, 4), self.randint(6, 7)]
        for row in rows:
            for i in range(1, width - 1):
                place(world, "wall", x0 + i, y0 + row)
        self.doors = [layout.door_at(world, x0 + self.randint(1, width - 2), y0 + row) for row in rows]
        self.flag = world.place(doors.spawn_goal(self, goals[0]), x0 + width - 2, y0 + 1)
        return self._finish(x0, y0, width, height)
    width, height = 14, 14
    x0, y0 = doors.doors_site(self, width, height)
    layout.fill_grass(world, under=((x0, y0, width, height),))
    layout.building(world, x0, y0, width, height, "Door Dilemma")
    rows = [self.randint(3, 4), self.randint(6, 7), self.randint(9, 10)]
    for row in rows:
        for i in range(1, width - 1):
            place(world, "wall", x0 + i, y0 + row)
    col1 = self.randint(3, 5)
    for j in range(rows[0], rows[2]):
        add_wall(x0 + col1, y0 + j)
    spots = [(x0 + self.randint(1, col1 - 1), y0 + row) for row in rows]
    col2 = self.randint(8, 9)
    for j in range(1, rows[1]):
        add_wall(x0 + col2, y0 + j)
    spots += [(x0 + self.randint(col1 + 1, col2 - 1), y0 + row) for row in rows[:2]]
    spots += [(x0 + self.randint(col2 + 1, width - 2), y0 + row) for row in rows[:2]]
    self.doors = [layout.door_at(world, x, y) for x, y in spots]
    goal_cell = (x0 + width - 2, y0 + 1)
    if self.difficulty == "challenge":
        goal_cell = self.choice(doors.free_cells(world, (x0 + col2 + 1, y0 + 1, x0 + width - 2, y0 + rows[0] - 1)))
    self.flag = world.place(doors.spawn_goal(self, goals[0]), *goal_cell)
    if self.difficulty == "challenge":
        doors.scatter_distractors(self, (x0 + 1, y0 + 1, x0 + width - 2, y0 + height - 2), goals[1:4], goal_cell)
    return self._finish(x0, y0, width, height)


def test_doors_walls_in_runs_build_what_a_place_per_wall_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Doors' wall rows and columns laid in one `place_each` each (`wall_row`, `add_walls`)
    against the build as it was: a cell left out, added or laid in another order fails this."""
    from discoverylab.scenarios.unit.doors import DoorsTest

    cases = [(d, s) for d in ("easy", "normal", "challenge") for s in (0, 3, 8, 11)]
    fast = [_built("DoorsTest", d, s) for d, s in cases]
    monkeypatch.setattr(DoorsTest, "build", _plain_doors_build)
    assert [_built("DoorsTest", d, s) for d, s in cases] == fast
