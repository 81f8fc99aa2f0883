"""The macro lab's five-criterion rubric (spec §3.7), computed from the episode log and the simulator.

Criteria (each 0-5; Net = their mean, the paper's Table 7; `Score.score` counts the process criteria
only in proportion to the measured discovery, `headline.py`):
* Workflow - share of (at least 3) experiments stated as a specific, non-repeated hypothesis + design
  (+ an update that refers to the previous result after the first), plus a substantive report,
  minus 0.5 per invalid message.
* Coverage - breadth of the parameter sweeps (spec formula).
* Hypothesis - signed-edge F1 (recall and precision) of the report's edges over the measured graph,
  counted above the best public graph (`prior`: the published one, a public panel's, their majority;
  copying one scores ~0); "0" statements earn nothing. Half-weighted with an LLM judge when one is given.
* Data Analysis - verified share of the claims (5% relative, 0.005 absolute for rates) times their
  substance: verified comparisons between the agent's own runs, one of them controlled; 60/40 with
  the judge.
* Goal Progress - the same corrected signed-edge F1 and held-out prediction skill.

A judge is any object with `complete_json(messages, schema) -> dict`. Without one, the judged
criteria are their automatic part alone, so an oracle can still reach full marks offline.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from collections.abc import Mapping
from typing import Any, Protocol

from discoverylab.labs.judge_rules import JUDGE_RULES, JudgeCall, agent_text, ask_judge, evidence_message
from discoverylab.labs.macroecon.episode import EpisodeLog, MacroLabConfig, episode_structure, held_out_seeds
from discoverylab.labs.macroecon.evidence import edge_evidence
from discoverylab.labs.macroecon.ground_truth import EffectGraph, graph_as_text
from discoverylab.labs.macroecon.headline import discovery_share, headline
from discoverylab.labs.macroecon.model import MacroRun, simulate
from discoverylab.labs.macroecon.observation import INDICATORS, RATE_INDICATORS
from discoverylab.labs.macroecon.params import (
    TUNABLE_BY_KEY,
    TUNABLE_KEYS,
    MacroParams,
    long_run_unemployment,
)
from discoverylab.labs.macroecon.parsing import PREDICTION_TARGETS, Claim, FinalReport
from discoverylab.labs.macroecon.prior import (
    chance_corrected,
    public_candidates,
    published_graph,
    published_statements,
    published_structure,
)
from discoverylab.labs.macroecon.results import held_out_truth, statistic
from discoverylab.labs.protocol import Score

logger = logging.getLogger(__name__)

CRITERIA: tuple[str, ...] = ("workflow", "coverage", "hypothesis", "data_analysis", "goal_progress")
_UPDATE_WORDS = ("previous", "result", "support", "contradict", "confirm", "refute", "baseline",
                 "experiment", "observed", "higher", "lower", "rose", "fell", "increase", "decrease")


class JudgeLike(Protocol):
    """What the grader needs from an LLM judge (the shared OpenAI-compatible client fits)."""

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]: ...


JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        crit: {"type": "object", "properties": {"score": {"type": "number", "minimum": 0, "maximum": 5},
                                                 "justification": {"type": "string"}},
               "required": ["score", "justification"]}
        for crit in ("hypothesis", "data_analysis")
    },
    "required": ["hypothesis", "data_analysis"],
}


# ---------------------------------------------------------------------- workflow and coverage
MIN_EXPERIMENTS = 3
"""Workflow is a share of at least this many experiments (plus the report): no experiments, no workflow."""
MIN_COMPARATIVE_CLAIMS = 3
"""Data analysis needs this many verified comparisons between the agent's own runs for full marks."""


def refers_to_previous(text: str) -> bool:
    """Does an update mention the previous result (a number, an indicator or a result word)?"""
    lowered = text.lower()
    return bool(text.strip()) and (any(ch.isdigit() for ch in text) or any(n in lowered for n in INDICATORS)
                                   or any(w in lowered for w in _UPDATE_WORDS))


