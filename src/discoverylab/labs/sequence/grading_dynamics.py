"""Ground truth and grading of Protocol B, unknown dynamics (spec §2.8).

Truth is measured, not declared: the attractor centroids are the k-means centres (initialised at
the declared attractors) of the final-cycle means of 200 random and 200 attractor-targeted starts
run for 60 steps; the cycle type is the majority end behaviour. Held-out starts are drawn per basin,
some within 0.1 of a basin boundary, and their basin and 20-step end state are simulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from discoverylab.labs.protocol import Score
from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.grading import attractor_f1, grid_coverage, jaccard, match_points
from discoverylab.labs.sequence.heldout import targeted_codes
from discoverylab.labs.sequence.judge import JudgeClient, judge_dynamics_checked
from discoverylab.labs.sequence.parsing_dynamics import ReportAction
from discoverylab.labs.sequence.properties import decode

GRADER_VERSION = 2  # 2: the judge no longer reads the report's sentences about grading
"""Bumped whenever the Protocol B grade changes (see `grading.GRADER_VERSION`)."""
WEIGHTS = {"attractors": 0.3, "cycle": 0.1, "drivers": 0.2, "basin": 0.2, "end_state": 0.2}
JUDGE_WEIGHT = 0.25


@dataclass(frozen=True, slots=True)
class DynamicsTruth:
    centroids: list[tuple[float, ...]]
    cycle_type: str
    baseline_index: int
    drivers: tuple[str, ...]
    converged: float


def _end_states(evo: DirectedEvolution, paths: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(B, d) mean driver values over the final cycle and the cycle type of each path (B, T+1, N)."""
    last, prev, prev2 = paths[:, -1], paths[:, -2], paths[:, -3]
    fixed = (last == prev).all(axis=1)
    two = (last == prev2).all(axis=1) & ~fixed
    means = np.where(fixed[:, None], evo.measure(last), 0.5 * (evo.measure(last) + evo.measure(prev)))
    kinds = ["fixed" if f else "2-cycle" if t else "other" for f, t in zip(fixed, two, strict=True)]
    return means, kinds


def _nearest(points: np.ndarray, centres: np.ndarray) -> np.ndarray:
    return np.linalg.norm(points[:, None, :] - centres[None, :, :], axis=2).argmin(axis=1)


