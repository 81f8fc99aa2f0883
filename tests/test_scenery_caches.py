"""Scenery caches against plain references. The symbolic encoder (rl/scenery.py)
copies scenery tiles from arrays the world keeps up to date, so check every step of random
rollouts on every task and difficulty against a tile-by-tile walk of the window."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.rl.symbolic import DEPTH, SymbolicEncoder
from discoverylab.rl.view import kind_id, mentioned, object_slots
from discoverylab.scenarios.registry import all_tasks

PAIRS = [(tid, d) for tid, cls in all_tasks().items() for d in cls.difficulties]


def reference(agent, radius: int) -> tuple[np.ndarray, np.ndarray, set[int]]:  # type: ignore[no-untyped-def]
    """Tiles, tile states and the UUIDs an observer sees, walking every tile of the window."""
    world, w = agent.world, 2 * radius + 1
    tiles = np.zeros((w, w, DEPTH), np.uint8)
    state = np.zeros((w, w, 4), np.uint8)
    visible = {agent.uuid}
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            x, y = agent.x + dx, agent.y + dy
            if not world.in_bounds(x, y):
                continue
            objs = [o for o in world.objects_at(x, y) if o is not agent]
            visible.update(o.uuid for o in objs)
            for i, obj in enumerate(objs[:DEPTH]):
                tiles[dy + radius, dx + radius, i] = kind_id(obj.type)
            state[dy + radius, dx + radius] = (
                1, world.blocker_at(x, y) is None, any(o.is_agent for o in objs),
                any(o.is_passage and o.is_open for o in objs),
            )  # fmt: skip
    return tiles, state, visible


def reference_rows(agent, radius: int, count: int, task: str) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The `slots` array built from `object_slots` and the objects' attributes (docs/rl.md)."""
    rows = np.zeros((count, 17), np.uint8)
    for i, s in enumerate(object_slots(agent, radius, count)):
        o = s.obj
        rows[i] = (
            1, kind_id(o.type), s.in_inventory, s.accessible, s.dx + radius, s.dy + radius, o.is_open, o.activated,
            o.is_container, o.openable, o.activatable, o.edible, o.readable, o.dialogable or o.is_npc, o.movable,
            mentioned(o.name, task), min(len(o.contents), 255) if o.is_open else 0,  # visible contents only
        )  # fmt: skip
    return rows


def _uncached(base, obs, info, fresh: bool) -> None:  # type: ignore[no-untyped-def]
    """The observation equals one built without the encoder's per-step reuse (`fresh`: by a
    new encoder with a new mirror)."""
    agent, card = base.scenario.player, base.scenario.scorecard
    encoder = SymbolicEncoder(base.radius, base.symbolic.num_slots) if fresh else base.symbolic
    if not fresh:
        encoder.clear_views()  # rebuild from the mirror
    again = encoder.encode(agent, card.task_description, bool(obs["agent"][5]), bool(obs["agent"][7]))
    if fresh:
        encoder._mirror.close()  # stop its watcher
    for key in obs:
        assert np.array_equal(obs[key], again[key]), (key, fresh)


def _candidates_from_array(mirror, ax: int, ay: int) -> list[tuple[int, int, int, int, int]]:  # type: ignore[no-untyped-def]
    """`candidate_tiles` as the pure engine reads it: the window of the padded `has_candidates`
    array (the compiled engine reads the `flags` lists instead, `WindowReads._flagged_tiles`)."""
    r = mirror.radius
    window = mirror.has_candidates[ay : ay + 2 * r + 1, ax : ax + 2 * r + 1]
    return [(ax + dx, ay + dy, abs(dx) + abs(dy), dx, dy) for dy in range(-r, r + 1) for dx in range(-r, r + 1)
            if (dx or dy) and window[dy + r, dx + r]]  # fmt: skip


