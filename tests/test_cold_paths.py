"""The symbolic encoder's cold paths (a new world's first views) against their plain versions:
the tile mirror's shared cells of plain stacks (`_STACK_CELLS`, `_PLAIN_CELLS`) and its
inline first fill. Each test fails when its fast path goes stale."""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.rl import make_rl_env, scenery
from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.symbolic import DEPTH
from discoverylab.rl.view import kind_id, mentioned
from discoverylab.world import catalog
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer
from discoverylab.world.world import World

TASKS = ["DoorsTest", "NavigationHouseTest", "MovingAgentsTest", "SearchTest", "DialogTest", "ReactorLab", "Proteomics"]


def _cells(mirror: SceneryMirror, x: int, y: int, full: bool) -> tuple[object, ...]:
    kinds, state, flag = mirror._full_cell(x, y) if full else mirror._cell(x, y)
    shown = mirror.visible[x][y]
    return kinds, state, flag, [id(o) for o in shown], [(u, id(o)) for u, o in mirror.candidates[x][y]]


def _check_every_tile(world: World, viewer: object) -> int:
    """Every tile's cell twice from the shared cells (the second read hits them) and once from
    its objects; how many tiles took a shared cell of several objects."""
    mirror = SceneryMirror(world, 3, DEPTH, viewer)  # type: ignore[arg-type]
    shared = 0
    for rnd in range(2):
        for x in range(world.size):
            for y in range(world.size):
                fast = _cells(mirror, x, y, full=False)
                assert fast == _cells(mirror, x, y, full=True), (x, y, world.stacks[x][y])
                stack = world.stacks[x][y]
                shared += rnd == 1 and len(stack) > 1 and scenery._stack_key(stack, mirror.viewer, DEPTH) is not None
    mirror.close()
    return shared


@pytest.mark.parametrize("task", TASKS)
def test_shared_cells_of_plain_stacks_equal_each_tile_s_own(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """At a reset and after 150 random steps (characters walked, doors opened, things taken)."""
    monkeypatch.setattr(scenery, "_STACK_CELLS", {})
    monkeypatch.setattr(scenery, "_PLAIN_CELLS", {})
    env = make_rl_env(task, max_steps=10**6)
    _, info = env.reset(seed=5)
    base = env.unwrapped
    assert _check_every_tile(base.world, base.scenario.player) > 0  # walls on floors, trees on grass
    rng = np.random.default_rng(1)
    for _ in range(150):
        *_, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    _check_every_tile(base.world, base.scenario.player)


def _stacks_apart() -> tuple[World, object]:
    """A row of tiles whose stacks differ in one part of `_stack_key` each, and a viewer."""
    world = World(1)
    world.place(catalog.spawn(world, "sign", obscures_below=True), 8, 0, layer=Layer.WORLD)  # over grass, on its layer
    for x, ground in enumerate(["grass"] * 7 + ["floor", "grass"]):
        catalog.place(world, ground, x, 0)
    catalog.place(world, "sign", 0, 0)
    catalog.place(world, "sign", 1, 0, passable=True)  # signs block by default
    catalog.place(world, "sign", 2, 0, obscures_below=True)
    world.place(catalog.spawn(world, "sign", obscures_below=True), 3, 0, layer=Layer.WORLD)  # under grass, on its layer
    catalog.place(world, "wall", 4, 0)
    catalog.place(world, "fence", 5, 0)  # a wall that hides nothing
    catalog.place(world, "sign", 7, 0)  # on a floor
    catalog.place(world, "sign", 9, 0)  # alone: a plain object with candidates
    catalog.place(world, "grass", 10, 0)
    return world, catalog.place(world, "sign", 6, 0)


def test_each_part_of_a_stack_s_key_tells_its_cells_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stacks that differ in one object's type, passability, layer or hiding what is below (and
    the viewer standing in one) each get their own cell: a key that forgot one would hand the
    first stack's cell to another."""
    monkeypatch.setattr(scenery, "_STACK_CELLS", {})
    world, viewer = _stacks_apart()
    mirror = SceneryMirror(world, 3, DEPTH, viewer)  # type: ignore[arg-type]
    for x in range(11):
        assert _cells(mirror, x, 0, full=False) == _cells(mirror, x, 0, full=True), x
    assert len(scenery._STACK_CELLS) == 8  # the viewer's tile and the lone ones take other paths
    assert [len(mirror.visible[x][0]) for x in range(11)] == [2, 2, 1, 2, 1, 2, 1, 2, 2, 1, 1]


