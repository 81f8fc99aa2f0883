"""Ground truth of the macro lab: the causal graph measured by paired interventions (spec §3.6).

For every tunable θ we run the economy at θ's 10th and 90th percentiles (everything else at
defaults) with the same R seeds for both arms, and compare every indicator's mean over a short
window (quarters 1-20) and a long window (quarters 101-200). A paired t-statistic decides the sign:
"+"/"-" when |t| >= 4 and the effect is at least 5% of the indicator's default-run standard
deviation, "0" when |t| < 2, "?" (undetermined, not scored) in between.

Edges whose cause is an indicator cannot be intervened on through the parameters; for those the
grader uses the structural table read off the equations (`STRUCTURAL_EDGES`).

The measurement costs ~170 simulations, so it is cached in memory and, optionally, on disk, keyed
by the hash of the structure and the measurement settings.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from discoverylab.bench.records import read_jsonl, write_jsonl
from discoverylab.labs.macroecon.model import simulate
from discoverylab.labs.macroecon.observation import INDICATORS
from discoverylab.labs.macroecon.params import (
    TUNABLE_BY_KEY,
    TUNABLE_KEYS,
    MacroParams,
    MacroStructure,
    stable_hash,
)

logger = logging.getLogger(__name__)

Sign = Literal["+", "-", "0", "?"]
Horizon = Literal["short", "long"]
HORIZONS: tuple[Horizon, ...] = ("short", "long")

#: Direct effects between indicators, read off the equations of spec §3.3 (sign of the partial
#: effect), plus the explicit non-edges of spec §3.6.1 that agents tend to invent.
STRUCTURAL_EDGES: dict[tuple[str, str], Sign] = {
    ("unemployment", "gov_transfers"): "+",
    ("gdp_nominal", "gov_transfers"): "+",
    ("gov_transfers", "gov_debt"): "+",
    ("gov_transfers", "consumption"): "+",
    ("household_cash_mean", "consumption"): "+",
    ("tax_revenue", "consumption"): "-",
    ("policy_rate", "consumption"): "-",
    ("consumption", "gdp_real"): "+",
    ("inventory", "gdp_real"): "-",
    ("avg_markup", "avg_price"): "+",
    ("tax_revenue", "gov_debt"): "0",
    ("policy_rate", "avg_price"): "0",
    ("policy_rate", "avg_markup"): "0",
    ("policy_rate", "credit_tightness"): "0",
    ("policy_rate", "firm_profit"): "0",
    **{("credit_tightness", effect): "0" for effect in INDICATORS if effect != "credit_tightness"},
}


class GroundTruthSettings(BaseModel):
    """How the effect graph is measured (defaults = spec §3.6.2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    replicates: int = Field(default=8, ge=2)
    steps: int = Field(default=200, ge=20)
    short_window: tuple[int, int] = (1, 20)
    long_window: tuple[int, int] = (101, 200)
    low_quantile: float = 0.10
    high_quantile: float = 0.90
    t_sign: float = 4.0
    t_zero: float = 2.0
    min_effect_sd: float = 0.05
    seed_base: int = 1_000_003


class EdgeTruth(BaseModel):
    """The measured effect of one cause on one indicator at one horizon."""

    cause: str
    effect: str
    horizon: Horizon
    sign: Sign
    delta: float
    t_stat: float
    low: float
    high: float


class EffectGraph(BaseModel):
    """The reference graph the grader scores causal claims against."""

    structure_hash: str
    settings: GroundTruthSettings
    edges: list[EdgeTruth]
    default_means: dict[str, dict[str, float]]
    default_sd: dict[str, dict[str, float]]
    _by_key: dict[tuple[str, str, str], EdgeTruth] | None = PrivateAttr(default=None)

    def lookup(self) -> dict[tuple[str, str, str], EdgeTruth]:
        """Edges keyed by (cause, effect, horizon)."""
        return {(e.cause, e.effect, e.horizon): e for e in self.edges}

    def sign(self, cause: str, effect: str, horizon: str = "long") -> Sign:
        """Truth for one claimed edge: a measured sign for parameters, the structural table otherwise."""
        if cause in TUNABLE_BY_KEY:
            edge = self._index().get((cause, effect, horizon))
            return edge.sign if edge is not None else "?"
        return STRUCTURAL_EDGES.get((cause, effect), "?")

    def _index(self) -> dict[tuple[str, str, str], EdgeTruth]:
        if self._by_key is None:
            self._by_key = self.lookup()
        return self._by_key

    def nonzero(self, effects: Iterable[str] | None = None) -> list[EdgeTruth]:
        """Determined non-zero parameter edges, optionally restricted to some effects."""
        keep = set(effects) if effects is not None else set(INDICATORS)
        return [e for e in self.edges if e.sign in ("+", "-") and e.effect in keep]


def intervention_levels(key: str, settings: GroundTruthSettings) -> tuple[float, float]:
    """θ_lo and θ_hi: the configured quantiles of the tunable's valid range."""
    spec = TUNABLE_BY_KEY[key]
    span = spec.high - spec.low
    return spec.low + settings.low_quantile * span, spec.low + settings.high_quantile * span


def _window_means(params: MacroParams, seeds: list[int], structure: MacroStructure,
                  settings: GroundTruthSettings) -> tuple[np.ndarray, np.ndarray]:
    """Per-seed window means and within-window sds, shape (seeds, horizons, indicators)."""
    means = np.empty((len(seeds), len(HORIZONS), len(INDICATORS)))
    sds = np.empty_like(means)
    for i, seed in enumerate(seeds):
        run = simulate(params, settings.steps, seed, structure)
        for h, (first, last) in enumerate((settings.short_window, settings.long_window)):
            block = run.indicators[first : last + 1]
            means[i, h] = block.mean(axis=0)
            sds[i, h] = block.std(axis=0)
    return means, sds


def _classify(diffs: np.ndarray, default_sd: float, settings: GroundTruthSettings) -> tuple[Sign, float]:
    """Sign and paired t-statistic of per-seed differences."""
    mean = float(diffs.mean())
    spread = float(diffs.std(ddof=1))
    scale = max(abs(float(np.abs(diffs).max())), 1.0)
    if spread <= 1e-12 * scale:
        t_stat = 0.0 if abs(mean) <= 1e-12 * scale else math.copysign(math.inf, mean)
    else:
        t_stat = mean / (spread / math.sqrt(diffs.size))
    if abs(t_stat) >= settings.t_sign and abs(mean) >= settings.min_effect_sd * default_sd:
        return ("+" if mean > 0 else "-"), t_stat
    if abs(t_stat) < settings.t_zero:
        return "0", t_stat
    return "?", t_stat  # weak evidence, or significant but below the size threshold


def measure_effect_graph(structure: MacroStructure | None = None,
                         settings: GroundTruthSettings | None = None) -> EffectGraph:
    """Run the paired interventions and classify every (parameter, indicator, horizon) edge."""
    structure = structure or MacroStructure()
    settings = settings or GroundTruthSettings()
    seeds = [settings.seed_base + r for r in range(settings.replicates)]
    default = MacroParams()
    base_means, base_sds = _window_means(default, seeds, structure, settings)
    default_sd = base_sds.mean(axis=0)
    edges: list[EdgeTruth] = []
    for key in TUNABLE_KEYS:
        low, high = intervention_levels(key, settings)
        lo_means, _ = _window_means(default.with_changes(**{key: low}), seeds, structure, settings)
        hi_means, _ = _window_means(default.with_changes(**{key: high}), seeds, structure, settings)
        diffs = hi_means - lo_means
        for h, horizon in enumerate(HORIZONS):
            for k, effect in enumerate(INDICATORS):
                sign, t_stat = _classify(diffs[:, h, k], float(default_sd[h, k]), settings)
                edges.append(EdgeTruth(cause=key, effect=effect, horizon=horizon, sign=sign,
                                       delta=float(diffs[:, h, k].mean()),
                                       t_stat=t_stat if math.isfinite(t_stat) else math.copysign(1e9, t_stat),
                                       low=low, high=high))
    summary = base_means.mean(axis=0)
    return EffectGraph(
        structure_hash=structure.config_hash(), settings=settings, edges=edges,
        default_means={hz: dict(zip(INDICATORS, map(float, summary[h]), strict=True))
                       for h, hz in enumerate(HORIZONS)},
        default_sd={hz: dict(zip(INDICATORS, map(float, default_sd[h]), strict=True))
                    for h, hz in enumerate(HORIZONS)},
    )


_MEMORY_CACHE: dict[str, EffectGraph] = {}
CACHE_ENV_VAR = "DISCOVERYLAB_CACHE_DIR"


def graph_cache_key(structure: MacroStructure, settings: GroundTruthSettings) -> str:
    """Key of one measured graph: structure plus measurement settings."""
    return stable_hash({"structure": structure.model_dump(), "settings": settings.model_dump()})


def effect_graph(structure: MacroStructure | None = None, settings: GroundTruthSettings | None = None,
                 cache_dir: str | Path | None = None) -> EffectGraph:
    """The measured graph, from the in-memory cache, then `cache_dir`, else measured and stored.

    `cache_dir` defaults to the environment variable `DISCOVERYLAB_CACHE_DIR` (unset: memory only),
    so parallel runner processes can share one measurement.
    """
    cache_dir = cache_dir if cache_dir is not None else os.environ.get(CACHE_ENV_VAR) or None
    structure = structure or MacroStructure()
    settings = settings or GroundTruthSettings()
    key = graph_cache_key(structure, settings)
    if key in _MEMORY_CACHE:
        return _MEMORY_CACHE[key]
    path = Path(cache_dir) / f"macro-graph-{key}.jsonl" if cache_dir is not None else None
    graph: EffectGraph | None = None
    if path is not None:
        for record in read_jsonl(path):
            try:
                graph = EffectGraph.model_validate(record)
            except ValueError:
                logger.warning("ignoring unreadable cached graph %s", path)
    if graph is None:
        logger.info("measuring the macro effect graph (%d replicates)", settings.replicates)
        graph = measure_effect_graph(structure, settings)
        if path is not None:
            write_jsonl(path, [graph])
    _MEMORY_CACHE[key] = graph
    return graph


def graph_as_text(graph: EffectGraph, effects: Iterable[str] | None = None) -> str:
    """Compact JSON of the non-zero parameter edges, for judge prompts."""
    rows = [{"cause": e.cause, "effect": e.effect, "horizon": e.horizon, "sign": e.sign,
             "delta": round(e.delta, 4)} for e in graph.nonzero(effects)]
    return json.dumps(rows, separators=(",", ":"))

