"""Session 14's reset recycling: a disposed world's tile lists serve the next world
(`spares.offer_stacks` / `take_stacks`), and the RL side drops what holds the old world before
it is disposed (`SymbolicEncoder.release`, `DiscreteActions.reset`), so all of its untouched
scenery is recycled. Each fast path against the plain one, and the ways it could go stale."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from tests.world_kit import UNIT_TESTS, play_masked, readable_kinds

from discoverylab.rl import make_rl_env
from discoverylab.scenarios import layout
from discoverylab.world import spares
from discoverylab.world.catalog import inline_plan
from discoverylab.world.objects import Layer
from discoverylab.world.world import World


@pytest.fixture(autouse=True)
def _no_spares() -> Iterator[None]:
    spares.clear()
    yield
    spares.clear()


def _built(seed: int) -> World:
    """A world with a few objects on it (a stack of two on one tile)."""
    world = make_rl_env("DoorsTest").unwrapped
    world.reset(seed=seed)
    return world.world


def test_a_disposed_world_s_tile_lists_serve_the_next_world_empty() -> None:
    world = _built(3)
    grid, column_id, tile_id = id(world.stacks), id(world.stacks[5]), id(world.stacks[5][7])
    assert all(all(column) for column in world.stacks)  # grass everywhere: the lists held objects
    world.dispose()
    again = World(4)
    assert (id(again.stacks), id(again.stacks[5]), id(again.stacks[5][7])) == (grid, column_id, tile_id)
    assert not any(any(column) for column in again.stacks)  # emptied: nothing of the old world shows
    assert len(again.stacks) == 32 and {len(column) for column in again.stacks} == {32}
    assert World(4).stacks is not again.stacks  # one grid kept, handed out once


def test_a_world_on_a_recycled_grid_plays_as_one_on_new_lists() -> None:
    recycled = make_rl_env("NavigationHouseTest")
    play_masked(recycled, 40, seed=2)
    grid = id(recycled.unwrapped.world.stacks)
    obs, info = recycled.reset(seed=9)
    assert id(recycled.unwrapped.world.stacks) == grid  # the fast path ran
    spares.clear()
    fresh = make_rl_env("NavigationHouseTest")
    fresh_obs, fresh_info = fresh.reset(seed=9)
    for key in obs:
        assert np.array_equal(obs[key], fresh_obs[key]), key
    assert np.array_equal(info["action_mask"], fresh_info["action_mask"])
    a, b = recycled.unwrapped.world, fresh.unwrapped.world
    assert [[[o.uuid for o in t] for t in c] for c in a.stacks] == [[[o.uuid for o in t] for t in c] for c in b.stacks]


@pytest.mark.parametrize("holder", ["grid", "column", "tile"])
def test_a_held_grid_column_or_tile_is_never_emptied_nor_reused(holder: str) -> None:
    world = _built(5)
    grid = world.stacks
    held = {"grid": grid, "column": grid[3], "tile": grid[3][4]}[holder]
    tile = grid[3][4]
    names = [o.name for o in tile]
    del grid
    if holder != "tile":
        del tile
    world.dispose()
    again = World(6)
    assert all(lists is not held for lists in (again.stacks, again.stacks[3], again.stacks[3][4]))
    shown = {"grid": lambda: held[3][4], "column": lambda: held[4], "tile": lambda: held}[holder]()
    assert [o.name for o in shown] == names  # the holder still sees the disposed world's tile


def test_a_grid_that_is_not_lists_of_the_size_is_not_kept() -> None:
    for broken in ("size", "column", "tile"):
        world = World(7, size=8) if broken == "size" else _built(7)
        if broken == "column":
            world.stacks[2] = tuple(world.stacks[2])  # type: ignore[call-overload]
        if broken == "tile":
            world.stacks[2][2] = tuple(world.stacks[2][2])  # type: ignore[call-overload]
        world.dispose()  # no error: the grid is just not kept
        assert spares.take_stacks(32) is None, broken


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_the_rl_side_releases_the_old_world_so_all_its_untouched_scenery_is_recycled(
    task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before `release`, the old mirror, kept views and slots held every floor and wall of a
    villa the agent starts in, and ~30 grass tiles: `take` refused them."""
    offered: Counter[str] = Counter()
    taken: Counter[str] = Counter()
    take = spares.take

    def counted(kind: str, *args: Any) -> Any:
        entry = spares._SPARE.get(kind)
        offered[kind] += sum(o.alive and o.layer is not None for o in entry[1]) if entry else 0  # not removed
        found = take(kind, *args)
        taken[kind] += len(found)
        return found

    monkeypatch.setattr(spares, "take", counted)
    env = make_rl_env(task)
    for seed in range(3):
        play_masked(env, 0 if seed == 0 else 25, seed=seed)
    assert offered["grass"] > 1000 and offered["floor"] > 20
    kinds = readable_kinds(*offered)
    assert {"grass", "floor"} <= set(kinds)
    assert {k: taken[k] for k in kinds} == {k: offered[k] for k in kinds}  # nothing of the old world's held elsewhere


