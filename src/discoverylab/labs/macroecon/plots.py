"""Figures of the macro lab, written as PNG: indicator time series and the causal graph.

Uses matplotlib's object API with the Agg canvas, so importing this module never changes the
global backend and works without a display. Called only on request, never from `step()`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from discoverylab.labs.macroecon.ground_truth import EffectGraph
from discoverylab.labs.macroecon.model import MacroRun
from discoverylab.labs.macroecon.observation import INDICATORS
from discoverylab.labs.macroecon.params import TUNABLE_KEYS
from discoverylab.labs.macroecon.results import TRAJECTORY_INDICATORS

_SIGN_COLOURS = {"+": "#1b7837", "-": "#b2182b", "0": "#bbbbbb"}


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=110)
    return path


def plot_indicators(runs: Mapping[str, MacroRun] | MacroRun, path: str | Path,
                    indicators: Sequence[str] = TRAJECTORY_INDICATORS) -> Path:
    """One panel per indicator, one line per run (label -> run); returns the PNG path."""
    labelled = {"run": runs} if isinstance(runs, MacroRun) else dict(runs)
    unknown = [n for n in indicators if n not in INDICATORS]
    if unknown:
        raise ValueError(f"unknown indicators {unknown}; choose from {', '.join(INDICATORS)}")
    cols = 2 if len(indicators) > 1 else 1
    rows = int(np.ceil(len(indicators) / cols))
    fig = Figure(figsize=(5.0 * cols, 2.4 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, name in zip(axes.flat, indicators, strict=False):
        for label, run in labelled.items():
            quarters = np.arange(1, run.steps + 1)
            ax.plot(quarters, run.series(name), label=label, linewidth=1.2)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("quarter", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(indicators):]:
        ax.set_visible(False)
    if len(labelled) > 1:
        axes.flat[0].legend(fontsize=7)
    return _save(fig, path)


def plot_causal_graph(graph: EffectGraph, path: str | Path, horizon: str = "long",
                      effects: Sequence[str] | None = None) -> Path:
    """Bipartite figure: parameters on the left, indicators on the right, arrows coloured by sign."""
    effects = list(effects) if effects is not None else list(INDICATORS)
    fig = Figure(figsize=(8.0, max(4.0, 0.35 * len(effects) + 1.0)), layout="constrained")
    ax = fig.add_subplot()
    left = {k: (0.0, 1.0 - i / max(len(TUNABLE_KEYS) - 1, 1)) for i, k in enumerate(TUNABLE_KEYS)}
    right = {k: (1.0, 1.0 - i / max(len(effects) - 1, 1)) for i, k in enumerate(effects)}
    for edge in graph.edges:
        if edge.horizon != horizon or edge.effect not in right or edge.sign not in ("+", "-"):
            continue
        (x0, y0), (x1, y1) = left[edge.cause], right[edge.effect]
        ax.annotate("", xy=(x1 - 0.02, y1), xytext=(x0 + 0.02, y0),
                    arrowprops={"arrowstyle": "->", "color": _SIGN_COLOURS[edge.sign], "alpha": 0.6,
                                "linewidth": 0.8})
    for name, (x, y) in left.items():
        ax.text(x, y, name, ha="right", va="center", fontsize=9)
    for name, (x, y) in right.items():
        ax.text(x, y, name, ha="left", va="center", fontsize=9)
    ax.set_xlim(-0.4, 1.45)
    ax.set_ylim(-0.08, 1.08)
    ax.axis("off")
    ax.set_title(f"Measured effects ({horizon} run): green +, red -", fontsize=10)
    return _save(fig, path)