def specific_hypothesis(text: str) -> bool:
    """Names a tunable and an indicator (a cause and an effect), not boilerplate about 'the economy'."""
    lowered = text.lower()
    return any(k.lower() in lowered for k in TUNABLE_KEYS) and any(n in lowered for n in INDICATORS)


def substantive_report(log: EpisodeLog) -> bool:
    """A report with at least one non-zero edge and a prediction or a claim."""
    report = log.report
    if report is None:
        return False
    return any(e.sign in ("+", "-") for e in report.edges) and bool(report.predictions or report.claims)


def workflow_score(log: EpisodeLog) -> tuple[float, dict[str, Any]]:
    """5·w − 0.5 per invalid message, floor 0.

    w = (well-formed experiments + substantive report) / (max(experiments, MIN_EXPERIMENTS) + 1). An
    experiment is well formed when its hypothesis names a cause and an effect and is not a repeat of an
    earlier one, it has a design, and (after the first) its update refers to the previous result.
    """
    good = 0
    seen: set[str] = set()
    for i, exp in enumerate(log.experiments):
        text = " ".join(exp.hypothesis.lower().split())
        ok = specific_hypothesis(exp.hypothesis) and bool(exp.design.strip()) and text not in seen
        seen.add(text)
        if i > 0:
            ok = ok and refers_to_previous(exp.update_from_previous)
        good += int(ok)
    report = substantive_report(log)
    w = (good + int(report)) / (max(len(log.experiments), MIN_EXPERIMENTS) + 1)
    score = max(0.0, 5.0 * w - 0.5 * log.invalid_messages)
    return score, {"well_formed_experiments": good, "experiments": len(log.experiments),
                   "report": report, "invalid_messages": log.invalid_messages}


def _has_factorial(experiments: list[dict[str, float]]) -> bool:
    """Is there a 2×2 design: two tunables at two levels each, everything else equal?"""
    for a, b in itertools.combinations(TUNABLE_KEYS, 2):
        groups: dict[tuple[float, ...], set[tuple[float, float]]] = {}
        for params in experiments:
            rest = tuple(params[k] for k in TUNABLE_KEYS if k not in (a, b))
            groups.setdefault(rest, set()).add((params[a], params[b]))
        for cells in groups.values():
            for (a1, b1), (a2, b2) in itertools.combinations(cells, 2):
                if a1 != a2 and b1 != b2 and (a1, b2) in cells and (a2, b1) in cells:
                    return True
    return False


def isolated_levels(experiments: list[dict[str, float]]) -> dict[str, set[float]]:
    """For each tunable, the levels it takes in runs that isolate it: pairs of runs that differ in
    that tunable alone. Changing everything at once shows that something matters, not what."""
    levels: dict[str, set[float]] = {}
    for a, b in itertools.combinations(experiments, 2):
        changed = [k for k in TUNABLE_KEYS if a[k] != b[k]]
        if len(changed) == 1:
            levels.setdefault(changed[0], set()).update((a[changed[0]], b[changed[0]]))
    return levels


def coverage_score(log: EpisodeLog) -> tuple[float, dict[str, Any]]:
    """5·(0.40 isolated + 0.20 dose-response + 0.15 factorial + 0.10 horizons + 0.15 baseline).

    Counted from the experiments that ran, as evidence of what they can show: a tunable counts as
    varied only when two runs isolate it (differ in it alone), out of min(10, budget - 3) (n runs
    isolate at most n - 1 tunables, and the factorial and dose-response need runs of their own);
    dose-response: some tunable isolated at >= 3 levels; factorial: a 2x2 on two tunables; horizons:
    two run lengths, one >= 150; baseline: an all-default run. Changing everything at once shows that
    something matters, not what, and earns no coverage."""
    experiments = [exp.params for exp in log.experiments]
    default = MacroParams().model_dump()
    isolated = isolated_levels(experiments)
    varied = [k for k in TUNABLE_KEYS if k in isolated]
    levels = {k: len(isolated[k]) for k in varied}
    needed = max(1, min(len(TUNABLE_KEYS), log.budget - 3))
    dose_response = any(n >= 3 for n in levels.values())
    steps = {exp.number_of_steps for exp in log.experiments}
    horizons = len(steps) >= 2 and max(steps) >= 150
    baseline = any(p == default for p in experiments)
    factorial = _has_factorial(experiments)
    value = 5.0 * (0.40 * min(1.0, len(varied) / needed) + 0.20 * dose_response + 0.15 * factorial
                   + 0.10 * horizons + 0.15 * baseline)
    return value, {"varied": varied, "levels": levels, "needed": needed, "dose_response": dose_response,
                   "factorial": factorial, "horizons": sorted(steps), "baseline": baseline}


