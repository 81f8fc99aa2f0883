"""Macro figures are written as PNG files (and bad requests fail loudly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from discoverylab.labs.macroecon.ground_truth import EdgeTruth, EffectGraph, GroundTruthSettings
from discoverylab.labs.macroecon.model import simulate
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure
from discoverylab.labs.macroecon.plots import plot_causal_graph, plot_indicators

PNG_MAGIC = b"\x89PNG"


def test_indicator_plot_is_a_png(tmp_path: Path) -> None:
    structure = MacroStructure(n_households=100, n_firms=2)
    runs = {"default": simulate(MacroParams(), 30, 0, structure),
            "g0=0.1": simulate(MacroParams(g0=0.1), 30, 0, structure)}
    path = plot_indicators(runs, tmp_path / "sub" / "series.png")
    assert path.read_bytes()[:4] == PNG_MAGIC
    with pytest.raises(ValueError, match="unknown indicators"):
        plot_indicators(runs, tmp_path / "bad.png", indicators=["gdp"])


def test_causal_graph_plot_is_a_png(tmp_path: Path) -> None:
    edges = [EdgeTruth(cause="g0", effect="unemployment", horizon="long", sign="-", delta=-0.5, t_stat=-9.0,
                       low=0.06, high=0.54),
             EdgeTruth(cause="phi", effect="gdp_real", horizon="long", sign="+", delta=9.0, t_stat=9.0,
                       low=0.6, high=3.6)]
    graph = EffectGraph(structure_hash="x", settings=GroundTruthSettings(), edges=edges,
                        default_means={}, default_sd={})
    path = plot_causal_graph(graph, tmp_path / "graph.png")
    assert path.read_bytes()[:4] == PNG_MAGIC
