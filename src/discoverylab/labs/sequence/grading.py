"""Graders of the sequence-lab protocols (spec §2.8): metrics and the assembly of a `Score`.

Everything here is a pure function of (the agent's answer, the ground truth, the held-out sets), so a
saved transcript can be re-graded offline. Program scores run the agent's code through `sandbox`;
the LLM judge (optional) is in `judge`. Labels follow the spec: **pass** if the exact-match rate is
>= 0.95, **partial** if Spearman rho >= 0.9, **fail** otherwise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from discoverylab.labs.protocol import Score
from discoverylab.labs.sequence.heldout import HeldOutSet
from discoverylab.labs.sequence.judge import JUDGE_VALUE, JudgeClient, judge_hypotheses_checked
from discoverylab.labs.sequence.parsing import FinalAnswer
from discoverylab.labs.sequence.sandbox import run_predictor

GRADER_VERSION = 3  # 3: drawn problems read drawn positions; skill counted above the best stock program
"""Bumped whenever the Protocol A grade changes: run directories record it (`LabRecord.grader_version`),
so a run graded by another version is never resumed or judged into a mix of old and new grades."""

Label = Literal["pass", "partial", "fail"]
LABEL_VALUE: dict[str, float] = {"pass": 1.0, "partial": 0.5, "fail": 0.0}
PASS_EXACT = 0.95
PARTIAL_RHO = 0.9
REPORT_DECIMALS_TOLERANCE = 0.0005
RANK_DISCOUNT = (1.0, 0.5, 0.25)
"""Weight of the program score of the 1st, 2nd and 3rd ranked hypothesis: hedging with stock programs
does not pay; pass@3 (any of three passes) stays a label."""


# ---------------------------------------------------------------------- prediction metrics
def rankdata(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean rank), as in Spearman's rho."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=np.float64)
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(pred: Sequence[float] | np.ndarray, truth: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation; 0 when either side is constant (no ranking information)."""
    a, b = rankdata(np.asarray(pred, dtype=np.float64)), rankdata(np.asarray(truth, dtype=np.float64))
    if len(a) < 2 or a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


@dataclass(frozen=True, slots=True)
class PredictionMetrics:
    """Exact-match rate, MAE and Spearman rho of predictions against true values."""

    exact: float
    mae: float
    spearman: float
    n: int
    missing: int

    @property
    def label(self) -> Label:
        return label_for(self.exact, self.spearman)

    def as_dict(self) -> dict[str, float]:
        return {"exact": self.exact, "mae": self.mae, "spearman": self.spearman, "n": float(self.n),
                "missing": float(self.missing)}


def label_for(exact: float, rho: float) -> Label:
    if exact >= PASS_EXACT:
        return "pass"
    if rho >= PARTIAL_RHO:
        return "partial"
    return "fail"


def exact_tolerance(quantum: float | None) -> float:
    """|f_hat - f| counted as exact (inclusive bound): just under half a value quantum, never below the
    3-decimal reporting precision.

    The half-step boundary is *exclusive*, so a midpoint between two grid values (0.5 on a 0/1
    threshold property, 0.1 between 0 and 0.2) matches neither: a constant can never be exact for two
    different values at once."""
    half = 0.5 * quantum if quantum else 0.0
    if half > REPORT_DECIMALS_TOLERANCE:
        return half - 1e-9
    return REPORT_DECIMALS_TOLERANCE + 1e-9


def constant_exact_rate(truth: Sequence[float] | np.ndarray, tolerance: float) -> float:
    """The best exact-match rate any constant prediction reaches on `truth` (the chance level).

    A constant c is exact on the values in [c - tol, c + tol]; the best window of width 2 tol over the
    sorted values is that rate."""
    t = np.sort(np.asarray(truth, dtype=np.float64))
    if len(t) == 0:
        return 0.0
    hi = np.searchsorted(t, t + 2 * tolerance, side="right")
    return float((hi - np.arange(len(t))).max() / len(t))


def exact_skill(exact: float, chance: float) -> float:
    """Exact-match rate above the best constant's, rescaled to 0..1 (a kappa): 0 for any constant."""
    if chance >= 1.0:
        return 1.0 if exact >= 1.0 else 0.0
    return max(0.0, (exact - chance) / (1.0 - chance))


