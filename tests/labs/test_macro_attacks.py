"""Macro-lab grader attacks (issue #22): science cannot be replaced by a scaffold and a copied graph.

The combined attack: a templated scaffold that maximises workflow, coverage and data-analysis credit
(specific-sounding hypotheses, every tunable at three levels, a 2x2, long and short runs, verified
comparisons between its own runs), the causal graph measured on *another* seed's economy (or on the
paper's default economy) with the public simulator, and an attempt to run the held-out settings as
ordinary experiments. Together they must score below the honest heuristic scientist. The scaffold
alone (no graph) must not beat chance, the random agent's mean plus a small margin: it used to score
0.512 on seeds 0-49 against the random agent's 0.032, on process credit alone.

Copying a public economy's graph must not beat chance either, whichever graph is copied: the next
seed's, the nearest of K public economies' (chosen with the truth, so no way of guessing does
better) or their edge-wise majority, each with the scaffold. With edge credit counted above the
published graph alone, the next seed's copy scored 0.060 on seeds 0-49 (random 0.001): a copy is
sometimes closer to the economy than the published graph, and the clip at 0 paid that variance. The
chance level is now the best of a public panel (`macroecon/prior.py`). A fast sample runs by
default (two seeds whose copies used to pay); seeds 0-49 are `slow`.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import numpy as np
import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.macroecon.episode import KEY_EFFECTS, draw_structure
from discoverylab.labs.macroecon.grading import _verdicts, signed_edge_f1
from discoverylab.labs.macroecon.ground_truth import effect_graph
from discoverylab.labs.macroecon.params import TUNABLES, MacroStructure
from discoverylab.labs.macroecon.prior import graph_signs, majority_signs, signs_statements
from discoverylab.labs.protocol import make_protocol

MACRO = "macro/causal-discovery"
# The tests here measure the same 100-household economies' graphs (10-40 s of CPU each, kept in
# the process's memory): on one xdist worker each is measured once, not once per worker.
pytestmark = pytest.mark.xdist_group("macro-100-households")
STRUCTURE = MacroStructure(n_households=100)
CONFIG: dict[str, Any] = {"structure": {"n_households": 100}}
FAST_SEEDS = (0, 1, 2)
ALL_SEEDS = tuple(range(50))
MARGIN = 0.05
"""How far above the random agent's mean the scaffold alone may land before it counts as beating chance."""

LOW = {t.key: round(t.low + 0.1 * (t.high - t.low), 4) for t in TUNABLES}
HIGH = {t.key: round(t.low + 0.9 * (t.high - t.low), 4) for t in TUNABLES}
PLAN: list[tuple[dict[str, float], int]] = [
    ({}, 200), (LOW, 100), (HIGH, 100), ({"g0": LOW["g0"]}, 200), ({"tau0": LOW["tau0"]}, 200),
    ({"g0": LOW["g0"], "tau0": LOW["tau0"]}, 200), ({"markup": HIGH["markup"]}, 200), ({"phi": HIGH["phi"]}, 200),
    ({"r0": HIGH["r0"]}, 200), ({"c1": HIGH["c1"]}, 200)]


def copied_edges(structure: MacroStructure) -> list[dict[str, Any]]:
    graph = effect_graph(structure)
    return [{"cause": e.cause, "effect": e.effect, "sign": e.sign, "horizon": e.horizon}
            for e in graph.edges if e.sign in ("+", "-")]


def _statements_edges(stated: dict[tuple[str, str, str], str]) -> list[dict[str, Any]]:
    return [{"cause": c, "effect": f, "sign": sign, "horizon": h} for (c, f, h), sign in stated.items()]


def nearest_edges(seed: int, sources: tuple[int, ...]) -> list[dict[str, Any]]:
    """The public seeds' graph nearest to this seed's economy, picked with the truth (an upper bound
    on any way an attacker could guess which one is nearest)."""
    truth = effect_graph(draw_structure(seed, STRUCTURE))
    graphs = [signs_statements(graph_signs(effect_graph(draw_structure(s, STRUCTURE)))) for s in sources]
    return _statements_edges(max(graphs, key=lambda g: signed_edge_f1(_verdicts(g, truth), truth, KEY_EFFECTS)[0]))


