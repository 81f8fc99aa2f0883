"""Fast, exact constructive samplers for single-property requests (spec §2.5).

Each sampler first picks an achievable value ("level") uniformly among those within eps of the
target (the nearest level(s), ties equiprobable, when none is), then builds a uniformly random
sequence with exactly that value. Returned batches hold distinct sequences unless fewer exist.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from discoverylab.labs.core.sampler import BAND_TOL

MAX_COMPOSITION_LENGTH = 120
"""Longest sequences for which the weighted-count sampler enumerates base compositions."""


def choose_levels(levels: np.ndarray, target: float, eps: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of ``n`` levels drawn uniformly from those within eps of target (else the nearest)."""
    gap = np.abs(levels - target)
    candidates = np.flatnonzero(gap <= eps + BAND_TOL)
    if candidates.size == 0:
        candidates = np.flatnonzero(gap <= gap.min() + BAND_TOL)
    return candidates[rng.integers(0, candidates.size, size=n)]


def _first_k_mask(counts: np.ndarray, width: int, rng: np.random.Generator) -> np.ndarray:
    """(n, width) masks with exactly counts[r] True entries at uniformly random places in row r."""
    ranks = rng.random((counts.size, width)).argsort(axis=1).argsort(axis=1)
    return ranks < counts[:, None]


def distinct(generate: Callable[[int], np.ndarray], n: int, attempts: int = 8) -> np.ndarray:
    """Call ``generate(k)`` until ``n`` distinct rows exist (or attempts run out, then allow repeats)."""
    rows: dict[bytes, np.ndarray] = {}
    last = generate(n)
    for _ in range(attempts):
        for row in last:
            rows.setdefault(row.tobytes(), row)
        if len(rows) >= n:
            break
        last = generate(n - len(rows))
    out = list(rows.values())[:n]
    while len(out) < n:  # fewer distinct sequences than requested exist at this level
        out.append(out[len(out) % len(rows)])
    return np.stack(out)


