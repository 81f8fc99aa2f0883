"""The property contract (spec §1.2) and the combinators that compose labs from simpler properties.

A property maps objects to [0, 1]. It works on *batches* (see ``spaces.py``) so measuring many
objects is one numpy call. ``feasible_range`` is exact where a subclass knows it; otherwise it is
estimated once per space by searching for the extremes, and cached.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.spaces import ObjectSpace


class Property(ABC):
    """f: S -> [0, 1]; pure and deterministic. ``description`` is the hidden ground-truth text."""

    name: str = "property"
    description: str = ""

    @abstractmethod
    def batch(self, batch: np.ndarray) -> np.ndarray:
        """Values for every object of the batch, as float64 in [0, 1]."""

    def __call__(self, obj_codes: np.ndarray) -> float:
        """Value of one encoded object (use ``space.encode`` first)."""
        return float(self.batch(np.asarray(obj_codes)[None, ...])[0])

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        """(min, max) over the space; estimated and cached unless a subclass knows it exactly."""
        cache: dict[tuple[Any, ...], tuple[float, float]] = self.__dict__.setdefault("_range_cache", {})
        key = space.signature()
        if key not in cache:
            cache[key] = estimate_range(self, space)
        return cache[key]

    def quantum(self, space: ObjectSpace) -> float | None:
        """Spacing of achievable values on a regular grid, or None when irregular/unknown."""
        return None

    def sample_exact(self, space: ObjectSpace, target: float, eps: float, n: int,
                     rng: np.random.Generator) -> np.ndarray | None:
        """A constructive sampler for a single-property request; None means "use the annealer"."""
        return None


def clean(values: np.ndarray) -> np.ndarray:
    """Clip to [0, 1] and map -0.0 to 0.0 (the contract's plain floats)."""
    return np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0) + 0.0


