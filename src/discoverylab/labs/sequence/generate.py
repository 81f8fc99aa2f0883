"""Random sequence-lab specs for the generator (``core.generator``), drawn from complexity knobs.

Two families: hidden-property labs (Protocol A) whose hidden property is a base property with random
hidden parameters or, with probability ``p_composite``, a composition of them; and dynamics labs
(Protocol B) with random drivers, attractor layouts, kernel widths and distractor measurables.
A third, registered as ``population`` (``lab generate --lab population``): branching/population
labs (`protocol_population`) with a drawn composition operator, evolution operator and horizon.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from discoverylab.labs.core.generator import SPEC_SAMPLERS, Complexity
from discoverylab.labs.core.spec import KindSpec, LabSpec, ObjectsSpec, kind_spec
from discoverylab.labs.sequence.kinds import KIND_OF_NAME
from discoverylab.labs.sequence.population import MEASURABLES, draw_problem
from discoverylab.labs.sequence.properties import PROPERTY_NAMES

DRIVER_CHOICES = ("gc_content", "palindrome_score", "weighted_count", "alternation_k")
COMPOSITES = ("mix", "product", "threshold", "compose", "switch")
"""Composition operators; `switch` is regime switching (one property where a guard is high, another
where it is low)."""
MONOTONE_CHOICES = ("square", "sqrt", "smoothstep", "invert")
HIDDEN_HINTS = {"structure": "family", "distractor": "none"}
"""Protocol A's names for the complexity hint levels (its structural hint names the property family)."""


def _pick(rng: np.random.Generator, options: tuple[Any, ...]) -> Any:
    return options[int(rng.integers(len(options)))]


def _base_entry(name: str, knobs: Complexity, rng: np.random.Generator) -> KindSpec:
    """A base property with freshly drawn hidden parameters."""
    kind = KIND_OF_NAME[name]
    if name == "weighted_count":
        weights = rng.permutation([0.0, 1.0, *np.round(rng.uniform(0.05, 0.95, 2), 2)])
        return kind_spec(kind, weights=dict(zip("ACGT", map(float, weights), strict=True)))
    if name == "alternation_k":
        return kind_spec(kind, k=int(_pick(rng, knobs.alternation_ks)))
    if name == "entropy_score":
        return kind_spec(kind, k=int(_pick(rng, knobs.entropy_ks)))
    if name == "hamming_distance":
        return kind_spec(kind, reference_seed=int(rng.integers(2**31)))
    return kind_spec(kind)


def _hidden_entries(knobs: Complexity, rng: np.random.Generator, depth: int, prefix: str,
                    composites: tuple[str, ...] = COMPOSITES) -> dict[str, KindSpec]:
    """Entries whose last key is the hidden property (composites refer to the earlier ones)."""
    if depth <= 0 or rng.random() >= knobs.p_composite:
        name = str(_pick(rng, PROPERTY_NAMES))
        return {prefix: _base_entry(name, knobs, rng)}
    kind = str(_pick(rng, composites))
    arity = 2 if kind in ("mix", "product") else 3 if kind == "switch" else 1
    entries: dict[str, KindSpec] = {}
    parts = []
    for j in range(arity):
        sub = _hidden_entries(knobs, rng, depth - 1, f"{prefix}_{j}", composites)
        entries.update(sub)
        parts.append(f"{prefix}_{j}")
    fields: dict[str, Any] = {"of": parts}
    if kind == "mix":
        w = float(np.round(rng.uniform(0.2, 0.8), 2))
        fields["weights"] = [w, round(1 - w, 2)]
    elif kind in ("threshold", "switch"):
        fields["t"] = float(np.round(rng.uniform(0.3, 0.7), 2))
    elif kind == "compose":
        fields["g"] = str(_pick(rng, MONOTONE_CHOICES))
    entries[prefix] = kind_spec(kind, **fields)
    return entries


def _hidden_hint(level: str) -> str:
    return HIDDEN_HINTS.get(level, level)


