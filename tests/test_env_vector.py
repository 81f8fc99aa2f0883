"""RL plumbing: every env pickles and deep-copies (a clone continues byte-identically), and
vector envs return real observations in sync and async mode, with and without shared memory."""

from __future__ import annotations

import copy
import json
import pickle
from functools import partial

import gymnasium
import numpy as np
import pytest

import discoverylab
from discoverylab.agents import RandomAgent
from discoverylab.env import DiscoveryWorldEnv
from discoverylab.env_spaces import ARGLESS_ACTIONS, ActionText

ALL_IDS = [i for i in discoverylab.register_envs() if "/Lab-" not in i and "MacroEcon" not in i]
PAIRS = [(t, d) for t, diffs in discoverylab.tasks().items() for d in diffs]


def _play(env: DiscoveryWorldEnv, actions: list[object]) -> list[str]:
    out = []
    for action in actions:
        obs, reward, term, trunc, info = env.step(action)
        out.append(obs + repr((reward, term, trunc)) + json.dumps(info, sort_keys=True))
        if term or trunc:
            break
    return out


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_env_pickles_and_deep_copies_and_clones_continue_identically(task: str, difficulty: str) -> None:
    env = DiscoveryWorldEnv(task, difficulty)
    _, info = env.reset(seed=5)
    agent = RandomAgent(seed=3)
    for _ in range(10):  # get somewhere first
        _, _, term, trunc, info = env.step(agent.act(info["observation"]))
        if term or trunc:  # e.g. the random agent left the house: clone a fresh episode
            _, info = env.reset(seed=6)
    pickled = pickle.loads(pickle.dumps(env))
    copied = copy.deepcopy(env)
    actions = []
    obs = info["observation"]
    probe = copy.deepcopy(env)  # produces the action sequence from its own observations
    for _ in range(25):
        action = agent.act(obs)
        actions.append(action)
        _, _, term, trunc, probe_info = probe.step(action)
        obs = probe_info["observation"]
        if term or trunc:
            break
    expected = _play(env, actions)
    assert _play(pickled, actions) == expected
    assert _play(copied, actions) == expected


def test_action_space_holds_dicts_and_samples_parseable_actions() -> None:
    env = DiscoveryWorldEnv("PickAndPlaceTest")
    env.reset(seed=0)
    space = env.action_space
    assert isinstance(space, ActionText)
    assert space.contains({"action": "PICKUP", "arg1": 12}) and space.contains('{"action": "WAIT"}')
    assert not space.contains({"action": object()}) and not space.contains(7)
    space.seed(0)
    samples = {space.sample() for _ in range(60)}
    assert samples <= set(ARGLESS_ACTIONS) and len(samples) > 5
    for action in samples:
        info = env.step(action)[-1]
        assert "lastActionMessage" in info["observation"]
        assert not info["observation"]["lastActionMessage"].startswith(("Could not parse", "Unknown action"))


def test_action_space_contains_numpy_values_and_refuses_deep_nesting_without_raising() -> None:
    """A numpy UUID (what `step` accepts like an int) was not in the space; a value nested 5,000
    deep raised RecursionError from `contains` instead of answering False."""
    import numpy as np

    space = DiscoveryWorldEnv("PickAndPlaceTest").action_space
    assert space.contains({"action": np.str_("PICKUP"), "arg1": np.int64(12)})
    assert space.contains({"action": "PUT", "arg1": np.array(5), "arg2": np.uint16(7)})
    assert not space.contains({"action": "PICKUP", "arg1": np.zeros((100, 100))})
    nested: object = 1
    for _ in range(5000):
        nested = [nested]
    assert not space.contains({"action": nested})


def _reference(env_id: str, seed: int, **kwargs: object) -> object:
    return gymnasium.make(env_id, **kwargs).reset(seed=seed)[0]


@pytest.mark.parametrize("shared_memory", [True, False])
@pytest.mark.parametrize("mode", ["text", "image", "both"])
def test_async_vector_env_returns_real_observations(mode: str, shared_memory: bool) -> None:
    env_id = "discoverylab/DialogTest-Normal-v0"
    envs = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="async",
                              vector_kwargs={"shared_memory": shared_memory}, observation=mode)  # fmt: skip
    try:
        obs, info = envs.reset(seed=[4, 9])
        assert envs.observation_space.contains(obs)
        for i, seed in enumerate((4, 9)):
            ref = _reference(env_id, seed, observation=mode)
            if mode == "text":
                assert obs[i] == ref
            elif mode == "image":
                assert np.array_equal(obs[i], ref)
            else:
                assert obs["text"][i] == ref["text"] and np.array_equal(obs["image"][i], ref["image"])  # type: ignore[index]
        first = obs if mode != "both" else obs["text"]
        obs, _, _, _, info = envs.step(['{"action": "WAIT"}', {"action": "ROTATE_CW"}])
        assert set(info) == {"success", "step", "message", "_success", "_step", "_message"}
        assert info["message"][0] == "I waited." and info["message"][1].startswith("I rotated to face ")
        if mode != "image":
            texts = obs if mode == "text" else obs["text"]
            assert [json.loads(t)["world_steps"] for t in texts] == [1, 1]
            assert texts[0] != first[0]  # a snapshot per step, not a stale read
    finally:
        envs.close()


def test_async_vector_envs_serve_every_registered_id() -> None:
    """Every DiscoveryWorld id in async workers (shared memory on) matches the single env."""
    for start in range(0, len(ALL_IDS), 8):
        chunk = ALL_IDS[start : start + 8]
        envs = gymnasium.vector.AsyncVectorEnv([partial(gymnasium.make, env_id) for env_id in chunk])
        try:
            obs, _ = envs.reset(seed=list(range(len(chunk))))
            for i, env_id in enumerate(chunk):
                assert obs[i] == _reference(env_id, i), env_id
            obs, *_ = envs.step(['{"action": "WAIT"}'] * len(chunk))
            assert all(json.loads(o)["world_steps"] == 1 for o in obs)
        finally:
            envs.close()


def test_sync_vector_env_lean_info_and_autoreset() -> None:
    envs = gymnasium.make_vec("discoverylab/PickAndPlaceTest-Normal-v0", num_envs=2, vectorization_mode="sync",
                              max_steps=2)  # fmt: skip
    envs.reset(seed=[0, 1])
    envs.step(['{"action": "WAIT"}'] * 2)
    _, _, _, truncated, info = envs.step(['{"action": "WAIT"}'] * 2)
    assert list(truncated) == [True, True]
    assert list(info["_scorecard"]) == [True, True] and list(info["scorecard"]["completed"]) == [False, False]
    assert "criticalHypotheses" in info["scorecard"] and all(info["scorecard"]["maxScore"] > 0)
    obs, *_ = envs.step(['{"action": "WAIT"}'] * 2)  # next-step autoreset: fresh episodes
    assert [json.loads(o)["world_steps"] for o in obs] == [0, 0]
    envs.close()
