"""Per-seed hidden properties read drawn positions, and skill counts above the best stock program.

The drawn problems of `sequence/hidden-property` (no `hidden` named) are base families with drawn
parameters, each read at drawn positions, or compositions of them; named properties (`hidden=...`,
the `paper` preset) keep their meaning and their grade. See `test_hidden_property_fixed_reports` for
the lazy agents this closes.
"""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.spaces import StringSpace
from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.grading import public_baseline
from discoverylab.labs.sequence.kinds import PositionsProperty
from discoverylab.labs.sequence.measurables import build_measurables
from discoverylab.labs.sequence.problems import draw_positions
from discoverylab.labs.sequence.programs import positions_program
from discoverylab.labs.sequence.properties import PROPERTY_NAMES, PropertyParams, compute, decode, encode
from discoverylab.labs.sequence.sandbox import run_predictor

HIDDEN = "sequence/hidden-property"
SPACE = StringSpace("ACGT", 10)
KIND = {"gc_content": "gc", "weighted_count": "weighted_count", "alternation_k": "alternation",
        "palindrome_score": "palindromicity", "entropy_score": "kmer_entropy", "hamming_distance": "hamming",
        "interaction_energy": "interaction_energy"}


def _prop(name: str, positions: list[int], **fields: object) -> PositionsProperty:
    prop = build_measurables(["h"], {"h": {"kind": KIND[name], "positions": positions, **fields}}, "ACGTTGCAAC")["h"]
    assert isinstance(prop, PositionsProperty)
    return prop


@pytest.mark.parametrize("name", PROPERTY_NAMES)
def test_a_property_at_positions_is_the_property_of_that_subsequence(name: str) -> None:
    positions = [0, 2, 3, 7, 9]
    prop = _prop(name, positions)
    x = np.random.default_rng(1).integers(0, 4, size=(50, 10), dtype=np.uint8)
    params = PropertyParams(reference="".join("ACGTTGCAAC"[i] for i in positions))
    expected = [compute(name, "".join(s[i] for i in positions), params) for s in decode(x)]
    assert np.allclose(prop.batch(x), expected)
    lo, hi = prop.feasible_range(SPACE)
    assert 0.0 <= lo <= min(expected) and max(expected) <= hi <= 1.0


@pytest.mark.parametrize("name", PROPERTY_NAMES)
def test_sample_at_positions_meets_the_tolerance(name: str) -> None:
    """SAMPLE uses the family's own sampler on the read letters (targets: achievable values)."""
    prop = _prop(name, [1, 2, 4, 5, 6, 8])
    rng = np.random.default_rng(2)
    achievable = np.unique(prop.batch(rng.integers(0, 4, size=(500, 10), dtype=np.uint8)))
    for target in achievable[np.linspace(0, len(achievable) - 1, 6).astype(int)]:
        codes = prop.sample_exact(SPACE, float(target), 0.1, 10, rng)
        assert codes is not None and codes.shape == (10, 10)
        assert np.all(np.abs(prop.batch(codes) - target) <= 0.1 + 1e-9), (name, target, prop.batch(codes))


@pytest.mark.parametrize("name", PROPERTY_NAMES)
def test_the_oracles_program_computes_the_property_in_the_sandbox(name: str) -> None:
    positions = (0, 3, 4, 5, 8)
    prop = _prop(name, list(positions))
    seqs = decode(np.random.default_rng(3).integers(0, 4, size=(40, 10), dtype=np.uint8))
    result = run_predictor(positions_program(name, prop.params, 10, positions), seqs)
    assert result.error is None
    assert np.allclose(result.values, prop.batch(encode(seqs)))


@pytest.mark.parametrize("positions", [[], [-1, 2], ["a"], 3])
def test_bad_positions_are_refused_with_the_reason(positions: object) -> None:
    with pytest.raises(InvalidSpec, match="positions must be"):
        build_measurables(["h"], {"h": {"kind": "gc", "positions": positions}}, "A" * 10)


def test_a_position_past_the_sequence_is_a_clear_error() -> None:
    prop = _prop("gc_content", [0, 12])
    with pytest.raises(InvalidSpec, match="reads position 12, sequences have length 10"):
        prop.batch(np.zeros((1, 10), dtype=np.uint8))


