"""The generic approximate sampler (spec §1.3): objects whose properties lie near requested targets.

Every sample of a request runs as one chain of a vectorised simulated annealing, so a request of
10 objects costs a few hundred numpy calls, not thousands of Python loops. Single-property requests
use the property's constructive sampler when it has one (``Property.sample_exact``).

Steps: (1) clamp impossible targets to the feasible range (reported in ``clamped``); (2) anneal the
energy sum_k max(0, |f_k - p_k| - eps_k)/eps_k + lam * sum_k |f_k - p_k| with Metropolis moves at a
geometric temperature (each move is the best of ``proposals`` random local moves, which costs the same
numpy calls as one and converges far faster than the spec's single proposal); (3) once in the band, walk ``mix_steps`` random band-preserving moves to
de-correlate; (4) restart chains that missed or duplicated; (5) a wall-clock guard returns what exists.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.spaces import ObjectSpace

logger = logging.getLogger(__name__)
BAND_TOL = 1e-9
"""Slack on |f - p| <= eps so that e.g. 0.6 counts as within 0.1 of 0.5 despite float rounding."""

Constraints = Mapping[str, "tuple[float, float] | float"]


@dataclass(slots=True)
class Sample:
    """One returned object, its constrained property values (unrounded) and whether all are in band."""

    obj: Any
    values: dict[str, float]
    hit: bool


@dataclass(slots=True)
class SampleBatch:
    """The answer to one request; ``clamped`` maps a property to the target actually used."""

    samples: list[Sample]
    targets: dict[str, tuple[float, float]]
    clamped: dict[str, float] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def objects(self) -> list[Any]:
        return [s.obj for s in self.samples]

    @property
    def hit_rate(self) -> float:
        return float(np.mean([s.hit for s in self.samples])) if self.samples else 0.0


def in_band(values: np.ndarray, targets: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """(B,) whether every |f_k - p_k| <= eps_k, for values of shape (B, d)."""
    return (np.abs(values - targets) <= eps + BAND_TOL).all(axis=1)


class AnnealingSampler:
    """Approximate sampler over any ``ObjectSpace`` with batch properties.

    Args:
        space: the object space (random draws and local moves).
        properties: the measurable properties by name.
        default_eps: band half-width when a constraint gives only a target.
        max_iters, restarts, t0, cooling, lam: the annealing schedule of spec §1.3.
        mix_steps: band-walk length (default: the object length, or 20).
        time_limit: wall-clock seconds per request of 10 (scaled with n); None disables the guard.
        proposals: annealing moves are the best of this many random local moves (1 = plain
            Metropolis as in the spec; more converges faster; the band walk always uses 1).
    """

    def __init__(self, space: ObjectSpace, properties: Mapping[str, Property], *, default_eps: float = 0.1,
                 max_iters: int = 4000, restarts: int = 3, t0: float = 0.5, cooling: float = 0.995,
                 lam: float = 0.01, mix_steps: int | None = None, time_limit: float | None = 2.0,
                 proposals: int = 32) -> None:
        self.space = space
        self.properties = dict(properties)
        self.default_eps = default_eps
        self.max_iters = max_iters
        self.restarts = restarts
        self.t0 = t0
        self.cooling = cooling
        self.lam = lam
        self.mix_steps = mix_steps if mix_steps is not None else int(getattr(space, "length", 20))
        self.time_limit = time_limit
        self.proposals = max(1, proposals)

    # ------------------------------------------------------------------ request handling

    def normalise(self, constraints: Constraints) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
        """Targets as (p, eps) with impossible targets clamped to the nearest feasible value."""
        targets: dict[str, tuple[float, float]] = {}
        clamped: dict[str, float] = {}
        for name, spec in constraints.items():
            if name not in self.properties:
                raise KeyError(f"unknown property {name!r}; measurable: {', '.join(sorted(self.properties))}")
            p, eps = (float(spec), self.default_eps) if isinstance(spec, int | float) else map(float, spec)
            if eps < 0:
                raise ValueError(f"eps must be >= 0, got {eps} for {name}")
            lo, hi = self.properties[name].feasible_range(self.space)
            if p < lo - eps or p > hi + eps:
                p_new = min(max(p, lo), hi)
                clamped[name] = p_new
                p = p_new
            targets[name] = (p, eps)
        return targets, clamped

    def sample(self, constraints: Constraints, n: int, rng: np.random.Generator) -> SampleBatch:
        """``n`` objects near the targets; each ``Sample.hit`` says whether all constraints hold."""
        if n < 1:
            raise ValueError("n must be >= 1")
        targets, clamped = self.normalise(constraints)
        names = list(targets)
        props = [self.properties[k] for k in names]
        p = np.array([targets[k][0] for k in names])
        eps = np.array([targets[k][1] for k in names])
        info: dict[str, Any] = {"method": "anneal"}
        batch = None
        if len(props) == 1:
            batch = props[0].sample_exact(self.space, float(p[0]), float(eps[0]), n, rng)
            if batch is not None:
                info["method"] = "exact"
        if batch is None:
            batch = self._anneal(props, p, eps, n, rng, info)
        values = np.stack([prop.batch(batch) for prop in props], axis=1)
        hits = in_band(values, p, eps)
        objs = self.space.decode(batch)
        samples = [Sample(obj, {k: float(v) for k, v in zip(names, row, strict=True)}, bool(h))
                   for obj, row, h in zip(objs, values, hits, strict=True)]
        if clamped:
            info["clamped"] = True
        return SampleBatch(samples, targets, clamped, info)

    # ------------------------------------------------------------------ the annealer

    def _values(self, props: list[Property], x: np.ndarray) -> np.ndarray:
        return np.stack([prop.batch(x) for prop in props], axis=1)

    def _energy(self, values: np.ndarray, p: np.ndarray, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gap = np.abs(values - p)
        violation = (np.maximum(0.0, gap - eps - BAND_TOL) / np.maximum(eps, 1e-6)).sum(axis=1)
        return violation + self.lam * gap.sum(axis=1), violation

    def _anneal(self, props: list[Property], p: np.ndarray, eps: np.ndarray, n: int,
                rng: np.random.Generator, info: dict[str, Any]) -> np.ndarray:
        """Run 2n chains at once; harvest chains that reach the band, restart them and stale ones.

        Stops when n distinct hits exist, when 3n hits in a row brought nothing new (the band holds
        fewer than n objects), when the iteration budget max_iters * (restarts + 1) is spent, or at
        the wall-clock guard.
        """
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit * max(1.0, n / 10)
        chains = max(2 * n, 4)
        x = self.space.random_batch(rng, chains)
        energy, violation = self._energy(self._values(props, x), p, eps)
        age = np.zeros(chains, dtype=np.int64)
        best_x, best_e = x.copy(), energy.copy()
        found: dict[bytes, np.ndarray] = {}
        misses: list[tuple[float, np.ndarray]] = []
        stale_hits = 0
        restarts = 0
        budget = self.max_iters * (self.restarts + 1)
        for it in range(budget):
            hit = violation <= 0
            n_hit = int(hit.sum())
            if n_hit and (n_hit >= n - len(found) or it % 64 == 0 or n_hit == chains):
                idx = np.flatnonzero(hit)
                for row in self._band_walk(props, x[idx].copy(), p, eps, rng, deadline):
                    key = row.tobytes()
                    stale_hits = 0 if key not in found else stale_hits + 1
                    found.setdefault(key, row)
                if len(found) >= n or stale_hits >= 3 * n:
                    break
                x[idx] = self.space.random_batch(rng, idx.size)
                energy[idx], violation[idx] = self._energy(self._values(props, x[idx]), p, eps)
                best_x[idx], best_e[idx], age[idx] = x[idx], energy[idx], 0
            old = np.flatnonzero(age >= self.max_iters)
            if old.size:  # a stuck chain: keep its best as a fallback and start afresh
                misses += [(float(best_e[i]), best_x[i].copy()) for i in old]
                x[old] = self.space.random_batch(rng, old.size)
                energy[old], violation[old] = self._energy(self._values(props, x[old]), p, eps)
                best_x[old], best_e[old], age[old] = x[old], energy[old], 0
                restarts += old.size
            if deadline is not None and it % 32 == 31 and time.perf_counter() > deadline:
                info["timed_out"] = True
                logger.info("sampler time guard hit (%d/%d found)", len(found), n)
                break
            active = np.flatnonzero(violation > 0)
            if active.size == 0:
                continue
            # Best of k symmetric proposals per chain: same numpy calls, k times the progress.
            k = self.proposals
            y = self.space.mutate_batch(np.repeat(x[active], k, axis=0), rng)
            e_all, v_all = self._energy(self._values(props, y), p, eps)
            pick = np.arange(active.size) * k + e_all.reshape(active.size, k).argmin(axis=1)
            y, e_new, v_new = y[pick], e_all[pick], v_all[pick]
            delta = e_new - energy[active]
            temperature = self.t0 * self.cooling ** age[active]
            accept = (delta <= 0) | (rng.random(active.size) < np.exp(-np.maximum(delta, 0) / temperature))
            idx = active[accept]
            x[idx], energy[idx], violation[idx] = y[accept], e_new[accept], v_new[accept]
            age[active] += 1
            better = energy < best_e
            best_x[better], best_e[better] = x[better], energy[better]
        info["iterations"] = it + 1
        info["chain_restarts"] = restarts
        out = list(found.values())[:n]
        if found and stale_hits >= 3 * n:  # the band holds fewer than n objects: repeat hits
            while len(out) < n:
                out.append(out[len(out) % len(found)])
        misses += [(float(e), row) for e, row in zip(best_e, best_x, strict=True)]
        misses.sort(key=lambda item: item[0])
        for _, row in misses:
            if len(out) >= n:
                break
            if row.tobytes() not in found:
                out.append(row)
        while len(out) < n:  # the band holds fewer than n distinct objects
            out.append(out[len(out) % len(found)] if found else self.space.random_batch(rng, 1)[0])
        return np.stack(out[:n])

    def _band_walk(self, props: list[Property], x: np.ndarray, p: np.ndarray, eps: np.ndarray,
                   rng: np.random.Generator, deadline: float | None) -> np.ndarray:
        """Random moves that keep every constraint satisfied: uniform on the band's component."""
        for it in range(self.mix_steps):
            if deadline is not None and it % 16 == 15 and time.perf_counter() > deadline:
                break
            y = self.space.mutate_batch(x, rng)
            keep = in_band(self._values(props, y), p, eps)
            x[keep] = y[keep]
        return x
