"""Nothing readable during an episode reveals the answer: `info` carries no gold scorecard
before the end, and the default reward pays only terminal success (issue 7)."""

from __future__ import annotations

import json

import pytest

import discoverylab
from discoverylab.env import DiscoveryWorldEnv

GOLD_KEYS = ("criticalHypotheses", "criticalQuestions", "knowledgeQuestions")
PROCEDURE_KEYS = ("score", "maxScore", "scoreNormalized", "scoreCard")

PAIRS = [(t, d) for t, diffs in discoverylab.tasks().items() for d in diffs]


def _gold_strings(card: dict) -> list[str]:
    out = list(card["criticalHypotheses"]) + list(card["criticalQuestions"])
    out += [fact for q in card["knowledgeQuestions"] for fact in q["goldFacts"]]
    return [s for s in out if len(s) >= 12]


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_info_before_the_end_carries_no_gold(task: str, difficulty: str) -> None:
    env = DiscoveryWorldEnv(task, difficulty, max_steps=3)
    _, info = env.reset(seed=2)
    gold = _gold_strings(env.scorecard(reveal=True))
    infos = [info]
    for _ in range(2):
        *_, info = env.step({"action": "WAIT"})
        infos.append(info)
    for info in infos:
        assert not set(GOLD_KEYS + PROCEDURE_KEYS) & set(info["scorecard"]), info["scorecard"].keys()
        text = json.dumps(info)
        assert not [g for g in gold if g in text]
    *_, truncated, info = env.step({"action": "WAIT"})
    assert truncated and info["scorecard"] == env.scorecard(reveal=True)  # the end reveals all
    assert set(GOLD_KEYS) <= set(info["scorecard"])


def test_lean_info_has_the_full_scorecard_only_at_the_end() -> None:
    env = DiscoveryWorldEnv("ReactorLab", "normal", max_steps=2, info="lean")
    _, info = env.reset(seed=0)
    *_, info = env.step({"action": "WAIT"})
    assert "scorecard" not in info and "observation" not in info
    *_, info = env.step({"action": "WAIT"})
    assert info["scorecard"]["criticalHypotheses"] == env.scorecard(reveal=True)["criticalHypotheses"]


def _pick_target(reward: str) -> tuple[float, float]:
    """Lost in Translation Easy: put the requested object at the agent's feet and pick it up."""
    env = DiscoveryWorldEnv("LostInTranslation", "easy", reward=reward)
    env.reset(seed=0)
    scenario = env.scenario
    assert scenario is not None
    player, target = scenario.player, scenario.target  # type: ignore[attr-defined]
    scenario.world.place(target, player.x, player.y)
    _, r_pick, *_, info = env.step({"action": "PICKUP", "arg1": target.uuid})
    assert info["success"], info["observation"]["lastActionMessage"]
    _, r_wait, *_ = env.step({"action": "WAIT"})
    return float(r_pick), float(r_wait)


def test_default_reward_does_not_pay_the_right_choice_at_once() -> None:
    assert _pick_target("success") == (0.0, 0.0)
    assert _pick_target("procedure")[0] == pytest.approx(0.5)  # the documented, revealing option


def test_success_reward_is_terminal_and_procedure_info_only_on_request() -> None:
    from discoverylab.agents import OracleAgent

    env = DiscoveryWorldEnv("PickAndPlaceTest")
    _, info = env.reset(seed=1)
    agent = OracleAgent("PickAndPlaceTest")
    obs = info["observation"]
    agent.reset(obs)
    rewards = []
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(agent.act(obs))
        obs = info["observation"]
        rewards.append(float(reward))
        done = terminated or truncated
        if not done:
            assert "scoreNormalized" not in info["scorecard"]
    assert terminated and rewards[-1] == 1.0 and set(rewards[:-1]) == {0.0}
    assert info["scorecard"]["completedSuccessfully"] and info["scorecard"]["scoreNormalized"] == 1.0


def test_bad_reward_and_info_modes_name_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="success, procedure"):
        DiscoveryWorldEnv("PickAndPlaceTest", reward="shaped")
    with pytest.raises(ValueError, match="full, lean"):
        DiscoveryWorldEnv("PickAndPlaceTest", info="everything")
