"""Hidden-property grader attacks (issue #22): no constant, midpoint or stock answer earns free credit.

Each attack is a named test that must lose to the honest heuristic scientist on the default per-seed
problems (a fast sample by default, seeds 0-49 under `slow`), alone and combined, plus unit tests of
the rules that close the holes: exclusive half-step tolerance, exact-match rate counted above the best
constant's, one episode label from the rank-1 hypothesis.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.agents import is_final_request, listed_sequences, observations
from discoverylab.labs.sequence.grading import (
    constant_exact_rate,
    exact_skill,
    exact_tolerance,
    grade_hidden_property,
    prediction_metrics,
)
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.parsing import FinalAnswer, Hypothesis
from discoverylab.labs.sequence.programs import reference_program
from discoverylab.labs.sequence.properties import DEFAULT_PARAMS, compute

HIDDEN = "sequence/hidden-property"
FAST_SEEDS = (0, 1, 2, 3, 8)
"""Seed 8 draws a threshold composition (values 0 or 1)."""
ALL_SEEDS = tuple(range(50))
STOCK = ("gc_content", "palindrome_score", "alternation_k")


class Scripted:
    """An agent from a function of (message, memory) -> reply; memory keeps every observed value."""

    def __init__(self, fn: Callable[[str, dict[str, Any]], str]) -> None:
        self.fn = fn
        self.memory: dict[str, Any] = {}

    def reset(self, seed: int) -> None:
        self.memory = {"seen": [], "turn": 0}

    def act(self, message: str) -> str:
        self.memory["turn"] += 1
        self.memory["seen"].extend(v for _, v in observations(message))
        return self.fn(message, self.memory)


def _final(message: str, programs: list[str], predict: Callable[[str], float]) -> str:
    hyps = [{"rank": i + 1, "description": "stock", "python": src} for i, src in enumerate(programs)]
    return json.dumps({"hypotheses": hyps, "predictions": {s: predict(s) for s in listed_sequences(message)}})


def constant_attack(c: float) -> Callable[[str, dict[str, Any]], str]:
    def fn(message: str, _m: dict[str, Any]) -> str:
        if not is_final_request(message):
            return "SAMPLE 0.5"
        return _final(message, [f"def f(s):\n    return {c}\n"], lambda _s: c)

    return fn


def midpoint_attack(message: str, memory: dict[str, Any]) -> str:
    """Sample the range, then answer the midpoint of the two most frequent observed values."""
    if not is_final_request(message):
        return f"SAMPLE {(0.1, 0.3, 0.5, 0.7, 0.9)[(memory['turn'] - 1) % 5]}"
    common = [v for v, _ in Counter(round(v, 3) for v in memory["seen"]).most_common(2)]
    c = sum(common) / len(common) if common else 0.5
    return constant_attack(c)(message, memory)


def stock_attack(message: str, _m: dict[str, Any]) -> str:
    """Three stock programs (GC, palindromicity, alternation) as ranked hypotheses."""
    if not is_final_request(message):
        return "SAMPLE 0.5"
    programs = [reference_program(n, DEFAULT_PARAMS, 10) for n in STOCK]
    return _final(message, programs, lambda s: compute("gc_content", s))


def combined_attack(message: str, memory: dict[str, Any]) -> str:
    """All together: stock programs as hypotheses and midpoint constants as predictions."""
    if not is_final_request(message):
        return midpoint_attack(message, memory)
    common = [v for v, _ in Counter(round(v, 3) for v in memory["seen"]).most_common(2)]
    c = sum(common) / len(common) if common else 0.5
    programs = [reference_program(n, DEFAULT_PARAMS, 10) for n in STOCK]
    return _final(message, programs, lambda _s: c)


def _scores(seeds: tuple[int, ...], fn: Callable[[str, dict[str, Any]], str] | None,
            **config: Any) -> tuple[list[float], list[str]]:
    scores, labels = [], []
    for seed in seeds:
        proto = make_protocol(HIDDEN, **config)
        agent = make_agent(HIDDEN, "heuristic", proto) if fn is None else Scripted(fn)
        score = run_episode(proto, agent, seed=seed).score
        scores.append(score.score)
        labels.append(str(score.labels["label"]))
    return scores, labels


@cache
def heuristic(seeds: tuple[int, ...]) -> tuple[float, int]:
    scores, labels = _scores(seeds, None)
    return float(np.mean(scores)), labels.count("pass")


def assert_loses(seeds: tuple[int, ...], fn: Callable[[str, dict[str, Any]], str]) -> None:
    scores, labels = _scores(seeds, fn)
    honest, honest_passes = heuristic(seeds)
    assert float(np.mean(scores)) < honest, (np.mean(scores), honest)
    assert labels.count("pass") < max(honest_passes, 1), (labels, honest_passes)


# ---------------------------------------------------------------------- the rules
def test_midpoint_between_grid_values_is_exact_for_neither() -> None:
    tol = exact_tolerance(0.2)
    assert prediction_metrics([0.1, 0.1], [0.0, 0.2], tol).exact == 0.0
    assert prediction_metrics([0.5, 0.5], [0.0, 1.0], exact_tolerance(1.0)).exact == 0.0
    assert prediction_metrics([0.19, 0.0], [0.2, 0.0], tol).exact == 1.0


def test_any_constant_has_zero_exact_skill() -> None:
    rng = np.random.default_rng(3)
    truth = rng.choice([0.0, 0.2, 0.4, 0.6], size=200, p=[0.4, 0.3, 0.2, 0.1])
    tol = exact_tolerance(0.2)
    chance = constant_exact_rate(truth, tol)
    assert chance == pytest.approx(0.4, abs=0.08)
    for c in np.linspace(0, 1, 101):
        assert exact_skill(prediction_metrics([float(c)] * len(truth), truth, tol).exact, chance) == 0.0
    assert exact_skill(prediction_metrics(list(truth), truth, tol).exact, chance) == 1.0


def _heldout(values: list[float]) -> HeldOutSet:
    seqs = [format(i, "010b").replace("0", "A").replace("1", "C") for i in range(len(values))]
    return HeldOutSet(sequences=seqs, values=values, origin=["random"] * len(values))


def test_threshold_constant_half_scores_zero_and_fails() -> None:
    """The issue's case: values 0/1, a constant 0.5 used to be labelled pass with score 0.5."""
    values = [float(i % 3 == 0) for i in range(60)]
    held = _heldout(values)
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=1, description="half", python="def f(s):\n    return 0.5\n")],
                         predictions={s: 0.5 for s in held.sequences[:20]}, structured=True)
    score = grade_hidden_property(answer, held, list(range(20)), quantum=1.0, truth={})
    assert score.score == 0.0
    assert score.labels["label"] == "fail"


