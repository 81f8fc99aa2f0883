"""Public graphs as the chance level: edge credit is counted above what copying a public graph scores.

Every seed draws its own economy, but the simulator is public: anyone can measure the published
(default) economy's graph, or any other drawn economy's, once and report it without an experiment of
their own. On a drawn economy such a copy already reaches a signed-edge F1 of ~0.66-0.70, so a raw F1
pays for no discovery. The grader therefore scores the chance-corrected F1 (Cohen's-kappa style)

    F1_corrected = max(0, (F1 - F1_chance) / (1 - F1_chance)).

F1_chance was first the F1 of the published graph alone; but the clip at 0 then paid the *variance*
of a copy: another seed's graph is sometimes closer to this economy than the published one, and
"scaffold + the next seed's graph" scored 0.060 on seeds 0-49 against 0.001 for the random agent.
So F1_chance is now the best F1, on this episode's economy, of a public panel: the published graph,
`PANEL_SIZE` economies drawn like an episode's (same base, same complexity) from protocol streams no
episode uses (`PANEL_STREAMS`), and their edge-wise majority (each copied as every non-zero
parameter edge). A graph copied from outside the panel (another seed's, the nearest of several, a
majority of several) is one more draw of the same kind: it beats the best of the panel's 26
candidates rarely and by little. Copying scores ~0, a perfect graph still 1, and an agent that starts
from public graphs is paid for what its own experiments change. On the published economy itself
(preset `paper`) the copy is the answer and the raw F1 is kept.

The panel depends only on the base structure (population sizes, switches not drawn), the
`ground_truth` settings and the complexity, so it is measured once per process (`effect_graph`
caches each graph, also in `cache_dir`); the panels of the default config and of the 100-household
setting of the attack tests are package data (`benchmarks/macro_prior.py` rewrites them, and a slow
test re-measures them), as is the default config's published graph.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from discoverylab.labs.macroecon.episode import STRUCTURE_RANGES, draw_structure, draw_switches
from discoverylab.labs.macroecon.ground_truth import (
    HORIZONS,
    EffectGraph,
    GroundTruthSettings,
    effect_graph,
    measure_effect_graph,
)
from discoverylab.labs.macroecon.observation import INDICATORS
from discoverylab.labs.macroecon.params import TUNABLE_KEYS, MacroStructure

PACKAGED_GRAPH = Path(__file__).resolve().parents[2] / "data" / "macro_published_graph.json"
"""The default config's published graph (default `MacroStructure`, default `GroundTruthSettings`)."""
PACKAGED_PANELS = PACKAGED_GRAPH.with_name("macro_public_panel.json")
"""Public panels' signs for the default config and the attack tests' 100-household setting."""
PANEL_SIZE = 24
"""Drawn economies in the public panel (with the published graph and their majority: 26 candidates)."""
PANEL_STREAMS: tuple[int, int] = (9, 10)
"""Protocol streams of the panel's draws: no episode draws from them (`episode.EPISODE_STREAMS`)."""
PACKAGED_BASES: tuple[MacroStructure, ...] = (MacroStructure(), MacroStructure(n_households=100))
"""The base structures whose panels (default settings, complexity 0.5) are package data."""
EDGE_ORDER: tuple[tuple[str, str, str], ...] = tuple(
    (cause, effect, horizon) for cause in TUNABLE_KEYS for horizon in HORIZONS for effect in INDICATORS)
"""The order of a sign string's characters (that of `measure_effect_graph`'s edges)."""
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


# ---------------------------------------------------------------------- the public panel
def panel_structures(base: MacroStructure, complexity: float, size: int = PANEL_SIZE) -> list[MacroStructure]:
    """The panel's economies: drawn on `base` as an episode's are, from streams no episode uses."""
    return [draw_structure(i, base, complexity, PANEL_STREAMS) for i in range(size)]


def graph_signs(graph: EffectGraph) -> str:
    """A graph's parameter-edge signs as one string in `EDGE_ORDER` (what a copier needs of it)."""
    look = graph.lookup()
    return "".join(look[key].sign if key in look else "?" for key in EDGE_ORDER)


def signs_statements(signs: str) -> dict[tuple[str, str, str], str]:
    """A sign string as a copier reports it: every non-zero edge, (cause, effect, horizon) -> sign."""
    return {key: sign for key, sign in zip(EDGE_ORDER, signs, strict=True) if sign in ("+", "-")}


def majority_signs(graphs: list[str]) -> str:
    """The edge-wise majority sign of several graphs (ties go to the first sign counted)."""
    return "".join(Counter(column).most_common(1)[0][0] for column in zip(*graphs, strict=True))


def _panel_key(base: MacroStructure, settings: GroundTruthSettings, complexity: float) -> dict[str, Any]:
    return {"structure_hash": base.config_hash(), "settings": settings.model_dump(mode="json"),
            "complexity": complexity, "size": PANEL_SIZE}


@cache
def _stored_panels() -> tuple[dict[str, Any], ...]:
    """The package data, read once per process (empty when absent)."""
    if not PACKAGED_PANELS.is_file():
        return ()
    return tuple(json.loads(PACKAGED_PANELS.read_text(encoding="utf-8"))["panels"])


def packaged_panel(base: MacroStructure, settings: GroundTruthSettings, complexity: float) -> list[str] | None:
    """The stored panel's sign strings when it was measured for exactly this base, settings and complexity."""
    key = _panel_key(base, settings, complexity)
    for panel in _stored_panels():
        if {k: panel[k] for k in key} == key:
            return list(panel["graphs"])
    return None


def panel_signs(base: MacroStructure, settings: GroundTruthSettings, complexity: float,
                cache_dir: str | Path | None = None) -> list[str]:
    """The panel's graphs as sign strings: package data, else measured (once per process and cache_dir)."""
    stored = packaged_panel(base, settings, complexity)
    if stored is not None:
        return stored
    from tqdm import tqdm  # minutes of measuring for a config without package data: say so on a terminal

    structures = tqdm(panel_structures(base, complexity), desc="macro lab: measuring the public panel's graphs "
                      "(once per config; --out keeps them)", unit="graph", disable=None, leave=False)  # fmt: skip
    return [graph_signs(effect_graph(s, settings, cache_dir)) for s in structures]


def public_candidates(base: MacroStructure, settings: GroundTruthSettings, complexity: float,
                      cache_dir: str | Path | None = None) -> dict[str, dict[tuple[str, str, str], str]]:
    """What a copier can report without an experiment, by name: the published graph, each panel
    graph and the edge-wise majority of them all; the chance level is the best of these."""
    published = graph_signs(published_graph(base, settings, cache_dir))
    panel = panel_signs(base, settings, complexity, cache_dir)
    named = {"published": published, **{f"panel-{i}": g for i, g in enumerate(panel)},
             "majority": majority_signs([published, *panel])}
    return {name: signs_statements(signs) for name, signs in named.items()}


def write_packaged_panels(path: Path = PACKAGED_PANELS, cache_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """Measure the packaged bases' panels (default settings, complexity 0.5) and store their signs."""
    settings = GroundTruthSettings()
    panels = [{**_panel_key(base, settings, 0.5), "n_households": base.n_households,
               "graphs": [graph_signs(effect_graph(s, settings, cache_dir)) for s in panel_structures(base, 0.5)]}
              for base in PACKAGED_BASES]
    path.write_text(json.dumps({"edge_order": "tunable x horizon x indicator (prior.EDGE_ORDER)", "panels": panels},
                               indent=1) + "\n", encoding="utf-8")
    _stored_panels.cache_clear()
    return panels
