"""Baseline agents on every sequence protocol: the oracle gets full marks, random scores low."""

from __future__ import annotations

import pytest

from discoverylab.labs.agents import LabAgent, agent_kinds, make_agent, run_episode
from discoverylab.labs.protocol import make_protocol, protocol_names
from discoverylab.labs.sequence.properties import PROPERTY_NAMES

HIDDEN = "sequence/hidden-property"
DYNAMICS = "sequence/unknown-dynamics"


def test_sequence_protocols_and_agents_are_registered() -> None:
    assert {HIDDEN, DYNAMICS} <= set(protocol_names("sequence"))
    assert {"oracle", "random", "heuristic"} <= set(agent_kinds("sequence"))
    agent = make_agent(HIDDEN, "random", make_protocol(HIDDEN))
    assert isinstance(agent, LabAgent)


FAST_HIDDEN = ["gc_content", "palindrome_score", "hamming_distance", "interaction_energy"]
SLOW_HIDDEN = [pytest.param(h, marks=pytest.mark.slow) for h in [*PROPERTY_NAMES, "alternation_2"] if h not in FAST_HIDDEN]


@pytest.mark.parametrize("hidden", [*FAST_HIDDEN, *SLOW_HIDDEN])
def test_hidden_property_oracle_full_marks_random_low(hidden: str) -> None:
    scores = {}
    for kind in ("oracle", "random"):
        proto = make_protocol(HIDDEN, hidden=hidden)
        result = run_episode(proto, make_agent(HIDDEN, kind, proto), seed=11)
        scores[kind] = result.score
    assert scores["oracle"].score == pytest.approx(1.0)
    assert scores["oracle"].labels["label"] == "pass"
    assert scores["oracle"].labels["program"] == "pass"
    assert scores["random"].score < 0.3
    assert scores["random"].labels["label"] != "pass"


def test_hidden_property_heuristic_solves_linear_families_only() -> None:
    solved = {}
    for hidden in ("gc_content", "palindrome_score"):
        proto = make_protocol(HIDDEN, hidden=hidden)
        solved[hidden] = run_episode(proto, make_agent(HIDDEN, "heuristic", proto), seed=2).score
    assert solved["gc_content"].labels["label"] == "pass"
    assert solved["palindrome_score"].labels["label"] != "pass"
    assert solved["palindrome_score"].score < solved["gc_content"].score


@pytest.mark.parametrize("seed", [0, 1])
def test_dynamics_oracle_full_marks_random_low_heuristic_between(seed: int) -> None:
    scores = {}
    for kind in ("oracle", "random", "heuristic"):
        proto = make_protocol(DYNAMICS, preset="paper")
        scores[kind] = run_episode(proto, make_agent(DYNAMICS, kind, proto), seed=seed).score
    assert scores["oracle"].score == pytest.approx(1.0)
    assert scores["random"].score < 0.4
    assert scores["random"].score < scores["heuristic"].score < 1.0
    assert scores["heuristic"].parts["attractors"] > 0.4  # it does find attractors by spanning the plane


def test_episodes_are_deterministic_for_a_seed() -> None:
    def transcript(seed: int) -> list[str]:
        proto = make_protocol(HIDDEN, hidden="gc_content")
        return [e.text for e in run_episode(proto, make_agent(HIDDEN, "random", proto), seed=seed).transcript]

    assert transcript(5) == transcript(5)
    assert transcript(5) != transcript(6)


def test_verify_protocol_check_separates_oracle_and_random() -> None:
    from discoverylab.labs.core.verify import PROTOCOL_CHECKS
    from discoverylab.labs.sequence import protocols
    from discoverylab.labs.sequence.lab import preset

    spec = preset("hidden_property")
    assert HIDDEN in PROTOCOL_CHECKS
    oracle, random = protocols.check_protocol(spec)
    assert oracle >= 0.99 and random <= 0.3


CUSTOM_DYNAMICS = {
    "length": 20, "drivers": ("weighted_count", "alternation_k"), "attractors": ((0.7, 0.3), (0.3, 0.7)),
    "measurables": ("weighted_count", "alternation_k", "entropy_score", "gc_content"),
    "properties": {"weighted_count": {"kind": "weighted_count", "weights": {"A": 0.0, "C": 1.0, "G": 0.3, "T": 0.7}},
                   "alternation_k": {"kind": "alternation", "k": 2}},
}


@pytest.mark.parametrize("seed", [1, 2])
def test_dynamics_agents_with_other_drivers(seed: int) -> None:
    scores, reports = {}, {}
    for kind in ("oracle", "random", "heuristic"):
        proto = make_protocol(DYNAMICS, **CUSTOM_DYNAMICS)
        scores[kind] = run_episode(proto, make_agent(DYNAMICS, kind, proto), seed=seed).score
        reports[kind] = proto.report
    assert scores["oracle"].score == pytest.approx(1.0)
    assert scores["random"].score < 0.4
    assert scores["random"].score < scores["heuristic"].score < 1.0
    for kind, report in reports.items():  # every agent speaks the measurable-keyed format
        assert report is not None and report.attractors and not report.warnings, kind
        assert set(report.drivers) <= set(CUSTOM_DYNAMICS["measurables"])
    assert scores["heuristic"].parts["drivers"] == 1.0  # it finds them from where the runs end


@pytest.mark.parametrize("config", [
    {"drivers": ("gc_content", "alternation_k", "palindrome_score"), "attractors": ((0.8, 0.2, 0.8), (0.3, 0.7, 0.2)),
     "measurables": ("gc_content", "alternation_k", "palindrome_score", "entropy_score")},
    {"drivers": ("entropy_score",), "attractors": ((0.3,), (0.9,)), "measurables": ("gc_content", "entropy_score")},
], ids=["three-drivers", "one-driver"])
def test_dynamics_with_a_set_of_drivers_of_any_size(config: dict[str, object]) -> None:
    scores = {}
    for kind in ("oracle", "random"):
        proto = make_protocol(DYNAMICS, length=16, n_heldout=6, **config)
        scores[kind] = run_episode(proto, make_agent(DYNAMICS, kind, proto), seed=0).score
    assert scores["oracle"].score == pytest.approx(1.0)
    assert scores["random"].score < 0.4
    assert 0.0 < scores["oracle"].parts["coverage"] <= 1.0
