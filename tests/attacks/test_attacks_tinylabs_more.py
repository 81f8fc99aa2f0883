"""More Tiny Labs grader attacks (session 20): combined cheap strategies that read the prompt, hedge
over the grader's free choices or predict "nothing changes", none of which discovers the rule.

Each named test plays an attack on the labs' default (per-seed) problems and asserts it does not beat
chance (the random agent's mean, plus a small margin); a fast sample runs by default. The macro test
asserts that a copied published graph adds nothing to a scaffold (the grader counts edge F1 above
the published graph's own F1, `macroecon/prior.py`).
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import numpy as np
import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.protocol import make_protocol
from discoverylab.labs.sequence.generate import DRIVER_CHOICES
from discoverylab.labs.sequence.properties import compute_codes, encode

DYNAMICS = "sequence/unknown-dynamics"
DYN_SEEDS = range(6)
MARGIN = 0.05
"""How far above the random agent's mean an attack may land on a 6-seed sample before it counts as a win."""


def _listed(message: str) -> list[str]:
    return [ln[2:].split(":", 1)[0] for ln in message.splitlines() if ln.startswith("- ")]


def _alternation_k(message: str) -> int:
    found = re.search(r"s\[0\], s\[(\d+)\]", message)
    return int(found.group(1)) if found else 1


class IdentityHedge:
    """Protocol B without studying the dynamics: one experiment only calibrates the measurables (the
    weighted count's hidden weights by least squares), then the report names every listed measurable
    that can be a driver (never `entropy_score` or `hamming_distance`), claims one constant "2-cycle"
    attractor keyed by every listed name, and predicts for each held-out start its *own* starting
    values ("nothing changes"), keyed by every name, so the grader reads whichever are the drivers."""

    def __init__(self, *, name_prior: bool = True, experiment: bool = True) -> None:
        self.name_prior, self.experiment = name_prior, experiment
        self.names: list[str] = []
        self.k = 1
        self.weights: np.ndarray | None = None

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(1000 + seed)
        self.names, self.weights = [], None

    def _values(self, seqs: list[str]) -> dict[str, np.ndarray]:
        x = encode(seqs)
        out: dict[str, np.ndarray] = {}
        for name in self.names:
            if name == "gc_content":
                out[name] = compute_codes("gc_content", x)
            elif name == "palindrome_score":
                out[name] = compute_codes("palindrome_score", x)
            elif name == "alternation_k":
                u = x[:, :: self.k]
                out[name] = (u[:, 1:] != u[:, :-1]).mean(axis=1)
            elif name == "weighted_count" and self.weights is not None:
                frac = np.stack([(x == c).mean(axis=1) for c in range(4)], axis=1)
                out[name] = np.clip(frac @ self.weights, 0.0, 1.0)
        return out

    def _calibrate(self, message: str) -> None:
        for line in message.splitlines():
            if line.strip().startswith('{"type": "lab_results"'):
                res = json.loads(line)
                seqs, meas = res["trajectory"], res["measurements"]
                if "weighted_count" in meas:
                    x = encode(seqs)
                    frac = np.stack([(x == c).mean(axis=1) for c in range(4)], axis=1)
                    self.weights = np.linalg.lstsq(frac, np.asarray(meas["weighted_count"]), rcond=None)[0]

    def act(self, message: str) -> str:
        if "MEASURABLES" in message:
            self.names, self.k = _listed(message), _alternation_k(message)
            if self.experiment:
                seq = "".join("ACGT"[int(i)] for i in self.rng.integers(0, 4, 30))
                return json.dumps({"type": "experiment", "sequence": seq, "measurables": self.names, "steps": 20,
                                   "reasoning": "calibration"})
        self._calibrate(message)
        if "heldout_starts" not in message:
            return json.dumps({"type": "report", "hypothesis": "", "evidence": "", "attractors": [], "drivers": []})
        starts = next(json.loads(ln)["heldout_starts"] for ln in message.splitlines() if "heldout_starts" in ln)
        ids, seqs = list(starts), list(starts.values())
        values = self._values(seqs)
        preds = {sid: {"attractor": 1} | {n: float(v[i]) for n, v in values.items()} for i, sid in enumerate(ids)}
        drivers = [n for n in self.names if n in DRIVER_CHOICES] if self.name_prior else list(self.names)
        claim = {n: 0.5 for n in self.names} | {"type": "2-cycle"}
        return json.dumps({"type": "report", "hypothesis": "The process relaxes towards attractors.",
                           "evidence": "", "attractors": [claim], "drivers": drivers, "predictions": preds})