def prediction_metrics(pred: Sequence[float | None], truth: Sequence[float], tolerance: float) -> PredictionMetrics:
    """Missing predictions (None) count as wrong, with the worst possible error for the MAE."""
    t = np.asarray(truth, dtype=np.float64)
    if len(t) == 0:
        return PredictionMetrics(exact=0.0, mae=1.0, spearman=0.0, n=0, missing=0)
    missing = np.array([p is None or not math.isfinite(p) for p in pred], dtype=bool)
    p = np.array([0.5 if m else float(v) for v, m in zip(pred, missing, strict=True)])  # type: ignore[arg-type]
    err = np.abs(p - t)
    err[missing] = np.maximum(t[missing], 1 - t[missing])
    exact = float(((err <= tolerance) & ~missing).mean())
    return PredictionMetrics(exact=exact, mae=float(err.mean()), spearman=spearman(p, t), n=len(t),
                             missing=int(missing.sum()))


def prediction_skill(metrics: PredictionMetrics, baseline_mae: float) -> float:
    """max(0, 1 - MAE/MAE_baseline): 0 for a predictor no better than the naive baseline."""
    if baseline_mae <= 1e-12:
        return 1.0 if metrics.mae <= 1e-12 else 0.0
    return max(0.0, 1.0 - metrics.mae / baseline_mae)


# ---------------------------------------------------------------------- Protocol B metrics
def match_points(truth: Sequence[Sequence[float]], reported: Sequence[Sequence[float]]) -> list[tuple[int, int, float]]:
    """Optimal one-to-one matching minimising total distance (exhaustive for <= 7 points, else greedy).

    Returns (truth index, reported index, distance) triples."""
    t = np.asarray(truth, dtype=np.float64).reshape(len(truth), -1)
    r = np.asarray(reported, dtype=np.float64).reshape(len(reported), -1)
    if len(t) == 0 or len(r) == 0:
        return []
    dist = np.linalg.norm(t[:, None, :] - r[None, :, :], axis=2)
    if min(len(t), len(r)) <= 7 and max(len(t), len(r)) <= 9:
        best: tuple[float, list[tuple[int, int]]] = (math.inf, [])
        if len(t) <= len(r):
            for perm in itertools.permutations(range(len(r)), len(t)):
                pairs = list(zip(range(len(t)), perm, strict=True))
                cost = sum(dist[i, j] for i, j in pairs)
                if cost < best[0]:
                    best = (cost, pairs)
        else:
            for perm in itertools.permutations(range(len(t)), len(r)):
                pairs = list(zip(perm, range(len(r)), strict=True))
                cost = sum(dist[i, j] for i, j in pairs)
                if cost < best[0]:
                    best = (cost, pairs)
        return [(i, j, float(dist[i, j])) for i, j in best[1]]
    out: list[tuple[int, int, float]] = []
    used_t: set[int] = set()
    used_r: set[int] = set()
    for flat in np.argsort(dist, axis=None):
        i, j = divmod(int(flat), dist.shape[1])
        if i not in used_t and j not in used_r:
            out.append((i, j, float(dist[i, j])))
            used_t.add(i)
            used_r.add(j)
    return out


def attractor_f1(truth: Sequence[Sequence[float]], reported: Sequence[Sequence[float]],
                 radius: float = 0.1) -> tuple[float, float, float]:
    """(F1, recall, precision) of reported attractors matched to the true ones within `radius`."""
    if not truth or not reported:
        return 0.0, 0.0, 0.0
    hits = sum(1 for _, _, d in match_points(truth, reported) if d <= radius)
    recall, precision = hits / len(truth), hits / len(reported)
    f1 = 0.0 if hits == 0 else 2 * recall * precision / (recall + precision)
    return f1, recall, precision


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def grid_coverage(points: Iterable[Sequence[float]], bins: int = 5) -> float:
    """Fraction of the bins x bins cells of [0,1]^2 that contain at least one point."""
    cells = {(min(int(x * bins), bins - 1), min(int(y * bins), bins - 1)) for x, y in points}
    return len(cells) / (bins * bins)


# ---------------------------------------------------------------------- pass@k and aggregation
def pass_at_k_hypotheses(labels: Sequence[str], k: int = 3) -> bool:
    """Pass@k, reading (a): any of the first k ranked hypotheses passes."""
    return any(label == "pass" for label in labels[:k])


