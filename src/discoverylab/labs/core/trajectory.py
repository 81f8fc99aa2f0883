"""Trajectory analysis (spec §1.4): cycles, attractor estimation by k-means, basins.

Used by ``verify``, by graders (ground-truth attractors) and by scripted baseline agents.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from discoverylab.labs.core.operators import Dynamics

Embed = Callable[[Sequence[Any]], np.ndarray]
"""Maps a list of objects to their (T, d) property coordinates."""


@dataclass(frozen=True, slots=True)
class Cycle:
    """A trajectory ends in a cycle of ``period`` entered at index ``start``."""

    period: int
    start: int


def _key(item: Any) -> Hashable:
    if isinstance(item, np.ndarray):
        return item.tobytes()
    return item  # type: ignore[no-any-return]


def detect_cycle(traj: Sequence[Any], max_period: int = 8,
                 key: Callable[[Any], Hashable] | None = None) -> Cycle | None:
    """Smallest period p <= max_period such that the last p items repeat the p before them.

    ``key`` maps items to hashables, e.g. ``lambda v: tuple(np.round(v, 3))`` for property vectors.
    A fixed point is a cycle of period 1. Returns None when the tail does not repeat.
    """
    items = [key(x) if key else _key(x) for x in traj]
    n = len(items)
    for p in range(1, max_period + 1):
        if n < 2 * p:
            break
        if all(items[n - 1 - j] == items[n - 1 - j - p] for j in range(p)):
            start = n - 2 * p
            while start > 0 and items[start - 1] == items[start - 1 + p]:
                start -= 1
            return Cycle(p, start)
    return None


def kmeans(points: np.ndarray, k: int, rng: np.random.Generator, *, iters: int = 100,
           n_init: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means with k-means++ starts; centroids sorted lexicographically for stable output."""
    points = np.asarray(points, dtype=np.float64)
    if len(points) < k:
        raise ValueError(f"need at least k={k} points, got {len(points)}")
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(n_init):
        centres = [points[rng.integers(len(points))]]
        for _ in range(1, k):
            d2 = ((points[:, None, :] - np.asarray(centres)[None]) ** 2).sum(axis=2).min(axis=1)
            probs = d2 / d2.sum() if d2.sum() > 0 else np.full(len(points), 1 / len(points))
            centres.append(points[rng.choice(len(points), p=probs)])
        c = np.asarray(centres)
        for _ in range(iters):
            labels = ((points[:, None, :] - c[None]) ** 2).sum(axis=2).argmin(axis=1)
            new = np.array([points[labels == j].mean(axis=0) if (labels == j).any() else c[j] for j in range(k)])
            if np.allclose(new, c):
                break
            c = new
        labels = ((points[:, None, :] - c[None]) ** 2).sum(axis=2).argmin(axis=1)
        inertia = float(((points - c[labels]) ** 2).sum())
        if best is None or inertia < best[0] - 1e-12:
            best = (inertia, c, labels)
    assert best is not None
    order = np.lexsort(best[1].T[::-1])
    relabel = np.empty(k, dtype=np.int64)
    relabel[order] = np.arange(k)
    return best[1][order], relabel[best[2]]


@dataclass(slots=True)
class AttractorEstimate:
    """Result of ``estimate_attractors``; ``end_points`` are per-start means of the final cycle."""

    centroids: np.ndarray
    labels: np.ndarray
    end_points: np.ndarray
    periods: list[int | None]
    entry_steps: list[int | None]

    @property
    def converged(self) -> np.ndarray:
        """Whether each start ended in a detected cycle."""
        return np.array([p is not None for p in self.periods])

    @property
    def converged_fraction(self) -> float:
        return float(self.converged.mean()) if self.periods else 0.0


def end_point(traj: Sequence[Any], embed: Embed, max_period: int = 8) -> tuple[np.ndarray, Cycle | None]:
    """Mean embedding over the final cycle (or the last state when no cycle is found)."""
    cycle = detect_cycle(traj, max_period)
    tail = traj[-cycle.period:] if cycle else traj[-1:]
    return embed(list(tail)).mean(axis=0), cycle


def estimate_attractors(dynamics: Dynamics, starts: Sequence[Any], steps: int, k: int,
                        rng: np.random.Generator, embed: Embed, *, max_period: int = 8) -> AttractorEstimate:
    """Run from every start, take the mean of each final cycle and cluster the means with k-means."""
    trajs = dynamics.trajectory_batch(starts, steps, rng)
    ends, periods, entries = [], [], []
    for traj in trajs:
        point, cycle = end_point(traj, embed, max_period)
        ends.append(point)
        periods.append(cycle.period if cycle else None)
        entries.append(cycle.start if cycle else None)
    points = np.asarray(ends)
    centroids, labels = kmeans(points, k, rng)
    return AttractorEstimate(centroids, labels, points, periods, entries)


def basin_of(dynamics: Dynamics, start: Any, attractors: np.ndarray, steps: int, rng: np.random.Generator,
             embed: Embed, *, max_period: int = 8) -> int:
    """Index of the attractor nearest to where ``start`` ends up."""
    traj = dynamics.run(start, steps, rng)
    point, _ = end_point(traj, embed, max_period)
    return int(np.linalg.norm(np.asarray(attractors) - point, axis=1).argmin())
