"""A sealed test instance played through the Gymnasium text env keeps its grade for the evaluator.

Before, `TinyLabTextEnv` paid a sealed instance's grade as the last reward and put the whole grade
(its details hold the truth) in `info["score"]`; only env-serve's session held it back. A learner
run over sealed instances through Gymnasium trained on the test set. Now the env itself keeps it:
reward 0, `info["graded"]` says by whom, and the evaluator reads `evaluator_grade()`.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.instances import SEALED_GRADED, make_instance
from discoverylab.labs.agents import make_agent
from discoverylab.labs.gym_text import TinyLabTextEnv

HIDDEN = "sequence/hidden-property"
SMALL_A: dict[str, Any] = {"rounds": 2, "n_predictions": 5}
KEY = b"gym-text-sealed-key-0123456789"


def _play(kind: str, split: str) -> tuple[TinyLabTextEnv, list[float], dict[str, Any], str]:
    env = TinyLabTextEnv(HIDDEN, SMALL_A)
    inst = make_instance(HIDDEN, "", split, 2, KEY if split == "test" else None)
    agent = make_agent(HIDDEN, kind, env.protocol)
    agent.reset(inst.seed)
    obs, info = env.reset(options={"instance": inst})
    assert "seed" not in info or split != "test"
    rewards, terminated = [], False
    while not terminated:
        obs, reward, terminated, _, info = env.step(agent.act(obs))
        rewards.append(reward)
    return env, rewards, info, obs


def test_attack_a_sealed_lab_through_gymnasium_pays_no_grade() -> None:
    won, won_rewards, won_info, _ = _play("oracle", "test")
    lost, lost_rewards, lost_info, _ = _play("random", "test")
    assert set(won_rewards) == set(lost_rewards) == {0.0}
    for info in (won_info, lost_info):
        assert "score" not in info and info["graded"] == SEALED_GRADED
    assert won.evaluator_grade().score == pytest.approx(1.0) and lost.evaluator_grade().score < 0.5  # the evaluator's read


def test_a_public_instance_still_pays_its_grade() -> None:
    env, rewards, info, _ = _play("oracle", "dev")
    assert rewards[-1] == info["score"]["score"] == env.evaluator_grade().score == pytest.approx(1.0)