_FRESH = """
import json
from discoverylab.rl import make_rl_env
from discoverylab.world import spares
from discoverylab.world.catalog import inline_plan
offered = set()
take = spares.take
def seen(kind, *args):
    offered.add(kind)
    return take(kind, *args)
spares.take = seen
for task in {tasks!r}:
    env = make_rl_env(task)
    env.reset(seed=1)
    env.reset(seed=2)
unread = sorted(k for k in offered if (p := inline_plan(k)) is None or spares._layout(p[1], p[6]) is None)
print(json.dumps({{"offered": sorted(offered), "unread": unread}}))
"""


def test_a_fresh_process_recycles_every_plain_kind_of_the_unit_tests() -> None:
    """In a fresh interpreter (no earlier test's worlds), `take` reads every kind a unit test's
    build offers it: the fast path is not silently off for any of them."""
    done = subprocess.run([sys.executable, "-c", _FRESH.format(tasks=UNIT_TESTS)], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"grass", "floor", "wall", "path", "fence"} <= set(report["offered"])
    assert report["unread"] == []


_AFTER_THEMES = """
import json
from discoverylab.rl import make_rl_env
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world import spares
units = {tasks!r}
for task in ["SpaceSick", *all_tasks()]:  # Space Sick first: its walls filled `Wall`'s key table
    if task not in units:
        make_rl_env(task).reset(seed=1)
offered, taken = {{}}, {{}}
take = spares.take
def counted(kind, *args):
    entry = spares._SPARE.get(kind)
    got = take(kind, *args)
    if entry is not None:
        offered[kind] = offered.get(kind, 0) + len(entry[1])
        taken[kind] = taken.get(kind, 0) + len(got)
    return got
spares.take = counted
for task in units:
    env = make_rl_env(task)
    env.reset(seed=1)
    env.reset(seed=2)
print(json.dumps({{"offered": offered, "taken": taken}}))
"""


def test_a_process_that_built_every_theme_first_still_recycles_the_unit_tests_plain_kinds() -> None:
    """A task-mixing process (a vector env's worker) builds the themes' worlds before a unit
    test's: every plain kind a unit test's reset offers is still reused. Without
    `spares.share_key_tables`, Space Sick's walls left no room in `Wall`'s key table for a
    fence's `obscures_below`: fences (and trees, tables) got dicts of their own and none was reused."""
    done = subprocess.run([sys.executable, "-c", _AFTER_THEMES.format(tasks=UNIT_TESTS)], capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"grass", "floor", "wall", "fence"} <= set(report["offered"])
    assert {kind for kind, n in report["taken"].items() if n == 0} == set(), report


@pytest.mark.parametrize("task", UNIT_TESTS)
def test_an_env_reset_after_release_observes_what_a_new_env_observes(task: str) -> None:
    played = make_rl_env(task)
    play_masked(played, 30, seed=1)
    obs, info = played.reset(seed=21)
    first = played.step(0)
    spares.clear()
    fresh = make_rl_env(task)
    fresh_obs, fresh_info = fresh.reset(seed=21)
    again = fresh.step(0)
    for key in obs:
        assert np.array_equal(obs[key], fresh_obs[key]), key
        assert np.array_equal(first[0][key], again[0][key]), key
    assert np.array_equal(info["action_mask"], fresh_info["action_mask"])
    assert np.array_equal(first[4]["action_mask"], again[4]["action_mask"])
    assert [s[0].uuid for s in played.unwrapped.symbolic.slot_data] == [s[0].uuid for s in fresh.unwrapped.symbolic.slot_data]


