"""The ``Lab`` base class, the lab registry and the spec-driven construction of property tables.

A concrete lab (e.g. ``discoverylab.labs.sequence.lab.SequenceLab``) registers itself with
``LAB_KINDS.register("sequence", SequenceLab)``; ``build_lab(spec, seed)`` then builds any spec.
Composite properties (``mix``, ``product``, ``threshold``, ``compose``, ``switch``) are generic: they refer to
other entries of the same spec by name through the field ``of``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.operators import Dynamics, Operator
from discoverylab.labs.core.properties import Compose, Mix, Product, Property, Switch, Threshold
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.sampler import AnnealingSampler
from discoverylab.labs.core.seeding import SeedStreams
from discoverylab.labs.core.spaces import ObjectSpace
from discoverylab.labs.core.spec import KindSpec, LabSpec

COMPOSITE_KINDS = ("mix", "product", "threshold", "compose", "switch")
LAB_MODULES = {"sequence": "discoverylab.labs.sequence.lab", "macro": "discoverylab.labs.macroecon.protocols"}
"""Module to import so that a lab kind registers itself (labs may also register directly)."""


class Lab(ABC):
    """A lab: object space, properties, operators, optional dynamics, sampler and seeded streams."""

    spec: LabSpec
    space: ObjectSpace
    properties: dict[str, Property]
    operators: dict[str, Operator]
    dynamics: Dynamics | None
    sampler: AnnealingSampler
    streams: SeedStreams

    def reset(self, seed: int) -> None:
        """Re-seed every stream (the hidden parameters stay those of the spec)."""
        self.streams = SeedStreams(seed)

    def measure_batch(self, batch: np.ndarray, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Unrounded values of the named properties (default: all) on an encoded batch."""
        return {k: self.properties[k].batch(batch) for k in (names or list(self.properties))}

    def embed(self, objs: Sequence[Any]) -> np.ndarray:
        """(T, d) coordinates of objects in the space of the dynamics' drivers."""
        if self.dynamics is None:
            raise InvalidSpec("this lab has no dynamics, so it has no driver space")
        values = self.measure_batch(self.space.encode(list(objs)), list(self.dynamics.drivers))
        return np.stack([values[k] for k in self.dynamics.drivers], axis=1)

    def basin_starts(self, n_per_attractor: int, rng: np.random.Generator, eps: float = 0.1) -> list[Any]:
        """Starts sampled near each declared attractor (to enter basins random starts miss)."""
        if self.dynamics is None or self.dynamics.attractors is None:
            return []
        starts: list[Any] = []
        for point in self.dynamics.attractors:
            constraints = {k: (float(v), eps) for k, v in zip(self.dynamics.drivers, point, strict=True)}
            starts += self.sampler.sample(constraints, n_per_attractor, rng).objects
        return starts

    @abstractmethod
    def random_objects(self, n: int, rng: np.random.Generator | None = None) -> list[Any]:
        """Uniform random objects (default stream: ``lab``)."""


LabFactory = Callable[[LabSpec, int | None], Lab]
LAB_KINDS: Registry[LabFactory] = Registry("lab")


def build_lab(spec: LabSpec, seed: int | None = None) -> Lab:
    """Build the lab a spec describes; ``seed`` overrides ``spec.seed`` for the streams."""
    if spec.lab not in LAB_KINDS and spec.lab in LAB_MODULES:
        importlib.import_module(LAB_MODULES[spec.lab])
    return LAB_KINDS.get(spec.lab)(spec, seed)


def build_properties(entries: Mapping[str, KindSpec],
                     base_factory: Callable[[str, KindSpec], Property]) -> dict[str, Property]:
    """Build base properties with ``base_factory`` and composites from already-built entries."""
    built: dict[str, Property] = {}
    pending = dict(entries)
    while pending:
        progressed = False
        for name, entry in list(pending.items()):
            if entry.kind not in COMPOSITE_KINDS:
                built[name] = base_factory(name, entry)
            else:
                parts = _parts(name, entry)
                missing = [p for p in parts if p not in entries]
                if missing:
                    raise InvalidSpec(f"property {name!r} refers to undefined properties {missing}")
                if any(p not in built for p in parts):
                    continue
                built[name] = _composite(name, entry, [built[p] for p in parts])
            del pending[name]
            progressed = True
        if not progressed:
            raise InvalidSpec(f"composite properties form a cycle: {sorted(pending)}")
    return built


def _parts(name: str, entry: KindSpec) -> list[str]:
    of = entry.fields.get("of")
    parts = [of] if isinstance(of, str) else list(of or [])
    if not parts:
        raise InvalidSpec(f"composite property {name!r} needs 'of': the names of its parts")
    return parts


def _composite(name: str, entry: KindSpec, parts: list[Property]) -> Property:
    fields = entry.fields
    try:
        if entry.kind == "mix":
            return Mix(parts, fields.get("weights") or [1 / len(parts)] * len(parts), name=name)
        if entry.kind == "product":
            return Product(parts, name=name)
        if entry.kind == "switch":
            if len(parts) != 3:
                raise InvalidSpec(f"switch property {name!r} takes 3 parts: guard, then high and low regimes")
            return Switch(parts[0], parts[1], parts[2], float(fields.get("t", 0.5)), name=name)
        if len(parts) != 1:
            raise InvalidSpec(f"{entry.kind} property {name!r} takes exactly one part")
        if entry.kind == "threshold":
            return Threshold(parts[0], float(fields.get("t", 0.5)), name=name)
        return Compose(parts[0], str(fields.get("g", "identity")), name=name)
    except ValueError as exc:
        raise InvalidSpec(f"property {name!r}: {exc}") from exc
