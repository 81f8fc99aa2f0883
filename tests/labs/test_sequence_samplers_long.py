"""The SAMPLE samplers meet their tolerance on long sequences (issue #22): hit rate, range, determinism.

Protocol A serves lengths above 200 only for properties listed in `sampling.LONG_SAMPLERS`; each
of those is measured here over many targets spanning its feasible range at N = 200, 500 and 1,000.
"""

from __future__ import annotations

import numpy as np
import pytest

from discoverylab.labs.sequence.properties import PropertyParams, compute_codes, feasible_range
from discoverylab.labs.sequence.samplers_path import de_bruijn, extreme_energy_sequences
from discoverylab.labs.sequence.sampling import (
    LONG_SAMPLERS,
    MAX_SEARCH_LENGTH,
    long_sampler_error,
    sample_codes,
)

CASES = [
    ("entropy_score", PropertyParams()),
    ("entropy_score", PropertyParams(entropy_k=3)),
    ("entropy_1", PropertyParams()),
    ("entropy_score", PropertyParams(entropy_k=2, entropy_normalize="achievable")),
    ("interaction_energy", PropertyParams()),
    ("interaction_energy", PropertyParams(energy=((0.3, -2.0, 0.1, 0.0), (1.0, 0.2, -0.4, 0.0),
                                                  (0.0, 0.5, -1.0, 2.0), (-0.7, 0.0, 0.9, 0.1)))),
    ("weighted_count", PropertyParams()),
    ("weighted_count", PropertyParams(weights=(0.3, 0.3, 0.9, 0.1))),
    ("gc_content", PropertyParams()),
    ("alternation_3", PropertyParams()),
]


def _hit_rate(name: str, params: PropertyParams, length: int, eps: float, seed: int) -> tuple[float, int]:
    """Share of samples within eps of their target over 25 targets spanning the feasible range."""
    rng = np.random.default_rng(seed)
    lo, hi = feasible_range(name, length, params)
    hits = total = distinct = 0
    for target in np.linspace(lo, hi, 25):
        x = sample_codes(name, params, length, float(target), eps, 10, rng)
        assert x.shape == (10, length) and x.dtype == np.uint8 and x.max() <= 3
        values = compute_codes(name, x, params)
        hits += int((np.abs(values - target) <= eps + 1e-9).sum())
        total += values.size
        distinct += len({row.tobytes() for row in x})
    return hits / total, distinct


@pytest.mark.parametrize("length", [200, 500, 1000])
@pytest.mark.parametrize(("name", "params"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_sampler_meets_its_tolerance_on_long_sequences(name: str, params: PropertyParams, length: int) -> None:
    rate, distinct = _hit_rate(name, params, length, 0.05, seed=length)
    assert rate >= 0.99, f"{name} at N={length}: hit rate {rate:.3f}"
    assert distinct >= 0.9 * 250  # diverse: the band holds many sequences except at the extremes


@pytest.mark.parametrize("name", ["entropy_score", "interaction_energy", "weighted_count"])
def test_sampler_meets_a_tight_tolerance_at_n_1000(name: str) -> None:
    rate, _ = _hit_rate(name, PropertyParams(), 1000, 0.01, seed=7)
    assert rate >= 0.99


@pytest.mark.parametrize("name", ["entropy_score", "interaction_energy", "weighted_count"])
def test_sampler_is_deterministic_and_follows_its_generator(name: str) -> None:
    """Same generator state, same samples (byte for byte); another state, other samples."""
    params = PropertyParams()
    a = sample_codes(name, params, 1000, 0.4, 0.05, 10, np.random.default_rng(3))
    b = sample_codes(name, params, 1000, 0.4, 0.05, 10, np.random.default_rng(3))
    c = sample_codes(name, params, 1000, 0.4, 0.05, 10, np.random.default_rng(4))
    assert a.tobytes() == b.tobytes() and a.tobytes() != c.tobytes()


def test_unreachable_targets_give_the_nearest_feasible_value() -> None:
    params = PropertyParams(weights=(0.2, 0.4, 0.6, 0.8))
    x = sample_codes("weighted_count", params, 1000, 0.95, 0.05, 5, np.random.default_rng(0))
    assert np.allclose(compute_codes("weighted_count", x, params), 0.8)
    top = feasible_range("entropy_score", 1000, params)[1]
    y = sample_codes("entropy_score", params, 1000, 1.0, 0.0001, 5, np.random.default_rng(0))
    assert np.all(np.abs(compute_codes("entropy_score", y, params) - top) < 0.002)


def test_endpoints_are_extreme() -> None:
    """The de Bruijn cycle holds every k-mer once; the energy DP finds value-1 and value-0 sequences."""
    for k in (1, 2, 3):
        cycle = de_bruijn(k)
        windows = {tuple(np.roll(cycle, -i)[:k]) for i in range(cycle.size)}
        assert cycle.size == 4**k and len(windows) == 4**k
    stable, unstable = extreme_energy_sequences(1000, PropertyParams().energy)
    values = compute_codes("interaction_energy", np.stack([stable, unstable]), PropertyParams())
    assert values.tolist() == [1.0, 0.0]


def test_lengths_above_the_search_limit_need_a_long_sampler() -> None:
    assert long_sampler_error(MAX_SEARCH_LENGTH, None) is None
    for hidden in ("entropy_score", "entropy_3", "interaction_energy", "weighted_count", "alternation_4"):
        assert long_sampler_error(1000, hidden) is None
    for hidden in (None, "motif_score", "composed"):
        assert "needs `hidden`" in (long_sampler_error(1000, hidden) or "")
    assert {"entropy_score", "interaction_energy", "weighted_count"} <= LONG_SAMPLERS