def _dyn_mean(agent_factory: Any, seeds: range = DYN_SEEDS) -> tuple[float, list[dict[str, float]]]:
    scores, parts = [], []
    for seed in seeds:
        proto = make_protocol(DYNAMICS)
        grade = run_episode(proto, agent_factory(proto), seed=seed).score
        scores.append(grade.score)
        parts.append(grade.parts)
    return float(np.mean(scores)), parts


@cache
def _random_dyn() -> float:
    return _dyn_mean(lambda p: make_agent(p.name, "random", p))[0]


def test_dynamics_identity_hedge_with_name_prior_does_not_beat_chance() -> None:
    """Predict "nothing changes" for every held-out start, name the listed measurables that can be
    drivers, claim one constant 2-cycle attractor: no experiment studies the dynamics."""
    attack, parts = _dyn_mean(lambda _p: IdentityHedge())
    assert attack <= _random_dyn() + MARGIN, (attack, parts)


def _report_parts(seed: int, report: dict[str, Any]) -> dict[str, float]:
    proto = make_protocol(DYNAMICS)
    proto.reset(seed)
    reply = proto.step(json.dumps({"type": "report", "hypothesis": "", "attractors": [], "drivers": []}))
    starts = next(json.loads(ln)["heldout_starts"] for ln in reply.text.splitlines() if "heldout_starts" in ln)
    if callable(report.get("predictions")):
        report = report | {"predictions": report["predictions"](proto, starts)}
    proto.step(json.dumps({"type": "report", "hypothesis": "", "evidence": ""} | report))
    return proto.grade().parts


def test_dynamics_still_prediction_without_attractors_names_no_basin() -> None:
    """Each start's own driver values as its end state, no attractor claimed: the basin used to be
    read off the *true* centroids (93% right on seeds 0-19 against 43% by guessing); now a basin
    counts only through a claimed attractor that matches the true one."""
    def still(proto: Any, starts: dict[str, str]) -> dict[str, Any]:
        values = proto.evolution.measure(encode(list(starts.values())))
        return {sid: dict(zip(proto.drivers, map(float, v), strict=True)) for sid, v in zip(starts, values, strict=True)}

    for seed in (0, 1):
        parts = _report_parts(seed, {"drivers": [], "predictions": still})
        assert parts["basin"] == 0.0 and parts["end_state"] == 0.0, parts


def test_dynamics_constant_two_cycle_claim_earns_nothing_without_attractors() -> None:
    """Every drawn process ends in 2-cycles, so a constant "2-cycle" claim was a free 0.1."""
    parts = _report_parts(0, {"attractors": [{"gc_content": 0.5, "palindrome_score": 0.5, "weighted_count": 0.5,
                                              "alternation_k": 0.5, "type": "2-cycle"}], "drivers": []})
    assert parts["cycle_claim"] == 1.0 and parts["attractor_recall"] == 0.0 and parts["cycle"] == 0.0


def test_dynamics_naming_every_candidate_driver_is_chance() -> None:
    """Naming every listed measurable (Jaccard 0.5 on 2 of 4) or every one that can be a driver (entropy
    and Hamming distance never are) scores 0 driver skill; where the prompt lists only the drivers among
    the candidates, the part is left out of the score (`drivers_scored` 0)."""
    seen_unscored = False
    for seed in range(6):
        proto = make_protocol(DYNAMICS)
        names = _listed(proto.reset(seed))
        candidates = [n for n in names if n in DRIVER_CHOICES]
        for drivers in (names, candidates):
            parts = _report_parts(seed, {"drivers": drivers})
            if parts["drivers_scored"]:
                assert parts["drivers"] == 0.0, (seed, drivers, parts)
            else:  # the candidates are exactly the drivers: the prompt told them
                seen_unscored = True
                assert _report_parts(seed, {"drivers": candidates})["drivers_jaccard"] == 1.0
    assert seen_unscored


# ---------------------------------------------------------------------- population dynamics
POPULATION = "sequence/population-dynamics"
POP_SEEDS = range(1, 20, 2)
"""Odd seeds: the attack's rates were fitted on the even seeds 0-78 (out of sample here)."""