def test_label_comes_from_the_rank1_program_only() -> None:
    """A correct program at rank 2 shows in pass@3 but never makes the episode label pass."""
    proto = make_protocol(HIDDEN, hidden="gc_content")
    proto.reset(0)
    held = proto.heldout
    wrong = "def f(s):\n    return s.count('A') / len(s)\n"
    right = reference_program("gc_content", DEFAULT_PARAMS, 10)
    answer = FinalAnswer(hypotheses=[Hypothesis(rank=1, description="A count", python=wrong),
                                     Hypothesis(rank=2, description="GC", python=right)],
                         predictions={}, structured=True)
    score = grade_hidden_property(answer, held, proto.prediction_indices, quantum=0.1, truth={})
    assert score.labels["pass_at_3_hypotheses"] == "pass"
    assert score.labels["label"] == "fail"
    first = FinalAnswer(hypotheses=[Hypothesis(rank=1, description="GC", python=right)], predictions={},
                        structured=True)
    assert grade_hidden_property(first, held, proto.prediction_indices, quantum=0.1,
                                 truth={}).labels["label"] == "pass"


# ---------------------------------------------------------------------- the attacks (fast sample)
def test_constant_half_on_threshold_seeds_loses() -> None:
    assert_loses(FAST_SEEDS, constant_attack(0.5))


def test_midpoint_constants_lose() -> None:
    assert_loses(FAST_SEEDS, midpoint_attack)


def test_three_stock_programs_lose() -> None:
    assert_loses(FAST_SEEDS, stock_attack)


def test_combined_stock_and_midpoint_loses() -> None:
    assert_loses(FAST_SEEDS, combined_attack)


def test_midpoint_constant_on_the_paper_preset_scores_nothing() -> None:
    """Constant 0.1 on palindromicity (grid 0, 0.2, ...) scored 0.260, above the heuristic's 0.123."""
    scores, labels = _scores((0, 1), constant_attack(0.1), preset="paper")
    assert max(scores) == 0.0 and set(labels) == {"fail"}


# ---------------------------------------------------------------------- seeds 0-49
@pytest.mark.slow
@pytest.mark.parametrize("attack", ["constant_half", "midpoint", "stock", "combined"])
def test_attacks_lose_on_seeds_0_49(attack: str) -> None:
    fns = {"constant_half": constant_attack(0.5), "midpoint": midpoint_attack, "stock": stock_attack,
           "combined": combined_attack}
    assert_loses(ALL_SEEDS, fns[attack])