def majority_edges(sources: tuple[int, ...]) -> list[dict[str, Any]]:
    """The edge-wise majority of the public seeds' graphs."""
    signs = [graph_signs(effect_graph(draw_structure(s, STRUCTURE))) for s in sources]
    return _statements_edges(signs_statements(majority_signs(signs)))


class CombinedAttack:
    """Scaffold + a copied graph + running the held-out settings (see the module docstring)."""

    def __init__(self, edges: list[dict[str, Any]]) -> None:
        self.edges = edges

    def reset(self, seed: int) -> None:
        self.results: dict[int, dict[str, Any]] = {}
        self.held: list[tuple[str, dict[str, float]]] = []
        self.tried_held = False

    def act(self, message: str) -> str:
        for line in message.splitlines():
            if line.startswith('{"type":"lab_results"'):
                result = json.loads(line)
                self.results[result["experiment_id"]] = result
            if m := re.match(r"\s+(h\d+): (\{.*\})$", line):
                self.held.append((m[1], json.loads(m[2])))
        n = len(self.results)
        if self.held and not self.tried_held:  # try to run a held-out setting as an experiment
            self.tried_held = True
            return json.dumps({"type": "experiment", "hypothesis": "g0 moves unemployment",
                               "design": "run the held-out setting", "update_from_previous": "observed 0.1",
                               "params": self.held[0][1], "number_of_steps": 100})
        if n < len(PLAN) and not self.held:
            params, steps = PLAN[n]
            key = next(iter(params), "g0")
            prev = self.results[n]["summary"]["unemployment"]["mean"] if n else ""
            return json.dumps({"type": "experiment",
                               "hypothesis": f"Changing {key} moves unemployment and gdp_real (test {n + 1}).",
                               "design": f"Set {key}; compare with the baseline over {steps} quarters.",
                               "update_from_previous": f"Previous result: unemployment mean {prev}, higher than before.",
                               "params": params, "number_of_steps": steps})
        claims = [{"experiment_id": eid, "baseline_id": 1, "kind": "difference", "indicator": name,
                   "statistic": "mean", "value": r["summary"][name]["mean"] - self.results[1]["summary"][name]["mean"]}
                  for eid, r in self.results.items() if eid in (4, 5, 7, 8) for name in ("unemployment", "gdp_real")]
        base = self.results.get(1, {}).get("summary", {})
        predictions = [{"setting_id": sid, "unemployment_mean_q50_100": base.get("unemployment", {}).get("mean", 0.1),
                        "gov_debt_final": base.get("gov_debt", {}).get("last", 0.0)} for sid, _ in self.held]
        return json.dumps({"type": "report", "causal_graph": {"edges": self.edges}, "claims": claims,
                           "predictions": predictions, "narrative": "Transfers sustain demand."})


def _score(seed: int, agent: Any) -> float:
    proto = make_protocol(MACRO, **CONFIG)
    return run_episode(proto, agent(proto), seed=seed).score.score


@cache
def heuristic(seed: int) -> float:
    return _score(seed, lambda p: make_agent(MACRO, "heuristic", p))


@cache
def random_agent(seed: int) -> float:
    return _score(seed, lambda p: make_agent(MACRO, "random", p))


def attack_scores(seeds: tuple[int, ...], source: str) -> list[float]:
    out = []
    for seed in seeds:
        other = (STRUCTURE if source == "default" else draw_structure(seed + 1, STRUCTURE))
        edges = copied_edges(other)
        out.append(_score(seed, lambda _p, e=edges: CombinedAttack(e)))  # type: ignore[misc]
    return out


