"""Sequence properties as framework ``Property`` objects, registered by spec ``kind`` (spec §1.6, §2.2).

A LabSpec entry such as ``hamming_distance: {kind: hamming, reference_seed: 17}`` is built by the
factory registered under ``hamming``. Each property knows its exact feasible range, its quantum,
its hidden description and, where spec §2.5 gives one, its constructive sampler.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.spaces import ObjectSpace
from discoverylab.labs.sequence import samplers
from discoverylab.labs.sequence.properties import (
    DEFAULT_PARAMS,
    PropertyParams,
    compute_codes,
    encode,
    feasible_range,
    masked_params,
    quantum,
)
from discoverylab.labs.sequence.sampling import sample_codes

DESCRIPTIONS: dict[str, str] = {
    "gc_content": "fraction of positions that are G or C",
    "weighted_count": "mean of hidden per-base weights {weights}",
    "alternation_k": "fraction of changes between consecutive bases of the subsequence s[0], s[{k}], s[{k2}], ...",
    "palindrome_score": "fraction of positions i where s[i] equals the complement of s[N-1-i] "
                        "(agreement with the reverse complement)",
    "entropy_score": "Shannon entropy of the overlapping {k}-mers divided by {norm}",
    "hamming_distance": "fraction of positions that differ from the hidden reference {reference}",
    "interaction_energy": "nearest-neighbour pair energy, rescaled so the most stable sequence scores 1",
    "motif_score": "fraction of length-{m} windows equal to the motif {motif}",
}


class SequenceProperty(Property):
    """One of the sequence lab's properties with its hidden parameters bound."""

    def __init__(self, name: str, key: str, params: PropertyParams = DEFAULT_PARAMS) -> None:
        self.name = name
        self.key = key
        self.params = params
        self.description = self._describe()

    def _describe(self) -> str:
        p = self.params
        weights = dict(zip("ACGT", p.weights, strict=True))
        norm = "the achievable maximum" if p.entropy_normalize == "achievable" else f"log2(4^{p.entropy_k})"
        return DESCRIPTIONS[self.key].format(
            weights=weights, k=p.alternation_k if self.key == "alternation_k" else p.entropy_k,
            k2=2 * p.alternation_k, norm=norm, reference=p.reference or f"(drawn from seed {p.reference_seed})",
            m=len(p.motif), motif=p.motif)

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return compute_codes(self.key, batch, self.params)

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        return feasible_range(self.key, _length(space), self.params)

    def quantum(self, space: ObjectSpace) -> float | None:
        return quantum(self.key, _length(space), self.params)

    def sample_exact(self, space: ObjectSpace, target: float, eps: float, n: int,
                     rng: np.random.Generator) -> np.ndarray | None:
        length, p = _length(space), self.params
        if self.key == "gc_content":
            return samplers.sample_gc(length, target, eps, n, rng)
        if self.key == "hamming_distance":
            return samplers.sample_hamming(encode(p.reference_for(length))[0], target, eps, n, rng)
        if self.key == "palindrome_score":
            return samplers.sample_palindromicity(length, target, eps, n, rng)
        if self.key == "alternation_k":
            return samplers.sample_alternation(length, p.alternation_k, target, eps, n, rng)
        if self.key == "weighted_count":
            return samplers.sample_weighted_count(length, p.weights, target, eps, n, rng)
        return None


EXHAUSTIVE_WIDTH = 9
"""Up to this many read letters, a SAMPLE row its family's sampler missed is drawn from all 4^width
subsequences within epsilon (262,144 at most)."""


