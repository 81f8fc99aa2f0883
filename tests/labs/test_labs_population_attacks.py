"""Cheap strategies against the population lab (issue #22 part 4): every attack here must lose.

Each attacker plays through the ordinary episode loop (`run_episode`) and sees only what an agent
sees, except where a test says it is handed more (the copy attack gets another seed's true answer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from discoverylab.instances import make_instance
from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.agents_dynamics import _payload
from discoverylab.labs.sequence.protocol_population import PopulationProtocol

NAME = "sequence/population-dynamics"
SEEDS = range(10)
KEY = b"discoverylab-population-attack-key"


class ReportAttack:
    """Reports at once; `rule(generation_0 means, target)` gives each held-out prediction."""

    def __init__(self, rule: Callable[[dict[str, float], str], float]) -> None:
        self.rule = rule

    def reset(self, seed: int) -> None:
        pass

    def act(self, message: str) -> str:
        payload = _payload(message)
        if payload.get("type") != "report_request":
            return '{"type": "report", "hypothesis": "skip the experiments"}'
        return json.dumps({"type": "report", "predictions": {
            pid: {t: self.rule(h["generation_0"], t) for t in payload["targets"]}
            for pid, h in payload["heldout_populations"].items()}})


class CopyAttack(ReportAttack):
    """Sends another episode's true answer, keyed by the same population ids."""

    def __init__(self, answer: dict[str, dict[str, float]]) -> None:
        self.answer = answer

    def act(self, message: str) -> str:
        if _payload(message).get("type") != "report_request":
            return '{"type": "report"}'
        return json.dumps({"type": "report", "predictions": self.answer})


def scores(agent: Any, seeds: range = SEEDS) -> list[float]:
    return [run_episode(make_protocol(NAME), agent, s).score.score for s in seeds]


@pytest.mark.parametrize("value", [0.0, 0.25, 0.75, 1.0])
def test_attack_constant_prediction_scores_zero(value: float) -> None:
    assert scores(ReportAttack(lambda start, t: value), range(4)) == [0.0] * 4


def test_attack_midpoint_scores_zero() -> None:
    assert scores(ReportAttack(lambda start, t: 0.5)) == [0.0] * len(SEEDS)


def test_attack_population_stays_the_same_scores_zero() -> None:
    """Identity: predict each held-out population's own generation-0 mean."""
    assert scores(ReportAttack(lambda start, t: start[t])) == [0.0] * len(SEEDS)


@pytest.mark.parametrize(("a", "c"), [(0.25, 0.5), (0.5, 0.5), (0.75, 0.75), (0.4, 0.6), (0.6, 0.8), (0.85, 0.6)])
def test_attack_hedged_towards_a_middle_value_stays_near_chance(a: float, c: float) -> None:
    """`a * start + (1 - a) * c`: grid hedges are baselines (0 by construction); off-grid ones lose."""
    result = scores(ReportAttack(lambda start, t: a * start[t] + (1 - a) * c))
    assert float(np.mean(result)) <= 0.08, result


def test_attack_copying_another_seeds_answer_fails() -> None:
    result = []
    for seed in SEEDS:
        donor = make_protocol(NAME)
        donor.reset((seed + 1) % 10)
        answer = {h["pid"]: h["truth"] for h in donor.ground_truth()["heldout"]}
        result.append(run_episode(make_protocol(NAME), CopyAttack(answer), seed).score.score)
    assert float(np.mean(result)) <= 0.05 and max(result) <= 0.3, result


def test_attack_copying_another_seeds_answer_fails_on_one_pinned_process() -> None:
    """Same hidden process on every seed (a generated lab): the held-out populations still differ."""
    config = {"compose": {"kind": "palindrome_sandwich"}, "evolve": {"kind": "gc_biased_mutation", "mutations": 2,
                                                                     "bias": 0.8}, "targets": ["gc_content"],
              "generations": 4}
    result = []
    for seed in range(5):
        donor = make_protocol(NAME, **config)
        donor.reset(seed + 10)
        answer = {h["pid"]: h["truth"] for h in donor.ground_truth()["heldout"]}
        result.append(run_episode(make_protocol(NAME, **config), CopyAttack(answer), seed).score.score)
    assert float(np.mean(result)) <= 0.1, result


def test_attack_running_the_heldout_populations_as_experiments_is_impossible() -> None:
    """The held-out populations appear only in the report request, and an experiment sent after it is
    refused without running (no lab results, nothing recorded)."""
    proto = make_protocol(NAME, rounds=2)
    assert isinstance(proto, PopulationProtocol)
    first = proto.reset(4)
    heldout = [h.population for h in proto.heldout]
    assert not any(seq in first for pop in heldout for seq in pop)
    pop = list(heldout[0])
    reply = proto.step(json.dumps({"type": "experiment", "population": ["A" * 16] * 12, "generations": 2}))
    assert not any(seq in reply.text for p in heldout for seq in p)
    request = proto.step(json.dumps({"type": "experiment", "population": ["C" * 16] * 12, "generations": 2}))
    assert "report_request" in request.text and pop[0] in request.text
    late = proto.step(json.dumps({"type": "experiment", "population": pop, "generations": 4}))
    assert "Experiments are closed" in late.text and "lab_results" not in late.text
    assert len(proto.starts_seen) == 2 and late.info.get("error")
    final = proto.step(json.dumps({"type": "experiment", "population": pop, "generations": 4}))
    assert final.done and proto.grade().score == 0.0


def test_attack_early_report_gets_no_extra_experiments() -> None:
    proto = make_protocol(NAME, rounds=6)
    proto.reset(2)
    reply = proto.step('{"type": "report", "hypothesis": "later"}')
    assert "report_request" in reply.text
    after = proto.step(json.dumps({"type": "experiment", "population": ["A" * 16] * 12, "generations": 1}))
    assert "Experiments are closed" in after.text


class ReplayAgent:
    """Rebuilds the lab from its own reset seed and plays the oracle on the replica."""

    def reset(self, seed: int) -> None:
        replica = make_protocol(NAME)
        replica.reset(seed)
        self.inner = make_agent(NAME, "oracle", replica)
        self.inner.reset(seed)

    def act(self, message: str) -> str:
        return str(self.inner.act(message))


def test_attack_replay_from_the_agents_seed_fails_on_the_test_split() -> None:
    from discoverylab.instances import from_seed

    public = run_episode(make_protocol(NAME), ReplayAgent(), from_seed(NAME, "", 3)).score.score
    assert public > 0.95  # a public raw seed: the replica is the episode
    sealed = [run_episode(make_protocol(NAME), ReplayAgent(), make_instance(NAME, "", "test", i, KEY)).score.score
              for i in range(3)]
    assert max(sealed) < 0.3, sealed


def test_sealed_episode_transcript_shows_no_seed_and_the_oracle_still_scores() -> None:
    inst = make_instance(NAME, "", "test", 0, KEY)
    proto = make_protocol(NAME)
    result = run_episode(proto, make_agent(NAME, "oracle", proto), inst)
    assert result.seed is None and result.score.score >= 0.95
    text = json.dumps([e.model_dump(mode="json") for e in result.transcript])
    assert str(inst.seed) not in text
