"""What the lab reports about a run, and the statistics the grader re-computes from it.

The same `statistic` function produces the summaries shown to the agent and re-computes the
agent's claims, so a claim that quotes a reported number always verifies.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from discoverylab.labs.macroecon.model import MacroRun, simulate
from discoverylab.labs.macroecon.observation import INDICATOR_INDEX, INDICATORS
from discoverylab.labs.macroecon.params import TUNABLE_BY_KEY, MacroParams, MacroStructure

TRAJECTORY_INDICATORS: tuple[str, ...] = (
    "gdp_real", "unemployment", "inflation", "gov_debt", "avg_price", "inventory")
MAX_TRAJECTORY_POINTS = 40
HELD_OUT_STEPS = 100
HELD_OUT_WINDOW = (50, 100)


def round_sig(x: float, digits: int = 6) -> float:
    """Round to significant digits so replies stay short (claims are checked to 5%)."""
    if x == 0.0 or not math.isfinite(x):
        return 0.0 if x == 0.0 else x
    return float(f"{x:.{digits}g}")


def statistic(run: MacroRun, indicator: str, stat: str, first: int | None = None,
              last: int | None = None) -> float:
    """One summary statistic of an indicator over quarters first..last (1-based, inclusive).

    `argmax`/`argmin` are quarter numbers (1-based), as in the lab's summaries.
    """
    lo = 1 if first is None else max(1, first)
    hi = run.steps if last is None else min(run.steps, last)
    values = run.indicators[lo : hi + 1, INDICATOR_INDEX[indicator]]
    if values.size == 0:
        return math.nan
    match stat:
        case "mean":
            return float(values.mean())
        case "std":
            return float(values.std())
        case "min":
            return float(values.min())
        case "max":
            return float(values.max())
        case "first":
            return float(values[0])
        case "last":
            return float(values[-1])
        case "argmax":
            return float(lo + int(np.argmax(values)))
        case "argmin":
            return float(lo + int(np.argmin(values)))
    raise ValueError(f"unknown statistic {stat!r}")


def run_summary(run: MacroRun) -> dict[str, dict[str, float]]:
    """The 16-indicator summary table of a lab reply."""
    stats = ("mean", "std", "min", "max", "first", "last", "argmax", "argmin")
    return {name: {s: round_sig(statistic(run, name, s)) for s in stats} for name in INDICATORS}


def run_trajectory(run: MacroRun, full: bool) -> dict[str, Any]:
    """Thinned trajectory (at most 40 points, 6 indicators) or, on request, every quarter of all 16."""
    every = 1 if full else max(1, math.ceil(run.steps / MAX_TRAJECTORY_POINTS))
    quarters = list(range(every, run.steps + 1, every))
    names = INDICATORS if full else TRAJECTORY_INDICATORS
    out: dict[str, Any] = {"every": every, "quarters": quarters}
    for name in names:
        column = run.indicators[:, INDICATOR_INDEX[name]]
        out[name] = [round_sig(float(column[q])) for q in quarters]
    return out


class HeldOutSetting(BaseModel):
    """A parameter setting whose outcomes the agent must predict in its report."""

    model_config = ConfigDict(frozen=True)

    setting_id: str
    params: dict[str, float]


def held_out_settings(rng: np.random.Generator, count: int = 5) -> list[HeldOutSetting]:
    """Settings that each change two random tunables to values inside their 10-90% range."""
    keys = sorted(TUNABLE_BY_KEY)
    settings: list[HeldOutSetting] = []
    for i in range(count):
        chosen = rng.choice(len(keys), size=2, replace=False)
        params: dict[str, float] = {}
        for index in sorted(int(c) for c in chosen):
            spec = TUNABLE_BY_KEY[keys[index]]
            span = spec.high - spec.low
            value = spec.low + span * float(rng.uniform(0.1, 0.9))
            params[spec.key] = round(value, 3 if span <= 5 else 0)
        settings.append(HeldOutSetting(setting_id=f"h{i + 1}", params=params))
    return settings


def prediction_targets(run: MacroRun) -> dict[str, float]:
    """The two quantities predicted for held-out settings (100-quarter runs)."""
    first, last = HELD_OUT_WINDOW
    return {"unemployment_mean_q50_100": run.window_mean("unemployment", first, last),
            "gov_debt_final": float(run.indicators[-1, INDICATOR_INDEX["gov_debt"]])}


_TARGET_CACHE: dict[tuple[str, int, str], dict[str, float]] = {}


def _targets_for(params: dict[str, float], seed: int, structure: MacroStructure) -> dict[str, float]:
    """Prediction targets of one setting, memoised (oracles and graders ask for the same runs)."""
    key = (json.dumps(params, sort_keys=True), int(seed), structure.config_hash())
    if key not in _TARGET_CACHE:
        if len(_TARGET_CACHE) > 4096:
            _TARGET_CACHE.clear()
        run = simulate(MacroParams(**params), HELD_OUT_STEPS, seed, structure)
        _TARGET_CACHE[key] = prediction_targets(run)
    return dict(_TARGET_CACHE[key])


def held_out_truth(settings: list[HeldOutSetting], seeds: int | list[int],
                   structure: MacroStructure) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """True targets of each held-out setting, and those of the default run (the naive predictor).

    With several `seeds` each target is the mean over those runs (the protocol passes hidden seeds)."""
    seed_list = [seeds] if isinstance(seeds, int) else list(seeds)

    def mean_targets(params: dict[str, float]) -> dict[str, float]:
        runs = [_targets_for(params, s, structure) for s in seed_list]
        return {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}

    truth = {s.setting_id: mean_targets(s.params) for s in settings}
    return truth, mean_targets({})
