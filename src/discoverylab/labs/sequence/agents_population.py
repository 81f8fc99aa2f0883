"""Baseline agents of the population protocol: scripted oracle, random, heuristic scientist.

They exchange JSON with the lab like an LLM would. The oracle reads `protocol.ground_truth()`; the
random and heuristic agents only use the prompt and what the lab returns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from discoverylab.labs.agents import LabAgent
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.agents_dynamics import _payload, _payloads
from discoverylab.labs.sequence.population import designed_population
from discoverylab.labs.sequence.properties import decode

_SHAPE = re.compile(r"populations of (\d+) DNA-like sequences of length (\d+)")
_MAX_GENERATIONS = re.compile(r"generations in 1\.\.(\d+)")
_ROUNDS = re.compile(r"at most (\d+) experiments")
_HORIZON = re.compile(r"after (\d+) generations")
_MEASURABLE = re.compile(r"^- ([a-z_0-9]+):", re.MULTILINE)


class _Reader:
    """What every baseline reads from the prompt: population shape, limits and measurables."""

    def reset(self, seed: int) -> None:
        self.size, self.length, self.max_generations, self.rounds, self.horizon = 12, 16, 16, 6, 4
        self.measurables: list[str] = []

    def read(self, message: str) -> dict[str, Any]:
        if m := _SHAPE.search(message):
            self.size, self.length = int(m.group(1)), int(m.group(2))
        if m := _MAX_GENERATIONS.search(message):
            self.max_generations = int(m.group(1))
        if m := _ROUNDS.search(message):
            self.rounds = int(m.group(1))
        if m := _HORIZON.search(message):
            self.horizon = int(m.group(1))
        self.measurables = _MEASURABLE.findall(message) or self.measurables
        return _payload(message)


class PopulationOracle(_Reader):
    """Knows the expected target means of every held-out population."""

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol

    def act(self, message: str) -> str:
        payload = self.read(message)
        if payload.get("type") != "report_request":
            return json.dumps({"type": "experiment", "population": ["A" * self.length] * self.size,
                               "generations": 1, "measurables": self.measurables[:1], "reasoning": "oracle probe"})
        truth = self.protocol.ground_truth()
        return json.dumps({"type": "report", "hypothesis": f"compose {truth['compose']}, evolve {truth['evolve']}",
                           "evidence": "ground truth",
                           "predictions": {h["pid"]: h["truth"] for h in truth["heldout"]}})


class PopulationRandom(_Reader):
    """Random populations and generations, random predictions."""

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0x9091]))

    def act(self, message: str) -> str:
        payload = self.read(message)
        if payload.get("type") == "report_request":
            targets = payload.get("targets", [])
            preds = {pid: {t: float(self.rng.random()) for t in targets} for pid in payload.get("heldout_populations", {})}
            return json.dumps({"type": "report", "hypothesis": "random", "evidence": "none", "predictions": preds})
        codes = self.rng.integers(0, 4, size=(self.size, self.length), dtype=np.uint8)
        return json.dumps({"type": "experiment", "population": decode(codes), "measurables": self.measurables,
                           "generations": int(self.rng.integers(1, self.max_generations + 1))})


def _fit_predict(x: np.ndarray, y: np.ndarray, xq: np.ndarray, alpha: float = 1e-3) -> np.ndarray:
    """Ridge fit of y on [1, x] and predictions at xq."""
    a = np.hstack([np.ones((len(x), 1)), x])
    coef = np.linalg.solve(a.T @ a + alpha * np.eye(a.shape[1]), a.T @ y)
    return np.hstack([np.ones((len(xq), 1)), xq]) @ coef


GENERATIONS_PER_HORIZON = 5
"""Experiments last 5 K generations (capped): long enough for 4 K + 1 (t, t + K) pairs per run, short
enough that saturated populations do not swamp the fit."""


class PopulationHeuristic(_Reader):
    """Designed starting populations spread over composition, palindromicity and blockiness; every run
    lasts the maximum number of generations. The report regresses each target's mean K generations
    later on the means now (every (t, t + K) pair of every run: the mean is treated as Markov), or learns
    one generation and iterates it K times, picking by leave-one-run-out K-step error among linear,
    quadratic, all-measurables and mean-and-spread direct models and linear and quadratic
    one-generation maps."""

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0x4E08]))
        self.runs: list[dict[str, Any]] = []
        self.turn = 0

    def act(self, message: str) -> str:
        payload = self.read(message)
        self.runs += [p for p in _payloads(message) if p.get("type") == "lab_results"]
        if payload.get("type") == "report_request":
            return json.dumps(self._report(payload))
        n = max(self.rounds, 2)
        if self.turn == 0:  # a Latin-square design over (gc, palindromic share)
            self.levels = (np.linspace(0.05, 0.95, n)[self.rng.permutation(n)],
                           np.linspace(0.0, 1.0, n)[self.rng.permutation(n)])
        gc, pal = self.levels[0][self.turn % n], self.levels[1][self.turn % n]
        block = 1 + self.turn % 4
        self.turn += 1
        pop = designed_population(self.rng, self.size, self.length, float(gc), float(pal), block)
        generations = min(self.max_generations, GENERATIONS_PER_HORIZON * self.horizon)
        return json.dumps({"type": "experiment", "population": pop, "generations": generations,
                           "measurables": self.measurables,
                           "reasoning": f"designed start: gc {gc:.2f}, palindromic share {pal:.2f}, blocks {block}"})

    def _pairs(self, horizon: int, names: list[str], target: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xs, ys, groups = [], [], []
        for r, run in enumerate(self.runs):
            meas = run.get("measurements", {})
            if target not in meas or any(m.split(":")[0] not in meas for m in names):
                continue
            # a column "m" is m's population mean, "m:std" its standard deviation
            means = np.array([meas[m.split(":")[0]]["std" if m.endswith(":std") else "mean"] for m in names]).T
            series = np.asarray(meas[target]["mean"])
            for t in range(len(series) - horizon):
                xs.append(means[t])
                ys.append(series[t + horizon])
                groups.append(r)
        d = len(names)
        return np.asarray(xs).reshape(-1, d), np.asarray(ys), np.asarray(groups)

    def _model(self, kind: str, names: list[str], target: str
               ) -> tuple[list[str], Callable[[np.ndarray], np.ndarray], bool]:
        """(columns, features, iterated): iterated models learn one generation and are applied K times."""
        own = [target] if target in names else names[:1]
        quadratic: Callable[[np.ndarray], np.ndarray] = lambda x: np.hstack([x, x**2])  # noqa: E731
        identity: Callable[[np.ndarray], np.ndarray] = lambda x: x  # noqa: E731
        return {"linear": (own, identity, False), "quadratic": (own, quadratic, False), "all": (names, identity, False),
                "spread": ([*own, f"{own[0]}:std"], quadratic, False),
                "step_linear": (own, identity, True), "step_quadratic": (own, quadratic, True)}[kind]

    def _forecast(self, x: np.ndarray, y: np.ndarray, xq: np.ndarray, feat: Callable[[np.ndarray], np.ndarray],
                  iterated: bool, horizon: int) -> np.ndarray:
        if not iterated:
            return np.clip(_fit_predict(feat(x), y, feat(xq)), 0.0, 1.0)
        a = np.hstack([np.ones((len(x), 1)), feat(x)])
        coef = np.linalg.solve(a.T @ a + 1e-3 * np.eye(a.shape[1]), a.T @ y)
        state = xq
        for _ in range(horizon):
            state = np.clip(np.hstack([np.ones((len(state), 1)), feat(state)]) @ coef, 0.0, 1.0)[:, None]
        return state[:, 0]

    def _predict(self, target: str, horizon: int, starts: dict[str, dict[str, float]]) -> dict[str, float]:
        names = [m for m in self.measurables if all(m in s and f"{m}:std" in s for s in starts.values())]
        pids = list(starts)
        fits: list[tuple[float, np.ndarray]] = []
        for kind in ("linear", "quadratic", "all", "spread", "step_linear", "step_quadratic"):
            cols, feat, iterated = self._model(kind, names, target)
            x, y, groups = self._pairs(1 if iterated else horizon, cols, target)
            xk, yk, gk = self._pairs(horizon, cols, target)
            if len(np.unique(groups)) < 2 or not len(gk):
                continue
            err = np.mean([np.abs(self._forecast(x[groups != g], y[groups != g], xk[gk == g], feat, iterated, horizon)
                                  - yk[gk == g]).mean() for g in np.unique(gk)])
            xq = np.array([[starts[pid][c] for c in cols] for pid in pids]).reshape(len(pids), len(cols))
            fits.append((float(err), self._forecast(x, y, xq, feat, iterated, horizon)))
        if not fits:  # too little data: no change is the only guess left
            return {pid: float(starts[pid].get(target, 0.5)) for pid in pids}
        weights = np.array([1.0 / max(err, 1e-4) ** 2 for err, _ in fits])
        preds = np.average(np.stack([p for _, p in fits]), axis=0, weights=weights)
        return {pid: float(v) for pid, v in zip(pids, preds, strict=True)}

    def _report(self, payload: dict[str, Any]) -> dict[str, Any]:
        horizon = int(payload.get("generations", 1))
        starts = {pid: h.get("generation_0", {}) | {f"{m}:std": v for m, v in h.get("generation_0_std", {}).items()}
                  for pid, h in payload.get("heldout_populations", {}).items()}
        preds: dict[str, dict[str, float]] = {pid: {} for pid in starts}
        for target in payload.get("targets", []):
            for pid, value in self._predict(target, horizon, starts).items():
                preds[pid][target] = round(value, 4)
        return {"type": "report", "hypothesis": "population means evolve as a smooth function of the current means",
                "evidence": f"{len(self.runs)} designed runs", "predictions": preds}


AGENT_CLASSES: dict[str, Callable[[Protocol], LabAgent]] = {"oracle": PopulationOracle, "random": PopulationRandom,
                                                           "heuristic": PopulationHeuristic}
