"""Branching/population dynamics of the sequence lab as a discovery problem (issue #22, part 4).

A hidden `PopulationDynamics` (core.operators: each generation a composition operator merges
fitness-free random parent pairs, then an evolution operator acts on every child) runs on a
population of P sequences. What an agent must discover is quantitative: the population mean of the
target measurables after K generations, for starting populations it never saw.

Truth is measured, not declared: the expected population mean after K generations is the mean over
`replicates` independent runs (one dedicated stream), so the oracle's answer is the expectation and
not one noisy realisation. Starting populations come from `designed_population`, a public recipe
(base composition, share of palindromic members, blockiness) that spans the measurables' ranges;
agents may use it too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from discoverylab.labs.core.operators import Operator, PopulationDynamics
from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.spec import KindSpec, kind_spec
from discoverylab.labs.sequence.properties import decode, encode
from discoverylab.labs.sequence.spec_operators import build_operator, population_dynamics

COMPOSE_MENU: dict[str, tuple[KindSpec, ...]] = {
    "easy": (kind_spec("palindrome_sandwich"), kind_spec("consensus_merge", mode="parents")),
    "medium": (kind_spec("palindrome_sandwich"), kind_spec("consensus_merge", mode="parents"),
               kind_spec("alternating_merge", mode="parity")),
    "hard": (kind_spec("palindrome_sandwich"), kind_spec("consensus_merge", mode="parents"),
             kind_spec("consensus_merge", mode="any"), kind_spec("alternating_merge", mode="parity")),
}
"""Composition operators per complexity. `palindrome_sandwich` cropped to the sequence length keeps
the middle parent: a child is a copy of one parent (pure resampling, the Wright-Fisher step)."""
EVOLVE_KINDS: dict[str, tuple[str, ...]] = {
    "easy": ("gc_biased_mutation",),
    "medium": ("gc_biased_mutation", "palindrome_pull"),
    "hard": ("gc_biased_mutation", "palindrome_pull", "majority_update"),
}
TARGET_OF: dict[str, str] = {"gc_biased_mutation": "gc_content", "palindrome_pull": "palindrome_score",
                             "majority_update": "alternation_k"}
"""The measurable an evolution operator moves (the lab's prediction target)."""
HORIZONS: dict[str, tuple[int, ...]] = {"gc_biased_mutation": (3, 4, 5, 6, 8), "palindrome_pull": (2, 3, 4),
                                        "majority_update": (1, 2, 3, 4)}
"""Prediction horizons K per evolution kind: short enough that populations are still on their way."""
MEASURABLES = ("gc_content", "palindrome_score", "alternation_k", "entropy_score")
"""Listed measurables: all parameter-free, so an agent can compute them from their descriptions."""


def draw_evolve(kind: str, level: str, rng: np.random.Generator) -> KindSpec:
    """An evolution operator of `kind` with drawn parameters (`level` sets the noise)."""
    noisy = level == "hard"
    if kind == "gc_biased_mutation":
        return kind_spec(kind, mutations=int(rng.integers(1, 4)), bias=float(np.round(rng.uniform(0.05, 0.95), 2)))
    if kind == "palindrome_pull":
        return kind_spec(kind, mutations=int(rng.integers(1, 3)),
                         noise=float(rng.choice([0.0, 0.2, 0.5])) if noisy else 0.0)
    if kind == "majority_update":
        return kind_spec(kind, radius=1, update_prob=float(np.round(rng.uniform(0.1, 0.4), 2)))
    raise ValueError(f"unknown evolution kind {kind!r}; kinds: {sorted(TARGET_OF)}")


@dataclass(frozen=True, slots=True)
class PopulationProblem:
    """One hidden process: its operators (spec entries) and what the agent predicts."""

    compose: KindSpec
    evolve: KindSpec | None
    targets: tuple[str, ...]
    generations: int
    """Horizon K of the predictions."""

    def as_spec(self) -> dict[str, Any]:
        """The spec sections (`operators`, `dynamics`) that pin this process."""
        operators = {"merge": self.compose.model_dump()}
        if self.evolve is not None:
            operators["evolve"] = self.evolve.model_dump()
        dynamics = {"kind": "population", "compose": "merge", "evolve": "evolve" if self.evolve else None}
        return {"operators": operators, "dynamics": dynamics}


def draw_problem(level: str, rng: np.random.Generator, n_targets: int = 1) -> PopulationProblem:
    """A process drawn at complexity `level` (easy, medium, hard): compose, evolve and targets."""
    menu = COMPOSE_MENU[level]
    compose = menu[int(rng.integers(len(menu)))]
    kinds = EVOLVE_KINDS[level]
    kind = kinds[int(rng.integers(len(kinds)))]
    evolve = draw_evolve(kind, level, rng)
    targets = [TARGET_OF[kind]]
    if n_targets > 1:
        others = [m for m in ("gc_content", "palindrome_score", "alternation_k") if m not in targets]
        targets.append(others[int(rng.integers(len(others)))])
    horizons = HORIZONS[kind]
    return PopulationProblem(compose, evolve, tuple(targets), int(horizons[int(rng.integers(len(horizons)))]))


def build_process(compose: KindSpec, evolve: KindSpec | None, length: int) -> PopulationDynamics:
    """The core `PopulationDynamics` of the spec entries (through the spec-operator registry)."""
    operators: dict[str, Operator] = {"merge": build_operator("merge", compose, length)}
    if evolve is not None:
        operators["evolve"] = build_operator("evolve", evolve, length)
    entry = kind_spec("population", compose="merge", evolve="evolve" if evolve is not None else None)
    return population_dynamics(entry, operators)


# ---------------------------------------------------------------------- starting populations
def designed_population(rng: np.random.Generator, size: int, length: int, gc: float, palindromic: float,
                        block: int) -> list[str]:
    """`size` sequences: letters drawn with G/C probability `gc`, runs of `block` equal letters, and a
    share `palindromic` of members made their own reverse complement (public recipe)."""
    weights = np.array([1 - gc, gc, gc, 1 - gc]) / 2
    n_runs = -(-length // block)
    letters = rng.choice(4, size=(size, n_runs), p=weights).astype(np.uint8)
    codes = np.repeat(letters, block, axis=1)[:, :length]
    mirror = rng.random(size) < palindromic
    half = length // 2
    codes[mirror, length - half:] = 3 - codes[mirror, :half][:, ::-1]
    return decode(codes)


def random_design(rng: np.random.Generator, size: int, length: int) -> list[str]:
    """A designed population with recipe knobs drawn over their whole range."""
    return designed_population(rng, size, length, gc=float(rng.uniform(0.02, 0.98)),
                               palindromic=float(rng.uniform(0.0, 1.0)), block=int(rng.integers(1, 5)))


# ---------------------------------------------------------------------- measuring
def population_means(pop: Sequence[str], props: Mapping[str, Property]) -> dict[str, float]:
    """Population mean of each measurable."""
    codes = encode(list(pop))
    return {name: float(p.batch(codes).mean()) for name, p in props.items()}


def population_stds(pop: Sequence[str], props: Mapping[str, Property]) -> dict[str, float]:
    """Population standard deviation of each measurable."""
    codes = encode(list(pop))
    return {name: float(p.batch(codes).std()) for name, p in props.items()}


def summarise(runs: Sequence[Sequence[str]], props: Mapping[str, Property]) -> dict[str, dict[str, list[float]]]:
    """Per measurable, the population mean and standard deviation at every generation."""
    out: dict[str, dict[str, list[float]]] = {name: {"mean": [], "std": []} for name in props}
    for pop in runs:
        codes = encode(list(pop))
        for name, p in props.items():
            v = p.batch(codes)
            out[name]["mean"].append(float(v.mean()))
            out[name]["std"].append(float(v.std()))
    return out


def expected_means(process: PopulationDynamics, pop: Sequence[str], generations: int,
                   props: Mapping[str, Property], replicates: int, rng: np.random.Generator) -> dict[str, float]:
    """The expected population mean of each measurable after `generations` (mean over replicates)."""
    totals = dict.fromkeys(props, 0.0)
    for _ in range(replicates):
        end = process.run(pop, generations, rng)[-1]
        for name, value in population_means(end, props).items():
            totals[name] += value
    return {name: total / replicates for name, total in totals.items()}
