"""Attack: read a sealed DiscoveryWorld episode's outcome from what the env hands the agent.

Before: a sealed test episode paid 1.0 on a win (and `reward="procedure"` paid the flag's item),
its end's `info["scorecard"]` was the whole card (success, score, gold), the observation's
`taskProgress` said `completedSuccessfully`, and the `lm` text and the ansi view said "succeeded"
or "failed". A learner run over many sealed instances trained on the test set.

Each test plays one sealed instance to a win and its twin to a loss (`sealed_outcome_kit`: the
same actions and world, the hidden answer moved) and compares every byte the agent reads: they
must be equal, while the evaluator's card tells the win from the loss and `terminated` stays true.
A public instance played the same way still tells (the control: these comparisons can fail).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import make_rl_env
from discoverylab.rl.demos import _index_of
from sealed_outcome_kit import DIFFICULTY, KEY, TASK, canonical, instance, lose, oracle_actions


def play(losing: bool, split: str = "test", **options: Any) -> tuple[list[str], list[float], bool, bool]:
    """Every step's agent-visible output (obs, reward, terminated, truncated, info; the ansi view
    with render_mode="ansi") as canonical text, the rewards, whether the last step terminated, and
    the evaluator's success."""
    env = DiscoveryWorldEnv(TASK, DIFFICULTY, **options)
    obs, info = env.reset(options={"instance": instance(split)})
    if losing:
        lose(env.scenario)
    seen = [canonical([obs, info, env.render()])]
    rewards: list[float] = []
    terminated = False
    for action in oracle_actions(split):
        obs, reward, terminated, truncated, info = env.step(action)
        seen.append(canonical([obs, reward, terminated, truncated, info, env.render()]))
        rewards.append(float(reward))
    return seen, rewards, terminated, bool(env.scorecard(reveal=True)["completedSuccessfully"])


def assert_same_for_win_and_loss(**options: Any) -> None:
    win, win_rewards, win_ended, won = play(False, **options)
    loss, loss_rewards, loss_ended, lost_won = play(True, **options)
    assert won and not lost_won, "the twins must be a win and a loss for the evaluator"
    assert win_ended and loss_ended, "the sealed episode still ends (terminated is truthful)"
    assert win_rewards == loss_rewards and set(win_rewards) == {0.0}, (win_rewards, loss_rewards)
    for step, (a, b) in enumerate(zip(win, loss, strict=True)):
        assert a == b, f"step {step}: the agent reads a different thing after a win than after a loss"


def test_attack_sealed_json_text_and_full_info_tell_win_from_loss():
    assert_same_for_win_and_loss(text_format="json", info="full")


def test_attack_sealed_lm_text_lean_info_and_ansi_view_tell_win_from_loss():
    assert_same_for_win_and_loss(text_format="lm", info="lean", render_mode="ansi")


def test_attack_sealed_procedure_reward_tells_win_from_loss():
    """`reward="procedure"` pays the flag's item on a win only: on a sealed instance it pays 0."""
    assert_same_for_win_and_loss(reward="procedure")


def test_attack_sealed_symbolic_observation_with_notes_tells_win_from_loss():
    assert_same_for_win_and_loss(observation="symbolic", notes=True, info="lean")


def test_sealed_end_says_decided_without_success_or_gold():
    """The end's card and task line: decided, success undisclosed, no score, no gold."""
    env = DiscoveryWorldEnv(TASK, DIFFICULTY, text_format="lm")
    env.reset(options={"instance": instance()})
    for action in oracle_actions():
        text, _, _, _, info = env.step(action)
    assert info["scorecard"] == {"taskName": "ProteomicsTaskEasy", "taskDescription": env.task_description,
                                 "completed": True, "completedSuccessfully": None}  # fmt: skip
    assert info["observation"]["taskProgress"][0]["completedSuccessfully"] is None
    assert "task ProteomicsTaskEasy: ended" in text
    assert env.scorecard(reveal=True)["completedSuccessfully"] is True  # the evaluator's card keeps it


def test_public_twins_still_tell_win_from_loss():
    """The control: on a public instance the same twins differ (reward 1 vs 0, the card), as before."""
    win, win_rewards, _, won = play(False, split="dev", text_format="lm")
    loss, loss_rewards, _, lost_won = play(True, split="dev", text_format="lm")
    assert won and not lost_won
    assert win_rewards[-1] == 1.0 and loss_rewards[-1] == 0.0
    assert win[:-1] == loss[:-1] and win[-1] != loss[-1]
    assert "succeeded" in win[-1] and "failed" in loss[-1]


@pytest.mark.parametrize("reward", ["success", "explore"])
def test_attack_sealed_rl_env_tells_win_from_loss(reward: str):
    """`make_rl_env(levels="test")`: discrete actions, masks, lean info, the explore bonus."""
    runs = []
    for losing in (False, True):
        env = make_rl_env(TASK, DIFFICULTY, levels="test", level_key=KEY, reward=reward, notes=True)
        base: Any = env.unwrapped
        obs, info = env.reset(options={"instance": instance()})
        if losing:
            lose(base.scenario)
        seen, terminated = [canonical([obs, info])], False
        for action in oracle_actions():
            index = _index_of(env, action, np.asarray(info["action_mask"], dtype=bool))
            assert index is not None, action
            obs, rew, terminated, truncated, info = env.step(index)
            seen.append(canonical([obs, rew, terminated, truncated, info]))
        assert terminated
        runs.append((seen, base.scorecard(reveal=True)["completedSuccessfully"]))
    (win, won), (loss, lost_won) = runs
    assert won and not lost_won
    assert win == loss