def _rollout_checked(task: str, difficulty: str, steps: int, seed: int, radius: int = 3) -> int:
    env = make_rl_env(task, difficulty, max_steps=10**9, radius=radius)
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    checked = 0
    for i in range(steps):
        agent = base.scenario.player
        rows = reference_rows(agent, base.radius, base.symbolic.num_slots, base.scenario.scorecard.task_description)
        assert np.array_equal(obs["slots"], rows), (task, difficulty, i)
        _uncached(base, obs, info, fresh=i % 25 == 0)
        tiles, state, visible = reference(agent, base.radius)
        assert np.array_equal(obs["tiles"], tiles), (task, difficulty, i)
        assert np.array_equal(obs["tile_state"], state), (task, difficulty, i)
        assert visible <= agent.seen, (task, difficulty, i, visible - agent.seen)
        mirror = base.symbolic._mirror
        assert mirror._flagged_tiles(agent.x, agent.y) == _candidates_from_array(mirror, agent.x, agent.y), (task, i)
        expected = object_slots(agent, base.radius, base.symbolic.num_slots)
        assert [(s.obj.uuid, s.accessible, s.dx, s.dy) for s in base.symbolic.slots] == [
            (s.obj.uuid, s.accessible, s.dx, s.dy) for s in expected
        ], (task, difficulty, i)
        checked += 1
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 else mask[:15]) if mask[:15].any() else np.flatnonzero(mask)
        obs, _, term, trunc, info = env.step(int(rng.choice(allowed)))
        if term or trunc:
            obs, info = env.reset(seed=seed + 1000 + i)
    return checked


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_scenery_mirror_matches_a_tile_by_tile_walk(task: str, difficulty: str) -> None:
    assert _rollout_checked(task, difficulty, steps=150, seed=3) == 150


@pytest.mark.parametrize("radius", [0, 1])
@pytest.mark.parametrize("task", ["Proteomics", "SpaceSick"])
def test_small_views_match_too(task: str, radius: int) -> None:
    """Characters walking outside the view leave their tiles pending; with radius 0 the faced
    tile lies outside the window and must be current all the same."""
    assert _rollout_checked(task, "normal", steps=150, seed=5, radius=radius) == 150


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_scenery_mirror_matches_over_long_rollouts(task: str, difficulty: str) -> None:
    for seed in range(5):
        _rollout_checked(task, difficulty, steps=2000, seed=seed)


def test_a_changed_scenery_tile_is_seen_at_once() -> None:
    """Dropping an item on bare floor makes the tile dynamic; picking it up makes it scenery."""
    env = make_rl_env("PickAndPlaceTest", max_steps=10**9)
    obs, _ = env.reset(seed=0)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    item = base.scenario.target
    x, y = agent.facing_tile()
    world.place(item, x, y)
    obs, *_ = env.step(14)  # WAIT: re-encode
    tiles, state, _ = reference(agent, base.radius)
    assert np.array_equal(obs["tiles"], tiles) and np.array_equal(obs["tile_state"], state)
    assert kind_id(item.type) in obs["tiles"][3 + y - agent.y, 3 + x - agent.x]
    item.detach()
    obs, *_ = env.step(14)
    assert kind_id(item.type) not in obs["tiles"]


def test_clones_keep_their_own_mirror() -> None:
    env = make_rl_env("DoorsTest", max_steps=10**9)
    env.reset(seed=1)
    for action in (0, 1, 2, 14):
        env.step(action)
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        a, b = env, clone
        for action in (1, 1, 2, 0, 3, 14, 8):
            oa, *_ = a.step(action)
            ob, *_ = b.step(action)
            assert all(np.array_equal(oa[k], ob[k]) for k in oa)
        mirror_a, mirror_b = a.unwrapped.symbolic._mirror, b.unwrapped.symbolic._mirror
        assert mirror_a.world is a.unwrapped.world and mirror_b.world is b.unwrapped.world
        watchers = b.unwrapped.world._watchers
        assert any(w is mirror_b.changed for w in watchers) and not any(w is mirror_a.changed for w in watchers)


def _check_view(env) -> None:  # type: ignore[no-untyped-def]
    base = env.unwrapped
    obs = base.symbolic.encode(base.scenario.player, base.scenario.scorecard.task_description, True, False)
    tiles, state, _ = reference(base.scenario.player, base.radius)
    assert np.array_equal(obs["tiles"], tiles) and np.array_equal(obs["tile_state"], state)