# ---------------------------------------------------------------------- causal edges
def edge_verdicts(report: FinalReport, graph: EffectGraph) -> list[dict[str, Any]]:
    """Each stated edge (last statement wins) with the truth it is scored against."""
    return _verdicts({(e.cause, e.effect, e.horizon): e.sign for e in report.edges}, graph)


def _verdicts(stated: dict[tuple[str, str, str], str], graph: EffectGraph) -> list[dict[str, Any]]:
    """Stated edges ((cause, effect, horizon) -> sign) with the truth each is scored against."""
    return [{"cause": c, "effect": f, "horizon": h, "sign": s, "truth": graph.sign(c, f, h)}
            for (c, f, h), s in stated.items()]


def hypothesis_auto(verdicts: list[dict[str, Any]], graph: EffectGraph,
                    key_effects: tuple[str, ...]) -> tuple[float, dict[str, Any], dict[str, Any]]:
    """Signed-edge F1 over the measured graph (recall and precision; "0" statements earn nothing),
    the hypothesis criterion's details and `signed_edge_f1`'s counts (goal progress reports them)."""
    f1, info = signed_edge_f1(verdicts, graph, key_effects)
    return f1, {"stated": len(verdicts), "nonzero_stated": sum(v["sign"] in ("+", "-") for v in verdicts),
                "correct": info["tp"], "precision": info["precision"], "recall": info["recall"]}, info


def signed_edge_f1(verdicts: list[dict[str, Any]], graph: EffectGraph,
                   key_effects: tuple[str, ...]) -> tuple[float, dict[str, Any]]:
    """F1 of non-zero signed edges; correct "0" statements are true negatives (neither TP nor FP).

    Precision counts every stated edge; recall is over the measured non-zero parameter edges on
    the key indicators (the full graph has ~180 non-zero edges, too many to demand).
    """
    tp = sum(1 for v in verdicts if v["sign"] != "0" and v["sign"] == v["truth"])
    fp = sum(1 for v in verdicts if v["sign"] != "0" and v["truth"] != "?" and v["sign"] != v["truth"])
    positives = {(e.cause, e.effect, e.horizon): e.sign for e in graph.nonzero(key_effects)}
    found = sum(1 for v in verdicts if positives.get((v["cause"], v["effect"], v["horizon"])) == v["sign"])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = found / len(positives) if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, {"tp": tp, "fp": fp, "true_edges": len(positives), "found": found,
                "precision": precision, "recall": recall}


def prior_f1(log: EpisodeLog, config: MacroLabConfig, graph: EffectGraph,
             raw_f1: float) -> tuple[float | None, dict[str, Any]]:
    """The chance level on this episode's economy: the best F1 of what a copier can report without an
    experiment (the published graph, the public panel's graphs, their majority; `prior`), which
    candidate that was and the published graph's F1; None on the published economy itself.

    The panel (24 measured graphs where it is not package data) is consulted only where it can change
    the corrected F1: a raw F1 at or below the published graph's scores 0 and a perfect one 1 whatever
    the panel says (`panel_consulted` false; the chance level is then the published graph's F1)."""
    structure = episode_structure(log, config)
    base = published_structure(structure)
    if structure == base:
        return None, {}

    def f1_of(stated: dict[tuple[str, str, str], str]) -> float:
        return signed_edge_f1(_verdicts(stated, graph), graph, config.key_effects)[0]

    copied = published_statements(published_graph(base, config.ground_truth, config.cache_dir))
    published = f1_of({(e["cause"], e["effect"], e["horizon"]): e["sign"] for e in copied})
    info: dict[str, Any] = {"prior_source": "published", "published_f1": published, "panel_consulted": False}
    if raw_f1 <= published or raw_f1 >= 1.0:
        return published, info
    scores = {name: f1_of(stated) for name, stated in
              public_candidates(base, config.ground_truth, config.complexity, config.cache_dir).items()}
    best = max(scores, key=lambda name: scores[name])
    return scores[best], {**info, "prior_source": best, "panel_consulted": True}


