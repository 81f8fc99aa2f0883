"""Archaeology Dating: anti-gold runs (a wrong flag ends the task unsuccessfully), instrument
readings against the generated data, and the digging and flag rules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.archaeology.scenario import ArchaeologyDating
from discoverylab.scenarios.archaeology.things import radioisotope_channels
from discoverylab.world.objects import WorldObject

TASK = "ArchaeologyDating"


def _env(difficulty: str, seed: int) -> tuple[DiscoveryWorldEnv, ArchaeologyDating]:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    scenario = env.scenario
    assert isinstance(scenario, ArchaeologyDating)
    return env, scenario


def _do(env: DiscoveryWorldEnv, action: str, arg1: Any = None, arg2: Any = None) -> dict[str, Any]:
    packet: dict[str, Any] = {"action": action}
    if arg1 is not None:
        packet["arg1"] = arg1.uuid if isinstance(arg1, WorldObject) else arg1
    if arg2 is not None:
        packet["arg2"] = arg2.uuid if isinstance(arg2, WorldObject) else arg2
    _, _, terminated, _, info = env.step(packet)
    info["terminated"] = terminated
    return info


def _dig_out(env: DiscoveryWorldEnv, scenario: ArchaeologyDating, artifact: WorldObject) -> dict[str, Any]:
    """Stand beside the artifact's soil tile, facing it, and dig it (the shovel must be held)."""
    soil = artifact.parent
    assert soil is not None and soil.type == "soil"
    info = _do(env, "TELEPORT_TO_OBJECT", soil)
    assert info["observation"]["lastActionMessage"].startswith("I teleported"), info["observation"]
    return _do(env, "USE", scenario.shovel, soil)


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
@pytest.mark.parametrize("seed", range(3))
def test_flag_at_a_wrong_dig_site_completes_unsuccessfully(difficulty: str, seed: int) -> None:
    env, scenario = _env(difficulty, seed)
    wrong = next(site for site in scenario.sites if site is not scenario.target_site)
    _do(env, "TELEPORT_TO_OBJECT", scenario.flag)
    assert _do(env, "PICKUP", scenario.flag)["success"]
    _do(env, "TELEPORT_TO_LOCATION", f"dig site {wrong.number}")
    info = _do(env, "DROP", scenario.flag)
    card = info["scorecard"]
    assert info["terminated"] and card["completed"] and not card["completedSuccessfully"]
    assert card["scoreCard"][-1]["score"] == 0 and card["scoreCard"][-1]["completed"]


@pytest.mark.parametrize("seed", range(3))
def test_easy_flag_beside_a_younger_artifact_completes_unsuccessfully(seed: int) -> None:
    env, scenario = _env("easy", seed)
    younger = next(a for a in scenario.artifacts if a is not scenario.target)
    _do(env, "TELEPORT_TO_OBJECT", scenario.flag)
    assert _do(env, "PICKUP", scenario.flag)["success"]
    _do(env, "TELEPORT_TO_OBJECT", younger)  # lands on the tile east of it, facing west
    assert (scenario.player.x, scenario.player.y) == (younger.location()[0] + 1, younger.location()[1])
    info = _do(env, "DROP", scenario.flag)
    assert info["terminated"] and not info["scorecard"]["completedSuccessfully"]


def test_easy_flag_elsewhere_does_not_decide_and_the_right_side_is_east() -> None:
    env, scenario = _env("easy", 0)
    _do(env, "TELEPORT_TO_OBJECT", scenario.flag)
    _do(env, "PICKUP", scenario.flag)
    tx, ty = scenario.target.location()
    # West of the oldest artifact is the wall; the tile in the free column but another row is wrong.
    env.scenario.world.place(scenario.player, 16, 14)
    info = _do(env, "DROP", scenario.flag)
    assert not info["terminated"] and not info["scorecard"]["completed"]
    _do(env, "PICKUP", scenario.flag)
    env.scenario.world.place(scenario.player, tx + 1, ty)
    info = _do(env, "DROP", scenario.flag)
    assert info["terminated"] and info["scorecard"]["completedSuccessfully"]