def pass_at_k_episodes(scores: Sequence[Score], k: int = 3) -> bool:
    """Pass@k, reading (b): any of k independent episodes passes (its `labels["label"]` is pass)."""
    return any(score.labels.get("label") == "pass" for score in scores[:k])


def bootstrap_ci(values: Sequence[float], rng: np.random.Generator, *, resamples: int = 2000,
                 level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its percentile bootstrap confidence interval."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return 0.0, 0.0, 0.0
    means = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(x.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


# ---------------------------------------------------------------------- Protocol A grader
JUDGE_TO_LABEL: dict[str, Label] = {"exact": "pass", "partial": "partial", "wrong": "fail"}


def episode_label(answer: FinalAnswer, program_labels: Sequence[str], judge_labels: Sequence[str],
                  prediction_label: str) -> str:
    """One label per episode, from the rank-1 hypothesis only: its program's label; with no program,
    the judge's verdict on it; with neither, its predictions' label. Sources are never maxed and
    lower ranks never lift it, so listing stock programs under a weak first guess earns no pass."""
    if not answer.hypotheses:
        return "fail"
    if answer.hypotheses[0].python:
        return program_labels[0]
    if judge_labels:
        return JUDGE_TO_LABEL.get(judge_labels[0], "fail")
    return prediction_label


def _component(metrics: PredictionMetrics, baseline_mae: float, chance_exact: float) -> float:
    """A 0..1 component: half exact-match skill over the best constant, half MAE skill over the
    constant-median baseline. Every constant prediction scores 0 on both halves by construction."""
    return 0.5 * exact_skill(metrics.exact, chance_exact) + 0.5 * prediction_skill(metrics, baseline_mae)


def public_baseline(truth: Sequence[float] | np.ndarray, tolerance: float, centre: float,
                    stock: np.ndarray | None) -> tuple[float, float]:
    """(baseline MAE, chance exact rate): the best an answer known before any experiment reaches.

    That is the constant `centre` (the median) and the best constant's exact rate and, when `stock`
    holds the stock programs' values on the same sequences (a drawn problem), the best of those too."""
    t = np.asarray(truth, dtype=np.float64)
    mae = float(np.abs(t - centre).mean()) if len(t) else 1.0
    chance = constant_exact_rate(t, tolerance)
    if stock is not None and stock.size and len(t):
        err = np.abs(np.asarray(stock, dtype=np.float64) - t[None, :])
        mae = min(mae, float(err.mean(axis=1).min()))
        chance = max(chance, float((err <= tolerance).mean(axis=1).max()))
    return mae, chance


def grade_hidden_property(answer: FinalAnswer, heldout: HeldOutSet, prediction_indices: Sequence[int], *,
                          quantum: float | None, truth: dict[str, Any], judge: JudgeClient | None = None,
                          seconds_per_100: float = 2.0, extras: dict[str, float] | None = None,
                          stock: np.ndarray | None = None) -> Score:
    """Score a Protocol A answer (spec §2.8): program score, prediction score, optional judge.

    score = mean of the available components (prediction always; program if any hypothesis has code;
    judge whenever a judge is given: 0 for no hypothesis or a failed judgement until `lab judge`
    grades it), so an agent that writes no code can still reach 1.0, and one that states nothing or
    breaks the judge never beats one whose statement the judge rejects. `stock`: the stock programs'
    values on `heldout` (`heldout.stock_values`, given for drawn problems): skill counts above them.
    """
    tol = exact_tolerance(quantum)
    values = np.asarray(heldout.values)
    parts: dict[str, float] = dict(extras or {})
    labels: dict[str, str] = {}
    details: dict[str, Any] = {"hypotheses": []}
    components: list[float] = []

    # Program score: every hypothesis with code runs on the whole held-out set T.
    program_labels: list[str] = []
    best_program: PredictionMetrics | None = None
    best_value = -1.0
    centre = float(np.median(values)) if len(values) else 0.5
    base_all, chance_all = public_baseline(values, tol, centre, stock)
    parts["chance_exact"], parts["chance_mae"] = chance_all, base_all
    for position, hyp in enumerate(answer.hypotheses):
        discount = RANK_DISCOUNT[min(position, len(RANK_DISCOUNT) - 1)]
        entry: dict[str, Any] = {"rank": hyp.rank, "description": hyp.description[:500]}
        if hyp.python:
            result = run_predictor(hyp.python, heldout.sequences, seconds_per_100=seconds_per_100)
            # Clamped into [0, 1] as stated predictions are (`parsing.as_probability`): the property
            # lies there, so a clamp never adds error, and the MAE part stays in 0..1.
            outputs = [None if v is None else min(1.0, max(0.0, v)) for v in result.values]
            metrics = prediction_metrics(outputs, heldout.values, tol)
            entry.update(program=metrics.as_dict(), program_label=metrics.label, program_error=result.error,
                         program_call_error=result.details.get("call_error"),
                         program_network_isolated=result.network_isolated, program_seccomp=result.seccomp)
            if "compile_warnings" in result.details:  # (only then: other entries stay as they were)
                entry["program_compile_warnings"] = result.details["compile_warnings"]
            program_labels.append(metrics.label)
            value = discount * _component(metrics, base_all, chance_all)
            if value > best_value:
                best_program, best_value = metrics, value
        else:
            program_labels.append("fail")
        details["hypotheses"].append(entry)
    if best_program is not None:
        parts.update({f"program_{k}": v for k, v in best_program.as_dict().items() if k != "n"})
        parts["program"] = best_value
        labels["program"] = best_program.label
        components.append(parts["program"])

    # Prediction score on the listed held-out sequences.
    listed = heldout.subset(list(prediction_indices))
    preds = [answer.predictions.get(seq) for seq in listed.sequences]
    pm = prediction_metrics(preds, listed.values, tol)
    stock_listed = None if stock is None else np.asarray(stock)[:, list(prediction_indices)]
    base_listed, chance_listed = public_baseline(listed.values, tol, centre, stock_listed)
    parts.update({f"prediction_{k}": v for k, v in pm.as_dict().items() if k != "n"})
    parts["prediction"] = _component(pm, base_listed, chance_listed)
    labels["prediction"] = pm.label
    components.append(parts["prediction"])

    # LLM judge (optional): exact / partial / wrong per hypothesis. A failed judgement is recorded
    # as such (labels["judge"] = "invalid") and counts as `wrong` until `lab judge` grades it, so
    # an answer that breaks the judge never scores above one the judge rejects.
    judge_labels: list[str] = []
    if judge is not None and answer.hypotheses:
        judgement = judge_hypotheses_checked(judge, truth, answer.hypotheses)
        details["judge"] = judgement.as_dict()
        if judgement.valid:
            judge_labels = [v.label for v in judgement.verdicts]
            for entry, verdict in zip(details["hypotheses"], judgement.verdicts, strict=False):
                entry.update(judge_label=verdict.label, judge_quote=verdict.quote)
            parts["judge"] = JUDGE_VALUE[judge_labels[0]]  # the rank-1 hypothesis, like the label
            labels["judge"] = judge_labels[0]
            components.append(parts["judge"])
        else:
            labels["judge"] = "invalid"
            parts["judge"] = JUDGE_VALUE["wrong"]
            components.append(parts["judge"])
            judge_labels = ["wrong"] * len(answer.hypotheses)  # the label too: provisional, as judged wrong
    elif judge is not None:  # nothing to judge: no hypothesis earns the judge's part
        labels["judge"] = "none"
        parts["judge"] = JUDGE_VALUE["wrong"]
        components.append(parts["judge"])

    # pass@3, reading (a): any ranked hypothesis passes by its program or by the judge. Reported on
    # its own, never merged into the episode label.
    per_hypothesis = [
        "pass" if (p == "pass" or (i < len(judge_labels) and judge_labels[i] == "exact")) else p
        for i, p in enumerate(program_labels)
    ]
    labels["pass_at_3_hypotheses"] = "pass" if pass_at_k_hypotheses(per_hypothesis) else "fail"
    labels["label"] = episode_label(answer, program_labels, judge_labels, pm.label)
    labels["property"] = str(truth.get("property", ""))
    details["structured"] = answer.structured
    details["warnings"] = list(answer.warnings)
    score = float(np.clip(np.mean(components), 0.0, 1.0))
    return Score(score=score, parts=parts, labels=labels, details=details)