def test_combined_attack_with_the_next_seeds_graph_loses() -> None:
    scores = attack_scores(FAST_SEEDS, "next")
    honest = [heuristic(s) for s in FAST_SEEDS]
    assert float(np.mean(scores)) < float(np.mean(honest)), (scores, honest)


def test_combined_attack_with_the_default_economys_graph_loses() -> None:
    scores = attack_scores(FAST_SEEDS, "default")
    honest = [heuristic(s) for s in FAST_SEEDS]
    assert float(np.mean(scores)) < float(np.mean(honest)), (scores, honest)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["next", "default"])
def test_combined_attack_loses_on_seeds_0_49(source: str) -> None:
    scores = attack_scores(ALL_SEEDS, source)
    honest = [heuristic(s) for s in ALL_SEEDS]
    assert float(np.mean(scores)) < float(np.mean(honest)), (np.mean(scores), np.mean(honest))


def _scaffold_against_chance(seeds: tuple[int, ...]) -> tuple[float, float]:
    scaffold = [_score(s, lambda _p: CombinedAttack([])) for s in seeds]
    return float(np.mean(scaffold)), float(np.mean([random_agent(s) for s in seeds]))


def test_scaffold_alone_does_not_beat_chance() -> None:
    """Templated one-factor runs, boilerplate hypotheses and verified comparisons, no causal graph:
    Workflow, Coverage and Data Analysis credit that needs no discovery (0.51 on these seeds before)."""
    scaffold, chance = _scaffold_against_chance(FAST_SEEDS)
    assert scaffold <= chance + MARGIN, (scaffold, chance)


@pytest.mark.slow
def test_scaffold_alone_does_not_beat_chance_on_seeds_0_49() -> None:
    scaffold, chance = _scaffold_against_chance(ALL_SEEDS)
    assert scaffold <= chance + MARGIN, (scaffold, chance)


# ---------------------------------------------------------------------- copying public graphs
COPY_SEEDS = (7, 8)
"""Fast sample of the copy attacks: seeds where each copy used to pay (mean 0.15-0.20 before the panel)."""
K_FAST, K_SLOW = 3, 5
"""Public economies an attacker copies from: the next K seeds' (fast sample, seeds 0-49)."""


def _sources(seed: int, fast: bool) -> tuple[int, ...]:
    return tuple(range(seed + 1, seed + 1 + (K_FAST if fast else K_SLOW)))


def copy_attack_scores(seeds: tuple[int, ...], kind: str, fast: bool) -> list[float]:
    """The scaffold with a copied public graph: the next seed's, the nearest of K, or K's majority."""
    out = []
    for seed in seeds:
        if kind == "next":
            edges = copied_edges(draw_structure(seed + 1, STRUCTURE))
        elif kind == "nearest":
            edges = nearest_edges(seed, _sources(seed, fast))
        else:
            edges = majority_edges(_sources(seed, fast))
        out.append(_score(seed, lambda _p, e=edges: CombinedAttack(e)))  # type: ignore[misc]
    return out


def _against_chance(seeds: tuple[int, ...], kind: str, fast: bool) -> tuple[float, float]:
    scores = copy_attack_scores(seeds, kind, fast)
    return float(np.mean(scores)), float(np.mean([random_agent(s) for s in seeds]))


@pytest.mark.parametrize("kind", ["next", "nearest", "majority"])
def test_scaffold_with_a_copied_public_graph_does_not_beat_chance(kind: str) -> None:
    """The scaffold plus another public economy's graph (the next seed's, the nearest of the other
    seeds' or their majority) lands at chance: the copy is one more draw of what the panel holds."""
    attack, chance = _against_chance(COPY_SEEDS, kind, fast=True)
    assert attack <= chance + MARGIN, (attack, chance)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["next", "nearest", "majority"])
def test_scaffold_with_a_copied_public_graph_does_not_beat_chance_on_seeds_0_49(kind: str) -> None:
    attack, chance = _against_chance(ALL_SEEDS, kind, fast=False)
    assert attack <= chance + MARGIN, (attack, chance)