def test_flag_dropped_away_from_signs_or_carried_in_a_hole_does_not_decide() -> None:
    env, scenario = _env("normal", 1)
    _do(env, "TELEPORT_TO_OBJECT", scenario.flag)
    _do(env, "PICKUP", scenario.flag)
    _do(env, "TELEPORT_TO_LOCATION", "base camp")
    info = _do(env, "DROP", scenario.flag)
    assert not info["terminated"]
    flag_xy = scenario.flag.location()
    assert all(math.hypot(s.x - flag_xy[0], s.y - flag_xy[1]) > 2 for s in scenario.sites)


@pytest.mark.parametrize("seed", range(5))
def test_artifacts_stay_hidden_until_dug_and_the_meter_reads_their_age(seed: int) -> None:
    env, scenario = _env("normal", seed)
    world = scenario.world
    for artifact in scenario.unknown:
        assert artifact.parent is not None and not artifact.parent.is_open  # covered by its dirt
        x, y = artifact.location()
        assert artifact not in world.objects_at(x, y)
    _do(env, "TELEPORT_TO_OBJECT", scenario.shovel)
    _do(env, "PICKUP", scenario.shovel)
    _do(env, "TELEPORT_TO_OBJECT", scenario.meter)
    _do(env, "PICKUP", scenario.meter)
    artifact = scenario.unknown[0]
    info = _dig_out(env, scenario, artifact)
    assert info["success"] and "dig a hole" in info["observation"]["lastActionMessage"]
    assert any(e["uuid"] == artifact.uuid for e in info["observation"]["accessibleEnvironmentObjects"])
    info = _do(env, "USE", scenario.meter, artifact)
    age = artifact.props["radiocarbon_age"]
    assert f"estimates an age of {age} years" in info["observation"]["lastActionMessage"]
    items = {item["name"]: item["score"] for item in env.scorecard(reveal=True)["scoreCard"]}
    assert items["Artifacts uncovered"] == 1 and items["Artifacts dated"] == 1
    assert items["Take shovel"] == 1 and items["Take radiocarbon meter"] == 1
    # Something without an age is inconclusive.
    info = _do(env, "USE", scenario.meter, scenario.shovel)
    assert "inconclusive" in info["observation"]["lastActionMessage"]


@pytest.mark.parametrize("seed", range(10))
def test_radioisotope_readings_match_the_generator(seed: int) -> None:
    env, scenario = _env("challenge", seed)
    c = scenario.channel
    for artifact in [*scenario.known, *scenario.unknown]:
        values = artifact.props["radioisotope_values"]
        age = artifact.props["radiocarbon_age"]
        assert abs(values[c - 1] - (1 - age / 50000)) <= 0.0105
    stone, bronze, iron = (next(a for a in scenario.known if a.name == n) for n in (
        "ancient stone hammer", "ancient bronze chisel", "ancient iron tongs"))  # fmt: skip
    decaying = [
        ch
        for ch in range(4)
        if stone.props["radioisotope_values"][ch]
        < bronze.props["radioisotope_values"][ch]
        < iron.props["radioisotope_values"][ch]
    ]
    assert decaying == [c - 1]
    lowest = min(scenario.unknown, key=lambda a: a.props["radioisotope_values"][c - 1])
    assert lowest is scenario.target_site.artifact
    # Known artifacts are exposed, unknown ones buried; the meter shows the stored values.
    _do(env, "TELEPORT_TO_OBJECT", scenario.meter)
    _do(env, "PICKUP", scenario.meter)
    site = next(s for s in scenario.sites if s.artifact is stone)
    _do(env, "TELEPORT_TO_LOCATION", f"dig site {site.number}")  # brings the exposed hammer into view
    _do(env, "TELEPORT_TO_OBJECT", stone)
    info = _do(env, "USE", scenario.meter, stone)
    message = info["observation"]["lastActionMessage"]
    for i, value in enumerate(stone.props["radioisotope_values"]):
        assert f"- Radioisotope {i + 1}: {value:.3f}" in message
    assert all(a.parent is not None and a.parent.is_open for a in scenario.known)
    assert all(a.parent is not None and not a.parent.is_open for a in scenario.unknown)


