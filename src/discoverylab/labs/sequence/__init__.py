"""The Sequence Modeling Lab (spec §2): DNA-like strings over ACGT with hidden properties and dynamics.

Public API (stable; the protocols, graders and agents build on it):

``discoverylab.labs.sequence.properties``
    ``PROPERTY_NAMES`` (the seven agent-facing keys), ``EXTRA_PROPERTY_NAMES`` (``motif_score``),
    ``PropertyParams`` (hidden weights, masks, reference, energies, motif; ``DEFAULT_PARAMS``),
    ``compute(name, seq, params) -> float``, ``compute_all(seqs, names, params) -> dict[str, ndarray]``,
    ``compute_codes(name, codes, params)`` on encoded batches, ``encode``/``decode`` (A=0 C=1 G=2 T=3),
    ``reverse_complement``, ``feasible_range(name, N, params)``, ``quantum(name, N, params)``,
    ``reference_from_seed(seed, N)``, ``energy_extremes(N)``. Names ``alternation_<k>`` and
    ``entropy_<k>`` are accepted as shorthands that set k.
``discoverylab.labs.sequence.operators``
    ``MajorityUpdate``, ``GCBiasedMutation``, ``PalindromePull`` (evolution), ``AlternatingMerge``,
    ``ConsensusMerge``, ``PalindromeSandwich`` (composition); each is called as ``op(*seqs, rng=rng)``.
``discoverylab.labs.sequence.evolution``
    ``DirectedEvolution(drivers, attractors, kernel=..., sigma=..., mutations=..., ...)`` with
    ``evo(seq, rng=rng)`` (one step), ``evo.evolve(seq, steps, rng) -> list[str]``,
    ``evo.evolve_batch(codes, steps, rng) -> (B, steps+1, N)``, ``evo.as_dynamics()``.
``discoverylab.labs.sequence.samplers``
    exact constructive samplers (gc, hamming, weighted count, alternation, palindromicity).
``discoverylab.labs.sequence.lab``
    ``SequenceLab(spec, seed)`` with ``measure(seqs, names)``, ``sample(constraints, n)``,
    ``evolve(seq, steps)``, ``random_sequences(n)``; preset specs ``PRESETS`` / ``preset(name)``.

Values returned here are unrounded; protocols round to 3 decimals for agents.
"""

from __future__ import annotations

from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.properties import (
    ALPHABET,
    DEFAULT_PARAMS,
    PROPERTY_NAMES,
    PropertyParams,
    compute,
    compute_all,
)

__all__ = [
    "ALPHABET",
    "DEFAULT_PARAMS",
    "PROPERTY_NAMES",
    "DirectedEvolution",
    "PropertyParams",
    "compute",
    "compute_all",
]