def test_characters_share_cells_only_while_they_carry_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A character other than the viewer on a plain stack takes the shared cell of its stack
    (`_stack_key`), one per class and ground; one carrying something (a wall: the tile turns
    impassable, though the closed inventory shows nothing) and the viewer itself take their
    own. Fails when the key lets a carrying character or the viewer share a cell, or forgets
    whether an object is a character."""
    monkeypatch.setattr(scenery, "_STACK_CELLS", {})
    world = World(1)
    for x in range(7):
        catalog.place(world, "floor" if x == 2 else "grass", x, 0)
    people = [NPC(world, f"npc{x}", x, 0) for x in range(5)]
    viewer = Agent(world, "agent", 6, 0)
    people[4].add(catalog.spawn(world, "wall"))
    people[3].add(catalog.spawn(world, "sign", passable=True))
    catalog.place(world, "sign", 5, 0, passable=True)
    catalog.place(world, "grass", 7, 0)
    catalog.place(world, "sign", 7, 0, passable=True).is_agent = True  # a character by its flag alone
    mirror = SceneryMirror(world, 3, DEPTH, viewer)
    for _ in range(2):
        for x in range(8):
            assert _cells(mirror, x, 0, full=False) == _cells(mirror, x, 0, full=True), x
    assert list(mirror._cell(4, 0)[1]) == [1, 0, 1, 0]  # carrying a wall: impassable, a character
    assert list(mirror._cell(0, 0)[1]) == [1, 1, 1, 0]
    assert list(mirror._cell(7, 0)[1]) == [1, 1, 1, 0]
    assert len(scenery._STACK_CELLS) == 4  # npc on grass (twice), on the floor; a sign on grass, as a character
    assert [scenery._stack_key(world.stacks[x][0], viewer, DEPTH) is None for x in range(7)] == [
        False, False, False, True, True, False, True]  # fmt: skip
    mirror.close()


def test_first_fill_of_lone_objects_and_stacks_equals_tile_by_tile(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_fill_first` on the row of `_stacks_apart` (plain cells inline, shared cells of stacks,
    full cells) leaves what `_tile(x, y, first=True)` per tile leaves, cells shared or not."""
    states = []
    for fast in (True, True, False):
        world, viewer = _stacks_apart()
        mirror = SceneryMirror(world, 3, DEPTH, viewer)  # type: ignore[arg-type]
        mirror.marker = viewer
        viewer.seen = {o.uuid for o in world.stacks[4][0]}  # type: ignore[attr-defined]
        tiles = [(x, 0, True) for x in range(11)]
        if fast:
            mirror._fill_first(tiles)
        else:
            for x, y, _ in tiles:
                mirror._tile(x, y, True)
        states.append((mirror.kinds.tobytes(), mirror.state.tobytes(), mirror.has_candidates.tobytes(),
                       mirror.marked.tobytes(), mirror.flags, dict(mirror._looks),
                       [[[o.uuid for o in v] for v in col] for col in mirror.visible],
                       [[[u for u, _ in c] for c in col] for col in mirror.candidates]))  # fmt: skip
    assert states[0] == states[2] and states[1] == states[2]
    assert states[0][3] != bytes(len(states[0][3]))  # the wall's tile was marked


