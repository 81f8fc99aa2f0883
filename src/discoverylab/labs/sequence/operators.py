"""The sequence lab's evolution and composition operators (spec §2.3), on strings.

Every operator takes an explicit ``rng`` (``numpy.random.Generator``) and is deterministic for a
fixed generator state. Directed evolution (operator 4) lives in ``evolution.py``.

    >>> import numpy as np
    >>> MajorityUpdate()("AACAA", rng=np.random.default_rng(0))
    'AAAAA'
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from discoverylab.labs.core.operators import Operator
from discoverylab.labs.sequence.properties import decode, encode, reverse_complement


def _one(seq: str) -> np.ndarray:
    return encode(seq)[0].copy()


def _str(codes: np.ndarray) -> str:
    return decode(codes[None, :])[0]


class MajorityUpdate(Operator):
    """Each base becomes the majority of its window (itself included); isolated bases are smoothed away.

    Synchronous. A base that is already among the most frequent of its window stays (R8); otherwise a
    strict majority wins and ties are broken uniformly with ``rng``. With ``boundary="periodic"`` an
    alternating sequence is a 2-cycle. ``update_prob`` < 1 lets each position update only with that
    probability (asynchronous noise).
    """

    name = "majority_update"
    arity = 1
    stochastic = True  # only through ties and update_prob
    closed = True

    def __init__(self, radius: int = 1, boundary: Literal["truncate", "periodic"] = "truncate",
                 update_prob: float = 1.0) -> None:
        if radius < 0 or not 0.0 <= update_prob <= 1.0 or boundary not in ("truncate", "periodic"):
            raise ValueError("majority update needs radius >= 0, 0 <= update_prob <= 1, boundary truncate|periodic")
        self.radius = radius
        self.boundary = boundary
        self.update_prob = update_prob

    def _counts(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        onehot = np.eye(4, dtype=np.int64)[x]
        if self.boundary == "periodic":
            offsets = sorted({d % n for d in range(-self.radius, self.radius + 1)})
            return sum((np.roll(onehot, -o, axis=0) for o in offsets), np.zeros((n, 4), dtype=np.int64))
        cum = np.vstack([np.zeros((1, 4), dtype=np.int64), onehot.cumsum(axis=0)])
        idx = np.arange(n)
        lo = np.maximum(idx - self.radius, 0)
        hi = np.minimum(idx + self.radius, n - 1)
        return cum[hi + 1] - cum[lo]

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        (seq,) = objs
        x = _one(seq)
        counts = self._counts(x)
        top = counts.max(axis=1)
        out = x.copy()
        for i in np.flatnonzero(counts[np.arange(x.size), x] < top):
            tied = np.flatnonzero(counts[i] == top[i])
            out[i] = tied[0] if tied.size == 1 else tied[int(rng.integers(tied.size))]
        if self.update_prob < 1.0:
            keep = rng.random(x.size) >= self.update_prob
            out[keep] = x[keep]
        return _str(out)


class GCBiasedMutation(Operator):
    """Re-draw ``m`` distinct random positions from a GC-biased base distribution (stationary gc = ``bias``).

    E[gc_{t+1} | s_t] = gc_t + (m/N)(b - gc_t): the GC content relaxes geometrically to b (R9).
    """

    name = "gc_biased_mutation"
    arity = 1
    stochastic = True
    closed = True

    def __init__(self, mutations: int = 1, bias: float = 0.8) -> None:
        if mutations < 1 or not 0.0 <= bias <= 1.0:
            raise ValueError("GC-biased mutation needs mutations >= 1 and 0 <= bias <= 1")
        self.mutations = mutations
        self.bias = bias
        self.probs = np.array([(1 - bias) / 2, bias / 2, bias / 2, (1 - bias) / 2])  # A, C, G, T
        self.cumulative = np.cumsum(self.probs)[:-1]

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        (seq,) = objs
        x = _one(seq)
        pos = rng.permutation(x.size)[: self.mutations]
        x[pos] = np.searchsorted(self.cumulative, rng.random(pos.size), side="right")
        return _str(x)


class PalindromePull(Operator):
    """Repair ``m`` random mismatched mirror pairs, raising palindromicity by exactly 2/N per pair.

    A palindrome is a fixed point. Option ``noise``: afterwards, with that probability, one random
    substitution.
    """

    name = "palindrome_pull"
    arity = 1
    stochastic = True
    closed = True

    def __init__(self, mutations: int = 1, noise: float = 0.0) -> None:
        if mutations < 1 or not 0.0 <= noise <= 1.0:
            raise ValueError("palindrome pull needs mutations >= 1 and 0 <= noise <= 1")
        self.mutations = mutations
        self.noise = noise

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        (seq,) = objs
        x = _one(seq)
        n = x.size
        left = np.arange(n // 2)
        right = n - 1 - left
        mismatched = left[x[left] != 3 - x[right]]
        if mismatched.size:
            chosen = rng.choice(mismatched, size=min(self.mutations, mismatched.size), replace=False)
            for i in chosen:
                j = n - 1 - i
                if rng.random() < 0.5:
                    x[i] = 3 - x[j]
                else:
                    x[j] = 3 - x[i]
        if self.noise > 0.0 and rng.random() < self.noise:
            pos = int(rng.integers(n))
            x[pos] = (x[pos] + rng.integers(1, 4)) % 4
        return _str(x)


def _merge_tail(s: str, t: str, body: str) -> str:
    """Append the longer parent's tail beyond the common prefix (unequal lengths, R11)."""
    common = min(len(s), len(t))
    return body + (s[common:] if len(s) > len(t) else t[common:])


