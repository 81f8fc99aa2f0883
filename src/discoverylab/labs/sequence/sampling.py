"""SAMPLE requests of Protocol A: which sampler serves a hidden property, and which lengths it can serve.

Every named property has a sampler that meets its tolerance up to 1,000 letters (measured hit rate
>= 99 % over many targets at N = 200, 500 and 1,000: `tests/labs/test_sequence_samplers_long.py`):
exact constructions for GC content, Hamming distance, palindromicity, alternation and weighted
count (`samplers`), bisection along a bracketing path for k-mer entropy and interaction energy
(`samplers_path`). Other value functions (the motif score, the composed problems that seeds draw
when no `hidden` is named) fall back to a greedy targeted search, which misses targets on long
sequences, so Protocol A refuses them above `MAX_SEARCH_LENGTH` letters.
"""

from __future__ import annotations

import numpy as np

from discoverylab.labs.sequence import samplers, samplers_path
from discoverylab.labs.sequence.heldout import targeted_codes, value_function
from discoverylab.labs.sequence.properties import PropertyParams, encode

MAX_SEARCH_LENGTH = 200
"""Longest sequences served by the greedy targeted search (properties without a long-range sampler)."""
LONG_SAMPLERS = frozenset({"gc_content", "palindrome_score", "alternation", "alternation_k", "hamming_distance",
                           "weighted_count", "entropy_score", "entropy", "interaction_energy"})
"""Hidden properties (base names; `alternation_<k>` and `entropy_<k>` accepted) whose sampler meets its
tolerance at every length up to 1,000."""


def long_sampler_error(length: int, hidden: str | None) -> str | None:
    """Why `hidden` cannot be sampled at `length` (None when it can)."""
    if length <= MAX_SEARCH_LENGTH:
        return None
    base = (hidden or "").rstrip("0123456789").rstrip("_")
    if base in LONG_SAMPLERS:
        return None
    return (f"length {length} > {MAX_SEARCH_LENGTH} needs `hidden` set to a property whose sampler meets its "
            f"tolerance on long sequences: one of {sorted(LONG_SAMPLERS)} (alternation_<k>, entropy_<k> accepted); "
            "drawn (composed) problems and the motif score are sampled by a search that misses long targets")


def _resolve(name: str, params: PropertyParams) -> tuple[str, PropertyParams]:
    """`alternation_2` / `entropy_3` -> the base name with k set on the params."""
    from dataclasses import replace

    for base, field in (("alternation", "alternation_k"), ("entropy", "entropy_k")):
        if name.startswith(base + "_") and name.rsplit("_", 1)[1].isdigit():
            return f"{base}_k" if base == "alternation" else "entropy_score", replace(
                params, **{field: int(name.rsplit("_", 1)[1])})  # type: ignore[arg-type]
    return name, params


def sample_codes(name: str, params: PropertyParams, length: int, target: float, eps: float, n: int,
                 rng: np.random.Generator) -> np.ndarray:
    """SAMPLE: (n, N) codes with the property within eps of target, by the property's sampler."""
    base, params = _resolve(name, params)
    out: np.ndarray
    if base == "gc_content":
        out = samplers.sample_gc(length, target, eps, n, rng)
    elif base == "hamming_distance":
        out = samplers.sample_hamming(encode(params.reference_for(length))[0], target, eps, n, rng)
    elif base == "palindrome_score":
        out = samplers.sample_palindromicity(length, target, eps, n, rng)
    elif base == "alternation_k":
        out = samplers.sample_alternation(length, params.alternation_k, target, eps, n, rng)
    elif base == "weighted_count":
        out = samplers.sample_weighted_count(length, params.weights, target, eps, n, rng)
    elif base == "entropy_score":
        out = samplers_path.sample_entropy(length, params, target, eps, n, rng)
    elif base == "interaction_energy":
        out = samplers_path.sample_interaction(length, params, target, eps, n, rng)
    else:
        out = targeted_codes(value_function(name, params), length, target, n, rng, eps=eps * 0.5, iters=2000)
    return np.asarray(out, dtype=np.uint8)
