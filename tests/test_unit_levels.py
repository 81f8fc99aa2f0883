"""Procedural unit-test levels (issue 27 part 3): layouts, start cells and goals vary across
levels, difficulties change what the docs say, and memorising one level does not pass others."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.world import World

UNIT = [tid for tid, cls in all_tasks().items() if cls.suite == "unit"]
# Distinct task descriptions over seeds 0-299 at Normal where the goal space is smaller than 20
# would be listed here (docs/tasks.md states each test's goal space); none is.
MIN_DESCRIPTIONS = 20
MIN_STARTS = 50


def build(task: str, difficulty: str, seed: int) -> Any:
    return all_tasks()[task](World(seed), difficulty)


def _variety(task: str, seeds: int) -> tuple[int, int]:
    descriptions, starts = set(), set()
    for seed in range(seeds):
        sc = build(task, "normal", seed)
        descriptions.add(sc.scorecard.task_description)
        starts.add((sc.player.x, sc.player.y))
    return len(descriptions), len(starts)


@pytest.mark.parametrize("task", UNIT)
def test_normal_levels_vary_in_goal_and_start(task: str) -> None:
    """Over seeds 0-99 at Normal: >= 15 distinct task descriptions and >= 30 start cells (the
    issue's measure, seeds 0-299, is the slow test below: 10 s per task)."""
    descriptions, starts = _variety(task, 100)
    assert descriptions >= 15 and starts >= 30, (task, descriptions, starts)


@pytest.mark.slow
@pytest.mark.parametrize("task", UNIT)
def test_normal_levels_vary_over_300_seeds(task: str) -> None:
    """Over seeds 0-299 at Normal: >= 20 distinct task descriptions and >= 50 start cells."""
    descriptions, starts = _variety(task, 300)
    assert descriptions >= MIN_DESCRIPTIONS, (task, descriptions)
    assert starts >= MIN_STARTS, (task, starts)


@pytest.mark.parametrize("task", UNIT)
@pytest.mark.parametrize("difficulty", ["easy", "challenge"])
def test_easy_and_challenge_levels_vary_too(task: str, difficulty: str) -> None:
    descriptions, starts = set(), set()
    for seed in range(60):
        sc = build(task, difficulty, seed)
        descriptions.add(sc.scorecard.task_description)
        starts.add((sc.player.x, sc.player.y))
    assert len(descriptions) >= 8 and len(starts) >= 20, (task, len(descriptions), len(starts))


@pytest.mark.parametrize("task", UNIT)
def test_start_cell_is_where_the_agent_stands_and_is_free(task: str) -> None:
    for seed in range(10):
        sc = build(task, "normal", seed)
        player = sc.player
        assert sc.world.teleports["initial location"] == (player.x, player.y)
        others = [o for o in sc.world.top_level_at(player.x, player.y) if o is not player]
        assert all(o.type in ("floor", "grass", "path") for o in others), (seed, [o.type for o in others])


@pytest.mark.parametrize("task", UNIT)
def test_same_instance_same_level(task: str) -> None:
    """The level is a function of the instance: rebuilt, it is the same; the build stream, not
    the seed's value, draws it (neighbouring seeds differ)."""
    a, b, c = build(task, "normal", 7), build(task, "normal", 7), build(task, "normal", 8)
    sig = [(sc.scorecard.task_description, sc.player.x, sc.player.y,
            sorted((o.type, o.name, o.x, o.y) for o in sc.world.objects.values() if o.parent is None)) for sc in (a, b, c)]  # fmt: skip
    assert sig[0] == sig[1]
    assert sig[0] != sig[2]


def test_difficulties_change_what_the_docs_say() -> None:
    """A few of the knobs docs/tasks.md lists, checked on the built levels."""
    for seed in range(5):
        assert len(build("MovingAgentsTest", "easy", seed).npcs) == 2
        assert len(build("MovingAgentsTest", "challenge", seed).others) == 2
        assert len(build("DialogTest", "challenge", seed).others) == 2
        assert len(build("PickAndGiveTest", "challenge", seed).npcs) == 4
        assert len(build("DoorsTest", "easy", seed).doors) == 2
        assert len(build("DoorsWithKeysTest", "easy", seed).keys) == 2
        assert "inside the house" in build("SearchTest", "easy", seed).scorecard.task_description
        assert build("NavigationHouseTest", "easy", seed).target in ("kitchen", "bedroom", "science lab")
        hard = build("PickAndPlaceTest", "challenge", seed)
        assert {o.type for o in hard.world.objects.values() if o.type in ("pot", "jar") and o.parent is not None} == {"pot", "jar"}


def test_moving_agents_challenge_warning_a_stranger_fails() -> None:
    from env_driver import EnvDriver

    d = EnvDriver("MovingAgentsTest", "challenge", seed=0, max_steps=300)
    stranger = d.scenario.others[0]
    d.player.seen.add(stranger.uuid)
    for _ in range(20):
        d.do("TELEPORT_TO_OBJECT", stranger)
        if any(e["uuid"] == stranger.uuid for e in d.obs["accessibleEnvironmentObjects"]):
            break
    d.do("TALK", stranger)
    warning = next(t for t in d.options() if t.endswith("You might want to go home."))
    d.choose(warning)
    card = d.scenario.scorecard
    assert card.completed and not card.success


# ---- attack: memorise one level's winning actions, replay them on others ---------------------
def _names(env: DiscoveryWorldEnv, action: dict[str, Any]) -> dict[str, Any]:
    """The action with its object arguments replaced by the objects' names (what a memorising
    agent can carry to another level: UUIDs are drawn per episode)."""
    assert env.world is not None
    out = dict(action)
    for key in ("arg1", "arg2"):
        uid = action.get(key)
        if isinstance(uid, int) and uid in env.world.objects:
            out[key] = ("name", env.world.objects[uid].name)
    return out


def _winning_actions(task: str, seed: int) -> list[dict[str, Any]]:
    env = DiscoveryWorldEnv(task, max_steps=100)
    _, info = env.reset(seed=seed)
    gen = all_tasks()[task].oracle(info["observation"])
    actions: list[dict[str, Any]] = []
    item = next(gen)
    while True:
        if isinstance(item, dict):
            actions.append(_names(env, item))
            _, _, term, trunc, info = env.step(item)
            if term or trunc:
                break
        try:
            item = gen.send(info["observation"])
        except StopIteration:
            break
    assert env.scenario is not None and env.scenario.scorecard.success, (task, seed)
    return actions


def _replay(task: str, instance: Any, actions: list[dict[str, Any]]) -> bool:
    """Play `actions` on another level, each named object resolved to the nearest object of
    that name seen so far in this episode (a strong memoriser: better than replaying indices)."""
    env = DiscoveryWorldEnv(task, max_steps=100)
    _, info = env.reset(options={"instance": instance})
    memory: dict[str, int] = {}
    term = trunc = False
    for action in actions:
        obs = info["observation"]
        for group in obs["nearbyObjects"]["objects"].values():
            for entry in group:
                memory.setdefault(entry["name"], entry["uuid"])
        for entry in obs["inventoryObjects"]:
            memory[entry["name"]] = entry["uuid"]
        packet = {k: (memory.get(v[1], "") if isinstance(v, tuple) else v) for k, v in action.items()}
        _, _, term, trunc, info = env.step(packet)
        if term or trunc:
            break
    return bool(term and env.scenario is not None and env.scenario.scorecard.success)


@pytest.mark.parametrize("task", UNIT)
def test_attack_replay_one_levels_winning_actions(task: str) -> None:
    """An agent that memorised level A's winning actions (objects by name) fails most other
    levels: success on 12 held-out dev levels stays well below 1 for each of two levels A."""
    for seed in (1000, 1001):
        actions = _winning_actions(task, seed)
        wins = sum(_replay(task, make_instance(task, "normal", "dev", i), actions) for i in range(12))
        assert wins <= 3, (task, seed, wins)


@pytest.mark.parametrize(("task", "difficulty"), [("DialogTest", "challenge"), ("PickAndGiveTest", "normal"), ("PickAndGiveTest", "challenge")])
def test_attack_talk_to_the_first_listed_character(task: str, difficulty: str) -> None:
    """The character the task names is built first; an agent that always picks the first (or
    any fixed) entry of `nearbyAgents` must not find it there on most levels."""
    positions = []
    for seed in range(30):
        env = DiscoveryWorldEnv(task, difficulty)
        _, info = env.reset(seed=seed)
        sc: Any = env.scenario
        target = sc.sally if task == "DialogTest" else sc.recipient
        listed = list(info["observation"]["nearbyAgents"]["list_of_agents"])
        key = next(k for k in listed if k.endswith(f" uuid {target.uuid}"))
        positions.append(listed.index(key))
    for index in set(positions):
        assert positions.count(index) <= 20, positions  # no fixed index wins 2 levels in 3


def test_the_unit_suite_is_the_normal_unit_tests_unless_a_difficulty_is_named() -> None:
    from discoverylab.bench.runner import suite_tasks

    assert suite_tasks("unit") == [(t, "normal") for t in UNIT]
    assert suite_tasks("unit", "Challenge") == [(t, "challenge") for t in UNIT]
    assert [p for p in suite_tasks("all") if p[0] in UNIT] == [(t, "normal") for t in UNIT]
