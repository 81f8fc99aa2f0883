"""Small, dependency-free statistics for the distribution tests (no scipy in the test deps).

Every test that uses these draws a fixed sample (fixed seeds or a fixed test key), so the
outcome is deterministic; the bounds only say how far from the expected shape a fair draw of
that size may plausibly land.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping

Z_999 = 3.09  # the standard normal's 99.9% quantile


def chi2_critical(df: int, z: float = Z_999) -> float:
    """Upper quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty, good to a
    few percent for df >= 1): a statistic above it has probability ~0.1% under the null."""
    k = max(df, 1)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def chi2_statistic(observed: Iterable[Hashable], expected: Mapping[Hashable, float]) -> float:
    """Pearson's statistic of the sample `observed` against the probabilities `expected`."""
    counts = Counter(observed)
    n = sum(counts.values())
    unknown = set(counts) - set(expected)
    assert not unknown, f"values outside the expected support: {unknown}"
    return sum((counts.get(v, 0) - n * p) ** 2 / (n * p) for v, p in expected.items() if p > 0)


def looks_uniform(observed: Iterable[Hashable], expected: Mapping[Hashable, float]) -> bool:
    """Whether a fair draw from `expected` could plausibly have produced `observed`."""
    sample = list(observed)
    return chi2_statistic(sample, expected) <= chi2_critical(len(expected) - 1)


def shares(options: Iterable[Hashable]) -> dict[Hashable, float]:
    """The distribution of drawing one entry of `options` uniformly (repeats weigh more)."""
    counts = Counter(options)
    n = sum(counts.values())
    return {k: v / n for k, v in counts.items()}