def test_opening_and_closing_a_door_updates_its_tile_at_once() -> None:
    """A door's tile turns passable and "open door" the step it opens, with nothing moving
    on it (the engine reports `is_open` changes to the tile watchers), and back on closing."""
    env = make_rl_env("DoorsTest", max_steps=10**9)
    env.reset(seed=2)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    door = base.scenario.doors[0]
    world.place(agent, door.x, door.y + 1)
    agent.facing = "north"
    _check_view(env)
    for verb in ("OPEN", "CLOSE", "OPEN"):
        _, _, _, _, info = base.step({"action": verb, "arg1": door.uuid})
        assert info["success"], info
        obs = base._output()
        assert obs["tile_state"][2, 3, 1] == obs["tile_state"][2, 3, 3] == (verb == "OPEN")
        _check_view(env)


def test_a_character_opening_a_door_on_its_way_updates_the_tile() -> None:
    """NPCs open unlocked doors in their path and close them behind: the door's tile follows."""
    from discoverylab.world.npc import NPC

    env = make_rl_env("DoorsTest", max_steps=10**9)
    env.reset(seed=2)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    door = base.scenario.doors[0]
    world.place(agent, door.x + 2, door.y + 2)
    base._output()
    npc = NPC(world, "visitor", door.x, door.y + 1)
    assert npc.advance_to(door.x, door.y) == "turned"
    assert npc.advance_to(door.x, door.y) == "opened" and door.is_open
    _check_view(env)
    world.place(npc, door.x, door.y - 1)
    assert npc._close_door_behind() and not door.is_open
    _check_view(env)


def _oracle_checked(task: str, difficulty: str, seed: int, limit: int = 2000) -> int:
    """Play the task's oracle (doors, lids, digging, NPC errands: what random play rarely
    does) on a text env, encoding the symbolic view of the same world after every step."""
    from discoverylab.agents.oracle import OracleAgent
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.rl.symbolic import SymbolicEncoder

    env = DiscoveryWorldEnv(task, difficulty, max_steps=limit)
    env.reset(seed=seed)
    agent, encoder = OracleAgent(task), SymbolicEncoder(radius=env.radius)
    steps = 0
    for steps in range(1, limit + 1):
        player = env.scenario.player
        obs = encoder.encode(player, "", True, False)
        tiles, state, visible = reference(player, env.radius)
        assert np.array_equal(obs["tiles"], tiles) and np.array_equal(obs["tile_state"], state), (task, difficulty, steps)
        assert visible <= player.seen
        *_, term, trunc, _ = env.step(agent.act(env.observation_dict()))
        if term or trunc or agent.finished:
            break
    return steps


ORACLE_PAIRS = [("DoorsTest", "normal"), ("ArchaeologyDating", "normal"), ("SpaceSick", "easy"), ("PlantNutrients", "easy")]


@pytest.mark.parametrize(("task", "difficulty"), ORACLE_PAIRS)
def test_tile_mirror_follows_an_oracle_episode(task: str, difficulty: str) -> None:
    assert _oracle_checked(task, difficulty, seed=1) > 10


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_tile_mirror_follows_every_oracle(task: str, difficulty: str) -> None:
    for seed in range(3):
        _oracle_checked(task, difficulty, seed)


FIXED_SLOT_FEATURES = ("is_container", "openable", "activatable", "edible", "readable", "dialogable", "is_npc", "movable", "type")