def test_radioisotope_decoys_read_shifted_ages_or_noise() -> None:
    """Two decoys read the unknown ages shifted by one and two places (each unknown artifact reads
    each unknown age once over the three dating-like channels) and the known ages in two
    different wrong orders; the third is noise. Only the dating channel reads the known
    artifacts in decay order."""
    rng = np.random.default_rng(7)
    known, unknown = [10000, 4000, 1000], [35000, 3000, 1500]
    for _ in range(50):
        readings, channel = radioisotope_channels(rng, known, unknown)
        assert 1 <= channel <= 4 and all(len(r) == 4 for r in readings)
        dating = [1 - age / 50000 for age in unknown]
        decaying = [ch for ch in range(4) if readings[0][ch] < readings[1][ch] < readings[2][ch]]
        assert decaying == [channel - 1]
        like_dating = [ch for ch in range(4)
                       if sorted(r[ch] for r in readings[3:]) == pytest.approx(sorted(dating), abs=0.0105)]  # fmt: skip
        assert channel - 1 in like_dating and len(like_dating) == 3
        for row in readings[3:]:  # every unknown artifact reads every unknown age once
            assert sorted(row[ch] for ch in like_dating) == pytest.approx(sorted(dating), abs=0.0105)
        orders = {tuple(sorted(range(3), key=lambda i, ch=ch: readings[i][ch])) for ch in like_dating}
        assert len(orders) == 3  # alike wrong orders would single the dating channel out
        (noise,) = set(range(4)) - set(like_dating)
        assert abs(np.corrcoef(known, [r[noise] for r in readings[:3]])[0][1]) < 0.1


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_scorecard_maxima_and_questions(difficulty: str) -> None:
    _, scenario = _env(difficulty, 0)
    card = scenario.scorecard
    assert card.max_score == {"easy": 6, "normal": 10, "challenge": 13}[difficulty]
    assert len(card.knowledge) == (4 if difficulty == "challenge" else 2)
    assert all(q.gold_facts for q in card.knowledge)
    assert (
        card.task_name
        == {
            "easy": "ArchaeologyDigTaskEasy",
            "normal": "ArchaeologyDigTaskNormal",
            "challenge": "ArchaeologyDigTaskGenericRadioisotope",
        }[difficulty]
    )


def test_challenge_questions_name_the_instance_dating_channel() -> None:
    """Every Challenge question's gold fact names this instance's dating channel, so none can be
    answered by a report written before playing (the eras and decay alone are common knowledge)."""
    channels = set()
    for seed in range(8):
        env = DiscoveryWorldEnv("ArchaeologyDating", "challenge")
        env.reset(seed=seed)
        sc: Any = env.scenario
        questions = env.scorecard(reveal=True)["knowledgeQuestions"]
        assert len(questions) == 4
        for question in questions:
            assert f"Radioisotope Channel {sc.channel}" in question["question"], question
            assert f"Radioisotope Channel {sc.channel}" in question["goldFacts"][0], question
        channels.add(sc.channel)
    assert len(channels) > 1


