"""The sequence lab's hidden properties (spec §2.2), as exact, vectorised numpy maths.

Sequences are strings over ``ACGT``; internally a batch is a 2-D ``uint8`` array of codes
(A=0, C=1, G=2, T=3, so that ``comp(x) = 3 - x``). Every batch function maps an ``(B, N)`` array to
``B`` floats in [0, 1]; ``compute`` and ``compute_all`` are the string-level entry points.

Hidden parameters (weights, masks, reference, pair energies, motif) live in ``PropertyParams``;
the defaults are the spec's. The exact feasible ranges and value quanta used by the samplers and
``verify`` are here too, next to the definitions they depend on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import numpy as np

ALPHABET = "ACGT"
PROPERTY_NAMES: tuple[str, ...] = (
    "gc_content",
    "weighted_count",
    "alternation_k",
    "palindrome_score",
    "entropy_score",
    "hamming_distance",
    "interaction_energy",
)
"""The seven properties of the paper's Table 1, by agent-facing key."""
EXTRA_PROPERTY_NAMES: tuple[str, ...] = ("motif_score",)
"""Properties of the reference demo that the paper does not list (optional in labs)."""

_LUT = np.full(256, 255, dtype=np.uint8)
for _code, _char in enumerate(ALPHABET):
    _LUT[ord(_char)] = _code
_CHARS = np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)

# Default nearest-neighbour pair energies J[a, b] for the transition a -> b (spec §2.2, R6).
_J_DEFAULT = np.zeros((4, 4))
_J_DEFAULT[0, 3], _J_DEFAULT[3, 0] = -1.5, -1.6  # A->T, T->A
_J_DEFAULT[2, 1] = _J_DEFAULT[1, 2] = -1.0  # G->C, C->G
for _a, _b in ((0, 2), (2, 0), (1, 3), (3, 1)):  # AG, GA, CT, TC
    _J_DEFAULT[_a, _b] = 0.5
DEFAULT_ENERGY: tuple[tuple[float, ...], ...] = tuple(tuple(float(v) for v in row) for row in _J_DEFAULT)
DEFAULT_WEIGHTS: tuple[float, float, float, float] = (1.0, 0.0, 0.2, 0.5)  # A, C, G, T (R1)


class InvalidSequenceError(ValueError):
    """A sequence is empty, has letters outside ACGT, or a batch mixes lengths."""


@dataclass(frozen=True, slots=True)
class PropertyParams:
    """Hidden parameters of the sequence properties; the defaults are the spec's.

    ``reference`` fixes the Hamming reference explicitly; otherwise it is drawn uniformly from
    ``reference_seed`` for each length (so one params object serves every length).
    """

    weights: tuple[float, float, float, float] = DEFAULT_WEIGHTS
    alternation_k: int = 1
    entropy_k: int = 2
    entropy_normalize: Literal["log4k", "achievable"] = "log4k"
    reference: str | None = None
    reference_seed: int = 0
    energy: tuple[tuple[float, ...], ...] = field(default=DEFAULT_ENERGY)
    motif: str = "GTA"

    def reference_for(self, length: int) -> str:
        """The hidden Hamming reference of the given length."""
        if self.reference is not None:
            if len(self.reference) != length:
                raise InvalidSequenceError(
                    f"the Hamming reference has length {len(self.reference)}, sequences have length {length}; "
                    "pass sequences of the reference's length or set reference_seed instead"
                )
            return self.reference
        return reference_from_seed(self.reference_seed, length)


DEFAULT_PARAMS = PropertyParams()