def test_fixed_slot_features_are_never_assigned_after_construction() -> None:
    """The encoder caches these per object (`SceneryMirror.fixed_features`): they must only be
    class attributes or constructor arguments. Fails on any `x.<feature> = ...` in the
    package outside `WorldObject.__init__` and `catalog.build_plain` and `place_each` and `place`, its inline twins (they set `type`)."""
    import ast
    from pathlib import Path

    import discoverylab

    offenders = []
    for path in Path(discoverylab.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                for target in targets:
                    for item in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if isinstance(item, ast.Attribute) and item.attr in FIXED_SLOT_FEATURES:
                            constructor = (path.name, fn.name) in {("objects.py", "__init__"), ("catalog.py", "build_plain"), ("catalog.py", "place_each"), ("catalog.py", "place")}  # plain scenery built inline
                            if not (constructor and item.attr == "type"):
                                offenders.append(f"{path.name}:{node.lineno} {fn.name} sets .{item.attr}")
    assert not offenders, offenders


def test_fixed_slot_features_follow_the_object() -> None:
    """The cached slot features (kind, fixed flags, named in the task) equal a fresh build
    for every slot of a rollout."""
    from discoverylab.rl.symbolic import _static_features

    env = make_rl_env("PickAndGiveTest", max_steps=10**9)
    env.reset(seed=4)
    base = env.unwrapped
    task = base.scenario.scorecard.task_description
    for action in [0, 1, 2, 3, 14] * 6:
        env.step(action)
        statics = base.symbolic._mirror.statics
        for slot in base.symbolic.slots:
            assert statics[slot.obj] == _static_features(slot.obj, task)


# ---- session 11: reported tiles that show nothing new keep the encoder's views ----------------


def _fresh_equal(env) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The current observation (a WAIT step) equals a new encoder's and the reference rows."""
    obs, *_ = env.step(14)
    base = env.unwrapped
    agent, card = base.scenario.player, base.scenario.scorecard
    rows = reference_rows(agent, base.radius, base.symbolic.num_slots, card.task_description)
    assert np.array_equal(obs["slots"], rows)
    _uncached(base, obs, {}, fresh=True)
    return obs  # type: ignore[no-any-return]


def test_a_tile_reported_without_a_change_keeps_the_views() -> None:
    """Reactor Lab's reactors report their tile every tick (they redescribe themselves); a
    reported tile that shows the same cell, objects and slot features keeps the encoder's
    per-place views (`SceneryMirror.refresh`, not strict), and the observation stays exact."""
    env = make_rl_env("ReactorLab", max_steps=10**9)
    env.reset(seed=0)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    reactor = next(o for o in world.objects.values() if type(o).__name__ == "CrystalReactor")
    rx, ry = reactor.location()
    world.place(agent, rx, ry + 1)
    agent.facing = "north"
    for _ in range(2):  # a tile's first recompute after a change looks closer once (`SceneryMirror._tile`)
        _fresh_equal(env)
    mirror = base.symbolic._mirror
    built = base.symbolic._built[(agent.x, agent.y, agent.facing)]
    version = mirror.version
    for _ in range(5):
        _fresh_equal(env)
    assert mirror.version == version  # reported every tick, never shown different
    assert base.symbolic._built[(agent.x, agent.y, agent.facing)] is built


def test_a_reported_change_of_a_slot_feature_rebuilds_the_view() -> None:
    """A change the cell does not show (a faced object's name, activation, lid) still rebuilds
    the slots: the mirror compares what the slot rows read (`_look`), not only the cell."""
    env = make_rl_env("PickAndPlaceTest", max_steps=10**9)
    env.reset(seed=0)
    base = env.unwrapped
    world, agent = base.world, base.scenario.player
    item = base.scenario.target
    x, y = agent.facing_tile()
    world.place(item, x, y)
    _fresh_equal(env)
    for change in ("activated", "is_open", "name"):
        if change == "name":
            item.name = item.name + " (renamed)"
        else:
            setattr(item, change, not getattr(item, change))
        item.text_changed()  # what the engine does on every such change
        obs = _fresh_equal(env)
        slot = next(i for i, s in enumerate(base.symbolic.slots) if s.obj is item)
        assert obs["slots"][slot, 6] == item.is_open and obs["slots"][slot, 7] == item.activated


def test_a_change_inside_the_inventory_rebuilds_the_view() -> None:
    """What the agent holds is read live, beside the mirror, which keeps the agent's tile as if
    the agent stood elsewhere: a reported change there (same tile, same cell) must still
    rebuild every kept view (`refresh`'s strict), or the inventory's rows would go stale."""
    env = make_rl_env("PickAndPlaceTest", max_steps=10**9)
    env.reset(seed=0)
    base = env.unwrapped
    agent = base.scenario.player
    item = base.scenario.target
    agent.add(item)
    _fresh_equal(env)
    for _ in range(2):
        item.is_open = not item.is_open
        item.text_changed()
        obs = _fresh_equal(env)
        assert obs["slots"][0, 6] == item.is_open  # the inventory comes first
    agent.contents.remove(item)  # gone without a report: the next reported change still rebuilds
    item.parent = None
    base.world.touch(agent.x, agent.y)
    obs = _fresh_equal(env)
    assert not obs["slots"][:, 2].any()


def test_the_four_facings_of_a_place_share_its_slot_candidates() -> None:
    """`SymbolicEncoder._place` gathers and sorts a place's candidates once for its four
    facings; each facing's slots (the faced tile's within reach, first) and rows still equal
    the tile-by-tile reference, with and without something in the inventory."""
    env = make_rl_env("PickAndPlaceTest", max_steps=10**9)
    env.reset(seed=0)
    base = env.unwrapped
    world, agent, encoder = base.world, base.scenario.player, base.symbolic
    table = base.scenario.container
    tx, ty = table.location()
    world.place(agent, tx, ty + 1)
    for holding in (False, True):
        if holding:
            agent.add(base.scenario.target)
        before = set(encoder._places)  # the start position's, from the reset
        seen_places = set()
        for action in (4, 5, 6, 7, 4):  # ROTATE_DIRECTION north, east, south, west, north
            obs, *_ = env.step(action)
            task = base.scenario.scorecard.task_description
            assert np.array_equal(obs["slots"], reference_rows(agent, base.radius, encoder.num_slots, task))
            expected = object_slots(agent, base.radius, encoder.num_slots)
            assert [(s.obj.uuid, s.accessible, s.dx, s.dy) for s in encoder.slots] == [
                (s.obj.uuid, s.accessible, s.dx, s.dy) for s in expected
            ]
            seen_places.update(encoder._places)
        assert seen_places - before == {(agent.x, agent.y, holding)}
        assert encoder._places[(agent.x, agent.y, holding)][3]  # a neighbour holds candidates (the table)


@pytest.mark.parametrize(("task", "seed", "walkers"), [("MovingAgentsTest", 4, True), ("LostInTranslation", 4, False),
                                                   ("PickAndGiveTest", 1, False), ("SpaceSick", 0, True),
                                                   ("Proteomics", 2, True)])  # fmt: skip
def test_views_kept_and_patched_across_tile_changes_equal_fresh_ones(
    task: str, seed: int, walkers: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When tiles change, the encoder drops its kept views but patches the agent's own place
    with the changed tiles (`SymbolicEncoder._forget`, `kept_views.patch_place`; session 11
    round 2, redone in session 13). Over a random walk with the caches never cleared, every
    observation equals one from a new encoder with a new mirror. Where characters walk in
    view, the patch is used and the place kept across a change (on Space Sick the agent holds
    tools: its own part is read again)."""
    from discoverylab.rl import symbolic

    env = make_rl_env(task, "normal", max_steps=10**9)
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    encoder = base.symbolic
    counts = {"patched": 0, "kept": 0}
    patch, forget = symbolic.patch_place, encoder._forget

    def counted_patch(*args):  # type: ignore[no-untyped-def]
        counts["patched"] += 1
        return patch(*args)

    def counted_forget(*args):  # type: ignore[no-untyped-def]
        forget(*args)
        counts["kept"] += bool(encoder._built or encoder._places)

    monkeypatch.setattr(symbolic, "patch_place", counted_patch)
    monkeypatch.setattr(encoder, "_forget", counted_forget)
    rng = np.random.default_rng(seed)
    for i in range(300):
        _uncached(base, obs, info, fresh=True)
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 else mask[:15]) if mask[:15].any() else np.flatnonzero(mask)
        obs, _, term, trunc, info = env.step(int(rng.choice(allowed)))
        if term or trunc:
            obs, info = env.reset(seed=seed + 1000 + i)
    assert not walkers or (counts["patched"] > 5 and counts["kept"] > 5), counts
