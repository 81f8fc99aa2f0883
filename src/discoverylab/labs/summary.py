"""Summaries of Tiny Labs results: pass labels, pass@k, bootstrap intervals, one row per
(protocol, agent)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from discoverylab.labs.run_record import LabRecord


def passed(record: LabRecord) -> bool:
    """An episode passes when its grader labels it `pass` (or, without such a label, scores >= 0.95)."""
    label = record.labels.get("label")
    return label == "pass" if label is not None else record.score >= 0.95


def pass_at_k(n: int, c: int, k: int = 3) -> float:
    """Unbiased pass@k over n episodes of which c passed: 1 - C(n-c, k) / C(n, k) (k capped at n)."""
    if n == 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def bootstrap_interval(values: Sequence[float], *, resamples: int = 2000, level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean (fixed seed: the same results give the same interval)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def summarize(results: Sequence[LabRecord]) -> list[dict[str, Any]]:
    """One row per (protocol, agent): episodes, errors, mean score with its 95% bootstrap CI, pass@3
    across episodes, mean of each part, turns, seconds, and the ok episodes whose judge failed
    (`unjudged`: their scores leave the judge out until `lab judge --unjudged-only` grades them)."""
    groups: dict[tuple[str, str], list[LabRecord]] = {}
    for record in results:
        groups.setdefault((record.protocol, record.agent), []).append(record)
    rows = []
    for (protocol, agent), group in groups.items():
        ok = [r for r in group if r.status == "ok"]
        part_names = sorted({name for r in ok for name in r.parts})
        parts = {name: sum(r.parts[name] for r in ok if name in r.parts)
                 / sum(1 for r in ok if name in r.parts) for name in part_names}
        low, high = bootstrap_interval([r.score for r in group])
        rows.append({
            "protocol": protocol, "agent": agent, "episodes": len(group), "errors": len(group) - len(ok),
            "score": sum(r.score for r in group) / len(group), "ci_low": low, "ci_high": high,
            "pass_at_3": pass_at_k(len(group), sum(passed(r) for r in ok)),
            "turns": sum(r.turns for r in group) / len(group),
            "seconds": sum(r.seconds for r in group) / len(group), "parts": parts,
            "unjudged": sum(r.labels.get("judge_status") == "unjudged" for r in ok),  # not final: `lab judge`
        })
    return rows