@lru_cache(maxsize=256)
def reference_from_seed(seed: int, length: int) -> str:
    """A uniformly random sequence of ``length`` drawn from its own seed (the hidden reference)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, length, 0x4A11]))
    return decode(rng.integers(0, 4, size=(1, length), dtype=np.uint8))[0]


def encode(seqs: str | Sequence[str] | np.ndarray) -> np.ndarray:
    """Turn one sequence or a list of equal-length sequences into an ``(B, N)`` uint8 code array."""
    if isinstance(seqs, np.ndarray):
        arr = np.atleast_2d(seqs)
        if arr.size and (arr.max() > 3 or arr.min() < 0):
            raise InvalidSequenceError("code arrays must hold values 0..3 (A, C, G, T)")
        return arr.astype(np.uint8, copy=False)
    if isinstance(seqs, str):
        seqs = [seqs]
    if len(seqs) == 0:
        return np.zeros((0, 0), dtype=np.uint8)
    length = len(seqs[0])
    if length == 0 or any(len(s) != length for s in seqs):
        raise InvalidSequenceError(
            f"sequences must be non-empty and share one length; got lengths {sorted({len(s) for s in seqs})}"
        )
    try:
        raw = np.frombuffer("".join(seqs).encode("ascii"), dtype=np.uint8)
    except UnicodeEncodeError as exc:
        raise InvalidSequenceError("sequences may only contain the letters A, C, G, T") from exc
    codes = _LUT[raw].reshape(len(seqs), length)
    if (codes == 255).any():
        bad = seqs[int(np.flatnonzero((codes == 255).any(axis=1))[0])]
        raise InvalidSequenceError(f"sequence {bad!r} has letters outside A, C, G, T (use uppercase)")
    return codes


def decode(codes: np.ndarray) -> list[str]:
    """Inverse of ``encode``: an ``(B, N)`` code array back to strings."""
    letters = _CHARS[np.atleast_2d(codes)]
    return [row.tobytes().decode("ascii") for row in letters]


def reverse_complement(seq: str) -> str:
    """rc(s)_i = comp(s_{N-1-i})."""
    return seq[::-1].translate(str.maketrans("ACGT", "TGCA"))


def _clean(values: np.ndarray) -> np.ndarray:
    """Clip float noise into [0, 1] and turn -0.0 into 0.0 (the property contract)."""
    return np.clip(values.astype(np.float64, copy=False), 0.0, 1.0) + 0.0


# ---------------------------------------------------------------------------- batch definitions


def gc_content(x: np.ndarray) -> np.ndarray:
    """Fraction of G or C."""
    return _clean(((x == 1) | (x == 2)).mean(axis=1))


def weighted_count(x: np.ndarray, weights: Sequence[float] = DEFAULT_WEIGHTS) -> np.ndarray:
    """Mean hidden per-base weight."""
    return _clean(np.asarray(weights, dtype=np.float64)[x].mean(axis=1))


def alternation(x: np.ndarray, k: int = 1) -> np.ndarray:
    """Fraction of changes between consecutive bases of the k-masked subsequence s_0, s_k, s_2k, ..."""
    u = x[:, ::k]
    if u.shape[1] <= 1:
        return np.zeros(x.shape[0])
    return _clean((u[:, 1:] != u[:, :-1]).mean(axis=1))


def palindromicity(x: np.ndarray) -> np.ndarray:
    """Fraction of positions where s equals its reverse complement."""
    return _clean((x == 3 - x[:, ::-1]).mean(axis=1))


@lru_cache(maxsize=64)
def _xlogx(n: int) -> np.ndarray:
    counts = np.arange(n + 1, dtype=np.float64)
    out = np.zeros(n + 1)
    out[1:] = counts[1:] * np.log2(counts[1:])
    return out


def kmer_entropy(x: np.ndarray, k: int = 2, normalize: Literal["log4k", "achievable"] = "log4k") -> np.ndarray:
    """Shannon entropy of the overlapping k-mers, divided by log2(4^k) (or the achievable maximum)."""
    batch, length = x.shape
    windows = length - k + 1
    if windows <= 1:
        return np.zeros(batch)
    codes = np.zeros((batch, windows), dtype=np.int64)
    for j in range(k):
        codes = codes * 4 + x[:, j : j + windows]
    bins = 4**k
    counts = np.bincount((codes + np.arange(batch)[:, None] * bins).ravel(), minlength=batch * bins)
    counts = counts.reshape(batch, bins)
    entropy = math.log2(windows) - _xlogx(windows)[counts].sum(axis=1) / windows
    if normalize == "achievable":
        top = max_kmer_entropy(length, k)  # bits, like `entropy` (it was divided by 2k once more)
        return _clean(entropy / top) if top > 0 else np.zeros(batch)
    return _clean(entropy / (2 * k))


def hamming_distance(x: np.ndarray, reference: str | np.ndarray) -> np.ndarray:
    """Fraction of positions that differ from the hidden reference."""
    ref = encode(reference)[0] if isinstance(reference, str) else np.asarray(reference)
    if ref.shape[-1] != x.shape[1]:
        raise InvalidSequenceError(f"reference length {ref.shape[-1]} != sequence length {x.shape[1]}")
    return _clean((x != ref).mean(axis=1))


@lru_cache(maxsize=256)
def energy_extremes(length: int, energy: tuple[tuple[float, ...], ...] = DEFAULT_ENERGY) -> tuple[float, float]:
    """Exact (E_min, E_max) of sum_i J(s_i, s_{i+1}) over all sequences of ``length`` (4-state DP)."""
    table = np.asarray(energy, dtype=np.float64)
    lo = np.zeros(4)
    hi = np.zeros(4)
    for _ in range(max(length - 1, 0)):
        lo = (lo[:, None] + table).min(axis=0)
        hi = (hi[:, None] + table).max(axis=0)
    return float(lo.min()), float(hi.max())


def interaction_energy(
    x: np.ndarray, energy: tuple[tuple[float, ...], ...] = DEFAULT_ENERGY
) -> np.ndarray:
    """Nearest-neighbour energy rescaled so the most stable sequence scores 1 and the least 0."""
    e_min, e_max = energy_extremes(x.shape[1], energy)
    if e_max <= e_min:
        return np.zeros(x.shape[0])
    table = np.asarray(energy, dtype=np.float64)
    total = table[x[:, :-1], x[:, 1:]].sum(axis=1)
    return _clean((e_max - total) / (e_max - e_min))


def motif_occupancy(x: np.ndarray, motif: str = "GTA") -> np.ndarray:
    """Fraction of the N - |m| + 1 windows equal to the hidden motif."""
    m = encode(motif)[0]
    windows = x.shape[1] - len(m) + 1
    if windows <= 0:
        return np.zeros(x.shape[0])
    hit = np.ones((x.shape[0], windows), dtype=bool)
    for j, code in enumerate(m):
        hit &= x[:, j : j + windows] == code
    return _clean(hit.mean(axis=1))


# ---------------------------------------------------------------------------- exact ranges


def max_kmer_entropy(length: int, k: int) -> float:
    """Largest achievable k-mer entropy in bits: counts as balanced as possible over the 4^k k-mers.

    Balanced counts are achievable by walking an Eulerian cycle of the de Bruijn graph repeatedly.
    """
    windows = length - k + 1
    if windows <= 1:
        return 0.0
    bins = 4**k
    q, r = divmod(windows, bins)
    total = r * _x_log2_x(q + 1) + (bins - r) * _x_log2_x(q)
    return math.log2(windows) - total / windows


def _x_log2_x(c: int) -> float:
    return c * math.log2(c) if c > 0 else 0.0


@lru_cache(maxsize=64)
def max_motif_count(length: int, motif: str) -> int:
    """Most (overlapping) occurrences of ``motif`` in a sequence of ``length``: DP over a KMP automaton."""
    m = len(motif)
    if length < m:
        return 0
    # transitions[state][base] for states 0..m (state = length of the matched prefix).
    transitions = []
    for state in range(m + 1):
        row = []
        for base in ALPHABET:
            text = motif[:state] + base if state < m else motif[1:] + base
            nxt = min(len(text), m)
            while nxt > 0 and text[len(text) - nxt :] != motif[:nxt]:
                nxt -= 1
            row.append(nxt)
        transitions.append(row)
    best = [-1] * (m + 1)
    best[0] = 0
    for _ in range(length):
        new = [-1] * (m + 1)
        for state, score in enumerate(best):
            if score < 0:
                continue
            for nxt in transitions[state]:
                value = score + (1 if nxt == m else 0)
                new[nxt] = max(new[nxt], value)
        best = new
    return max(best)


# ---------------------------------------------------------------------------- string-level API

_NAME_PATTERN = re.compile(r"^(alternation|entropy)_(\d+)$")


def _resolve(name: str, params: PropertyParams) -> tuple[str, PropertyParams]:
    """Accept ``alternation_2`` / ``entropy_3`` as shorthands that set k."""
    match = _NAME_PATTERN.match(name)
    if match is None:
        return name, params
    kind, k = match.group(1), int(match.group(2))
    if kind == "alternation":
        return "alternation_k", _replace(params, alternation_k=k)
    return "entropy_score", _replace(params, entropy_k=k)


def _replace(params: PropertyParams, **changes: object) -> PropertyParams:
    from dataclasses import replace

    return replace(params, **changes)  # type: ignore[arg-type]


def compute_codes(name: str, x: np.ndarray, params: PropertyParams = DEFAULT_PARAMS) -> np.ndarray:
    """One property on an encoded batch."""
    name, params = _resolve(name, params)
    if name == "gc_content":
        return gc_content(x)
    if name == "weighted_count":
        return weighted_count(x, params.weights)
    if name == "alternation_k":
        return alternation(x, params.alternation_k)
    if name == "palindrome_score":
        return palindromicity(x)
    if name == "entropy_score":
        return kmer_entropy(x, params.entropy_k, params.entropy_normalize)
    if name == "hamming_distance":
        return hamming_distance(x, params.reference_for(x.shape[1]))
    if name == "interaction_energy":
        return interaction_energy(x, params.energy)
    if name == "motif_score":
        return motif_occupancy(x, params.motif)
    known = ", ".join(PROPERTY_NAMES + EXTRA_PROPERTY_NAMES)
    raise KeyError(f"unknown sequence property {name!r}; known: {known} (and alternation_<k>, entropy_<k>)")


def masked_params(params: PropertyParams, positions: Sequence[int], length: int) -> PropertyParams:
    """The parameters of a property read at `positions` only: the Hamming reference shrinks with it."""
    reference = params.reference_for(length)
    return _replace(params, reference="".join(reference[i] for i in positions))


def compute(name: str, seq: str, params: PropertyParams = DEFAULT_PARAMS) -> float:
    """One property of one sequence, unrounded."""
    return float(compute_codes(name, encode(seq), params)[0])


def compute_all(
    seqs: Sequence[str] | np.ndarray,
    names: Iterable[str] | None = None,
    params: PropertyParams = DEFAULT_PARAMS,
) -> dict[str, np.ndarray]:
    """Several properties (default: the seven of ``PROPERTY_NAMES``) of a batch of equal-length sequences."""
    x = encode(seqs)
    return {name: compute_codes(name, x, params) for name in (PROPERTY_NAMES if names is None else names)}


def feasible_range(name: str, length: int, params: PropertyParams = DEFAULT_PARAMS) -> tuple[float, float]:
    """Exact (min, max) of a property over all sequences of ``length``."""
    name, params = _resolve(name, params)
    if name in ("gc_content", "hamming_distance"):
        return 0.0, 1.0
    if name == "weighted_count":
        return float(min(params.weights)), float(max(params.weights))
    if name == "alternation_k":
        return (0.0, 1.0) if math.ceil(length / params.alternation_k) > 1 else (0.0, 0.0)
    if name == "palindrome_score":
        return 0.0, (length - length % 2) / length
    if name == "entropy_score":
        top = max_kmer_entropy(length, params.entropy_k)
        if params.entropy_normalize == "achievable":
            return 0.0, 1.0 if top > 0 else 0.0
        return 0.0, top / (2 * params.entropy_k)
    if name == "interaction_energy":
        e_min, e_max = energy_extremes(length, params.energy)
        return (0.0, 1.0) if e_max > e_min else (0.0, 0.0)
    if name == "motif_score":
        windows = length - len(params.motif) + 1
        return (0.0, max_motif_count(length, params.motif) / windows) if windows > 0 else (0.0, 0.0)
    raise KeyError(f"unknown sequence property {name!r}")


def quantum(name: str, length: int, params: PropertyParams = DEFAULT_PARAMS) -> float | None:
    """Spacing of the achievable values when they form a regular grid from 0, else None."""
    name, params = _resolve(name, params)
    if name in ("gc_content", "hamming_distance"):
        return 1.0 / length
    if name == "palindrome_score":
        return 2.0 / length
    if name == "alternation_k":
        m = math.ceil(length / params.alternation_k)
        return 1.0 / (m - 1) if m > 1 else None
    if name == "motif_score":
        windows = length - len(params.motif) + 1
        return 1.0 / windows if windows > 0 else None
    return None
