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

import json
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


def test_attack_sealed_text_and_image_observation_tells_win_from_loss():
    """observation="both": the JSON text and the agent's view (drawn from the world alone)."""
    assert_same_for_win_and_loss(observation="both", info="lean", render_mode="rgb_array")


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


@pytest.mark.parametrize("extra", [-1, 1])
def test_attack_sealed_lost_in_translation_elder_frowns_at_a_wrong_count(extra: int):
    """Lost in Translation Challenge: the elder who got the right item and colour in the wrong
    number said so ("counts what you handed over, frowns ..."), which he says only when the item
    and colour were right: a sealed loss named two of the sheet's three answers. A sealed world's
    elder says nothing; the end reads as any other end (a public one still frowns:
    tests/test_theme_lost_in_translation.py::test_challenge_elder_needs_the_exact_count)."""
    from discoverylab.instances import make_instance
    from discoverylab.scenarios.lost_in_translation.scenario import WRONG_COUNT
    from env_driver import EnvDriver

    d = EnvDriver("LostInTranslation", "challenge", reveal=True, max_steps=2000)
    for index in range(20):  # an instance asking for 2..4 things, so one fewer and one more both exist
        _, info = d.env.reset(options={"instance": make_instance("LostInTranslation", "challenge", "test", index, KEY)})
        if 1 < d.env.scenario.count < 5:
            break
    sc = d.scenario = d.env.scenario
    d.world, d.player, d.obs = sc.world, sc.player, info["observation"]
    for obj in sorted(d.world.find(lambda o: sc.wanted(o)), key=lambda o: o.uuid)[: sc.count + extra]:
        d.take(obj)
    d.do("TELEPORT_TO_OBJECT", sc.elder)
    d.do("TALK", sc.elder)
    for line in ("The elder seems interested in what you carry.", "Yes. You hand the elder everything you carry."):
        d.choose(line)
    d.do("WAIT")
    assert d.terminated and len(sc.elder.contents) == sc.count + extra
    assert d.env.scorecard(reveal=True)["completedSuccessfully"] is False  # the evaluator's loss
    assert d.obs["taskProgress"][0]["completedSuccessfully"] is None
    heard = [e["message"] for h in d.obs["nearbyAgents"]["list_of_agents"].values() for e in h]
    assert WRONG_COUNT not in heard and WRONG_COUNT not in json.dumps(d.obs)


def test_attack_sealed_unit_test_explore_bonus_pays_the_last_sub_goal():
    """`reward="explore"` pays a unit test's sub-goals (half its procedural score's change), and
    Dialog's last sub-goal is its success: the right last answer paid 0.125 more than a wrong
    one. On a sealed level the bonus is novelty only, the same for both answers."""
    from discoverylab.instances import make_instance

    inst = make_instance("DialogTest", "normal", "test", 0, KEY)
    env = DiscoveryWorldEnv("DialogTest", "normal")
    _, info = env.reset(options={"instance": inst})
    solver = type(env.scenario).oracle(info["observation"])
    actions, item = [], next(solver)
    while True:
        actions.append(item)
        _, _, terminated, _, info = env.step(item)
        if terminated:
            break
        item = solver.send(info["observation"])
    assert env.scorecard(reveal=True)["completedSuccessfully"] and "chosen_dialog_option_int" in actions[-1]
    options: dict[str, str] = {}
    runs = []
    for losing in (False, True):
        rl = make_rl_env("DialogTest", "normal", levels="test", level_key=KEY, reward="explore")
        _, info = rl.reset(options={"instance": inst})
        rewards = []
        for n, action in enumerate(actions):
            if losing and n == len(actions) - 1:
                options = rl.unwrapped.observation_dict()["dialog_box"]["dialogOptions"]
                wrong = next(int(k) for k, v in options.items() if int(k) != action["chosen_dialog_option_int"] and v != "Exit")
                action = {"chosen_dialog_option_int": wrong}
            index = _index_of(rl, action, np.asarray(info["action_mask"], dtype=bool))
            assert index is not None, action
            _, reward, terminated, truncated, info = rl.step(index)
            rewards.append(round(float(reward), 9))
        assert terminated
        runs.append((rewards, rl.unwrapped.scorecard(reveal=True)["completedSuccessfully"]))
    assert options  # the loss did answer wrong
    (win, won), (loss, lost_won) = runs
    assert won and not lost_won
    assert win == loss, (win, loss)
