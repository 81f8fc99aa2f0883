"""Many independent replicates of a `PopulationDynamics` at once, on encoded arrays (for the truth).

The population lab's truth is an expectation over replicates; the string operators cost ~20 us a
call, too slow for the hundreds of replicates a precise expectation needs. Here each operator of
`sequence.operators` has an array twin with the same distribution (not the same random draws), and
`expected_means_batch` runs R replicates of P members together. Experiments still run through
`PopulationDynamics` itself; `tests/labs/test_labs_population.py` checks that the two agree within
sampling error for every operator. An operator without a twin makes `batch_supported` false, and
callers fall back to the per-object loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from discoverylab.labs.core.operators import Operator, PopulationDynamics
from discoverylab.labs.core.properties import Property
from discoverylab.labs.sequence.operators import (
    AlternatingMerge,
    ConsensusMerge,
    GCBiasedMutation,
    MajorityUpdate,
    PalindromePull,
    PalindromeSandwich,
)
from discoverylab.labs.sequence.properties import encode

Codes = np.ndarray
MAX_LETTERS = 1_000_000
"""Letters simulated at once (replicates x members x length); larger runs go in chunks."""


def _sandwich(op: PalindromeSandwich, s: Codes, t: Codes, rng: np.random.Generator) -> Codes:
    full = np.concatenate([s, t, 3 - s[:, ::-1]], axis=1)  # s + t + reverse complement of s
    crop = op.crop_to if op.crop_to is not None else full.shape[1]
    start = (full.shape[1] - crop) // 2 if crop < full.shape[1] else 0
    return full[:, start : start + crop]


def _consensus(op: ConsensusMerge, s: Codes, t: Codes, rng: np.random.Generator) -> Codes:
    differ = s != t
    if op.mode == "parents":
        return np.where(differ & (rng.random(s.shape) < 0.5), t, s).astype(np.uint8)
    return np.where(differ, rng.integers(0, 4, size=s.shape, dtype=np.uint8), s).astype(np.uint8)


def _alternating(op: AlternatingMerge, s: Codes, t: Codes, rng: np.random.Generator) -> Codes:
    out = s.copy()
    out[:, 1::2] = t[:, 1::2]
    return out


def _gc_mutation(op: GCBiasedMutation, x: Codes, rng: np.random.Generator) -> Codes:
    b, n = x.shape
    m = min(op.mutations, n)
    pos = np.argsort(rng.random((b, n)), axis=1)[:, :m]
    out = x.copy()
    out[np.arange(b)[:, None], pos] = np.searchsorted(op.cumulative, rng.random((b, m)), side="right")
    return out


def _palindrome_pull(op: PalindromePull, x: Codes, rng: np.random.Generator) -> Codes:
    b, n = x.shape
    out = x.copy()
    left = np.arange(n // 2)
    right = n - 1 - left
    if len(left):
        mismatched = out[:, left] != 3 - out[:, right]
        keys = np.where(mismatched, rng.random((b, len(left))), np.inf)
        chosen = np.argsort(keys, axis=1)[:, : op.mutations]
        rows = np.repeat(np.arange(b), chosen.shape[1])
        cols = chosen.ravel()
        valid = np.isfinite(keys[rows, cols])
        rows, cols = rows[valid], cols[valid]
        i, j = left[cols], right[cols]
        to_left = rng.random(len(rows)) < 0.5
        xi, xj = out[rows, i].copy(), out[rows, j].copy()
        out[rows[to_left], i[to_left]] = 3 - xj[to_left]
        out[rows[~to_left], j[~to_left]] = 3 - xi[~to_left]
    if op.noise > 0.0:
        hit = np.flatnonzero(rng.random(b) < op.noise)
        pos = rng.integers(0, n, size=len(hit))
        out[hit, pos] = (out[hit, pos] + rng.integers(1, 4, size=len(hit))) % 4
    return out


def _majority(op: MajorityUpdate, x: Codes, rng: np.random.Generator) -> Codes:
    b, n = x.shape
    onehot = np.eye(4, dtype=np.int64)[x]  # (b, n, 4)
    if op.boundary == "periodic":
        offsets = sorted({d % n for d in range(-op.radius, op.radius + 1)})
        counts = sum((np.roll(onehot, -o, axis=1) for o in offsets), np.zeros_like(onehot))
    else:
        cum = np.concatenate([np.zeros((b, 1, 4), dtype=np.int64), onehot.cumsum(axis=1)], axis=1)
        idx = np.arange(n)
        counts = cum[:, np.minimum(idx + op.radius, n - 1) + 1] - cum[:, np.maximum(idx - op.radius, 0)]
    top = counts.max(axis=2)
    own = np.take_along_axis(counts, x[:, :, None].astype(np.int64), axis=2)[:, :, 0]
    tied_pick = np.where(counts == top[:, :, None], rng.random(counts.shape), -1.0).argmax(axis=2)
    out = np.where(own < top, tied_pick, x).astype(np.uint8)
    if op.update_prob < 1.0:
        keep = rng.random((b, n)) >= op.update_prob
        out[keep] = x[keep]
    return out


COMPOSE_TWINS: dict[type[Operator], Callable[..., Codes]] = {
    PalindromeSandwich: _sandwich, ConsensusMerge: _consensus, AlternatingMerge: _alternating}
EVOLVE_TWINS: dict[type[Operator], Callable[..., Codes]] = {
    GCBiasedMutation: _gc_mutation, PalindromePull: _palindrome_pull, MajorityUpdate: _majority}


def batch_supported(process: PopulationDynamics) -> bool:
    """Do all of the process's operators have array twins (and no fitness weighting)?"""
    return (type(process.compose) in COMPOSE_TWINS and process.fitness is None
            and (process.evolve is None or type(process.evolve) in EVOLVE_TWINS))


def generation_batch(process: PopulationDynamics, pops: Codes, rng: np.random.Generator) -> Codes:
    """One generation of R independent populations (R, P, N): ordered distinct parent pairs drawn
    uniformly, composed, then evolved (the distribution of `PopulationDynamics.generation`)."""
    r, p, n = pops.shape
    i = rng.integers(0, p, size=(r, p))
    j = (i + rng.integers(1, p, size=(r, p))) % p if p > 1 else i
    rows = np.arange(r)[:, None]
    s, t = pops[rows, i].reshape(r * p, n), pops[rows, j].reshape(r * p, n)
    child = COMPOSE_TWINS[type(process.compose)](process.compose, s, t, rng)
    if process.evolve is not None:
        child = EVOLVE_TWINS[type(process.evolve)](process.evolve, child, rng)
    return child.reshape(r, p, -1)


def expected_means_batch(process: PopulationDynamics, pop: Sequence[str], generations: int,
                         props: Mapping[str, Property], replicates: int, rng: np.random.Generator
                         ) -> dict[str, float]:
    """The expected population mean of each measurable after `generations` (mean over replicates),
    simulated in chunks of at most `MAX_LETTERS` letters so memory stays bounded."""
    start = encode(list(pop))
    chunk = max(1, MAX_LETTERS // start.size)
    totals = dict.fromkeys(props, 0.0)
    for first in range(0, replicates, chunk):
        pops = np.repeat(start[None], min(chunk, replicates - first), axis=0)
        for _ in range(generations):
            pops = generation_batch(process, pops, rng)
        flat = pops.reshape(-1, pops.shape[2])
        for name, p in props.items():
            totals[name] += float(p.batch(flat).sum())
    return {name: total / (replicates * len(start)) for name, total in totals.items()}