class MenuPrior:
    """No experiment: a prior read off the public operator menu. Palindromicity only ever rises under
    `palindrome_pull`, so predict it `rate` of the remaining way to 1 per generation (0.2: the best
    fixed rate against the old grader, 0.23 against the new one); GC content relaxes towards a bias, so
    predict 18% of the way to 0.1 per generation (all fitted on even seeds 0-78)."""

    def __init__(self, rate: float) -> None:
        self.keep = 1 - rate

    def reset(self, seed: int) -> None:
        pass

    def act(self, message: str) -> str:
        line = next((ln for ln in message.splitlines() if '"heldout_populations"' in ln), None)
        if line is None:
            return json.dumps({"type": "report", "hypothesis": "", "evidence": "", "predictions": {}})
        request = json.loads(line)
        k = int(request["generations"])
        preds: dict[str, dict[str, float]] = {}
        for pid, held in request["heldout_populations"].items():
            start = held["generation_0"]
            preds[pid] = {}
            for target in request["targets"]:
                x = float(start[target])
                if target == "palindrome_score":
                    preds[pid][target] = 1 - (1 - x) * self.keep**k
                elif target == "gc_content":
                    preds[pid][target] = 0.1 + (x - 0.1) * 0.82**k
                else:
                    preds[pid][target] = x
        return json.dumps({"type": "report", "hypothesis": "palindromes are pulled up; GC relaxes to a bias",
                           "evidence": "", "predictions": preds})


@pytest.mark.parametrize("rate", [0.2, 0.23])
def test_population_menu_prior_does_not_beat_chance(rate: float) -> None:
    """With rate 0.2 it scored 0.228 skill on palindromicity out of sample (the heuristic scientist:
    0.308) with no experiment, because every hindsight hedge moved towards a middle value (c in
    0.25..0.75) while palindrome pull only pushes up; creeps towards 1 at rates 0.1, 0.2, 0.3 per
    generation are now baselines too."""
    scores = [run_episode(make_protocol(POPULATION), MenuPrior(rate), seed=s).score for s in POP_SEEDS]
    pal = [g.parts["skill_palindrome_score"] for g in scores if "skill_palindrome_score" in g.parts]
    assert pal and float(np.mean(pal)) <= MARGIN, pal
    assert float(np.mean([g.score for g in scores])) <= MARGIN, [g.score for g in scores]


def test_dynamics_dense_grid_of_claims_with_still_predictions_does_not_beat_chance() -> None:
    """Claim a 2-cycle attractor at every point of an 11 x 11 grid (every true attractor is within 0.1
    of one), name each start's nearest claim to its own starting values, and every candidate driver: the
    claims find every attractor (recall 1), so a cycle credit by recall, or a basin read off the nearest
    claim, would pay for no discovery."""
    class Grid(IdentityHedge):
        def act(self, message: str) -> str:
            reply = super().act(message)
            if '"type": "report"' not in reply or "heldout_starts" not in message:
                return reply
            report = json.loads(reply)
            pairs = [(i / 10, j / 10) for i in range(11) for j in range(11)]
            names = [n for n in self.names if n in DRIVER_CHOICES] or self.names
            grid = []
            for a, b in pairs:  # the grid in every pair of candidate axes at once: coordinates a, b, a, b, ...
                grid.append({n: (a if k % 2 == 0 else b) for k, n in enumerate(names)} | {"type": "2-cycle"})
            report["attractors"] = grid
            for pred in report["predictions"].values():
                pred.pop("attractor", None)
            return json.dumps(report)

    attack, parts = _dyn_mean(lambda _p: Grid())
    assert attack <= _random_dyn() + MARGIN, (attack, [(p["cycle"], p["basin"], p["attractors"]) for p in parts])


# ---------------------------------------------------------------------- macro
def _published_graph_gains(seeds: tuple[int, ...]) -> list[float]:
    """Score of the scaffold of `tests/labs/test_macro_attacks.py` reporting the default (published)
    economy's measured graph minus the same scaffold reporting no graph, per seed (100 households)."""
    import sys
    from pathlib import Path

    sys.path.append(str(Path(__file__).resolve().parents[1] / "labs"))
    from test_macro_attacks import STRUCTURE, CombinedAttack, _score, copied_edges

    edges = copied_edges(STRUCTURE)
    return [_score(s, lambda _p: CombinedAttack(edges)) - _score(s, lambda _p: CombinedAttack([])) for s in seeds]


def test_macro_copied_published_graph_adds_nothing_to_a_scaffold_fast() -> None:
    """Before the grader counted edge F1 above the published graph's own F1, the copy lifted the
    scaffold from 0.510 to 0.721 on seed 0 (0.782 on seed 1). The copied graph must add no more than noise."""
    gains = _published_graph_gains((0,))
    assert max(gains) <= MARGIN, gains


@pytest.mark.slow
def test_macro_copied_published_graph_adds_nothing_to_a_scaffold() -> None:
    """The same on seeds 0-9."""
    gains = _published_graph_gains(tuple(range(10)))
    assert max(gains) <= MARGIN, gains
