"""Templates must not beat chance on any Tiny Lab (session 21).

A template goes through the motions of the protocol with no discovery: the experiments of a fixed
plan (or the random agent's), boilerplate hypotheses and a report that reads nothing the experiments
showed. In the macro lab such a scaffold scored 0.512 on seeds 0-49 against the random agent's 0.032,
on process credit alone (`tests/labs/test_macro_attacks.py::test_scaffold_alone_does_not_beat_chance`);
these are the sequence labs' templates, each asserted not to beat the random agent's mean by more than
a small margin on the default (per-seed) problems.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.agents import is_final_request, listed_sequences, observations
from discoverylab.labs.sequence.agents_dynamics import DynamicsRandom
from discoverylab.labs.sequence.agents_population import PopulationRandom
from discoverylab.labs.sequence.generate import DRIVER_CHOICES

HIDDEN, DYNAMICS, POPULATION = "sequence/hidden-property", "sequence/unknown-dynamics", "sequence/population-dynamics"
SEEDS = range(6)
MARGIN = 0.05
"""How far above the random agent's mean a template may land on the sample before it counts as a win."""
BOILERPLATE = "The process depends on the sequence composition; the experiments test it across the range."


class HiddenTemplate:
    """SAMPLE evenly across the value range (maximal coverage), then a boilerplate hypothesis and the
    observed mean value for every listed sequence."""

    def reset(self, seed: int) -> None:
        self.turn, self.seen = 0, []

    def act(self, message: str) -> str:
        self.seen.extend(v for _, v in observations(message))
        self.turn += 1
        if not is_final_request(message):
            return f"SAMPLE {(self.turn - 1) % 5 / 4:g}"
        mean = float(np.mean(self.seen)) if self.seen else 0.5
        return json.dumps({"hypotheses": [{"rank": 1, "description": BOILERPLATE}],
                           "predictions": {s: mean for s in listed_sequences(message)}})


class DynamicsTemplate(DynamicsRandom):
    """The random agent's experiments (every measurable, random starts), then boilerplate: every listed
    measurable that can be a driver, one mid-range 2-cycle attractor, every start in its basin."""

    def act(self, message: str) -> str:
        reply = super().act(message)
        if json.loads(reply).get("type") != "report":
            return reply
        starts = next((json.loads(ln)["heldout_starts"] for ln in message.splitlines() if "heldout_starts" in ln), {})
        drivers = [n for n in self.measurables if n in DRIVER_CHOICES] or list(self.measurables)
        return json.dumps({"type": "report", "hypothesis": BOILERPLATE, "evidence": "the experiments",
                           "attractors": [{n: 0.5 for n in drivers} | {"type": "2-cycle"}], "drivers": drivers,
                           "predictions": {sid: {"attractor": 1} for sid in starts}})


class PopulationTemplate(PopulationRandom):
    """The random agent's experiments, then boilerplate and each held-out population's own starting
    means halfway towards the middle (a relaxation nobody measured)."""

    def act(self, message: str) -> str:
        payload = self.read(message)
        if payload.get("type") != "report_request":
            return super().act(message)
        targets = payload.get("targets", [])
        preds = {pid: {t: 0.5 * float(held["generation_0"][t]) + 0.25 for t in targets}
                 for pid, held in payload.get("heldout_populations", {}).items()}
        return json.dumps({"type": "report", "hypothesis": BOILERPLATE, "evidence": "the experiments",
                           "predictions": preds})


TEMPLATES: dict[str, Any] = {HIDDEN: lambda _p: HiddenTemplate(), DYNAMICS: DynamicsTemplate,
                             POPULATION: PopulationTemplate}


def mean_score(protocol: str, agent: Any, seeds: range = SEEDS) -> float:
    scores = []
    for seed in seeds:
        proto = make_protocol(protocol)
        scores.append(run_episode(proto, agent(proto), seed=seed).score.score)
    return float(np.mean(scores))


@cache
def chance(protocol: str) -> float:
    return mean_score(protocol, lambda p: make_agent(p.name, "random", p))


def test_hidden_property_template_does_not_beat_chance() -> None:
    assert mean_score(HIDDEN, TEMPLATES[HIDDEN]) <= chance(HIDDEN) + MARGIN


def test_unknown_dynamics_template_does_not_beat_chance() -> None:
    assert mean_score(DYNAMICS, TEMPLATES[DYNAMICS]) <= chance(DYNAMICS) + MARGIN


def test_population_template_does_not_beat_chance() -> None:
    assert mean_score(POPULATION, TEMPLATES[POPULATION]) <= chance(POPULATION) + MARGIN