# ---------------------------------------------------------------------- claims and predictions
def _run_for(experiment_id: int, log: EpisodeLog, runs: Mapping[int, MacroRun],
             config: MacroLabConfig) -> MacroRun | None:
    if experiment_id in runs:
        return runs[experiment_id]
    for exp in log.experiments:
        if exp.experiment_id == experiment_id:
            seed = exp.sim_seed if exp.sim_seed is not None else log.seed
            return simulate(MacroParams(**exp.params), exp.number_of_steps, seed, episode_structure(log, config))
    return None


def verify_claim(claim: Claim, log: EpisodeLog, runs: Mapping[int, MacroRun],
                 config: MacroLabConfig) -> tuple[bool, float]:
    """Re-compute one claim from the experiments; returns (verified, true value)."""
    run = _run_for(claim.experiment_id, log, runs, config)
    if run is None:
        return False, math.nan
    true = statistic(run, claim.indicator, claim.statistic, claim.from_quarter, claim.to_quarter)
    abs_tol = 0.005 if claim.indicator in RATE_INDICATORS else 1e-9
    if claim.statistic in ("argmax", "argmin"):
        abs_tol = 0.5
    if claim.kind != "level":
        if claim.baseline_id is None or claim.baseline_id == claim.experiment_id:
            return False, math.nan
        base = _run_for(claim.baseline_id, log, runs, config)
        if base is None:
            return False, math.nan
        true -= statistic(base, claim.indicator, claim.statistic, claim.from_quarter, claim.to_quarter)
        if claim.kind == "elasticity":
            changed = [k for k in TUNABLE_KEYS if run.params.model_dump()[k] != base.params.model_dump()[k]]
            if len(changed) != 1:
                return False, math.nan
            step = getattr(run.params, changed[0]) - getattr(base.params, changed[0])
            true /= step
            abs_tol /= abs(step)
    if not math.isfinite(true):
        return False, true
    return abs(claim.value - true) <= max(0.05 * abs(true), abs_tol), true


def data_analysis_auto(log: EpisodeLog, runs: Mapping[int, MacroRun],
                       config: MacroLabConfig) -> tuple[float, dict[str, Any]]:
    """Share of claims that verify × substance × consistency of the graph with the agent's own data.

    value = (0.8 · min(1, comparisons / MIN_COMPARATIVE_CLAIMS) + 0.2 · [a controlled comparison])
    · verified share · consistency. A comparison is a verified difference or elasticity between two
    of the agent's runs; level claims (a number copied from a summary) verify but add no substance.
    Consistency is the share of the stated edges, among those the agent's runs isolate, that its own
    runs do not clearly contradict (`evidence.edge_evidence`).
    """
    claims = log.report.claims if log.report else []
    results = [(c, *verify_claim(c, log, runs, config)) for c in claims]
    verified = sum(ok for _, ok, _ in results)
    comparisons = sum(1 for c, ok, _ in results if ok and c.kind != "level")
    controlled = any(ok and c.kind != "level" and _one_factor(c, log) for c, ok, _ in results)
    share = verified / len(claims) if claims else 0.0
    substance = min(1.0, comparisons / MIN_COMPARATIVE_CLAIMS)
    edges = [e.model_dump() for e in log.report.edges] if log.report else []
    all_runs = {exp.experiment_id: run for exp in log.experiments
                if (run := _run_for(exp.experiment_id, log, runs, config)) is not None}
    windows = {"short": config.ground_truth.short_window, "long": config.ground_truth.long_window}
    evidence = edge_evidence(edges, all_runs, windows)
    value = (0.8 * substance + 0.2 * float(controlled)) * share * evidence["consistency"]
    return value, {"claims": len(claims), "verified": verified, "comparisons": comparisons,
                   "controlled_comparison": controlled, "graph_evidence": evidence,
                   "checks": [{"claim": c.model_dump(), "ok": ok, "true": t if math.isfinite(t) else None}
                              for c, ok, t in results]}