def estimate_truth(evo: DirectedEvolution, length: int, rng: np.random.Generator, *, n_random: int = 200,
                   n_targeted: int = 200, steps: int = 60) -> DynamicsTruth:
    """Measure the attractors of `evo` on sequences of `length` (spec §2.8)."""
    starts = [rng.integers(0, 4, size=(n_random, length), dtype=np.uint8)]
    per = max(1, n_targeted // len(evo.attractors))
    for a in evo.attractors:
        def distance(x: np.ndarray, a: np.ndarray = a) -> np.ndarray:
            return np.linalg.norm(evo.measure(x) - a, axis=1)

        starts.append(targeted_codes(distance, length, 0.0, per, rng, eps=0.1, iters=300))
    paths = evo.evolve_batch(np.concatenate(starts), steps, rng)
    means, kinds = _end_states(evo, paths)
    centres = evo.attractors.copy()
    for _ in range(20):
        label = _nearest(means, centres)
        new = np.array([means[label == k].mean(axis=0) if (label == k).any() else centres[k]
                        for k in range(len(centres))])
        if np.allclose(new, centres):
            break
        centres = new
    label = _nearest(means[:n_random], centres)
    counts = np.bincount(label, minlength=len(centres))
    kind_counts = {k: kinds.count(k) for k in set(kinds)}
    return DynamicsTruth(
        centroids=[tuple(float(v) for v in c) for c in centres],
        cycle_type=max(kind_counts, key=lambda k: kind_counts[k]),
        baseline_index=int(counts.argmax()),
        drivers=tuple(evo.drivers),
        converged=float(np.mean([k != "other" for k in kinds])),
    )


@dataclass(frozen=True, slots=True)
class HeldOutStart:
    sid: str
    sequence: str
    basin: int
    end_state: tuple[float, ...]
    near_boundary: bool
    start_state: tuple[float, ...] = ()
    """The start's own driver values: the "nothing changes" baseline of the end-state grade."""


def _walk_to_targets(evo: DirectedEvolution, targets: np.ndarray, length: int, rng: np.random.Generator,
                     iters: int = 300) -> np.ndarray:
    """One sequence per target point in driver space (parallel greedy substitution walks)."""
    m = len(targets)
    x = rng.integers(0, 4, size=(m, length), dtype=np.uint8)
    err = np.linalg.norm(evo.measure(x) - targets, axis=1)
    rows = np.arange(m)
    for _ in range(iters):
        if (err <= 0.05).all():
            break
        cand = x.copy()
        pos = rng.integers(0, length, size=m)
        cand[rows, pos] = (cand[rows, pos] + rng.integers(1, 4, size=m)) % 4
        new = np.linalg.norm(evo.measure(cand) - targets, axis=1)
        keep = new <= err
        x[keep], err = cand[keep], np.where(keep, new, err)
    return x


def build_starts(evo: DirectedEvolution, truth: DynamicsTruth, length: int, rng: np.random.Generator, *,
                 n: int = 20, end_steps: int = 20, steps: int = 40, boundary_share: float = 0.2) -> list[HeldOutStart]:
    """`n` starts split evenly over the basins, `boundary_share` of them within 0.1 of a boundary."""
    centres = np.asarray(truth.centroids)
    k = len(centres)
    codes = _walk_to_targets(evo, rng.random((5 * n, centres.shape[1])), length, rng)
    paths = evo.evolve_batch(codes, max(steps, end_steps), rng)
    means, _ = _end_states(evo, paths)
    basin = _nearest(means, centres)
    p0 = evo.measure(codes)
    d = np.sort(np.linalg.norm(p0[:, None, :] - centres[None, :, :], axis=2), axis=1)
    margin = (d[:, 1] - d[:, 0]) / 2 if k > 1 else np.full(len(codes), np.inf)
    near = margin < 0.1
    end = evo.measure(paths[:, end_steps])
    per_basin = [n // k + (1 if i < n % k else 0) for i in range(k)]
    chosen: list[int] = []
    for b, quota in enumerate(per_basin):
        want_near = round(quota * boundary_share)
        near_idx = [int(i) for i in np.flatnonzero((basin == b) & near)][:want_near]
        far_idx = [int(i) for i in np.flatnonzero((basin == b) & ~near)]
        picked = near_idx + far_idx[: quota - len(near_idx)]
        if len(picked) < quota:  # a basin that is hard to reach: fill from anywhere in it
            extra = [int(i) for i in np.flatnonzero(basin == b) if int(i) not in picked]
            picked += extra[: quota - len(picked)]
        chosen += picked
    order = [chosen[i] for i in rng.permutation(len(chosen))]
    seqs = decode(codes[order])
    return [HeldOutStart(sid=f"S{j + 1}", sequence=seqs[j], basin=int(basin[i]),
                         end_state=tuple(float(v) for v in end[i]), near_boundary=bool(near[i]),
                         start_state=tuple(float(v) for v in p0[i]))
            for j, i in enumerate(order)]


MISSING = 10.0
"""Stand-in for a coordinate a claim does not give: far outside [0, 1], so it never matches."""


def claim_point(coords: dict[str, float], drivers: Sequence[str]) -> np.ndarray:
    """A reported point in the truth's driver space (missing coordinates put it out of reach)."""
    return np.array([coords.get(d, MISSING) for d in drivers], dtype=np.float64)


def driver_coverage(points: Sequence[Sequence[float]], bins: int = 5) -> float:
    """Fraction of the bins x bins cells of the first two driver axes visited (bins cells for one axis)."""
    if points and len(points[0]) == 1:
        return len({min(int(p[0] * bins), bins - 1) for p in points}) / bins
    return grid_coverage([tuple(p[:2]) for p in points], bins)


def driver_skill(reported: Sequence[str], drivers: Sequence[str], candidates: Sequence[str] | None) -> float | None:
    """Driver Jaccard above the best answer the prompt alone gives, rescaled to 0..1 (a kappa).

    The hedge is naming every listed measurable that can be a driver (`candidates`; every listed one
    when None is known): Jaccard |drivers| / |candidates|. None when that hedge is already exact (the
    prompt gives the drivers away, so the part measures nothing and is left out of the score)."""
    score = jaccard(reported, drivers)
    pool = set(drivers) | set(candidates or ())
    chance = len(set(drivers)) / len(pool) if pool else 1.0
    if chance >= 1.0:
        return None
    return max(0.0, (score - chance) / (1.0 - chance))


def grade_dynamics(report: ReportAction | None, truth: DynamicsTruth, starts: Sequence[HeldOutStart],
                   visited: Sequence[Sequence[float]], *, rounds_used: int, judge: JudgeClient | None = None,
                   judge_truth: dict[str, Any] | None = None, candidates: Sequence[str] | None = None) -> Score:
    """Auto-graded components of spec §2.8 (each 0..1) and, with a judge, the judged Table 5 items.

    Reported coordinates are read along the true drivers, whatever they are; `visited` holds the
    driver values of every submitted start and trajectory point; `candidates` are the listed
    measurables that can be drivers (the prompt's hedge for the driver part).

    Every part is above chance, so nothing but the discovery scores: a basin counts only through a
    claimed attractor that matches the start's true one (classifying a predicted state by the *true*
    centroids let "nothing changes" name 93% of basins with no attractor found); the end state is
    measured against the better of the dominant attractor and "nothing changes"; the cycle type counts
    in proportion to the attractor F1 (every drawn process is a 2-cycle); drivers are scored above
    the hedge of naming every candidate.
    """
    centres = np.asarray(truth.centroids)
    drivers = truth.drivers
    parts: dict[str, float] = {"rounds_used": float(rounds_used)}
    claims = [claim_point(a.coords, drivers) for a in report.attractors] if report else []
    claim_lists = [c.tolist() for c in claims]
    parts["attractors"], parts["attractor_recall"], parts["attractor_precision"] = attractor_f1(
        truth.centroids, claim_lists, radius=0.1)
    matched = {j: i for i, j, d in match_points(truth.centroids, claim_lists) if d <= 0.1} if claims else {}
    claimed_types = {a.type for a in report.attractors} if report else set()
    says_cycle = "2-cycle" in claimed_types  # structured fields only: prose ("does not oscillate") is not parsed
    says_fixed = "fixed" in claimed_types and not says_cycle
    says_other = claimed_types == {"other"} and not says_cycle
    parts["cycle_claim"] = float((truth.cycle_type == "2-cycle" and says_cycle)
                                 or (truth.cycle_type == "fixed" and says_fixed)
                                 or (truth.cycle_type == "other" and says_other))
    parts["cycle"] = parts["cycle_claim"] * parts["attractors"]  # F1, not recall: a dense grid of claims finds nothing
    parts["drivers_jaccard"] = jaccard(report.drivers, drivers) if report else 0.0
    skill = driver_skill(report.drivers if report else [], drivers, candidates)
    parts["drivers_scored"] = float(skill is not None)  # 0: the prompt gives the drivers away; left out of the score
    parts["drivers"] = float(parts["drivers_jaccard"] >= 1.0) if skill is None else skill
    weights = dict(WEIGHTS) if skill is not None else {k: v for k, v in WEIGHTS.items() if k != "drivers"}

    located = [j for j, c in enumerate(claims) if bool((c < MISSING).all())]
    correct, errors, base_errors, still_errors = 0, [], [], []
    baseline = centres[truth.baseline_index]
    for start in starts:
        pred = report.predictions.get(start.sid) if report else None
        end = np.asarray(start.end_state)
        base_errors.append(float(np.abs(baseline - end).mean()))
        if start.start_state:
            still_errors.append(float(np.abs(np.asarray(start.start_state) - end).mean()))
        index: int | None = None
        if pred is not None and pred.attractor is not None and 1 <= pred.attractor <= len(claims):
            index = pred.attractor - 1 if pred.attractor - 1 in located else None
        state: np.ndarray | None = None
        if pred is not None and all(d in pred.state for d in drivers):
            state = claim_point(pred.state, drivers)
            errors.append(float(np.abs(state - end).mean()))
        elif index is not None:
            errors.append(float(np.abs(claims[index] - end).mean()))
        else:
            errors.append(1.0)
        if index is None and state is not None and located:
            index = located[int(np.linalg.norm(np.asarray([claims[j] for j in located]) - state, axis=1).argmin())]
        if index is not None and matched.get(index) == start.basin:
            correct += 1
    parts["basin"] = correct / len(starts) if starts else 0.0
    base_mae = float(np.mean(base_errors)) if base_errors else 0.0
    if still_errors:
        parts["end_state_still_mae"] = float(np.mean(still_errors))
        base_mae = min(base_mae, parts["end_state_still_mae"])
    mae = float(np.mean(errors)) if errors else 1.0
    parts["end_state_mae"] = mae
    parts["end_state"] = max(0.0, 1.0 - mae / base_mae) if base_mae > 1e-12 else float(mae <= 1e-12)

    points = [tuple(p) for p in visited]
    parts["coverage"] = driver_coverage(points)
    entered = {int(i) for i in _nearest(np.asarray(points), centres)[
        np.linalg.norm(np.asarray(points)[:, None, :] - centres[None], axis=2).min(axis=1) <= 0.1]} if points else set()
    parts["basins_entered"] = len(entered) / len(centres)

    auto = sum(w * parts[name] for name, w in weights.items()) / sum(weights.values())
    parts["auto"] = auto
    labels = {"rubric_experimental_coverage": str(round(5 * parts["coverage"])),
              "rubric_attractor_identification": str(round(5 * parts["attractors"]))}
    score = auto
    judged: dict[str, float] = {}
    judge_call: dict[str, Any] | None = None
    if judge is not None:  # no report, or a failed judgement (until `lab judge` grades it), counts 0
        if report is not None:
            call = judge_dynamics_checked(judge, judge_truth or {}, report.as_info(), parts)
            judged, judge_call = call.value or {}, call.as_dict()
            labels["judge"] = "ok" if judged else "invalid"
        else:
            labels["judge"] = "none"
        for name, value in judged.items():
            parts[f"judge_{name}"] = value / 5.0
            labels[f"rubric_{name}"] = f"{value:g}"
        parts["judge"] = float(np.mean(list(judged.values()))) / 5.0 if judged else 0.0
        score = (1 - JUDGE_WEIGHT) * auto + JUDGE_WEIGHT * parts["judge"]
    labels["label"] = "pass" if auto >= 0.9 else "partial" if auto >= 0.5 else "fail"
    details = {"truth_centroids": truth.centroids, "truth_cycle": truth.cycle_type,
               "report": report.as_info() if report else None, "judge": judge_call}
    return Score(score=float(np.clip(score, 0.0, 1.0)), parts=parts, labels=labels, details=details)