@pytest.mark.parametrize("task", ["DoorsTest", "MovingAgentsTest", "SearchTest"])
def test_first_fill_equals_tile_by_tile_with_shared_cells(task: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`_fill_first` (inline plain cells, only set flags, looks and marks written) leaves the
    mirror as `_tile(x, y, first=True)` per tile does, the shared cells filled or not."""
    states = []
    for fast, fresh in [(True, True), (True, False), (False, True)]:
        if fresh:
            monkeypatch.setattr(scenery, "_STACK_CELLS", {})
            monkeypatch.setattr(scenery, "_PLAIN_CELLS", {})
        if not fast:
            monkeypatch.setattr(SceneryMirror, "_fill_first", lambda self, tiles: [self._tile(x, y, True) for x, y, _ in tiles])
        env = make_rl_env(task)
        env.reset(seed=2)
        base = env.unwrapped
        agent = base.scenario.player
        mirror = SceneryMirror(base.world, 3, DEPTH, agent)
        mirror.marker = agent
        agent.seen.update(list(base.world.objects)[::2])
        trail = []
        for x, y in [(agent.x, agent.y), (4, 4), (5, 4), (16, 20), (31, 31)]:
            mirror.refresh(x, y)
            trail.append((mirror.kinds.tobytes(), mirror.state.tobytes(), mirror.has_candidates.tobytes(),
                          mirror.marked.tobytes(), mirror.flags, dict(mirror._looks),
                          [[[o.uuid for o in v] for v in col] for col in mirror.visible],
                          [[[u for u, _ in c] for c in col] for col in mirror.candidates]))  # fmt: skip
        states.append(trail)
    assert states[0] == states[2] and states[1] == states[2]


def _encoder_on_a_table(seed: int = 0) -> tuple[object, object, object, object]:
    """A Pick and Place world with the agent beside the table (slots with rows to keep)."""
    env = make_rl_env("PickAndPlaceTest", max_steps=10**9)
    env.reset(seed=seed)
    base = env.unwrapped
    agent, table = base.scenario.player, base.scenario.container
    tx, ty = table.location()
    base.world.place(agent, tx, ty + 1)
    env.step(14)  # WAIT: encode the new place
    return env, base, base.symbolic, table


def _reference_rows(slots: list[tuple[object, ...]], radius: int, count: int, task: str) -> bytes:
    """The slot rows as the observation documents them, feature by feature (no kept parts)."""
    rows = b""
    for o, in_inventory, accessible, dx, dy in slots:  # type: ignore[misc]
        contents = min(len(o.contents), 255) if o.is_open else 0
        rows += bytes((1, kind_id(o.type), in_inventory, accessible, dx + radius, dy + radius, o.is_open, o.activated,
                       o.is_container, o.openable, o.activatable, o.edible, o.readable, o.dialogable or o.is_npc,
                       o.movable, mentioned(o.name, task), contents))  # fmt: skip
    return rows.ljust(count * 17, b"\0")


def test_slot_rows_read_what_changed_unreported() -> None:
    """`SymbolicEncoder._rows` keeps no row per slot: rows asked for again after the table's lid
    flipped unreported, after the mirror's version moved, under another task or from another
    mirror read the lid as it is now, and equal the documented features."""
    env, base, encoder, table = _encoder_on_a_table()
    mirror, task = encoder._mirror, base.scenario.scorecard.task_description
    slots = list(encoder.slot_data)
    lid = 17 * next(i for i, s in enumerate(slots) if s[0] is table) + 6
    other = SceneryMirror(base.world, 3, DEPTH, base.scenario.player)
    for change in ("none", "version", "task", "mirror"):
        table.is_open = not table.is_open  # unreported
        if change == "version":
            mirror.version += 1
        asked = (slots, other if change == "mirror" else mirror, task + " (reworded)" if change == "task" else task)
        rows = encoder._rows(*asked)
        assert rows[lid] == table.is_open, change
        assert rows == _reference_rows(slots, 3, encoder.num_slots, asked[2]), change
    other.close()


def test_a_reported_change_in_a_kept_place_gives_its_tile_new_rows() -> None:
    """Across a mirror version the agent's patched place keeps the rows of the tiles that did
    not change and builds the changed tile's anew: the table's lid flipped and reported shows
    in the next observation while the other slots keep their kept rows (same tuples)."""
    env, base, encoder, table = _encoder_on_a_table()
    for _ in range(2):
        before = {id(s): s for s in encoder.slot_data}
        version = encoder._mirror.version
        table.is_open = not table.is_open
        table.text_changed()
        obs = env.step(14)[0]  # WAIT
        assert encoder._mirror.version > version
        slots = encoder.slot_data
        at = next(i for i, s in enumerate(slots) if s[0] is table)
        assert obs["slots"][at, 6] == table.is_open
        assert id(slots[at]) not in before  # the changed tile's slot is a new tuple
        assert any(before.get(id(s)) is s for s in slots)  # the others kept theirs


def test_slot_rows_equal_the_documented_features() -> None:
    """Every observation's slot rows (kept parts joined: `_rows`, `_middles`) equal the features
    built one by one from the slots, at every step of random rollouts on six tasks, radius 3,
    2, 1 and 0 (other window widths: their own kept parts)."""
    for task, radius in [("DoorsTest", 3), ("NavigationHouseTest", 2), ("PickAndPlaceTest", 1), ("MovingAgentsTest", 3),
                         ("SearchTest", 2), ("PickAndGiveTest", 0)]:  # fmt: skip
        env = make_rl_env(task, radius=radius)
        _, info = env.reset(seed=4)
        base = env.unwrapped
        encoder = base.symbolic
        rng = np.random.default_rng(2)
        for i in range(250):
            mask = info["action_mask"]
            obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask if i % 3 else mask[:15]))))
            expected = _reference_rows(encoder.slot_data, radius, encoder.num_slots, base.scenario.scorecard.task_description)
            assert obs["slots"].tobytes() == expected, (task, i)
            if term or trunc:
                _, info = env.reset(seed=100 + i)


@pytest.mark.parametrize("task", ["DoorsTest", "NavigationHouseTest", "MovingAgentsTest"])
def test_mark_seen_adds_exactly_the_window_s_objects(task: str) -> None:
    """`SceneryMirror.mark_seen` (one `update` per window, lone objects without a `map`, bounds
    checked only at the world's edge) adds exactly the UUIDs the window's tiles show, at the
    corners and edges of the world as inside it, and nothing for tiles already marked."""
    env = make_rl_env(task)
    env.reset(seed=6)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    mirror = SceneryMirror(world, 3, DEPTH, agent)
    last = world.size - 1
    places = [(0, 0), (last, last), (0, last), (last, 0), (1, 5), (5, 1), (2, 2), (10, 12), (11, 12), (last - 2, 7)]
    for x0, y0 in places:
        mirror.refresh(x0, y0)
        agent.seen = set()
        mirror.marked[:] = False
        mirror.marked_windows.clear()
        mirror.mark_seen(agent, x0, y0, 7)
        expected = {o.uuid for y in range(y0 - 3, y0 + 4) for x in range(x0 - 3, x0 + 4)
                    if 0 <= x < world.size and 0 <= y < world.size for o in mirror.visible[x][y]}  # fmt: skip
        assert agent.seen == expected, (x0, y0)
    mirror.mark_seen(agent, 11, 12, 7)
    mirror.refresh(12, 12)
    agent.seen = set()
    mirror.mark_seen(agent, 12, 12, 7)  # next to (11, 12)'s window: only its new column is added
    assert agent.seen == {o.uuid for y in range(9, 16) for o in mirror.visible[15][y]}
    mirror.close()
