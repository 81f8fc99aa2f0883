"""``SequenceLab``: the Sequence Modeling Lab built from a ``LabSpec``, and its preset specs.

    >>> lab = SequenceLab(preset("default"), seed=3)
    >>> values = lab.measure(["ACGT" * 7 + "AC"], ["gc_content"])
    >>> batch = lab.sample({"gc_content": (0.5, 0.1)}, n=10)
    >>> path = lab.evolve("ACGT" * 7 + "AC", steps=20)

Randomness: hidden parameters (the Hamming reference) come from the episode seed; sampler,
dynamics and random draws use the ``sampler``, ``dynamics`` and ``lab`` streams of that seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.lab import LAB_KINDS, Lab, build_properties
from discoverylab.labs.core.operators import Dynamics, Operator, PopulationDynamics
from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.sampler import AnnealingSampler, Constraints, SampleBatch
from discoverylab.labs.core.seeding import SeedStreams
from discoverylab.labs.core.spaces import StringSpace
from discoverylab.labs.core.spec import KindSpec, LabSpec, ObjectsSpec, kind_spec
from discoverylab.labs.sequence.evolution import DEFAULT_ATTRACTORS, DEFAULT_DRIVERS, DirectedEvolution
from discoverylab.labs.sequence.kinds import KIND_OF_NAME, PROPERTY_KINDS, PositionsProperty, SequenceProperty
from discoverylab.labs.sequence.operators import (
    AlternatingMerge,
    ConsensusMerge,
    GCBiasedMutation,
    MajorityUpdate,
    PalindromePull,
    PalindromeSandwich,
)
from discoverylab.labs.sequence.properties import PROPERTY_NAMES, PropertyParams, compute_codes
from discoverylab.labs.sequence.spec_operators import build_operator, population_dynamics, schedule_dynamics

DynamicsFactory = Callable[[KindSpec, "SequenceLab"], Dynamics]
DYNAMICS_KINDS: Registry[DynamicsFactory] = Registry("sequence dynamics")


class SequenceLab(Lab):
    """The lab of spec §2 for one episode seed.

    Args:
        spec: the lab description (default: ``preset("default")``).
        seed: the episode seed (default: ``spec.seed``); it fixes the hidden reference and streams.
    """

    VOCABULARY: tuple[str, ...] = ("gc_content", "palindrome_score", "alternation_1", "alternation_2",
                                   "alternation_3", "entropy_1", "entropy_2", "interaction_energy")
    """The lab's public families at default parameters: the features of verify's learnability check."""

    def vocabulary(self, codes: np.ndarray) -> np.ndarray:
        """The public families' values on a batch, one column each (no hidden parameters)."""
        return np.stack([compute_codes(name, codes) for name in self.VOCABULARY], axis=1)

    def __init__(self, spec: LabSpec | None = None, seed: int | None = None) -> None:
        self.spec = spec if spec is not None else preset("default")
        if self.spec.objects.alphabet != "ACGT":
            raise InvalidSpec(f"the sequence lab uses the alphabet ACGT, not {self.spec.objects.alphabet!r}")
        self.length = self.spec.objects.length
        self.seed = self.spec.seed if seed is None else seed
        self.streams = SeedStreams(self.seed)
        self.space = StringSpace("ACGT", self.length)
        reference_seed = int(self.streams["reference"].integers(0, 2**31 - 1))
        self.base_params = PropertyParams(reference_seed=reference_seed)
        self.properties = build_properties(self.spec.properties, self._base_property)
        self.operators: dict[str, Operator] = {
            "majority_update": MajorityUpdate(), "gc_biased_mutation": GCBiasedMutation(),
            "palindrome_pull": PalindromePull(), "alternating_merge": AlternatingMerge(),
            "consensus_merge": ConsensusMerge(), "palindrome_sandwich": PalindromeSandwich(crop_to=self.length),
        }
        for name, entry in self.spec.operators.items():
            self.operators[name] = build_operator(name, entry, self.length)
        self.dynamics = None
        self.population: PopulationDynamics | None = None
        dyn = self.spec.dynamics
        if dyn is not None and dyn.kind == "population":
            self.population = population_dynamics(dyn, self.operators)
        elif dyn is not None and dyn.kind == "schedule":
            self.dynamics = schedule_dynamics(dyn, self.operators)
        elif dyn is not None:
            if dyn.kind not in DYNAMICS_KINDS:
                raise InvalidSpec(f"unknown dynamics kind {dyn.kind!r}; kinds: "
                                  f"{sorted([*DYNAMICS_KINDS.kinds(), 'schedule', 'population'])}")
            self.dynamics = DYNAMICS_KINDS.get(dyn.kind)(dyn, self)
            self.operators[dyn.kind] = self.dynamics.schedule.op  # type: ignore[attr-defined]
        s = self.spec.sampler
        self.sampler = AnnealingSampler(self.space, self.properties, default_eps=s.eps, max_iters=s.max_iters,
                                        restarts=s.restarts, time_limit=s.time_limit)

    def _base_property(self, name: str, entry: KindSpec) -> Property:
        prop: Property = PROPERTY_KINDS.get(entry.kind)(name, entry.fields, self.base_params)
        if isinstance(prop, PositionsProperty) and prop.positions[-1] >= self.length:
            raise InvalidSpec(f"property {name!r} reads position {prop.positions[-1]}, but objects have length "
                              f"{self.length} (positions are 0-based)")
        return prop

    # ------------------------------------------------------------------ public API

    @property
    def reference(self) -> str | None:
        """The hidden Hamming reference of the first ``hamming`` property, if any."""
        for prop in self.properties.values():
            if isinstance(prop, SequenceProperty) and prop.key == "hamming_distance":
                return prop.params.reference_for(self.length)
        return None

    def measure_array(self, seqs: Sequence[str], names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Unrounded values as arrays; raises ``InvalidObject`` for a sequence of the wrong shape."""
        unknown = [k for k in names or () if k not in self.properties]
        if unknown:
            raise KeyError(f"unknown properties {unknown}; this lab measures {sorted(self.properties)}")
        return self.measure_batch(self.space.encode(list(seqs)), names)

    def measure(self, seqs: Sequence[str], names: Sequence[str] | None = None) -> dict[str, list[float]]:
        """Unrounded values as plain float lists (protocols round to 3 decimals for agents)."""
        return {k: [float(v) for v in vs] for k, vs in self.measure_array(seqs, names).items()}

    def sample(self, constraints: Constraints, n: int, rng: np.random.Generator | None = None) -> SampleBatch:
        """``n`` distinct sequences near the targets ``{name: (p, eps) or p}`` (spec §1.3, §2.5)."""
        return self.sampler.sample(constraints, n, rng if rng is not None else self.streams.sampler)

    def evolve(self, seq: str, steps: int, rng: np.random.Generator | None = None) -> list[str]:
        """s_0..s_steps under the lab's dynamics."""
        if self.dynamics is None:
            raise InvalidSpec("this lab has no dynamics; add a 'dynamics' entry to its spec")
        self.space.validate(seq)
        return list(self.dynamics.run(seq, steps, rng if rng is not None else self.streams.dynamics))

    def random_sequences(self, n: int, rng: np.random.Generator | None = None) -> list[str]:
        """Uniform random sequences (default stream: ``lab``)."""
        return list(self.space.decode(self.space.random_batch(rng if rng is not None else self.streams.lab, n)))

    def random_objects(self, n: int, rng: np.random.Generator | None = None) -> list[Any]:
        return self.random_sequences(n, rng)

    def run_population(self, population: Sequence[str], generations: int,
                       rng: np.random.Generator | None = None) -> list[list[str]]:
        """Generations 0..n of a spec's ``population`` dynamics (merge parent pairs, then evolve)."""
        if self.population is None:
            raise InvalidSpec("this lab has no population dynamics; set dynamics: {kind: population, ...}")
        for seq in population:
            self.space.validate(seq)
        return self.population.run(population, generations, rng if rng is not None else self.streams.dynamics)


LAB_KINDS.register("sequence", SequenceLab)


# ---------------------------------------------------------------------------- dynamics kinds


def _directed_evolution(entry: KindSpec, lab: SequenceLab) -> Dynamics:
    f = entry.fields
    drivers = tuple(f.get("drivers", DEFAULT_DRIVERS))
    missing = [d for d in drivers if d not in lab.properties]
    if missing:
        raise InvalidSpec(f"dynamics drivers {missing} are not properties of this lab")
    props = [lab.properties[d] for d in drivers]
    basin: Mapping[str, Any] = f.get("basin", {})
    try:
        evo = DirectedEvolution(
            drivers, f.get("attractors", DEFAULT_ATTRACTORS), kernel=basin.get("kind", "gaussian"),
            sigma=float(basin.get("sigma", 0.1)), beta=float(basin.get("beta", 20.0)),
            theta=float(basin.get("theta", 0.2)), mutations=int(f.get("mutations_per_step", 1)),
            tie_break=f.get("tie_break", "first"), p_explore=float(f.get("p_explore", 0.0)),
            stuck_patience=f.get("stuck_patience"),
            driver_fn=lambda x: np.stack([p.batch(x) for p in props], axis=1))
    except ValueError as exc:
        raise InvalidSpec(f"directed_evolution: {exc}") from exc
    return evo.as_dynamics()


DYNAMICS_KINDS.register("directed_evolution", _directed_evolution)
for _kind in ("majority_update", "gc_biased_mutation", "palindrome_pull"):
    DYNAMICS_KINDS.register(_kind, lambda e, lab: Dynamics(build_operator(e.kind, e, lab.length)))


# ---------------------------------------------------------------------------- presets


def property_table(names: Sequence[str] = PROPERTY_NAMES, **fields: Mapping[str, Any]) -> dict[str, KindSpec]:
    """Spec entries for canonical property names; ``fields`` adds per-name fields (e.g. ``k``)."""
    return {name: kind_spec(KIND_OF_NAME[name], **dict(fields.get(name, {}))) for name in names}


DYNAMICS_MEASURABLES = ("gc_content", "palindrome_score", "hamming_distance", "entropy_score")


def _default() -> LabSpec:
    return LabSpec(
        name="default", objects=ObjectsSpec(length=30), properties=property_table(DYNAMICS_MEASURABLES),
        dynamics=kind_spec("directed_evolution", drivers=list(DEFAULT_DRIVERS),
                          attractors=[list(a) for a in DEFAULT_ATTRACTORS], basin={"kind": "gaussian", "sigma": 0.1},
                          mutations_per_step=1),
        protocol=kind_spec("sequence/unknown-dynamics", rounds=6, max_steps=20, hint="none"))


def _hidden(length: int, rounds: int, hidden: str = "palindrome_score") -> LabSpec:
    return LabSpec(
        name="hidden_property", objects=ObjectsSpec(length=length), properties=property_table(),
        protocol=kind_spec("sequence/hidden-property", hidden=hidden, rounds=rounds, batch=10, eps=0.1,
                          hint="none"))


PRESETS: dict[str, Callable[[], LabSpec]] = {
    "default": _default,
    "hidden_property": lambda: _hidden(10, 5),
    "paper_demo": lambda: _hidden(10, 6).model_copy(update={"name": "paper_demo"}),
    "masked_alternation": lambda: LabSpec(
        name="masked_alternation", objects=ObjectsSpec(length=15),
        properties=property_table(PROPERTY_NAMES, alternation_k={"k": 2}),
        protocol=kind_spec("sequence/hidden-property", hidden="alternation_k", rounds=5, batch=10, eps=0.1,
                          hint="none")),
}
"""Built-in labs (each verified by the test suite)."""


def preset(name: str) -> LabSpec:
    """A fresh copy of a built-in spec."""
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}")
    return PRESETS[name]()