def test_dating_items_read_only_on_ticks_with_new_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scorer reads the meter's uses only on ticks with new player actions (session 12):
    the oracle's episodes on every difficulty, and random masked RL episodes, score every step
    as when every tick adds the (empty) set of artifacts measured."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env

    def logs() -> list[object]:
        out: list[object] = []
        for difficulty in ("easy", "normal", "challenge"):
            _, log = run_episode("ArchaeologyDating", difficulty, 1, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
            env = make_rl_env("ArchaeologyDating", difficulty, max_steps=300)
            _, info = env.reset(seed=6)
            rng = np.random.default_rng(6)
            for _ in range(300):
                action = int(rng.choice(np.flatnonzero(info["action_mask"])))
                _, reward, term, trunc, info = env.step(action)
                out.append((action, reward, env.unwrapped.scenario.scorecard.to_dict()))
                if term or trunc:
                    break
        return out

    skipping = logs()
    new_actions = ArchaeologyDating.new_actions

    class Always(list):  # type: ignore[type-arg]
        def __bool__(self) -> bool:  # every tick takes the path of a tick with new actions
            return True

    monkeypatch.setattr(ArchaeologyDating, "new_actions", lambda self: Always(new_actions(self)))
    assert logs() == skipping
    dated = [i["score"] for e in skipping if isinstance(e, dict) and "scoreCard" in e for i in e["scoreCard"]
             if "dated" in i["name"]]  # fmt: skip
    assert dated and max(dated) > 0


def test_the_scorer_s_lean_take_and_uncover_checks_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """`update` keeps only the "Take" items not yet completed and calls `add_distinct` for
    uncovered artifacts only when some are (session 16). Played against the previous update:
    scripted episodes (meter, flag and shovel picked up in different orders, dropped and taken
    again, artifacts dug out and carried off), the oracle's, and random RL episodes, on every
    difficulty; every step's scorecard must match, and the scripted runs must score the items."""
    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.archaeology import scenario as module

    def old_update(self: ArchaeologyDating) -> None:  # before session 16
        card = self.scorecard
        takes = [(self.take_meter, self.meter), (self.take_flag, self.flag)]
        if self.difficulty != "easy":
            takes.append((self.take_shovel, self.shovel))
        for item, obj in takes:
            if not item.completed and obj.held_by_agent:
                item.set(1, note=f"The {obj.name} has been in the agent's inventory.")
                item.associated_uuids = [obj.uuid]
        records = self.new_actions()
        measured = {
            r.arg2.uuid for r in records if r.action == "USE" and r.success and r.arg1 is self.meter and r.arg2 is not None
        } if records else None  # fmt: skip
        if self.difficulty == "easy":
            if measured:
                self.dated.add_distinct(a.uuid for a in self.artifacts if a.uuid in measured)
            self._score_easy_flag()
            return
        if measured:
            self.dated.add_distinct(a.uuid for a in self.unknown if a.uuid in measured)
            if self.difficulty == "challenge":
                self.dated_known.add_distinct(a.uuid for a in self.known if a.uuid in measured)
        self.uncovered.add_distinct(a.uuid for a in self.unknown if module._uncovered(a))
        if not self._flag_placed():
            return
        fx, fy = self.flag.location()
        for site in self.sites:
            if math.hypot(site.x - fx, site.y - fy) <= module.FLAG_REACH:
                right = site is self.target_site
                note = f"The flag was placed beside the sign of Dig Site {site.number}."
                self.placed.set(1 if right else 0, completed=True, note=note)
                self.placed.associated_uuids = [self.flag.uuid, site.sign.uuid]
                card.finish(right)
                return

    def card(env: DiscoveryWorldEnv) -> object:
        return env.scorecard(reveal=True)

    def scripted(difficulty: str, order: tuple[str, ...]) -> list[object]:
        env, sc = _env(difficulty, 3)
        out: list[object] = [card(env)]
        tools = {"meter": sc.meter, "flag": sc.flag, "shovel": getattr(sc, "shovel", None)}
        for name in order:
            tool = tools[name]
            if tool is None:
                continue
            sc.player.seen.add(tool.uuid)  # (the test knows where things are)
            _do(env, "TELEPORT_TO_OBJECT", tool)
            out += [_do(env, "PICKUP", tool)["observation"]["lastActionMessage"], card(env)]
            if name == "flag":  # dropped and taken again
                out += [_do(env, "DROP", tool)["observation"]["lastActionMessage"], card(env)]
                out += [_do(env, "PICKUP", tool)["observation"]["lastActionMessage"], card(env)]
        if difficulty != "easy":
            for artifact in sc.unknown[:2]:
                sc.player.seen.add(artifact.parent.uuid)
                out += [_dig_out(env, sc, artifact)["observation"]["lastActionMessage"], card(env)]
                out += [_do(env, "PICKUP", artifact)["observation"]["lastActionMessage"], card(env)]
                out += [_do(env, "USE", sc.meter, artifact)["observation"]["lastActionMessage"], card(env)]
        return out

    def play() -> list[object]:
        out: list[object] = []
        for difficulty in ("easy", "normal", "challenge"):
            for order in (("meter", "flag", "shovel"), ("shovel", "flag", "meter")):
                out += scripted(difficulty, order)
            _, log = run_episode(TASK, difficulty, 2, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
            env = make_rl_env(TASK, difficulty, max_steps=300)
            _, info = env.reset(seed=8)
            rng = np.random.default_rng(8)
            for _ in range(300):
                action = int(rng.choice(np.flatnonzero(info["action_mask"])))
                _, reward, term, trunc, info = env.step(action)
                out.append((action, reward, env.unwrapped.scenario.scorecard.to_dict()))
                if term or trunc:
                    break
        return out

    lean = play()
    monkeypatch.setattr(ArchaeologyDating, "update", old_update)
    assert play() == lean
    scored = {i["name"] for e in lean if isinstance(e, dict) and "scoreCard" in e for i in e["scoreCard"] if i["score"]}
    assert {"Take flag", "Take shovel", "Artifacts uncovered", "Uncover 3 unknown artifacts"} <= scored