def _one_factor(claim: Claim, log: EpisodeLog) -> bool:
    """Do the claim's two runs differ in exactly one tunable?"""
    params = {e.experiment_id: e.params for e in log.experiments}
    a, b = params.get(claim.experiment_id), params.get(claim.baseline_id or -1)
    if a is None or b is None:
        return False
    return sum(a[k] != b[k] for k in TUNABLE_BY_KEY) == 1


def prediction_skill(log: EpisodeLog, config: MacroLabConfig) -> tuple[float, dict[str, Any]]:
    """Mean over targets of max(0, 1 − MAE_agent / MAE_default) on the held-out settings."""
    truth, default = held_out_truth(log.held_out, held_out_seeds(log.seed), episode_structure(log, config))
    given = {p.setting_id: p for p in (log.report.predictions if log.report else [])}
    skills: dict[str, float] = {}
    for target in PREDICTION_TARGETS:
        errors_agent, errors_default = [], []
        for setting in log.held_out:
            actual = truth[setting.setting_id][target]
            pred = given.get(setting.setting_id)
            value = getattr(pred, target) if pred is not None else None
            guess = default[target] if value is None else value
            errors_agent.append(abs(guess - actual))
            errors_default.append(abs(default[target] - actual))
        mae_agent = sum(errors_agent) / len(errors_agent)
        mae_default = sum(errors_default) / len(errors_default)
        scale = max(abs(default[target]), 1e-9)
        if mae_default <= 1e-9 * scale:
            skills[target] = 1.0 if mae_agent <= 1e-9 * scale else 0.0
        else:
            skills[target] = max(0.0, 1.0 - mae_agent / mae_default)
    return sum(skills.values()) / len(skills), {"per_target": skills, "truth": truth, "default": default}


# ---------------------------------------------------------------------- judge
def _judge_messages(log: EpisodeLog, graph: EffectGraph, config: MacroLabConfig,
                    auto: dict[str, float]) -> list[dict[str, str]]:
    report = log.report.model_dump() if log.report else None
    agent_side = agent_text({"experiments": [e.model_dump() for e in log.experiments], "report": report})
    system = ("You grade an AI scientist who studied a black-box macroeconomic simulation. Score two "
              "criteria from 0 to 5 and justify briefly. hypothesis: specificity, falsifiability and "
              "mechanism (structural, not merely associative) of its hypotheses and causal graph. "
              "data_analysis: correctness of the inferences it drew from the data it was shown. "
              "Use the reference material; reply with JSON only. " + JUDGE_RULES)
    user = "\n".join([
        "Reference causal graph (measured non-zero effects, parameter -> indicator):",
        graph_as_text(graph, config.key_effects),
        "Analytical law: long-run unemployment u* = clip(((mu*+tau)/(g(1+mu*)) - 1)/2, 0, 1) with "
        f"mu* = markup - 1, while inventories do not bind (default u* = {long_run_unemployment(MacroParams()):.3f}); "
        "the policy rate, credit tightness and tax revenue do not affect prices or debt.",
        f"Automatic scores (0-5): {json.dumps(auto)}",
        "Agent transcript (experiments and final report):",
        evidence_message(agent_side),
    ])
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _checked_scores(answer: Any) -> dict[str, dict[str, Any]]:
    """The two judged criteria (score clipped to 0..5); ValueError naming the criterion the reply
    misses (the judge's re-ask says so)."""
    out = {}
    for crit in ("hypothesis", "data_analysis"):
        try:
            score = float(answer[crit]["score"])
            out[crit] = {"score": min(max(score, 0.0), 5.0),
                         "justification": str(answer[crit].get("justification", ""))}
        except (TypeError, ValueError, KeyError, AttributeError):
            raise ValueError(f"criterion {crit!r} has no numeric score") from None
    return out


