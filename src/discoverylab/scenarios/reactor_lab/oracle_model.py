"""The Reactor Lab oracle's models: a candidate property with its predictions for the unknown
crystals, and the search over reactor settings that tests them (used by `oracle.py`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

LOW, HIGH = 0, 10000  # the reactor panel's settings
F_ROUNDING = 0.003  # std of a frequency rounded to 0.01 Hz
UNITS = (1, 10, 100, 1000)


@dataclass(slots=True)
class Candidate:
    """A property that may drive the frequency, with its mean reading per crystal."""

    name: str
    values: dict[str, float]
    sigma: float  # uncertainty of one crystal's mean reading
    blank_sigma: float = 0.0  # uncertainty of the blank subtracted from every reading

    def predict(
        self, points: dict[str, float], degree: int, crystal: str, simplest: bool = True
    ) -> tuple[float, float] | None:
        """(frequency, uncertainty) for `crystal` from the simplest model that fits `points`:
        a proportion if the known crystals agree with one (and `simplest`), else a polynomial
        of `degree`."""
        names = sorted(points)
        xs = [self.values[n] for n in names]
        if len(set(xs)) < degree + 1 or crystal not in self.values:
            return None
        fs = np.array([points[n] for n in names])
        proportional = simplest and self._proportional(np.array(xs), fs)

        def fit(xs: list[float], x: float, fs: np.ndarray = fs) -> float:
            arr = np.array(xs)
            if proportional:
                return float(arr @ fs / (arr @ arr) * x)
            return float(np.polyval(np.polyfit(arr, fs, degree), x))

        x = self.values[crystal]
        value = fit(xs, x)
        if not math.isfinite(value):
            return None
        # Propagate the uncertainties by finite differences: the readings' noise, and the
        # frequencies' rounding to 0.01 Hz (which matters when two readings nearly coincide).
        h, spread = 1e-3, 0.0
        for j in range(len(xs)):
            moved_f = fs.copy()
            moved_f[j] += h
            spread += ((fit(xs, x, moved_f) - value) / h * F_ROUNDING) ** 2
            if self.sigma > 0:
                moved = list(xs)
                moved[j] += h
                spread += ((fit(moved, x) - value) / h * self.sigma) ** 2
        if self.sigma > 0:
            spread += ((fit(xs, x + h) - value) / h * self.sigma) ** 2
        if self.blank_sigma > 0:  # the blank shifts every reading alike (only a proportion feels it)
            shifted = fit([v + h for v in xs], x + h)
            spread += ((shifted - value) / h * self.blank_sigma) ** 2
        return value, math.sqrt(spread)

    def _proportional(self, xs: np.ndarray, fs: np.ndarray) -> bool:
        """Whether frequency = slope * reading fits every point within the reading noise."""
        if not np.all(xs > 0):
            return False
        slope = float(xs @ fs / (xs @ xs))
        noise = 3 * abs(slope) * (self.sigma + self.blank_sigma)
        return bool(np.max(np.abs(fs - slope * xs)) <= noise + 0.05)


@dataclass(slots=True)
class Reactor:
    uuid: int


@dataclass(slots=True)
class Search:
    """Where the crystal's frequency may lie: probability mass on integer targets. A setting v
    makes the reactor run for a frequency within 2 Hz, so checking v rules out targets
    v-reach..v+reach (reach 1; 0 for Easy's 1 Hz reactors, which may miss a target next door)."""

    mass: dict[int, float] = field(default_factory=dict)
    visited: set[int] = field(default_factory=set)
    reach: int = 1

    def add(self, value: float, spread: float, weight: float) -> None:
        """A prediction: one target if it is exact, else a Gaussian over +/-3 sigma."""
        if spread < 0.3:
            shares = {round(value): 1.0}
        else:
            sigma = math.hypot(spread, 0.5)
            lo, hi = math.floor(value - 3 * sigma - 1), math.ceil(value + 3 * sigma + 1)
            shares = {t: math.exp(-0.5 * ((t - value) / sigma) ** 2) for t in range(lo, hi + 1)}
        total = sum(shares.values())
        for target, share in shares.items():
            near = range(target - self.reach, target + self.reach + 1)
            if LOW <= target <= HIGH and not any(v in self.visited for v in near):
                self.mass[target] = self.mass.get(target, 0.0) + weight * share / total

    def visit(self, setting: int) -> None:
        self.visited.add(setting)
        for target in range(setting - self.reach, setting + self.reach + 1):
            self.mass.pop(target, None)

    def next_setting(self, now: int) -> int | None:
        """The setting that rules out the most probability per button press."""
        best: tuple[float, int, int] | None = None
        near = range(-self.reach, self.reach + 1)
        for setting in {t + d for t in self.mass for d in near}:
            if setting == now or not LOW <= setting <= HIGH:
                continue
            gain = sum(self.mass.get(setting + d, 0.0) for d in near)
            cost = press_count(setting - now)
            rank = (gain / cost, -cost, -setting)
            if best is None or rank > best:
                best = rank
        return None if best is None else -best[2]


@cache
def press_count(delta: int) -> int:
    return len(plan_presses(delta))


def plan_presses(delta: int) -> list[int]:
    """The fewest +/-1, 10, 100, 1000 steps adding up to `delta` (largest first)."""
    best: list[int] | None = None
    for carries in itertools.product((0, 1), repeat=3):
        rest, steps = delta, []
        for unit, carry in zip(UNITS[:3], carries, strict=True):
            digit = rest % 10
            count = digit - 10 * carry if digit else 0
            steps += [unit if count > 0 else -unit] * abs(count)
            rest = (rest - count) // 10
        steps += [1000 if rest > 0 else -1000] * abs(rest)
        if best is None or len(steps) < len(best):
            best = steps
    assert best is not None
    return sorted(best, key=lambda s: -abs(s))
