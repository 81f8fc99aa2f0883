"""Grading of the population protocol: predictive skill with no free credit.

For each target measurable, the error of the reported predictions (mean absolute error over the
held-out populations; a missing prediction counts as an error of 1) is compared with the better of
two baselines computed in hindsight from the truth itself:

* the best constant: the median of the true values (no constant, 0.5 included, does better), and
* "nothing changes": each population's own generation-0 mean, and
* the best of a public grid of hedges `a * start + (1 - a) * c` (`HEDGES`: "it moves part of the way
  towards some middle value"), the cheap guess a prior about relaxing processes suggests, and the
  creeps towards 1 at a fixed rate per generation (`RATES`), the guess the public menu suggests for
  palindromicity (palindrome pull only raises it).

skill = max(0, 1 - MAE / min(baselines)); the score is the mean skill over targets. So a constant,
the midpoint, the identity or a grid hedge earn exactly 0 by construction, and only a prediction that
tracks how the process moves populations earns credit. A target whose truth has no spread gives every report 0
(the lab is degenerate; `verify` refuses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discoverylab.labs.protocol import Score
from discoverylab.labs.sequence.parsing_population import PopulationReport

GRADER_VERSION = 1
"""Bumped whenever the population grade changes (see `grading.GRADER_VERSION`)."""
HEDGES: tuple[tuple[float, float], ...] = tuple((a, c) for a in (0.25, 0.5, 0.75) for c in (0.25, 0.5, 0.75))
"""(a, c) of the hedged guesses `a * start + (1 - a) * c` counted among the baselines."""
RATES: tuple[float, ...] = (0.1, 0.2, 0.3)
"""Per-generation rates q of the relaxations `1 - (1 - start) * (1 - q)^K` counted among the baselines:
"it creeps up towards 1 at a fixed rate", the prior the public operator menu suggests (palindrome pull
only ever raises palindromicity; with q = 0.2 it scored 0.23 palindromicity skill with no experiment)."""
MIN_BASELINE = 1e-6
"""A baseline error below this means the truth is (nearly) one constant: nothing to discover."""


@dataclass(frozen=True, slots=True)
class HeldOutPopulation:
    """A held-out starting population, its generation-0 means and its expected means after K generations."""

    pid: str
    population: tuple[str, ...]
    start: dict[str, float]
    truth: dict[str, float]
    start_std: dict[str, float]


def target_skill(predicted: Sequence[float | None], truth: Sequence[float], start: Sequence[float],
                 generations: int | None = None) -> dict[str, float]:
    """MAE, the baselines and skill of one target (None: no prediction, error 1); with `generations` (K),
    the creeps towards 1 (`RATES`) join the hedges."""
    y = np.asarray(truth, dtype=np.float64)
    errors = np.array([1.0 if p is None else abs(p - t) for p, t in zip(predicted, y, strict=True)])
    mae = float(errors.mean()) if len(errors) else 1.0
    constant = float(np.abs(y - np.median(y)).mean()) if len(y) else 0.0
    x0 = np.asarray(start, dtype=np.float64)
    identity = float(np.abs(y - x0).mean()) if len(y) else 0.0
    grid = [*HEDGES, *(((1 - q) ** generations, 1.0) for q in RATES)] if generations is not None else list(HEDGES)
    hedge = min(float(np.abs(y - (a * x0 + (1 - a) * c)).mean()) for a, c in grid) if len(y) else 0.0
    base = min(constant, identity, hedge)
    skill = max(0.0, 1.0 - mae / base) if base > MIN_BASELINE else 0.0
    return {"mae": mae, "baseline_constant": constant, "baseline_identity": identity, "baseline_hedge": hedge,
            "baseline": base, "skill": skill}


def grade_population(report: PopulationReport | None, heldout: Sequence[HeldOutPopulation], targets: Sequence[str],
                     *, rounds_used: int, start_spread: float, generations: int | None = None) -> Score:
    """Score = mean skill over targets; parts carry each target's MAE and baselines."""
    parts: dict[str, float] = {"rounds_used": float(rounds_used), "start_spread": start_spread}
    skills = []
    for name in targets:
        predicted = [(report.predictions.get(h.pid, {}).get(name) if report else None) for h in heldout]
        result = target_skill(predicted, [h.truth[name] for h in heldout], [h.start[name] for h in heldout],
                              generations)
        for key, value in result.items():
            parts[f"{key}_{name}"] = value
        skills.append(result["skill"])
    score = float(np.mean(skills)) if skills else 0.0
    parts["skill"] = score
    answered = sum(1 for h in heldout if report is not None and h.pid in report.predictions)
    parts["answered"] = answered / len(heldout) if heldout else 0.0
    label = "pass" if score >= 0.9 else "partial" if score >= 0.5 else "fail"
    details = {"targets": list(targets), "report": report.as_info() if report else None,
               "truth": {h.pid: h.truth for h in heldout}}
    return Score(score=float(np.clip(score, 0.0, 1.0)), parts=parts, labels={"label": label}, details=details)