def _judge_scores(judge: JudgeLike, messages: list[dict[str, str]]) -> JudgeCall[dict[str, dict[str, Any]]]:
    """Ask the judge, again after failures and malformed replies (`ask_judge`); an invalid call is
    recorded (labels["judge"] = "failed") and its judged halves count 0 until `lab judge` grades it."""
    return ask_judge(judge, messages, JUDGE_SCHEMA, _checked_scores)


# ---------------------------------------------------------------------- entry point
def grade_episode(log: EpisodeLog, config: MacroLabConfig, graph: EffectGraph | None = None,
                  runs: Mapping[int, MacroRun] | None = None, judge: JudgeLike | None = None) -> Score:
    """Grade one macro-lab episode (pure function of the log, the config and the judge's answers)."""
    from discoverylab.labs.macroecon.ground_truth import effect_graph

    graph = graph or effect_graph(episode_structure(log, config), config.ground_truth, config.cache_dir)
    runs = runs or {}
    report = log.report or FinalReport()
    workflow, workflow_info = workflow_score(log)
    coverage, coverage_info = coverage_score(log)
    verdicts = edge_verdicts(report, graph)
    raw_f1, hyp_info, f1_info = hypothesis_auto(verdicts, graph, config.key_effects)
    prior, prior_info = prior_f1(log, config, graph, raw_f1)
    hyp_auto = f1 = chance_corrected(raw_f1, prior)  # copying a public graph earns (next to) nothing
    data_auto, data_info = data_analysis_auto(log, runs, config)
    skill, skill_info = prediction_skill(log, config)
    values = {"workflow": workflow, "coverage": coverage, "hypothesis": 5.0 * hyp_auto,
              "data_analysis": 5.0 * data_auto, "goal_progress": 5.0 * (0.6 * f1 + 0.4 * skill)}
    labels = {"judge": "none"}
    judged = None
    judge_call: dict[str, Any] | None = None
    if judge is not None:
        call = _judge_scores(judge, _judge_messages(log, graph, config, dict(values)))
        judged, judge_call = call.value, call.as_dict()
        labels["judge"] = "ok" if judged else "failed"
    if judge is not None:  # a failed judge counts 0 until `lab judge` grades it: breaking it never pays
        hyp_judged = judged["hypothesis"]["score"] if judged else 0.0
        data_judged = judged["data_analysis"]["score"] if judged else 0.0
        values["hypothesis"] = 0.5 * 5.0 * hyp_auto + 0.5 * hyp_judged
        values["data_analysis"] = 0.6 * 5.0 * data_auto + 0.4 * data_judged
    values = {k: min(max(v, 0.0), 5.0) for k, v in values.items()}
    net = sum(values.values()) / len(values)  # the paper's Net: process credit with no discovery
    labels["net"] = f"{net:.2f}/5"
    score, headline_parts = headline(values, discovery_share(hyp_auto, 0.6 * f1 + 0.4 * skill))
    details: dict[str, Any] = {
        "rubric_0_5": values, "net_0_5": net, "workflow": workflow_info, "coverage": coverage_info,
        "hypothesis": {**hyp_info, "auto": hyp_auto}, "data_analysis": {**data_info, "auto": data_auto},
        "goal_progress": {"edge_f1": f1, "edge_f1_raw": raw_f1, "prior_f1": prior, **prior_info, **f1_info,
                          "prediction_skill": skill, **skill_info},
        "edges": verdicts, "judge": judged, "judge_call": judge_call,
        "unused_budget": log.budget - len(log.experiments),
    }
    return Score(score=score, parts={**{k: v / 5.0 for k, v in values.items()}, **headline_parts},
                 labels=labels, details=details)
