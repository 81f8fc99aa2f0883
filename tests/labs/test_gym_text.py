"""The Gymnasium text adapter over every registered protocol, and the labs' Gymnasium ids."""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

from discoverylab.labs.agents import make_agent
from discoverylab.labs.gym_text import LAB_ENV_IDS, TinyLabTextEnv, lab_gym_id, register_lab_envs
from discoverylab.labs.protocol import Protocol, Reply, Score, make_protocol, protocol_names

HIDDEN = "sequence/hidden-property"
SMALL_A: dict[str, Any] = {"rounds": 2, "n_predictions": 5}


@pytest.mark.parametrize("env_id", LAB_ENV_IDS)
def test_check_env_passes_on_every_lab_env(env_id: str) -> None:
    env = gymnasium.make(env_id)
    check_env(env.unwrapped)
    env.close()


def test_every_protocol_has_an_id() -> None:
    assert register_lab_envs() == LAB_ENV_IDS  # idempotent
    for name in protocol_names():
        assert lab_gym_id(name) in LAB_ENV_IDS and lab_gym_id(name) in gymnasium.registry
    assert lab_gym_id("sequence/hidden-property") == "discoverylab/Lab-SequenceHiddenProperty-v0"
    assert "discoverylab/MacroEcon-v0" in LAB_ENV_IDS


def test_episode_seed_matches_the_protocol_and_the_runner() -> None:
    env = gymnasium.make(lab_gym_id(HIDDEN), config=SMALL_A)
    obs, info = env.reset(seed=3)
    assert info["seed"] == 3 and obs == make_protocol(HIDDEN, **SMALL_A).reset(3)
    obs_b, info_b = env.reset()  # no seed: drawn from the env's generator, still reported
    assert isinstance(info_b["seed"], int) and isinstance(obs_b, str)


def test_oracle_through_the_env_earns_the_grade_at_the_end() -> None:
    env = TinyLabTextEnv(HIDDEN, SMALL_A)
    agent = make_agent(HIDDEN, "oracle", env.protocol)
    agent.reset(5)
    obs, _ = env.reset(seed=5)
    rewards: list[float] = []
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs))
        assert not truncated and env.observation_space.contains(obs)
        rewards.append(reward)
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    assert rewards[-1] == info["score"]["score"] == 1.0
    # A random agent's final reward is its (low) grade.
    rand = make_agent(HIDDEN, "random", env.protocol)
    rand.reset(5)
    obs, _ = env.reset(seed=5)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, _ = env.step(rand.act(obs))
    assert reward < 0.5


class _OddProtocol(Protocol):
    """A protocol whose messages hold characters outside the Text charset and can be very long."""

    name = "test/odd"
    max_turns = 3

    def _on_reset(self, seed: int) -> str:
        return f"hello \U0001f9ea seed {seed}"

    def _on_step(self, message: str) -> Reply:
        return Reply(text="x" * 50 + message, done=message == "stop")

    def grade(self) -> Score:
        return Score(score=0.25, parts={"turns": float(self.turn)})

    def ground_truth(self) -> dict[str, Any]:
        return {}


def test_observations_always_fit_the_space_and_keep_the_exact_text() -> None:
    env = TinyLabTextEnv(_OddProtocol(), max_length=60, render_mode="ansi")
    obs, info = env.reset(seed=1)
    assert obs == "hello ? seed 1" and info["text"] == "hello \U0001f9ea seed 1"
    assert env.observation_space.contains(obs) and env.render() == info["text"]
    obs, reward, terminated, _, info = env.step("a long message " * 3)
    assert len(obs) == 60 and env.observation_space.contains(obs) and info["text"].endswith("message ")
    assert reward == 0.0 and not terminated
    _, reward, terminated, _, info = env.step("stop")
    assert terminated and reward == 0.25 and info["score"]["parts"] == {"turns": 2.0}


@pytest.mark.parametrize("name", protocol_names())
def test_fresh_envs_pickle_for_vector_workers(name: str) -> None:
    """Vector envs ship envs to worker processes; a freshly built env must survive pickling."""
    env = TinyLabTextEnv(name)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.reset(seed=4)[0] == env.reset(seed=4)[0]


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        TinyLabTextEnv(HIDDEN, render_mode="human")
    with pytest.raises(ValueError, match="not both"):
        TinyLabTextEnv(_OddProtocol(), {"rounds": 2})


def test_config_may_name_a_preset_as_on_the_command_line() -> None:
    """`config="paper"` builds the preset (as `--config paper`); an unknown name says which exist."""
    env = gymnasium.make(lab_gym_id(HIDDEN), config="paper")
    obs, _ = env.reset(seed=1)
    assert obs == make_protocol(HIDDEN, preset="paper").reset(1)
    with pytest.raises(ValueError, match="no preset 'papr'; presets: paper"):
        TinyLabTextEnv(HIDDEN, "papr")
