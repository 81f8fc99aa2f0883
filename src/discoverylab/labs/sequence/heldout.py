"""Held-out sequence sets for grading hidden-property hypotheses (spec §2.8), adversarial near-misses included.

The set T mixes 100 uniform random sequences, 60 sequences aimed at the values 0, 0.1, ..., 1 and
40 *near-misses*: sequences on which the true property and its most tempting wrong neighbours
disagree (a plain palindrome is not a reverse-complement palindrome; equal GC with a different
G:C balance; equal composition in a different order; 1-3 substitutions from the hidden reference...).
A hypothesis that is only approximately right therefore fails the exact-match test.
All draws come from the grader's own generator, so agent actions never change the held-out set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from discoverylab.labs.sequence.properties import (
    DEFAULT_PARAMS,
    PropertyParams,
    compute_codes,
    decode,
    encode,
    masked_params,
)

ValueFn = Callable[[np.ndarray], np.ndarray]
"""Maps an (B, N) code batch to B property values."""


def value_function(name: str, params: PropertyParams) -> ValueFn:
    def fn(x: np.ndarray) -> np.ndarray:
        return compute_codes(name, x, params)

    return fn


def targeted_codes(fn: ValueFn, length: int, target: float, n: int, rng: np.random.Generator, *,
                   eps: float = 0.05, iters: int = 400) -> np.ndarray:
    """(n, N) codes with values near `target`: parallel greedy walks of random single substitutions.

    A move is kept when it does not increase |f - target| (so walks drift across plateaus). Used for
    held-out sets, where closeness matters more than the distribution; the lab's SAMPLE uses the
    lab sampler instead.
    """
    x = rng.integers(0, 4, size=(n, length), dtype=np.uint8)
    err = np.abs(fn(x) - target)
    rows = np.arange(n)
    for _ in range(iters):
        if (err <= eps).all():
            break
        cand = x.copy()
        pos = rng.integers(0, length, size=n)
        cand[rows, pos] = (cand[rows, pos] + rng.integers(1, 4, size=n)) % 4
        new_err = np.abs(fn(cand) - target)
        keep = new_err <= err
        x[keep] = cand[keep]
        err = np.where(keep, new_err, err)
    return x


def _substitute(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    out = x.copy()
    for row in out:
        pos = rng.choice(len(row), size=min(k, len(row)), replace=False)
        row[pos] = (row[pos] + rng.integers(1, 4, size=len(pos))) % 4
    return out


def _permute(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rng.permuted(x, axis=1)


def near_miss_codes(name: str, params: PropertyParams, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` adversarial near-miss sequences for the family of property `name`."""
    half = (length + 1) // 2
    rand = rng.integers(0, 4, size=(n, length), dtype=np.uint8)
    parts: list[np.ndarray]
    if name == "palindrome_score":
        h = rng.integers(0, 4, size=(n, half), dtype=np.uint8)
        plain = np.concatenate([h, h[:, : length - half][:, ::-1]], axis=1)  # s == reverse(s)
        comp_only = np.concatenate([h, (3 - h)[:, : length - half]], axis=1)  # second half = comp, not reversed
        rc_pal = np.concatenate([h, (3 - h[:, : length - half])[:, ::-1]], axis=1)  # true rc-palindrome
        parts = [plain, comp_only, _substitute(rc_pal, 1, rng), _substitute(rc_pal, 2, rng)]
    elif name == "gc_content":
        swapped = rand.copy()
        flip = rng.random(rand.shape) < 0.5
        swapped[flip] = np.array([3, 2, 1, 0], dtype=np.uint8)[swapped[flip]]  # A<->T, C<->G keeps gc
        gc_mask = rng.random((n, length)) < rng.random((n, 1))
        all_g = np.where(gc_mask, 2, 0).astype(np.uint8)  # same gc, only G and A
        all_c = np.where(gc_mask, 1, 3).astype(np.uint8)  # same gc, only C and T
        parts = [swapped, all_g, all_c]
    elif name in ("alternation_k", "entropy_score", "interaction_energy", "weighted_count"):
        runs = np.sort(rand, axis=1)  # same composition, maximal runs
        parts = [_permute(rand, rng), runs, rand[:, ::-1].copy(), _substitute(rand, 1, rng)]
        if name == "alternation_k" and params.alternation_k > 1:
            k = params.alternation_k
            blocks = np.repeat(rng.integers(0, 4, size=(n, -(-length // k)), dtype=np.uint8), k, axis=1)[:, :length]
            period = np.tile(rng.integers(0, 4, size=(n, k), dtype=np.uint8), -(-length // k))[:, :length]
            parts = [blocks, period] + parts  # masked and full alternation disagree
        if name == "weighted_count":
            swapped = rand.copy()
            swapped[swapped == 0] = 9
            swapped[swapped == 3] = 0
            swapped[swapped == 9] = 3  # A<->T: same gc, different weighted count
            parts.insert(0, swapped)
    elif name == "hamming_distance":
        ref = encode(params.reference_for(length))
        base = np.repeat(ref, n, axis=0)
        shifted = np.roll(base, 1, axis=1)
        parts = [_substitute(base, 1, rng), _substitute(base, 2, rng), _substitute(base, 3, rng),
                 (3 - base)[:, ::-1].copy(), base[:, ::-1].copy(), shifted]
    else:
        parts = [_permute(rand, rng), _substitute(rand, 1, rng)]
    pool = np.concatenate(parts, axis=0)
    pick = rng.permutation(len(pool))[:n]
    return pool[pick]


@dataclass(frozen=True, slots=True)
class HeldOutSet:
    """Sequences, their true values and where each came from (random / targeted / near_miss)."""

    sequences: list[str]
    values: list[float]
    origin: list[str]

    def subset(self, indices: list[int]) -> HeldOutSet:
        return HeldOutSet([self.sequences[i] for i in indices], [self.values[i] for i in indices],
                          [self.origin[i] for i in indices])


def _near_misses_at(name: str, params: PropertyParams, length: int, positions: tuple[int, ...], n: int,
                    rng: np.random.Generator) -> np.ndarray:
    """Near-misses of the family on the letters at `positions`, the other letters uniformly random."""
    out = rng.integers(0, 4, size=(n, length), dtype=np.uint8)
    sub = masked_params(params, positions, length) if name == "hamming_distance" else params
    out[:, list(positions)] = near_miss_codes(name, sub, len(positions), n, rng)
    return out


def build_heldout(name: str, params: PropertyParams, length: int, rng: np.random.Generator, *,
                  n_random: int = 100, n_targeted: int = 60, n_near: int = 40,
                  value_fn: ValueFn | None = None, positions: tuple[int, ...] | None = None) -> HeldOutSet:
    """The set T of spec §2.8 (duplicates removed, so it can be a little smaller than requested).

    `value_fn` overrides the named property (generic near-misses are used for it, or, with the
    `positions` a drawn base property reads, the family's near-misses at those positions)."""
    fn = value_fn or value_function(name, params)
    random_codes = rng.integers(0, 4, size=(n_random, length), dtype=np.uint8)
    targets = np.round(np.linspace(0.0, 1.0, 11), 1)
    per_target = np.bincount(np.arange(n_targeted) % len(targets), minlength=len(targets))
    targeted = [targeted_codes(fn, length, float(t), int(c), rng) for t, c in zip(targets, per_target, strict=True) if c]
    near = (near_miss_codes(name, params, length, n_near, rng) if positions is None
            else _near_misses_at(name, params, length, positions, n_near, rng))
    groups = [("random", random_codes), ("targeted", np.concatenate(targeted)), ("near_miss", near)]
    seen: set[str] = set()
    seqs: list[str] = []
    origin: list[str] = []
    for label, codes in groups:
        for seq in decode(codes):
            if seq not in seen:
                seen.add(seq)
                seqs.append(seq)
                origin.append(label)
    values = [float(v) for v in fn(encode(seqs))]
    return HeldOutSet(seqs, values, origin)


def prediction_subset(heldout: HeldOutSet, rng: np.random.Generator, n: int = 20) -> list[int]:
    """Indices of the `n` held-out sequences shown to the agent: stratified 40% random, 30% targeted,
    30% near-misses, in a shuffled order."""
    quotas = {"random": round(0.4 * n), "targeted": round(0.3 * n)}
    quotas["near_miss"] = n - quotas["random"] - quotas["targeted"]
    chosen: list[int] = []
    for label, quota in quotas.items():
        pool = [i for i, o in enumerate(heldout.origin) if o == label]
        chosen.extend(int(i) for i in rng.permutation(pool)[:quota])
    rest = [i for i in range(len(heldout.sequences)) if i not in set(chosen)]
    chosen.extend(int(i) for i in rng.permutation(rest)[: n - len(chosen)])
    return [chosen[i] for i in rng.permutation(len(chosen))]


STOCK_PROPERTIES: tuple[str, ...] = (
    "gc_content", "weighted_count", "alternation_1", "alternation_2", "alternation_3", "palindrome_score",
    "entropy_1", "entropy_2", "interaction_energy", "motif_score")
"""The named properties at their published parameters: what a report can name without an experiment.
(The Hamming distance is missing: its reference is drawn per episode, so it has no stock program.)"""


def stock_values(sequences: list[str]) -> np.ndarray:
    """(len(STOCK_PROPERTIES), len(sequences)): every stock property's value on every sequence.

    The hidden-property grader counts a drawn problem's skill above the best of these, as above the
    best constant: a fixed report earns nothing, whichever family the seed drew."""
    if not sequences:
        return np.zeros((len(STOCK_PROPERTIES), 0))
    x = encode(sequences)
    return np.stack([compute_codes(name, x, DEFAULT_PARAMS) for name in STOCK_PROPERTIES])
