"""The heuristic scientist's method for dynamics labs whose report is keyed by measurable name.

Such a lab does not say which measurables drive the process, and some measurables have hidden
parameters (per-letter weights, a reference), so the agent cannot compute them itself. The method,
all from what the lab returns:

1. *Design*: starts chosen greedily to be far apart in a feature space of public sequence
   statistics (letter fractions, GC, palindromicity, alternation, k-mer entropy), beginning with
   structured extremes (GC palindromes, homopolymers, alternations).
2. *Drivers*: the two measurables along which runs end closest together (relative to the spread
   of their starts) and keep moving once cycling (`driver_score`).
3. *Attractors*: run end states (mean of the last two steps) merged within 0.1 in driver space.
4. *Prediction*: a least-squares model of every measurable on the public features, fitted to all
   observed steps, locates each held-out start; it goes to the basin of the nearest designed start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from discoverylab.labs.sequence.properties import compute_codes, decode, encode

FEATURES = ("gc_content", "palindrome_score", "alternation_1", "alternation_2", "alternation_3", "entropy_1",
            "entropy_2")
N_DRIVERS = 2
"""The heuristic assumes a two-dimensional attractor space, like the paper's lab."""
LATE_WEIGHT = 3.0
"""Weight of late movement against end tightness in `driver_score` (tuned on generated labs)."""
MERGE = 0.1


def features(x: np.ndarray) -> np.ndarray:
    """(B, 12) public statistics of an (B, N) code batch: letter fractions, the FEATURES, a constant."""
    fractions = np.stack([(x == b).mean(axis=1) for b in range(4)], axis=1)
    named = np.stack([compute_codes(name, x) for name in FEATURES], axis=1)
    return np.concatenate([fractions, named, np.ones((len(x), 1))], axis=1)


def templates(length: int) -> list[str]:
    """Structured starts at the extremes of the usual statistics."""
    h = length // 2
    return [("G" * h + "C" * (length - h)), "A" * length, ("AT" * length)[:length], "G" * length,
            ("AG" * length)[:length], "A" * h + "T" * (length - h), ("ACGT" * length)[:length]]


def next_start(used: Sequence[str], length: int, rng: np.random.Generator, pool_size: int = 96) -> str:
    """The candidate farthest (in feature space) from every start used so far."""
    pool = templates(length) + decode(rng.integers(0, 4, size=(pool_size, length), dtype=np.uint8))
    pool = [s for s in pool if s not in used]
    if not used:
        return pool[0]
    f_pool = features(encode(pool))[:, :-1]
    f_used = features(encode(list(used)))[:, :-1]
    gaps = np.linalg.norm(f_pool[:, None, :] - f_used[None, :, :], axis=2).min(axis=1)
    return pool[int(gaps.argmax())]


def driver_score(runs: Sequence[Mapping[str, Any]], measurable: str) -> float:
    """Higher for a measurable that looks driven: the runs end close together along it, relative
    to how spread their starts were, and it keeps moving in the late, cycling part of the runs.

    Runs drawn into one attractor end at the same driver values whatever they started from, while
    an incidental measurable ends wherever the path left it; and the forced move that makes the
    two-cycle is picked for its effect on the drivers, so the drivers are what it keeps toggling.
    """
    series = [np.asarray(r["measurements"][measurable], dtype=float) for r in runs]
    if len(series) < 2:
        return 0.0
    ends = np.array([v[-2:].mean() for v in series])
    begins = np.array([v[0] for v in series])
    gaps = np.abs(ends[:, None] - ends[None, :])
    np.fill_diagonal(gaps, np.inf)
    tight = -float(np.median(gaps.min(axis=1))) / (float(begins.std()) + 0.05)
    late = float(np.mean([np.abs(np.diff(v[len(v) // 2:])).mean() if len(v) > 3 else 0.0 for v in series]))
    return tight + LATE_WEIGHT * late


def infer_drivers(runs: Sequence[Mapping[str, Any]], measurables: Sequence[str]) -> list[str]:
    """The N_DRIVERS measurables with the highest `driver_score` (all of them if there are fewer)."""
    scores = {m: driver_score(runs, m) for m in measurables}
    return sorted(measurables, key=lambda m: -scores[m])[:N_DRIVERS]


def keyed_report(runs: Sequence[Mapping[str, Any]], measurables: Sequence[str], starts: Mapping[str, str]
                 ) -> dict[str, Any]:
    """The report (as a JSON-ready dict) from the runs; see the module docstring."""
    runs = [r for r in runs if r.get("trajectory") and r.get("measurements")]
    listed = [m for m in measurables if all(m in r["measurements"] for r in runs)]
    drivers = infer_drivers(runs, listed) if runs else []
    if not drivers:
        return {"type": "report", "hypothesis": "no usable runs", "evidence": "none", "attractors": [],
                "drivers": [], "predictions": {}}
    begin = np.array([[r["measurements"][d][0] for d in drivers] for r in runs])
    ends = np.array([[np.mean(r["measurements"][d][-2:]) for d in drivers] for r in runs])
    clusters: list[list[int]] = []
    for i, e in enumerate(ends):
        home = next((c for c in clusters if np.linalg.norm(ends[c[0]] - e) <= MERGE), None)
        if home is None:
            clusters.append([i])
        else:
            home.append(i)
    centres = [ends[c].mean(axis=0) for c in clusters]
    member = {i: k for k, c in enumerate(clusters) for i in c}
    cycles = [len(r["trajectory"]) >= 3 and r["trajectory"][-1] == r["trajectory"][-3] != r["trajectory"][-2]
              for r in runs]
    kind = "2-cycle" if np.mean(cycles) >= 0.5 else "other"
    predictions: dict[str, Any] = {}
    if starts:
        located = _fit(runs, drivers)(encode(list(starts.values())))
        for sid, p in zip(starts, located, strict=True):
            k = member[int(np.linalg.norm(begin - p, axis=1).argmin())]
            predictions[sid] = {"attractor": k + 1} | {d: float(v) for d, v in zip(drivers, centres[k], strict=True)}
    return {"type": "report",
            "hypothesis": f"the process moves ({', '.join(drivers)}) towards {len(centres)} attractor(s) "
                          f"and settles into {kind}s",
            "evidence": f"{len(runs)} runs from spread-out starts; run ends cluster along the drivers",
            "attractors": [{d: float(v) for d, v in zip(drivers, c, strict=True)} | {"type": kind} for c in centres],
            "drivers": drivers, "predictions": predictions}


def _fit(runs: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Any:
    """Least-squares model (B, N) codes -> (B, len(names)) values, clipped to [0, 1]."""
    x = encode([s for r in runs for s in r["trajectory"]])
    y = np.array([[r["measurements"][n][t] for n in names] for r in runs for t in range(len(r["trajectory"]))])
    phi = features(x)
    coef = np.linalg.solve(phi.T @ phi + 1e-3 * np.eye(phi.shape[1]), phi.T @ y)

    def predict(codes: np.ndarray) -> np.ndarray:
        return np.clip(features(codes) @ coef, 0.0, 1.0)

    return predict