def sample_gc(length: int, target: float, eps: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Choose the number of G/C, their places, then G-or-C and A-or-T uniformly."""

    def generate(k: int) -> np.ndarray:
        counts = choose_levels(np.arange(length + 1) / length, target, eps, k, rng)
        mask = _first_k_mask(counts, length, rng)
        strong = rng.integers(1, 3, size=(k, length))  # C or G
        weak = 3 * rng.integers(0, 2, size=(k, length))  # A or T
        return np.where(mask, strong, weak).astype(np.uint8)

    return distinct(generate, n)


def sample_hamming(reference: np.ndarray, target: float, eps: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Choose how many positions differ from the reference and where; ``SAMPLE 0`` returns the reference."""
    length = reference.size

    def generate(k: int) -> np.ndarray:
        counts = choose_levels(np.arange(length + 1) / length, target, eps, k, rng)
        mask = _first_k_mask(counts, length, rng)
        changed = (reference[None, :] + rng.integers(1, 4, size=(k, length))) % 4
        return np.where(mask, changed, reference[None, :]).astype(np.uint8)

    return distinct(generate, n)


def sample_palindromicity(length: int, target: float, eps: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Choose how many mirror pairs match, which ones, then fill matched and mismatched pairs."""
    pairs = length // 2
    left = np.arange(pairs)
    right = length - 1 - left

    def generate(k: int) -> np.ndarray:
        counts = choose_levels(2 * np.arange(pairs + 1) / length, target, eps, k, rng)
        mask = _first_k_mask(counts, pairs, rng)
        x = rng.integers(0, 4, size=(k, length), dtype=np.uint8)
        a = x[:, left]
        mismatch = (3 - a + rng.integers(1, 4, size=a.shape)) % 4
        x[:, right] = np.where(mask, 3 - a, mismatch)
        return x

    return distinct(generate, n)


def sample_alternation(length: int, k_mask: int, target: float, eps: float, n: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Choose the number of changes along s_0, s_k, s_2k, ..., where they happen, and the new bases."""
    m = math.ceil(length / k_mask)

    def generate(k: int) -> np.ndarray:
        x = rng.integers(0, 4, size=(k, length), dtype=np.uint8)
        if m <= 1:
            return x
        counts = choose_levels(np.arange(m) / (m - 1), target, eps, k, rng)
        mask = _first_k_mask(counts, m - 1, rng)
        steps = np.where(mask, rng.integers(1, 4, size=(k, m - 1)), 0)
        u = (x[:, :1].astype(np.int64) + np.concatenate([np.zeros((k, 1), np.int64), steps.cumsum(axis=1)], axis=1)) % 4
        x[:, ::k_mask] = u
        return x

    return distinct(generate, n)


@lru_cache(maxsize=32)
def _compositions(length: int) -> np.ndarray:
    """All (n_A, n_C, n_G, n_T) with sum ``length``."""
    rows = [(a, c, g, length - a - c - g) for a in range(length + 1) for c in range(length + 1 - a)
            for g in range(length + 1 - a - c)]
    return np.asarray(rows, dtype=np.int64)


def sample_weighted_count(length: int, weights: Sequence[float], target: float, eps: float, n: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Choose an achievable value, a base composition with that value, then shuffle (compositions are
    enumerated up to `MAX_COMPOSITION_LENGTH` letters, solved for beyond: `_solved_compositions`)."""
    if length > MAX_COMPOSITION_LENGTH:
        return _sample_weighted_long(length, weights, target, eps, n, rng)
    comps = _compositions(length)
    values = np.round(comps @ np.asarray(weights, dtype=np.float64) / length, 12)
    levels, level_of = np.unique(values, return_inverse=True)

    def generate(k: int) -> np.ndarray:
        chosen = choose_levels(levels, target, eps, k, rng)
        out = np.empty((k, length), dtype=np.uint8)
        for row, level in enumerate(chosen):
            options = np.flatnonzero(level_of == level)
            counts = comps[options[rng.integers(options.size)]]
            out[row] = rng.permutation(np.repeat(np.arange(4, dtype=np.uint8), counts))
        return out

    return distinct(generate, n)


def _solved_compositions(length: int, w: np.ndarray, targets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n, 4) base counts summing to ``length`` whose mean weight is nearest each target.

    A uniform point of the simplex is pulled straight towards the vertex of the lightest or the
    heaviest base until its mean weight is the target (always inside the simplex), rounded to counts
    by largest remainders; then single-letter moves between bases shrink the rounding error (at most
    4 max|w| / N) while they can.
    """
    n = targets.size
    p = rng.dirichlet(np.ones(4), size=n)
    value = p @ w
    vertex = np.where(value < targets, int(np.argmax(w)), int(np.argmin(w)))
    gap = w[vertex] - value
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(np.abs(gap) > 1e-15, np.clip((targets - value) / gap, 0.0, 1.0), 0.0)
    p = (1 - lam)[:, None] * p
    p[np.arange(n), vertex] += lam
    raw = p * length
    counts = np.floor(raw).astype(np.int64)
    short = length - counts.sum(axis=1)
    order = np.argsort(counts - raw, axis=1)  # largest remainders first
    for row in range(n):
        counts[row, order[row, : short[row]]] += 1
    moves = w[None, :] - w[:, None]  # moves[i, j]: value change x length of moving one letter i -> j
    for row in range(n):
        for _ in range(8):
            err = counts[row] @ w - targets[row] * length
            change = np.where(counts[row][:, None] > 0, np.abs(err + moves), np.inf)
            i, j = np.unravel_index(int(np.argmin(change)), change.shape)
            if change[i, j] >= abs(err) - 1e-12:
                break
            counts[row, i] -= 1
            counts[row, j] += 1
    return counts


def _sample_weighted_long(length: int, weights: Sequence[float], target: float, eps: float, n: int,
                          rng: np.random.Generator) -> np.ndarray:
    """Weighted count for long sequences: a target drawn within eps / 2, a solved composition, a shuffle."""
    w = np.asarray(weights, dtype=np.float64)
    lo, hi = float(w.min()), float(w.max())

    def generate(k: int) -> np.ndarray:
        a, b = max(lo, target - eps / 2), min(hi, target + eps / 2)
        targets = np.full(k, min(max(target, lo), hi)) if a > b else a + (b - a) * rng.random(k)
        counts = _solved_compositions(length, w, targets, rng)
        return np.stack([rng.permutation(np.repeat(np.arange(4, dtype=np.uint8), row)) for row in counts])

    return distinct(generate, n)