def test_spares_a_build_did_not_use_keep_no_disposed_world_alive() -> None:
    """A level with more ground under its buildings than the last leaves recycled grass unused
    (`spares._READY`): `settle` unties it, so the old world is freed at the reset (fails
    without `settle`: the leftovers' `world` held it)."""
    import gc
    import weakref

    env = make_rl_env("DialogTest")
    leftovers = 0
    for seed in range(12):
        env.reset(seed=seed)
        old = weakref.ref(env.unwrapped.world)
        gc.disable()
        try:
            env.reset(seed=seed + 100)
            assert old() is None
        finally:
            gc.enable()
        ready = [obj for objs in spares._READY.values() for obj in objs]
        assert all(obj.world is None for obj in ready)
        leftovers += len(ready)
    assert leftovers > 0  # the case arose


def _fill_then(changes: dict[tuple[int, int], Any]) -> tuple[set[int], set[int]]:
    """A grass fill with `changes` applied per tile (a callable on the world and the tile's
    grass), disposed: (ids of the grass left as new, ids of the changed grass)."""
    world = World(1)
    layout.fill_grass(world)
    changed = set()
    for (x, y), change in changes.items():
        grass = world.stacks[x][y][0]
        changed.add(id(grass))
        change(world, grass)
        del grass
    untouched = {id(obj) for obj in world._fills["grass"][0]} - changed  # type: ignore[index]
    world.dispose()
    del world
    plan = inline_plan("grass")
    assert plan is not None
    layer, cls, name, type_, materials, _, attrs = plan
    taken = spares.take("grass", cls, name, type_, materials, layer, attrs)
    return {id(obj) for obj in taken}, untouched


def _set(attr: str, value: Any) -> Any:
    return lambda world, obj: setattr(obj, attr, value)


def test_removed_grass_is_refused_by_its_layer_and_alive_and_only_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`take` finds removed objects by position in the layer and `alive` columns (`_removed`):
    removals as `clear_ground` and `remove_from_world` make them, each other odd value of those
    columns, and an `alive` False and a layer None on two different objects (equal counts,
    other positions: the index path must give up)."""
    cases: list[dict[tuple[int, int], Any]] = [
        {(1, 1): lambda w, o: layout.clear_ground(w, o.x, o.y), (30, 2): lambda w, o: o.remove_from_world()},
        {(0, 0): lambda w, o: o.remove_from_world(), (31, 31): lambda w, o: o.remove_from_world()},
        {(3, 3): _set("alive", False), (4, 4): _set("layer", None)},
        {(5, 5): _set("alive", 0), (6, 6): _set("alive", None), (7, 7): _set("layer", Layer.OBJECTS)},
        {(8, 8): _set("alive", False), (9, 9): lambda w, o: o.remove_from_world(), (10, 1): _set("layer", None)},
    ]
    compared: list[int] = []
    eq = spares.eq
    monkeypatch.setattr(spares, "eq", lambda a, b: compared.append(1) or eq(a, b))  # the general path's
    for i, changes in enumerate(cases):
        compared.clear()
        taken, untouched = _fill_then(changes)
        assert taken == untouched and len(untouched) == 1024 - len(changes)
        assert bool(compared) == (i >= 2)  # plain removals take the index path (not silently off)
        spares.clear()


def test_uuids_made_ints_a_chunk_at_a_time_are_the_pool_s_order() -> None:
    """`UuidPool` turns a drawn block into Python ints only as far as asked (`CHUNK` or more at a
    time): any sequence of `extend`s gives the plain order (`reference_uuids`: first
    occurrences of each block, then the tail), across block boundaries and into the tail, and
    a reset's ~1,200 UUIDs leave part of the first block unconverted (the fast path runs)."""
    from discoverylab.world.uuids import UUID_LIMIT, UuidPool
    from test_world_fast_paths import reference_uuids

    for seed, steps in ((11, (1, 255, 256, 257, 1500, 2017, 2018, 2019, 5000, 61000, UUID_LIMIT)),
                        (12, (1024, 1100, 1300, 3000, UUID_LIMIT)), (13, (UUID_LIMIT,))):  # fmt: skip
        pool = UuidPool(np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[4]))
        for needed in steps:
            pool.extend(needed)
            assert needed <= len(pool.drawn)
        assert pool.drawn == reference_uuids(seed)
    world = World(5)
    world.take_uuids(1024)
    for _ in range(180):
        world.next_uuid()
    assert len(world._uuids) < 1500  # of ~2,020 drawn
    assert world._uuids == reference_uuids(5)[: len(world._uuids)]
