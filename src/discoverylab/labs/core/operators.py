"""Evolution/composition operators and dynamics schedules (spec §1.4).

An ``Operator`` is pure given its inputs and the ``rng`` it is handed: the same inputs and the same
generator state give the same output. Schedules combine operators into one step of a dynamics;
``Dynamics`` turns a schedule into trajectories.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class Operator(ABC):
    """T: S -> S (arity 1) or C: S^k -> S (arity k); ``closed`` says the output stays in the same S."""

    name: str = "operator"
    arity: int = 1
    stochastic: bool = True
    closed: bool = True

    @abstractmethod
    def __call__(self, *objs: Any, rng: np.random.Generator) -> Any:
        """Apply the operator; randomness only from ``rng``."""


class FunctionOperator(Operator):
    """Wrap a plain function ``fn(*objs, rng) -> obj`` as an operator."""

    def __init__(self, fn: Callable[..., Any], *, name: str, arity: int = 1, stochastic: bool = True,
                 closed: bool = True) -> None:
        self.fn = fn
        self.name = name
        self.arity = arity
        self.stochastic = stochastic
        self.closed = closed

    def __call__(self, *objs: Any, rng: np.random.Generator) -> Any:
        return self.fn(*objs, rng=rng)


class Schedule(ABC):
    """How one dynamics step is made of operators; ``t`` is the step index (0-based)."""

    @abstractmethod
    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        """Advance one step."""


class Single(Schedule):
    """One operator per step."""

    def __init__(self, op: Operator) -> None:
        self.op = op

    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        return self.op(obj, rng=rng)


class Sequential(Schedule):
    """One step applies every operator in order."""

    def __init__(self, ops: Sequence[Operator]) -> None:
        self.ops = list(ops)

    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        for op in self.ops:
            obj = op(obj, rng=rng)
        return obj


class Alternate(Schedule):
    """Step t applies ``ops[t % len(ops)]`` (odd/even steps for two operators)."""

    def __init__(self, ops: Sequence[Operator]) -> None:
        if not ops:
            raise ValueError("Alternate needs at least one operator")
        self.ops = list(ops)

    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        return self.ops[t % len(self.ops)](obj, rng=rng)


class Conditional(Schedule):
    """Regime switching: ``then_op`` when ``guard(measure(obj))`` holds, else ``else_op``."""

    def __init__(self, guard: Callable[[Mapping[str, float]], bool], then_op: Operator, else_op: Operator,
                 measure: Callable[[Any], Mapping[str, float]]) -> None:
        self.guard = guard
        self.then_op = then_op
        self.else_op = else_op
        self.measure = measure

    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        op = self.then_op if self.guard(self.measure(obj)) else self.else_op
        return op(obj, rng=rng)


class Stochastic(Schedule):
    """Each step applies one operator drawn with the given probabilities."""

    def __init__(self, weighted_ops: Sequence[tuple[float, Operator]]) -> None:
        probs = np.asarray([p for p, _ in weighted_ops], dtype=np.float64)
        if probs.size == 0 or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
            raise ValueError("Stochastic needs non-negative probabilities summing to 1")
        self.probs = probs / probs.sum()
        self.ops = [op for _, op in weighted_ops]

    def step(self, obj: Any, rng: np.random.Generator, t: int) -> Any:
        return self.ops[int(rng.choice(len(self.ops), p=self.probs))](obj, rng=rng)


@dataclass(slots=True)
class Trajectory:
    """Objects s_0..s_T and, per measured property, its values at every step."""

    objects: list[Any]
    values: dict[str, list[float]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.objects)


class Dynamics:
    """A schedule run over time; ``trajectory_batch`` is what attractor estimation calls.

    Subclasses with a vectorised step (e.g. the sequence lab's directed evolution) override
    ``trajectory_batch`` for speed; the contract is the same.
    """

    attractors: np.ndarray | None = None
    """Declared attractor locations in the embedding of ``drivers`` (None: none declared)."""
    drivers: tuple[str, ...] = ()

    def __init__(self, schedule: Schedule | Operator) -> None:
        self.schedule = Single(schedule) if isinstance(schedule, Operator) else schedule

    def step(self, obj: Any, rng: np.random.Generator, t: int = 0) -> Any:
        """One step of the dynamics."""
        return self.schedule.step(obj, rng, t)

    def run(self, obj: Any, steps: int, rng: np.random.Generator) -> list[Any]:
        """s_0..s_steps."""
        out = [obj]
        for t in range(steps):
            obj = self.step(obj, rng, t)
            out.append(obj)
        return out

    def trajectory(self, obj: Any, steps: int, rng: np.random.Generator,
                   measure: Callable[[list[Any]], Mapping[str, Sequence[float]]] | None = None) -> Trajectory:
        """Run and optionally measure every visited object (``measure`` maps a list to value lists)."""
        objects = self.run(obj, steps, rng)
        values = {k: [float(v) for v in vs] for k, vs in measure(objects).items()} if measure else {}
        return Trajectory(objects, values)

    def trajectory_batch(self, starts: Sequence[Any], steps: int, rng: np.random.Generator) -> list[list[Any]]:
        """Independent runs from many starts (one shared generator, consumed in start order)."""
        return [self.run(s, steps, rng) for s in starts]


class PopulationDynamics:
    """Branching dynamics: each generation, a composition operator merges parent pairs and an
    evolution operator then acts on every child (spec §2.3 "population mode").

    Args:
        compose: an arity-2 operator.
        evolve: an arity-1 operator applied to each child (None: none).
        fitness: maps a list of objects to non-negative scores for fitness-proportional parent
            choice; None picks parents uniformly.
    """

    def __init__(self, compose: Operator, evolve: Operator | None = None,
                 fitness: Callable[[list[Any]], np.ndarray] | None = None) -> None:
        if compose.arity != 2:
            raise ValueError("population dynamics needs an arity-2 composition operator")
        self.compose = compose
        self.evolve = evolve
        self.fitness = fitness

    def generation(self, population: Sequence[Any], rng: np.random.Generator) -> list[Any]:
        """The next population, of the same size."""
        pop = list(population)
        probs = None
        if self.fitness is not None:
            scores = np.clip(np.asarray(self.fitness(pop), dtype=np.float64), 0.0, None)
            probs = scores / scores.sum() if scores.sum() > 0 else None
        children = []
        for _ in range(len(pop)):
            i, j = rng.choice(len(pop), size=2, replace=len(pop) < 2, p=probs)
            child = self.compose(pop[int(i)], pop[int(j)], rng=rng)
            children.append(self.evolve(child, rng=rng) if self.evolve is not None else child)
        return children

    def run(self, population: Sequence[Any], generations: int, rng: np.random.Generator) -> list[list[Any]]:
        """Populations of generations 0..generations."""
        out = [list(population)]
        for _ in range(generations):
            out.append(self.generation(out[-1], rng))
        return out
