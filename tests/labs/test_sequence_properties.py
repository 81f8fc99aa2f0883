"""The sequence properties against the spec's golden table (§2.2), exact ranges and invariants (§7)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discoverylab.labs.sequence.properties import (
    PROPERTY_NAMES,
    InvalidSequenceError,
    PropertyParams,
    compute,
    compute_all,
    decode,
    encode,
    energy_extremes,
    feasible_range,
    max_kmer_entropy,
    max_motif_count,
    quantum,
    reverse_complement,
)

GOLDEN_PARAMS = PropertyParams(reference="ACGTACGTAC")
# s: gc, wc, alt_1, alt_2, pal, ent_2, ham, ie   (spec §2.2, N=10, r=ACGTACGTAC)
GOLDEN = {
    "AGGGGTCCCC": (0.8, 0.23, 0.3333, 0.5, 0.6, 0.5283, 0.7, 0.1892),
    "GCTAGCTAGC": (0.6, 0.36, 1.0, 1.0, 1.0, 0.4937, 0.7, 0.4703),
    "CAGGGTCGGT": (0.7, 0.30, 0.6667, 0.75, 0.2, 0.6048, 0.9, 0.2432),
    "AAAAAAAAAA": (0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.7, 0.2432),
    "ATATATATAT": (0.0, 0.75, 1.0, 0.0, 1.0, 0.2478, 0.5, 0.9946),
    "GGGGGCCCCC": (1.0, 0.10, 0.1111, 0.25, 1.0, 0.3480, 0.7, 0.2973),
}
GOLDEN_COLUMNS = ("gc_content", "weighted_count", "alternation_1", "alternation_2", "palindrome_score",
                  "entropy_score", "hamming_distance", "interaction_energy")

dna = st.text(alphabet="ACGT", min_size=1, max_size=200)


@pytest.mark.parametrize(("seq", "expected"), list(GOLDEN.items()))
def test_golden_table_single(seq: str, expected: tuple[float, ...]) -> None:
    for name, value in zip(GOLDEN_COLUMNS, expected, strict=True):
        assert compute(name, seq, GOLDEN_PARAMS) == pytest.approx(value, abs=5e-5), name


def test_golden_table_batch_matches_single() -> None:
    batch = compute_all(list(GOLDEN), GOLDEN_COLUMNS, GOLDEN_PARAMS)
    for row, expected in enumerate(GOLDEN.values()):
        for name, value in zip(GOLDEN_COLUMNS, expected, strict=True):
            assert batch[name][row] == pytest.approx(value, abs=5e-5)


def test_paper_hint_examples_are_perfect_palindromes() -> None:
    for seq in ("AAAAAAATTTTTTT", "GGGGGGGCCCCCCC", "AGAGAGTACTCTCT"):
        assert compute("palindrome_score", seq) == 1.0
    assert compute("palindrome_score", "AAAAAAATTTTTT") == pytest.approx(12 / 13)  # the paper's misprint


@pytest.mark.parametrize(("length", "lo", "hi"), [(10, -14.0, 4.5), (15, -21.7, 7.0), (30, -45.0, 14.5)])
def test_energy_extremes(length: int, lo: float, hi: float) -> None:
    assert energy_extremes(length) == pytest.approx((lo, hi))


def test_energy_extremes_match_brute_force() -> None:
    for length in (2, 3, 6):
        seqs = ["".join(p) for p in itertools.product("ACGT", repeat=length)]
        values = compute_all(seqs, ["interaction_energy"])["interaction_energy"]
        assert values.min() == 0.0 and values.max() == pytest.approx(1.0)


@pytest.mark.parametrize("length", [1, 2, 5, 6, 7])
def test_feasible_ranges_are_exact_by_enumeration(length: int) -> None:
    seqs = ["".join(p) for p in itertools.product("ACGT", repeat=length)]
    params = PropertyParams(alternation_k=2)
    values = compute_all(seqs, [*PROPERTY_NAMES, "motif_score"], params)
    for name, vals in values.items():
        lo, hi = feasible_range(name, length, params)
        assert vals.min() == pytest.approx(lo) and vals.max() == pytest.approx(hi), name
        q = quantum(name, length, params)
        if q is not None:
            assert np.allclose(np.round(vals / q) * q, vals), name


def test_entropy_maximum_formula() -> None:
    assert max_kmer_entropy(10, 2) / 4 == pytest.approx(0.792, abs=1e-3)
    assert max_kmer_entropy(33, 2) == pytest.approx(4.0)  # 32 windows = 2 of each 2-mer
    assert max_motif_count(10, "GTA") == 3 and max_motif_count(7, "AAA") == 5


def test_invalid_sequences_raise() -> None:
    for bad in (["ACGX"], ["acgt"], ["ACG", "ACGT"], [""]):
        with pytest.raises(InvalidSequenceError):
            encode(bad)
    with pytest.raises(KeyError):
        compute("no_such_property", "ACGT")


@settings(max_examples=60, deadline=None)
@given(dna)
def test_every_property_is_a_clean_unit_float(seq: str) -> None:
    for name in (*PROPERTY_NAMES, "motif_score", "alternation_3", "entropy_3"):
        value = compute(name, seq)
        assert isinstance(value, float) and 0.0 <= value <= 1.0
        assert not np.isnan(value) and np.copysign(1.0, value) == 1.0  # never -0.0


@settings(max_examples=60, deadline=None)
@given(dna)
def test_reverse_complement_invariants(seq: str) -> None:
    rc = reverse_complement(seq)
    assert compute("palindrome_score", rc) == pytest.approx(compute("palindrome_score", seq))
    assert compute("gc_content", rc) == pytest.approx(compute("gc_content", seq))
    assert compute("hamming_distance", seq, PropertyParams(reference=seq)) == 0.0
    assert decode(encode(seq))[0] == seq