class AlternatingMerge(Operator):
    """c_i = s_i at even i, t_i at odd i (closed); ``mode="interleave"`` gives s_0 t_0 s_1 t_1 ... (2N)."""

    name = "alternating_merge"
    arity = 2
    stochastic = False

    def __init__(self, mode: Literal["parity", "interleave"] = "parity") -> None:
        if mode not in ("parity", "interleave"):
            raise ValueError("alternating merge mode is 'parity' or 'interleave'")
        self.mode = mode
        self.closed = mode == "parity"

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        s, t = objs
        common = min(len(s), len(t))
        if self.mode == "parity":
            body = "".join(s[i] if i % 2 == 0 else t[i] for i in range(common))
        else:
            body = "".join(s[i] + t[i] for i in range(common))
        return _merge_tail(s, t, body)


class ConsensusMerge(Operator):
    """Keep agreeing bases; at disagreements a fair coin picks a parent (``mode="any"``: any of 4 bases)."""

    name = "consensus_merge"
    arity = 2
    stochastic = True
    closed = True

    def __init__(self, mode: Literal["parents", "any"] = "parents") -> None:
        if mode not in ("parents", "any"):
            raise ValueError("consensus merge mode is 'parents' or 'any'")
        self.mode = mode

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        s, t = objs
        common = min(len(s), len(t))
        if common == 0:
            return _merge_tail(s, t, "")
        a, b = _one(s[:common]), _one(t[:common])
        differ = a != b
        if self.mode == "parents":
            pick_b = rng.random(common) < 0.5
            out = np.where(differ & pick_b, b, a)
        else:
            out = np.where(differ, rng.integers(0, 4, size=common, dtype=np.uint8), a)
        return _merge_tail(s, t, _str(out.astype(np.uint8)))


class PalindromeSandwich(Operator):
    """c = s + t + rc(s): pal(c) = (2|s| + |t| pal(t)) / (2|s| + |t|); ``crop_to`` keeps the centred window."""

    name = "palindrome_sandwich"
    arity = 2
    stochastic = False

    def __init__(self, crop_to: int | None = None) -> None:
        if crop_to is not None and crop_to < 1:
            raise ValueError("crop_to must be a positive length or None")
        self.crop_to = crop_to
        self.closed = crop_to is not None

    def __call__(self, *objs: str, rng: np.random.Generator) -> str:
        s, t = objs
        c = s + t + reverse_complement(s)
        if self.crop_to is None or self.crop_to >= len(c):
            return c
        start = (len(c) - self.crop_to) // 2
        return c[start : start + self.crop_to]


OPERATOR_CLASSES: dict[str, type[Operator]] = {
    cls.name: cls
    for cls in (MajorityUpdate, GCBiasedMutation, PalindromePull, AlternatingMerge, ConsensusMerge, PalindromeSandwich)
}
"""Operator classes by name; ``directed_evolution`` is added by ``evolution.py``."""
