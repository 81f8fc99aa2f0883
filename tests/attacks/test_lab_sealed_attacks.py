"""Tiny Labs half of sealing (issue #22 item 5): the agent is never handed a sealed episode's seed.

The replay attack: the agent takes the seed its `reset` gets, rebuilds the protocol with it
privately, reads the replica's ground truth and answers with the oracle. On a public raw seed (the
agent's seed is the episode's) it scores like the oracle; on a sealed test instance its seed is
not the episode's, so the replica is another problem and the attack falls to a guess.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from discoverylab.instances import Instance, from_seed, make_instance
from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.gym_text import TinyLabTextEnv
from discoverylab.labs.protocol import make_protocol

KEY = b"discoverylab-attack-tests-fixed-key"
PROTOCOLS = ("sequence/hidden-property", "sequence/unknown-dynamics")


class ReplayAgent:
    """Rebuilds the lab from its own reset seed and plays the oracle on the replica's truth."""

    def __init__(self, protocol: str) -> None:
        self.name = protocol
        self.inner: Any = None

    def reset(self, seed: int) -> None:
        replica = make_protocol(self.name)
        replica.reset(seed)
        self.inner = make_agent(self.name, "oracle", replica)
        self.inner.reset(seed)

    def act(self, message: str) -> str:
        return str(self.inner.act(message))


def replay_score(inst: Instance) -> float:
    protocol = make_protocol(inst.task)
    return run_episode(protocol, ReplayAgent(inst.task), inst).score.score


@pytest.mark.parametrize("name", PROTOCOLS)
def test_attack_replay_from_the_agents_seed_fails_on_the_test_split(name: str) -> None:
    assert replay_score(from_seed(name, "", 3)) > 0.95  # public seed: the replay is the oracle
    sealed = [replay_score(make_instance(name, "", "test", i, KEY)) for i in range(3)]
    assert max(sealed) < 0.9 and sum(sealed) / len(sealed) < 0.6, sealed


def test_sealed_lab_episode_shows_no_seed() -> None:
    """The text env's info, messages and transcript of a sealed instance hold no seed."""
    inst = make_instance(PROTOCOLS[0], "", "test", 0, KEY)
    env = TinyLabTextEnv(PROTOCOLS[0])
    obs, info = env.reset(options={"instance": inst})
    texts = [obs, json.dumps(info)]
    done = False
    while not done:
        obs, _, done, _, info = env.step("SAMPLE 0.5")
        texts += [obs, json.dumps(info, default=str)]
    texts.append(json.dumps([e.model_dump(mode="json") for e in env.protocol.transcript]))
    assert "seed" not in info and not any(str(inst.seed) in t for t in texts)
    _, public_info = env.reset(seed=7)
    assert public_info["seed"] == 7 and public_info["instance"]["split"] == "seed"