def estimate_range(prop: Property, space: ObjectSpace, *, chains: int = 64, iters: int = 400,
                   n_random: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Search both extremes with greedy local moves from random starts (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    values = prop.batch(space.random_batch(rng, n_random))
    lo, hi = float(values.min()), float(values.max())
    for sign in (1.0, -1.0):  # minimise sign * f
        x = space.random_batch(rng, chains)
        fx = sign * prop.batch(x)
        for _ in range(iters):
            y = space.mutate_batch(x, rng)
            fy = sign * prop.batch(y)
            accept = fy <= fx  # plateau moves allowed: they let the search cross flat regions
            x[accept], fx[accept] = y[accept], fy[accept]
        if sign > 0:
            lo = min(lo, float(fx.min()))
        else:
            hi = max(hi, float(-fx.min()))
    return lo, hi


class FunctionProperty(Property):
    """A property from a batch function, with optional exact range and quantum."""

    def __init__(self, name: str, fn: Callable[[np.ndarray], np.ndarray], *, description: str = "",
                 value_range: tuple[float, float] | None = None, value_quantum: float | None = None) -> None:
        self.name = name
        self.fn = fn
        self.description = description
        self.value_range = value_range
        self.value_quantum = value_quantum

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return clean(self.fn(batch))

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        return self.value_range if self.value_range is not None else super().feasible_range(space)

    def quantum(self, space: ObjectSpace) -> float | None:
        return self.value_quantum


class Mix(Property):
    """w1 f1 + w2 f2 + ...; convex weights keep the [0, 1] contract."""

    def __init__(self, parts: Sequence[Property], weights: Sequence[float], *, name: str | None = None) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if len(parts) != len(w) or len(parts) == 0 or (w < 0).any() or not np.isclose(w.sum(), 1.0):
            raise ValueError("Mix needs one non-negative weight per part, summing to 1")
        self.parts = list(parts)
        self.weights = w / w.sum()
        self.name = name or "mix(" + ",".join(p.name for p in parts) + ")"
        self.description = " + ".join(f"{wi:.3g}*[{p.description or p.name}]" for wi, p in zip(self.weights, parts, strict=True))

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return clean(sum(wi * p.batch(batch) for wi, p in zip(self.weights, self.parts, strict=True)))


class Product(Property):
    """f1 * f2 * ...: high only when every part is high."""

    def __init__(self, parts: Sequence[Property], *, name: str | None = None) -> None:
        if not parts:
            raise ValueError("Product needs at least one part")
        self.parts = list(parts)
        self.name = name or "product(" + ",".join(p.name for p in parts) + ")"
        self.description = " * ".join(f"[{p.description or p.name}]" for p in parts)

    def batch(self, batch: np.ndarray) -> np.ndarray:
        out = np.ones(batch.shape[0])
        for p in self.parts:
            out = out * p.batch(batch)
        return clean(out)


class Threshold(Property):
    """1 if f >= t else 0: a binary phenotype."""

    def __init__(self, part: Property, threshold: float, *, name: str | None = None) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("threshold must be in [0, 1]")
        self.part = part
        self.threshold = threshold
        self.name = name or f"threshold({part.name},{threshold:g})"
        self.description = f"1 if [{part.description or part.name}] >= {threshold:g} else 0"

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return (self.part.batch(batch) >= self.threshold).astype(np.float64)

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        lo, hi = self.part.feasible_range(space)
        return float(lo >= self.threshold), float(hi >= self.threshold)

    def quantum(self, space: ObjectSpace) -> float | None:
        return 1.0


class Switch(Property):
    """Regime switching: f_a where the guard g >= t, else f_b (the guard itself is hidden)."""

    def __init__(self, guard: Property, high: Property, low: Property, threshold: float, *,
                 name: str | None = None) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("switch threshold must be in [0, 1]")
        self.guard, self.high, self.low, self.threshold = guard, high, low, threshold
        self.name = name or f"switch({guard.name}>={threshold:g},{high.name},{low.name})"
        self.description = (f"[{high.description or high.name}] where [{guard.description or guard.name}] >= "
                            f"{threshold:g}, else [{low.description or low.name}]")

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return clean(np.where(self.guard.batch(batch) >= self.threshold, self.high.batch(batch), self.low.batch(batch)))

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        (a, b), (c, d) = self.high.feasible_range(space), self.low.feasible_range(space)
        return min(a, c), max(b, d)

    def quantum(self, space: ObjectSpace) -> float | None:
        return None


MonotoneFn = tuple[Callable[[np.ndarray], np.ndarray], bool]
MONOTONE: Registry[MonotoneFn] = Registry("monotone function")
"""Monotone maps g: [0,1] -> [0,1] for ``Compose``; the flag says increasing (True) or decreasing."""
MONOTONE.register("identity", (lambda v: v, True))
MONOTONE.register("square", (lambda v: v**2, True))
MONOTONE.register("sqrt", (np.sqrt, True))
MONOTONE.register("smoothstep", (lambda v: 3 * v**2 - 2 * v**3, True))
MONOTONE.register("invert", (lambda v: 1.0 - v, False))


class Compose(Property):
    """g(f) for a registered monotone g, so the exact range of f maps to the exact range of g(f)."""

    def __init__(self, part: Property, g: str, *, name: str | None = None) -> None:
        self.part = part
        self.g_name = g
        self.g, self.increasing = MONOTONE.get(g)
        self.name = name or f"{g}({part.name})"
        self.description = f"{g} of [{part.description or part.name}]"

    def batch(self, batch: np.ndarray) -> np.ndarray:
        return clean(self.g(self.part.batch(batch)))

    def feasible_range(self, space: ObjectSpace) -> tuple[float, float]:
        lo, hi = self.part.feasible_range(space)
        a, b = (float(v) for v in clean(self.g(np.array([lo, hi]))))
        return (a, b) if self.increasing else (b, a)


class PropertyVector:
    """Several properties measured together: ``batch -> (B, d)``."""

    def __init__(self, props: Sequence[Property]) -> None:
        self.props = list(props)
        self.names = [p.name for p in props]

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return np.stack([p.batch(batch) for p in self.props], axis=1)


class PropertySpace:
    """The embedding of objects in [0,1]^d with a metric (euclidean, manhattan or chebyshev)."""

    def __init__(self, props: Sequence[Property] | Mapping[str, Property], metric: str = "euclidean") -> None:
        self.vector = PropertyVector(list(props.values()) if isinstance(props, Mapping) else props)
        if metric not in ("euclidean", "manhattan", "chebyshev"):
            raise ValueError(f"unknown metric {metric!r}")
        self.metric = metric

    def embed(self, batch: np.ndarray) -> np.ndarray:
        """(B, d) coordinates."""
        return self.vector(batch)

    def distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Distances between rows of two coordinate arrays (broadcasting)."""
        diff = np.abs(np.asarray(a) - np.asarray(b))
        if self.metric == "euclidean":
            return np.sqrt((diff**2).sum(axis=-1))
        if self.metric == "manhattan":
            return diff.sum(axis=-1)
        return diff.max(axis=-1)