def _hidden_property_spec(knobs: Complexity, rng: np.random.Generator, index: int) -> LabSpec:
    entries = _hidden_entries(knobs, rng, knobs.composition_depth, "hidden")
    return LabSpec(
        name=f"gen-{knobs.name}-{index:04d}-hidden", lab="sequence", difficulty=knobs.name,
        objects=ObjectsSpec(length=int(_pick(rng, knobs.lengths))), properties=entries,
        protocol=kind_spec("sequence/hidden-property", hidden="hidden", rounds=int(_pick(rng, knobs.rounds)),
                           batch=10, eps=0.1, hint=_hidden_hint(str(_pick(rng, knobs.hints))),
                           noise=float(_pick(rng, knobs.noise))),
        seed=int(rng.integers(2**31)))


def _attractors(k: int, rng: np.random.Generator) -> list[list[float]]:
    """k points in [0.15, 0.85]^2, pairwise at least 0.3 apart."""
    points: list[np.ndarray] = []
    while len(points) < k:
        cand = np.round(rng.uniform(0.15, 0.85, 2), 2)
        if all(np.linalg.norm(cand - p) >= 0.3 for p in points):
            points.append(cand)
    return [[float(v) for v in p] for p in points]


def _dynamics_spec(knobs: Complexity, rng: np.random.Generator, index: int) -> LabSpec:
    length = max(int(_pick(rng, knobs.lengths)), 12)
    drivers = [str(d) for d in rng.choice(DRIVER_CHOICES, size=2, replace=False)]
    others = [n for n in PROPERTY_NAMES if n not in drivers]
    n_distractors = int(_pick(rng, knobs.distractors))
    distractors = [str(d) for d in rng.choice(others, size=n_distractors, replace=False)] if n_distractors else []
    properties = {name: _base_entry(name, knobs, rng) for name in [*drivers, *distractors]}
    measurables = list(rng.permutation([*drivers, *distractors]))
    return LabSpec(
        name=f"gen-{knobs.name}-{index:04d}-dynamics", lab="sequence", difficulty=knobs.name,
        objects=ObjectsSpec(length=length), properties=properties,
        dynamics=kind_spec("directed_evolution", drivers=drivers,
                           attractors=_attractors(int(_pick(rng, knobs.n_attractors)), rng),
                           basin={"kind": "gaussian", "sigma": float(_pick(rng, knobs.sigmas))},
                           mutations_per_step=1),
        protocol=kind_spec("sequence/unknown-dynamics", rounds=int(_pick(rng, knobs.rounds)), max_steps=20,
                           measurables=[str(m) for m in measurables], hint=str(_pick(rng, knobs.hints))),
        seed=int(rng.integers(2**31)))


def sample_sequence_spec(knobs: Complexity, rng: np.random.Generator, index: int) -> LabSpec:
    """One candidate spec (not yet verified)."""
    if rng.random() < knobs.p_dynamics:
        return _dynamics_spec(knobs, rng, index)
    return _hidden_property_spec(knobs, rng, index)


SPEC_SAMPLERS.register("sequence", sample_sequence_spec)

POPULATION_MAX_GENERATIONS = 16


def sample_population_spec(knobs: Complexity, rng: np.random.Generator, index: int) -> LabSpec:
    """One candidate population lab (not yet verified): the process pinned in `operators`/`dynamics`."""
    problem = draw_problem(knobs.population_ops, rng, int(_pick(rng, knobs.population_targets)))
    sections = problem.as_spec()
    return LabSpec(
        name=f"gen-{knobs.name}-{index:04d}-population", lab="sequence", difficulty=knobs.name,
        objects=ObjectsSpec(length=max(int(_pick(rng, knobs.lengths)), 12)),
        properties={m: kind_spec(KIND_OF_NAME[m]) for m in MEASURABLES},
        operators={k: KindSpec.model_validate(v) for k, v in sections["operators"].items()},
        dynamics=KindSpec.model_validate(sections["dynamics"]),
        protocol=kind_spec("sequence/population-dynamics", size=int(_pick(rng, knobs.population_sizes)),
                           generations=problem.generations, max_generations=POPULATION_MAX_GENERATIONS,
                           rounds=int(_pick(rng, knobs.rounds)), targets=list(problem.targets),
                           noise=float(_pick(rng, knobs.noise))),
        seed=int(rng.integers(2**31)))


SPEC_SAMPLERS.register("population", sample_population_spec)
