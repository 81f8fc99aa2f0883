"""Is the macro report's causal graph consistent with the agent's own data?

Data analysis is checked against the data the agent received: every non-zero parameter edge the
report states is compared with the runs that isolate its cause (pairs of the agent's experiments
that differ in that tunable alone). An edge whose isolating runs moved the indicator clearly the
other way is *contradicted* by the agent's own evidence: a graph copied from somewhere else, rather
than read off the experiments, shows up here.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np

from discoverylab.labs.macroecon.model import MacroRun
from discoverylab.labs.macroecon.observation import INDICATOR_INDEX
from discoverylab.labs.macroecon.params import TUNABLE_KEYS

WINDOWS: dict[str, tuple[int, int]] = {"short": (1, 20), "long": (101, 200)}
CLEAR_SD = 0.5
"""A difference counts as clear when it exceeds this many within-window standard deviations."""


def _window(run: MacroRun, name: str, window: tuple[int, int]) -> np.ndarray | None:
    first, last = window
    if run.steps < min(last, first + 19):
        return None
    return run.indicators[first : min(last, run.steps) + 1, INDICATOR_INDEX[name]]


def edge_evidence(edges: list[dict[str, Any]], runs: Mapping[int, MacroRun],
                  windows: Mapping[str, tuple[int, int]] = WINDOWS) -> dict[str, Any]:
    """(tested, contradicted) over the stated non-zero edges with a tunable cause; `windows` are the
    quarters of each horizon (those the reference graph is measured on)."""
    pairs: dict[str, list[tuple[MacroRun, MacroRun]]] = {}
    for a, b in itertools.combinations(sorted(runs), 2):
        pa, pb = runs[a].params.model_dump(), runs[b].params.model_dump()
        changed = [k for k in TUNABLE_KEYS if pa[k] != pb[k]]
        if len(changed) == 1:
            lo, hi = (runs[a], runs[b]) if pa[changed[0]] < pb[changed[0]] else (runs[b], runs[a])
            pairs.setdefault(changed[0], []).append((lo, hi))
    tested, contradicted = 0, []
    for edge in edges:
        if edge["sign"] not in ("+", "-") or edge["cause"] not in pairs or edge["effect"] not in INDICATOR_INDEX:
            continue
        verdicts = []
        for lo, hi in pairs[edge["cause"]]:
            window = windows[edge["horizon"]]
            x, y = _window(lo, edge["effect"], window), _window(hi, edge["effect"], window)
            if x is None or y is None:
                continue
            delta = float(y.mean() - x.mean())
            if abs(delta) > max(CLEAR_SD * float(x.std()), 1e-9 * max(1.0, abs(float(x.mean())))):
                verdicts.append("+" if delta > 0 else "-")
            else:
                verdicts.append("0")
        if not verdicts:
            continue
        tested += 1
        if all(v not in ("0", edge["sign"]) for v in verdicts):
            contradicted.append({k: edge[k] for k in ("cause", "effect", "horizon", "sign")})
    consistency = 1.0 - len(contradicted) / tested if tested else 1.0
    return {"tested": tested, "contradicted": contradicted, "consistency": consistency}
