"""The published economy's graph as a prior: edge credit is counted above what copying it scores.

Every seed draws its own economy, but the default (published) economy's graph is public: anyone can
measure it once with the simulator and report it without running an experiment of their own. On a
drawn economy that copy already reaches a signed-edge F1 of ~0.63, so a raw F1 pays for no
discovery. The grader therefore scores the chance-corrected F1 (Cohen's-kappa style)

    F1_corrected = max(0, (F1 - F1_prior) / (1 - F1_prior)),

where F1_prior is the F1 of the published graph (all its non-zero parameter edges, as a copier
would report them) on this episode's economy: copying it scores 0, a perfect graph still scores 1,
and an agent that starts from the published graph is paid for what its own experiments change. The
published economy is the episode's with every drawn constant and causal switch at its default
(population sizes kept): for a per-seed draw, a generated lab's pinned draw and any custom economy
alike. On the published economy itself (preset `paper`) the copy is the answer and nothing is left
to correct against, so the raw F1 is kept.

The published graph depends only on the population sizes and the `ground_truth` settings, so it is
measured once per process (`ground_truth.effect_graph` caches it); the default config's graph is
stored as package data (`benchmarks/macro_prior.py` rewrites it, and a slow test
re-measures it against the simulator).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from discoverylab.labs.macroecon.episode import STRUCTURE_RANGES, draw_switches
from discoverylab.labs.macroecon.ground_truth import (
    EffectGraph,
    GroundTruthSettings,
    effect_graph,
    measure_effect_graph,
)
from discoverylab.labs.macroecon.params import MacroStructure

PACKAGED_GRAPH = Path(__file__).resolve().parents[2] / "data" / "macro_published_graph.json"
"""The default config's published graph (default `MacroStructure`, default `GroundTruthSettings`)."""
DRAWN_FIELDS: frozenset[str] = frozenset(STRUCTURE_RANGES) | frozenset(draw_switches(np.random.default_rng(0)))
"""The structure fields an episode draws (`episode.draw_structure`); the published economy has their defaults."""
DEGENERATE_PRIOR = 1.0 - 1e-9
"""A prior F1 at or above this leaves nothing to correct against: the raw F1 is kept."""


def published_structure(structure: MacroStructure) -> MacroStructure:
    """The published economy behind `structure`: its drawn constants and switches back at their defaults."""
    return MacroStructure(**{k: v for k, v in structure.model_dump().items() if k not in DRAWN_FIELDS})


@cache
def _stored_graph() -> EffectGraph | None:
    """The package data, read once per process (None when absent)."""
    if not PACKAGED_GRAPH.is_file():
        return None
    return EffectGraph.model_validate_json(PACKAGED_GRAPH.read_text(encoding="utf-8"))


def packaged_graph(structure: MacroStructure, settings: GroundTruthSettings) -> EffectGraph | None:
    """The stored published graph when it was measured for exactly this structure and settings."""
    graph = _stored_graph()
    if graph is None or structure != MacroStructure() or graph.settings != settings:
        return None
    return graph


def published_graph(structure: MacroStructure, settings: GroundTruthSettings,
                    cache_dir: str | Path | None = None) -> EffectGraph:
    """The published (un-drawn) economy's measured graph: package data, else measured once per process."""
    return packaged_graph(structure, settings) or effect_graph(structure, settings, cache_dir)


def published_statements(graph: EffectGraph) -> list[dict[str, Any]]:
    """The published graph as a copier reports it: every non-zero parameter edge."""
    return [{"cause": e.cause, "effect": e.effect, "horizon": e.horizon, "sign": e.sign} for e in graph.nonzero()]


def chance_corrected(f1: float, prior: float | None) -> float:
    """(F1 - prior) / (1 - prior) clipped at 0; the raw F1 when there is no prior or it is degenerate."""
    if prior is None or prior >= DEGENERATE_PRIOR:
        return f1
    return max(0.0, (f1 - prior) / (1.0 - prior))


def write_packaged_graph(path: Path = PACKAGED_GRAPH) -> EffectGraph:
    """Measure the default config's published graph and store it (the package data's source)."""
    graph = measure_effect_graph(MacroStructure(), GroundTruthSettings())
    path.write_text(graph.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return graph