class PositionsProperty(Property):
    """A sequence property read only at hidden positions: f(s) = g(s[p0] s[p1] ...), p sorted.

    Per-seed hidden-property problems draw one for every base family, so the property is never one of
    the named (stock) properties: which letters count is part of what the agent must discover."""

    def __init__(self, base: SequenceProperty, positions: tuple[int, ...]) -> None:
        self.base = base
        self.name, self.key, self.params = base.name, base.key, base.params
        self.positions = positions
        shown = ", ".join(map(str, positions))
        self.description = f"on the subsequence of the letters at positions {shown} (0-based): {base.description}"

    def sub_params(self, length: int) -> PropertyParams:
        """The base property's parameters for the subsequence (its Hamming reference restricted)."""
        return masked_params(self.params, self.positions, length) if self.key == "hamming_distance" else self.params

    def _check(self, length: int) -> None:
        if self.positions[-1] >= length:
            raise InvalidSpec(f"{self.name!r} reads position {self.positions[-1]}, sequences have length {length}")

    def batch(self, batch: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(batch)
        self._check(x.shape[1])
        return compute_codes(self.key, x[:, list(self.positions)], self.sub_params(x.shape[1]))

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        length = _length(space)
        return feasible_range(self.key, len(self.positions), self.sub_params(length))

    def quantum(self, space: ObjectSpace) -> float | None:
        return quantum(self.key, len(self.positions), self.sub_params(_length(space)))

    def sample_exact(self, space: ObjectSpace, target: float, eps: float, n: int,
                     rng: np.random.Generator) -> np.ndarray | None:
        """The base property's sampler on the subsequence; the other letters uniformly random."""
        length = _length(space)
        self._check(length)
        params, width = self.sub_params(length), len(self.positions)
        sub = sample_codes(self.key, params, width, target, eps, n, rng)
        miss = np.flatnonzero(np.abs(compute_codes(self.key, sub, params) - target) > eps)
        if len(miss) and width <= EXHAUSTIVE_WIDTH:  # the path samplers can stop a step short on a few letters
            every = np.indices((4,) * width).reshape(width, -1).T.astype(np.uint8)
            err = np.abs(compute_codes(self.key, every, params) - target)
            pool = np.flatnonzero(err <= eps) if (err <= eps).any() else np.flatnonzero(err == err.min())
            sub[miss] = every[rng.choice(pool, size=len(miss))]
        out = rng.integers(0, 4, size=(n, length), dtype=np.uint8)
        out[:, list(self.positions)] = sub
        return out


def _positions(name: str, raw: Any) -> tuple[int, ...]:
    try:
        positions = tuple(sorted({int(p) for p in raw}))
    except (TypeError, ValueError) as exc:
        raise InvalidSpec(f"{name!r}: positions must be a list of 0-based integers") from exc
    if not positions or positions[0] < 0:
        raise InvalidSpec(f"{name!r}: positions must be a non-empty list of 0-based integers")
    return positions


def _length(space: ObjectSpace) -> int:
    length = getattr(space, "length", None)
    if not isinstance(length, int):
        raise InvalidSpec("sequence properties need a fixed-length string space")
    return length


PropertyFactory = Any  # Callable[[str, Mapping[str, Any], PropertyParams], Property]
PROPERTY_KINDS: Registry[PropertyFactory] = Registry("sequence property")
"""``kind`` -> factory(name, fields, base_params) for the sequence lab's base properties."""


def _weights(fields: Mapping[str, Any]) -> tuple[float, float, float, float]:
    raw = fields.get("weights", DEFAULT_PARAMS.weights)
    values = [float(raw[b]) for b in "ACGT"] if isinstance(raw, Mapping) else [float(v) for v in raw]
    if len(values) != 4 or min(values) < 0 or max(values) > 1:
        raise InvalidSpec("weighted_count weights need 4 values in [0, 1] (A, C, G, T)")
    return values[0], values[1], values[2], values[3]


def _simple(key: str, **param_fields: str) -> PropertyFactory:
    """A factory that copies the listed spec fields onto ``PropertyParams`` attributes."""

    def factory(name: str, fields: Mapping[str, Any], base: PropertyParams) -> Property:
        changes: dict[str, Any] = {}
        for field_name, attr in param_fields.items():
            if field_name in fields:
                changes[attr] = fields[field_name]
        if key == "weighted_count":
            changes["weights"] = _weights(fields)
        if key == "interaction_energy" and "energy" in fields:
            table = tuple(tuple(float(v) for v in row) for row in fields["energy"])
            if len(table) != 4 or any(len(row) != 4 for row in table):
                raise InvalidSpec("interaction_energy 'energy' must be a 4x4 table (rows/cols A, C, G, T)")
            changes["energy"] = table
        try:
            params = replace(base, **changes)
        except TypeError as exc:
            raise InvalidSpec(f"bad fields for {name!r}: {exc}") from exc
        if params.alternation_k < 1 or params.entropy_k < 1:
            raise InvalidSpec(f"{name!r}: k must be >= 1")
        prop = SequenceProperty(name, key, params)
        if "positions" in fields:
            return PositionsProperty(prop, _positions(name, fields["positions"]))
        return prop

    return factory


PROPERTY_KINDS.register("gc", _simple("gc_content"))
PROPERTY_KINDS.register("weighted_count", _simple("weighted_count"))
PROPERTY_KINDS.register("alternation", _simple("alternation_k", k="alternation_k"))
PROPERTY_KINDS.register("palindromicity", _simple("palindrome_score"))
PROPERTY_KINDS.register("kmer_entropy", _simple("entropy_score", k="entropy_k", normalize="entropy_normalize"))
PROPERTY_KINDS.register("hamming", _simple("hamming_distance", reference="reference", reference_seed="reference_seed"))
PROPERTY_KINDS.register("interaction_energy", _simple("interaction_energy"))
PROPERTY_KINDS.register("motif", _simple("motif_score", motif="motif"))

KIND_OF_NAME: dict[str, str] = {
    "gc_content": "gc", "weighted_count": "weighted_count", "alternation_k": "alternation",
    "palindrome_score": "palindromicity", "entropy_score": "kmer_entropy", "hamming_distance": "hamming",
    "interaction_energy": "interaction_energy", "motif_score": "motif",
}
"""The spec kind of each canonical property name (to build default property tables)."""
