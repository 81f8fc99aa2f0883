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
    ``SequenceLab(spec, seed)`` with ``measure(seqs, names)``, ``sample(constraints, n)`` (returns a
    ``SampleBatch``: ``.samples[i].obj/.values/.hit``, ``.clamped``), ``evolve(seq, steps)``,
    ``random_sequences(n)``, ``reference``; preset specs ``PRESETS`` / ``preset(name)``
    (``default``, ``hidden_property``, ``paper_demo``, ``masked_alternation``); ``property_table``;
    ``DYNAMICS_KINDS``.
``discoverylab.labs.sequence.kinds``
    ``PROPERTY_KINDS`` (spec kinds ``gc``, ``weighted_count``, ``alternation``, ``palindromicity``,
    ``kmer_entropy``, ``hamming``, ``interaction_energy``, ``motif``) and ``SequenceProperty``.
``discoverylab.labs.sequence.generate``
    the spec sampler behind ``discoverylab.labs.core.generate_specs(n, complexity, seed)``.

Values returned here are unrounded; protocols round to 3 decimals for agents.
"""

from __future__ import annotations

from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.lab import PRESETS, SequenceLab, preset
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
    "PRESETS",
    "DirectedEvolution",
    "SequenceLab",
    "PropertyParams",
    "compute",
    "compute_all",
    "preset",
]