def test_drawn_positions_are_never_every_letter() -> None:
    rng = np.random.default_rng(0)
    draws = [tuple(draw_positions(rng, 10)) for _ in range(2000)]
    assert all(5 <= len(d) <= 9 and list(d) == sorted(set(d)) for d in draws)
    assert len(set(draws)) > 500  # of 637 subsets of 5..9 of the 10 positions


def test_every_drawn_base_problem_reads_a_strict_subset_of_the_letters() -> None:
    for seed in range(30):
        proto = make_protocol(HIDDEN)
        proto.reset(seed)
        truth = proto.ground_truth()
        if truth["property"] != "composed":
            assert truth["positions"] and len(truth["positions"]) < 10, (seed, truth["positions"])


def test_named_properties_keep_their_meaning() -> None:
    """`hidden=gc_content` (and the paper preset) are the published properties on every letter,
    graded as before: the stock program is the right answer there."""
    proto = make_protocol(HIDDEN, hidden="gc_content")
    proto.reset(4)
    truth = proto.ground_truth()
    assert truth["positions"] is None and truth["problem"] is None
    held = proto.heldout  # type: ignore[attr-defined]
    assert held.values == pytest.approx([compute("gc_content", s) for s in held.sequences])
    score = run_episode(proto, make_agent(HIDDEN, "oracle", proto), seed=4).score
    assert score.score == 1.0 and "chance_mae" in score.parts


def test_skill_counts_above_the_best_stock_program() -> None:
    truth = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    stock = np.array([[0.1, 0.2, 0.4, 0.5, 0.8, 0.9], [0.5] * 6])
    mae, chance = public_baseline(truth, 0.05, 0.5, stock)
    assert mae == pytest.approx(np.abs(stock[0] - truth).mean()) and chance == pytest.approx(0.5)
    assert public_baseline(truth, 0.05, 0.5, None) == (pytest.approx(0.3), pytest.approx(1 / 6))


@pytest.mark.parametrize("seed", [2, 17])
def test_the_heuristic_finds_the_drawn_positions_from_its_rounds(seed: int) -> None:
    """Seeds 2 (weighted count) and 17 (GC content) read drawn positions; the heuristic, which never
    sees the truth, fits per-position weights to its rounds' values and passes."""
    proto = make_protocol(HIDDEN)
    score = run_episode(proto, make_agent(HIDDEN, "heuristic", proto), seed=seed).score
    assert proto.ground_truth()["positions"] is not None
    assert score.labels["label"] == "pass" and score.score > 0.9


def test_the_judge_is_told_the_positions_and_that_the_whole_sequence_is_a_near_miss() -> None:
    """On seed 17 (GC content at positions 1-8) 'fraction of G or C' is no longer the true definition."""
    from discoverylab.labs.sequence.judge import hypothesis_messages
    from discoverylab.labs.sequence.parsing import Hypothesis

    proto = make_protocol(HIDDEN)
    proto.reset(17)
    text = hypothesis_messages(proto.ground_truth(), [Hypothesis(rank=1, description="GC content")])[1]["content"]
    assert "positions 1, 2, 3, 4, 5, 6, 7, 8" in text
    assert "fraction of positions that are G or C over all the letters or over other positions" in text
    assert "GC fraction" not in text  # the named family's paraphrases are not accepted as exact


def test_a_spec_reading_past_its_sequences_fails_to_build_with_the_reason() -> None:
    """`lab verify` reports it as the failed build check (no crash, no traceback in the log)."""
    from discoverylab.labs.core.spec import kind_spec
    from discoverylab.labs.core.verify import verify
    from discoverylab.labs.sequence.generate import _hidden_property_spec
    from discoverylab.labs.sequence.problems import EPISODE_KNOBS

    spec = _hidden_property_spec(EPISODE_KNOBS, np.random.default_rng(0), 0)
    spec = spec.model_copy(update={"properties": {"hidden": kind_spec("gc", positions=[0, 12])}})
    report = verify(spec, protocol_check=False)
    build = [c for c in report.checks if c.name == "build"]
    assert build and build[0].passed is False
    assert "reads position 12, but objects have length 10" in build[0].detail


def test_the_family_hint_says_that_a_drawn_property_reads_hidden_positions() -> None:
    drawn = make_protocol(HIDDEN, hint="family").reset(17)
    assert "each reads only the letters at hidden positions" in drawn
    named = make_protocol(HIDDEN, hint="family", hidden="gc_content").reset(17)
    assert "belongs to one of these families" in named and "hidden positions" not in named
