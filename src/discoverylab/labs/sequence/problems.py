"""Per-seed problems of the sequence protocols: every seed draws a new hidden property or dynamics.

The paper's instances (palindromicity; drivers (gc, pal) with attractors (0.8, 0.8) and (0.4, 0.2))
are kept as the protocols' `paper` presets. Without a preset, the episode's `problem` stream draws
the problem with the lab generator's own samplers (``generate``): a base property with freshly drawn
hidden parameters or, sometimes, a composition of them; or a pair of drivers, distractor
measurables and an attractor layout. Draws whose property is (nearly) constant are redrawn, so no
episode can be answered by a constant. Every base property of a hidden-property problem also reads
only a drawn set of positions (`draw_positions`), so no fixed (stock) program computes it: a
report written without experiments cannot be right on the seeds that happened to draw its family.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from discoverylab.labs.core.generator import Complexity
from discoverylab.labs.core.lab import COMPOSITE_KINDS
from discoverylab.labs.core.spec import KindSpec, kind_spec
from discoverylab.labs.core.verify import degenerate
from discoverylab.labs.sequence.generate import (
    DRIVER_CHOICES,
    _attractors,
    _base_entry,
    _hidden_entries,
)
from discoverylab.labs.sequence.measurables import build_measurables
from discoverylab.labs.sequence.properties import PROPERTY_NAMES

EPISODE_KNOBS = Complexity(
    "episode", lengths=(10,), p_dynamics=0.0, p_composite=0.35, composition_depth=1, n_attractors=(2, 3),
    sigmas=(0.1,), distractors=(2,), hints=("none",), rounds=(5,), noise=(0.0,), alternation_ks=(1, 2, 3),
    entropy_ks=(1, 2))
"""The families an episode draws from: parametrised base properties, 35% one-level compositions."""
EPISODE_COMPOSITES = ("mix", "product", "threshold", "compose")
"""The compositions an episode draws (the generator adds `switch`); kept so seeds keep their problems."""


def signature(obj: Any) -> str:
    """Short stable hash of a problem description (to count distinct problems over seeds)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(slots=True)
class HiddenProblem:
    """A drawn hidden property: its spec entries (the last key, `hidden`, is the property)."""

    entries: dict[str, KindSpec]
    redraws: int = 0

    @property
    def root(self) -> KindSpec:
        return self.entries["hidden"]

    @property
    def composite(self) -> bool:
        return len(self.entries) > 1

    @property
    def positions(self) -> tuple[int, ...] | None:
        """The positions a base (non-composite) problem reads; None for a composition."""
        if self.composite:
            return None
        return tuple(int(p) for p in self.root.fields["positions"])

    def describe(self) -> dict[str, Any]:
        return {k: v.model_dump() for k, v in self.entries.items()}

    def as_entries(self) -> dict[str, dict[str, Any]]:
        """Entries as plain mappings (what `build_measurables` takes)."""
        return as_entries(self.entries)


def as_entries(entries: dict[str, KindSpec]) -> dict[str, dict[str, Any]]:
    return {k: {"kind": v.kind, **v.fields} for k, v in entries.items()}


def draw_positions(rng: np.random.Generator, length: int) -> list[int]:
    """Sorted positions a base property reads: between half and all but one of the `length` letters.

    At length 10 that is 637 subsets for each family and parameter draw, and never all the letters,
    so a named property's stock program is never the hidden one."""
    low, high = -(-length // 2), max(length - 1, 1)
    size = int(rng.integers(low, high + 1))
    return sorted(int(p) for p in rng.choice(length, size=size, replace=False))


def _read_at_positions(entries: dict[str, KindSpec], rng: np.random.Generator,
                       length: int) -> dict[str, KindSpec]:
    """Each base entry with its own drawn `positions` (compositions refer to them unchanged)."""
    return {key: spec if spec.kind in COMPOSITE_KINDS else
            kind_spec(spec.kind, **{**spec.fields, "positions": draw_positions(rng, length)})
            for key, spec in entries.items()}


def draw_hidden_problem(rng: np.random.Generator, length: int, reference: str,
                        knobs: Complexity = EPISODE_KNOBS, max_draws: int = 50) -> HiddenProblem:
    """A non-degenerate hidden property for sequences of `length`, each base part read at drawn positions."""
    probe = rng.integers(0, 4, size=(2000, length), dtype=np.uint8)
    for attempt in range(max_draws):
        entries = _hidden_entries(knobs, rng, knobs.composition_depth, "hidden", EPISODE_COMPOSITES)
        entries = _read_at_positions(entries, rng, length)
        prop = build_measurables(["hidden"], as_entries(entries), reference)["hidden"]
        if degenerate(prop.batch(probe)) is None:
            return HiddenProblem(entries=entries, redraws=attempt)
    raise RuntimeError(f"no non-degenerate hidden property in {max_draws} draws")  # pragma: no cover


@dataclass(slots=True)
class DynamicsProblem:
    """Drawn dynamics: drivers, attractor layout, listed measurables (drivers + distractors), entries."""

    drivers: tuple[str, ...]
    attractors: tuple[tuple[float, ...], ...]
    measurables: tuple[str, ...]
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        return {"drivers": self.drivers, "attractors": self.attractors, "measurables": sorted(self.measurables),
                "properties": self.properties}


def draw_dynamics_problem(rng: np.random.Generator, knobs: Complexity = EPISODE_KNOBS) -> DynamicsProblem:
    """Two drivers (with hidden parameters), distractor measurables and 2-3 attractors."""
    drivers = [str(d) for d in rng.choice(DRIVER_CHOICES, size=2, replace=False)]
    others = [n for n in PROPERTY_NAMES if n not in drivers and n != "interaction_energy"]
    n_distractors = int(knobs.distractors[int(rng.integers(len(knobs.distractors)))])
    distractors = [str(d) for d in rng.choice(others, size=n_distractors, replace=False)]
    entries = {name: _base_entry(name, knobs, rng) for name in [*drivers, *distractors]}
    properties = {name: {"kind": e.kind, **e.fields} for name, e in entries.items()}
    k = int(knobs.n_attractors[int(rng.integers(len(knobs.n_attractors)))])
    attractors = tuple(tuple(a) for a in _attractors(k, rng))
    return DynamicsProblem(drivers=tuple(drivers), attractors=attractors,
                           measurables=(*drivers, *distractors), properties=properties)
