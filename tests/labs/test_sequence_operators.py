"""Operator examples and laws of spec §2.3, plus determinism under a fixed generator (§7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discoverylab.labs.sequence.operators import (
    AlternatingMerge,
    ConsensusMerge,
    GCBiasedMutation,
    MajorityUpdate,
    PalindromePull,
    PalindromeSandwich,
)
from discoverylab.labs.sequence.properties import compute, reverse_complement


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_majority_update_examples() -> None:
    assert MajorityUpdate()("AACAA", rng=rng()) == "AAAAA"
    assert MajorityUpdate()("ACGTA", rng=rng()) == "ACGTA"
    periodic = MajorityUpdate(boundary="periodic")
    assert periodic("ACAC", rng=rng()) == "CACA"
    assert periodic(periodic("ACAC", rng=rng()), rng=rng()) == "ACAC"  # a built-in 2-cycle


def test_majority_update_never_changes_a_uniform_sequence_and_asynchronous_is_partial() -> None:
    assert MajorityUpdate(radius=2)("GGGGGG", rng=rng()) == "GGGGGG"
    assert MajorityUpdate(update_prob=0.0)("AACAA", rng=rng()) == "AACAA"


def test_palindrome_pull_raises_pal_by_two_over_n_per_pair() -> None:
    seq = "ACGTTGCAAGCTAGGA"
    before = compute("palindrome_score", seq)
    after = compute("palindrome_score", PalindromePull(mutations=2)(seq, rng=rng()))
    assert after == pytest.approx(before + 2 * 2 / len(seq))
    fixed = "AAAAAAATTTTTTT"
    assert PalindromePull()(fixed, rng=rng()) == fixed


def test_alternating_merge_parity_and_interleave() -> None:
    assert AlternatingMerge()("AAAAAA", "CCCCCC", rng=rng()) == "ACACAC"
    assert AlternatingMerge(mode="interleave")("AAA", "CCC", rng=rng()) == "ACACAC"
    assert AlternatingMerge()("AAAA", "CC", rng=rng()) == "ACAA"


def test_consensus_merge_keeps_agreement_and_picks_a_parent() -> None:
    s, t = "ACGTACGTAC", "ACGAAAGTCC"
    child = ConsensusMerge()(s, t, rng=rng(3))
    for a, b, c in zip(s, t, child, strict=True):
        assert c == a if a == b else c in (a, b)
    assert ConsensusMerge()("ACG", "ACGTT", rng=rng()) == "ACGTT"


def test_palindrome_sandwich_length_and_pal_formula() -> None:
    s, t = "AGGCT", "ACGTAA"
    c = PalindromeSandwich()(s, t, rng=rng())
    assert len(c) == 2 * len(s) + len(t)
    expected = (2 * len(s) + len(t) * compute("palindrome_score", t)) / len(c)
    assert compute("palindrome_score", c) == pytest.approx(expected)
    assert compute("palindrome_score", PalindromeSandwich()(s, "ACGT", rng=rng())) == 1.0
    assert len(PalindromeSandwich(crop_to=10)(s, t, rng=rng())) == 10


def test_gc_biased_mutation_relaxes_to_the_bias() -> None:
    gen = rng(7)
    op = GCBiasedMutation(mutations=3, bias=0.8)
    finals = []
    for _ in range(500):
        seq = "A" * 20
        for _ in range(40):
            seq = op(seq, rng=gen)
        finals.append(compute("gc_content", seq))
    assert np.mean(finals) == pytest.approx(0.8, abs=0.02)


def test_gc_biased_mutation_expected_one_step_law() -> None:
    # E[gc_{t+1} | s_t] = gc_t + (m/N)(b - gc_t); from gc = 0 with m = 2, N = 10, b = 0.8: 0.16.
    gen = rng(11)
    op = GCBiasedMutation(mutations=2, bias=0.8)
    mean = np.mean([compute("gc_content", op("ATATATATAT", rng=gen)) for _ in range(4000)])
    assert mean == pytest.approx(0.16, abs=0.01)


OPERATORS = [
    (MajorityUpdate(), 1), (MajorityUpdate(radius=2, boundary="periodic", update_prob=0.5), 1),
    (GCBiasedMutation(mutations=3), 1), (PalindromePull(mutations=2, noise=0.5), 1),
    (AlternatingMerge(), 2), (ConsensusMerge(), 2), (ConsensusMerge(mode="any"), 2),
    (PalindromeSandwich(crop_to=12), 2),
]


@settings(max_examples=40, deadline=None)
@given(st.text("ACGT", min_size=12, max_size=12), st.text("ACGT", min_size=12, max_size=12),
       st.integers(0, 2**32 - 1))
def test_operators_are_deterministic_and_closed(s: str, t: str, seed: int) -> None:
    for op, arity in OPERATORS:
        args = (s, t)[:arity]
        first, second = op(*args, rng=rng(seed)), op(*args, rng=rng(seed))
        assert first == second
        assert len(first) == 12 and set(first) <= set("ACGT")


def test_reverse_complement() -> None:
    assert reverse_complement("AACG") == "CGTT"


def test_population_dynamics_with_fitness_selection_raises_mean_gc() -> None:
    from discoverylab.labs.core.operators import PopulationDynamics

    gen = rng(5)
    population = ["".join(gen.choice(list("ACGT"), 20)) for _ in range(30)]
    fitness = lambda pop: np.array([compute("gc_content", s) for s in pop]) ** 4  # noqa: E731
    dyn = PopulationDynamics(ConsensusMerge(), GCBiasedMutation(bias=0.5), fitness=fitness)
    history = dyn.run(population, 15, gen)
    assert len(history) == 16 and all(len(p) == 30 for p in history)
    means = [np.mean([compute("gc_content", s) for s in p]) for p in history]
    assert means[-1] > means[0] + 0.2  # selection beats the neutral (b = 0.5) mutation
    assert dyn.run(population, 3, rng(9)) == dyn.run(population, 3, rng(9))
