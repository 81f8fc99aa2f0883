"""Macro grading: oracle gets full marks, random scores low, and each criterion checks what it says."""

from __future__ import annotations

import json
from typing import Any

import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.macroecon.grading import (
    coverage_score,
    grade_episode,
    refers_to_previous,
    workflow_score,
)
from discoverylab.labs.macroecon.params import TUNABLES, MacroParams
from discoverylab.labs.macroecon.parsing import Claim, EdgeStatement, FinalReport, Prediction
from discoverylab.labs.macroecon.protocol import EpisodeLog, ExperimentRecord, MacroCausalDiscovery
from discoverylab.labs.protocol import make_protocol

# A small economy and a cheap ground-truth measurement keep these tests fast.
SMALL = {"structure": {"n_households": 200, "n_firms": 4},
         "ground_truth": {"replicates": 2, "steps": 100, "long_window": (51, 100)}}
NAME = "macro/causal-discovery"


def _episode(kind: str, seed: int, **options: Any) -> Any:
    proto = make_protocol(NAME, **{**SMALL, **options})
    return proto, run_episode(proto, make_agent(NAME, kind, proto), seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_oracle_gets_full_marks(seed: int) -> None:
    _, result = _episode("oracle", seed)
    assert result.score.score == pytest.approx(1.0)
    assert all(v == pytest.approx(1.0) for v in result.score.parts.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_agent_scores_low(seed: int) -> None:
    _, result = _episode("random", seed)
    assert result.score.score < 0.35
    assert result.score.parts["goal_progress"] < 0.3


def test_heuristic_sits_between_random_and_oracle() -> None:
    _, heuristic = _episode("heuristic", 0)
    _, random = _episode("random", 0)
    assert random.score.score < heuristic.score.score < 1.0


def test_wrong_report_is_completed_but_unsuccessful() -> None:
    proto, oracle = _episode("oracle", 0)
    assert isinstance(proto, MacroCausalDiscovery)
    good = proto.log.report
    assert good is not None
    flipped = [e.model_copy(update={"sign": {"+": "-", "-": "+", "0": "+"}[e.sign]}) for e in good.edges]
    bad_claims = [c.model_copy(update={"value": c.value * 1.5 + 1.0}) for c in good.claims]
    bad_preds = [p.model_copy(update={"gov_debt_final": (p.gov_debt_final or 0) * 3 + 1e5,
                                      "unemployment_mean_q50_100": 1.0}) for p in good.predictions]
    log = proto.log.model_copy(update={"report": FinalReport(edges=flipped, claims=bad_claims,
                                                               predictions=bad_preds)})
    score = grade_episode(log, proto.config)
    assert score.parts["hypothesis"] == 0.0 and score.parts["data_analysis"] == 0.0
    assert score.parts["goal_progress"] == 0.0
    assert score.parts["workflow"] == pytest.approx(1.0)  # the process was still good


def test_grading_is_offline_reproducible() -> None:
    proto, result = _episode("oracle", 1)
    assert isinstance(proto, MacroCausalDiscovery)
    # Re-grade from the pure log only (runs re-simulated from params and seed).
    again = grade_episode(EpisodeLog.model_validate(json.loads(proto.log.model_dump_json())), proto.config)
    assert again.score == pytest.approx(result.score.score)


def _log(experiments: list[tuple[dict[str, float], int, str, str, str]], invalid: int = 0,
         report: bool = True, edges: bool = False) -> EpisodeLog:
    records = [ExperimentRecord(experiment_id=i + 1, turn=i + 1, params=MacroParams(**p).model_dump(),
                                number_of_steps=steps, form="full", hypothesis=h, design=d,
                                update_from_previous=u)
               for i, (p, steps, h, d, u) in enumerate(experiments)]
    return EpisodeLog(seed=0, budget=10, experiments=records, invalid_messages=invalid,
                      report=_substantive() if edges else FinalReport() if report else None)


def _substantive() -> FinalReport:
    return FinalReport(edges=[EdgeStatement(cause="g0", effect="unemployment", sign="-")],
                       predictions=[Prediction(setting_id="h1", unemployment_mean_q50_100=0.1)])


def test_workflow_components() -> None:
    hyp = "raising g0 lowers unemployment"
    full = [({}, 100, hyp, "d", ""), ({"g0": 0.1}, 100, hyp + " again", "d", "unemployment rose to 0.3"),
            ({"tau0": 0.1}, 100, "tau0 raises gdp_real", "d", "previous result: gdp_real fell")]
    assert workflow_score(_log(full))[0] == pytest.approx(5.0 * 3 / 4)  # the bare report adds nothing
    assert workflow_score(_log(full, edges=True))[0] == pytest.approx(5.0)
    no_update = [(p, s, h, d, "") for p, s, h, d, _ in full]
    assert workflow_score(_log(no_update, edges=True))[0] == pytest.approx(5.0 * 2 / 4)
    assert workflow_score(_log(full, invalid=3, edges=True))[0] == pytest.approx(3.5)
    assert workflow_score(_log(full, invalid=20))[0] == 0.0
    assert refers_to_previous("the previous run contradicts it") and not refers_to_previous("ok")


def test_workflow_needs_substance() -> None:
    """Boilerplate or repeated hypotheses, too few experiments and a bare report earn no workflow."""
    boiler = [({}, 100, "The economy responds to parameters.", "d", "results observed")] * 3
    assert workflow_score(_log(boiler))[0] == 0.0
    repeated = [({}, 100, "g0 lowers unemployment", "d", "unemployment 0.1")] * 3
    assert workflow_score(_log(repeated))[0] == pytest.approx(5.0 * 1 / 4)
    assert workflow_score(_log([]))[0] == 0.0  # {"type": "report"} alone
    assert workflow_score(_log([], edges=True))[0] == pytest.approx(5.0 * 1 / 4)


def test_coverage_components() -> None:
    baseline = ({}, 200, "", "", "")
    value, info = coverage_score(_log([baseline]))
    assert value == pytest.approx(5 * 0.15) and info["baseline"]
    factorial = [baseline, ({"g0": 0.1}, 100, "", "", ""), ({"tau0": 0.1}, 100, "", "", ""),
                 ({"g0": 0.1, "tau0": 0.1}, 100, "", "", "")]
    value, info = coverage_score(_log(factorial))
    assert info["factorial"] and info["varied"] == ["tau0", "g0"]
    assert value == pytest.approx(5 * (0.40 * 2 / 7 + 0.15 + 0.10 + 0.15))  # of min(10, budget - 3)
    not_factorial = [baseline, ({"g0": 0.1}, 100, "", "", ""), ({"tau0": 0.1}, 100, "", "", ""),
                     ({"g0": 0.1, "tau0": 0.1, "phi": 2.0}, 100, "", "", "")]
    assert not coverage_score(_log(not_factorial))[1]["factorial"]
    dose = [baseline, ({"g0": 0.1}, 200, "", "", ""), ({"g0": 0.5}, 200, "", "", "")]
    assert coverage_score(_log(dose))[1]["dose_response"]


def test_coverage_counts_only_isolated_tunables() -> None:
    """The issue's scaffold: every tunable low, every tunable high. Nothing is isolated, so no
    tunable counts as varied however many levels the runs touch."""
    low = {t.key: t.low for t in TUNABLES}
    high = {t.key: t.high for t in TUNABLES}
    value, info = coverage_score(_log([({}, 200, "", "", ""), (low, 100, "", "", ""), (high, 100, "", "", "")]))
    assert info["varied"] == [] and not info["dose_response"]
    assert value == pytest.approx(5 * (0.10 + 0.15))


def test_claims_are_recomputed_from_the_runs() -> None:
    proto = make_protocol(NAME, **SMALL)
    assert isinstance(proto, MacroCausalDiscovery)
    proto.reset(0)
    base = json.loads(proto.step('{"number_of_steps": 60}').text)
    other = json.loads(proto.step('{"g0": 0.1, "number_of_steps": 60}').text)
    u_other = other["summary"]["unemployment"]["mean"]
    claims = [
        Claim(experiment_id=1, indicator="gov_debt", statistic="max", value=base["summary"]["gov_debt"]["max"] * 1.03),
        Claim(experiment_id=2, indicator="unemployment", statistic="mean", value=u_other + 0.004),
        Claim(experiment_id=2, baseline_id=1, kind="elasticity", indicator="gov_debt", statistic="last",
              value=(other["summary"]["gov_debt"]["last"] - base["summary"]["gov_debt"]["last"]) / (0.1 - 0.25)),
        Claim(experiment_id=1, indicator="gov_debt", statistic="max", value=base["summary"]["gov_debt"]["max"] * 1.2),
        Claim(experiment_id=7, indicator="gdp_real", statistic="mean", value=1.0),
    ]
    report = json.dumps({"type": "report", "claims": [c.model_dump() for c in claims]})
    if not proto.step(report).done:  # the first report closes the experiments
        proto.step(report)
    checks = proto.grade().details["data_analysis"]["checks"]
    assert [c["ok"] for c in checks] == [True, True, True, False, False]


class _FixedJudge:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.seen: list[list[dict[str, str]]] = []

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(messages)
        if isinstance(self.answer, Exception):
            raise self.answer
        return dict(self.answer)


def test_judge_blends_into_hypothesis_and_data_analysis() -> None:
    zero = {"hypothesis": {"score": 0, "justification": "x"}, "data_analysis": {"score": 0, "justification": "y"}}
    judge = _FixedJudge(zero)
    proto = make_protocol(NAME, judge=judge, **SMALL)
    result = run_episode(proto, make_agent(NAME, "oracle", proto), 0)
    assert result.score.parts["hypothesis"] == pytest.approx(0.5)
    assert result.score.parts["data_analysis"] == pytest.approx(0.6)
    assert result.score.labels["judge"] == "ok"
    assert "Reference causal graph" in judge.seen[0][1]["content"]


def test_failing_judge_counts_zero_until_judged() -> None:
    """A judge outage is no way to dodge the judge: its halves count 0 (provisional, `failed`)
    until `lab judge` grades the episode; the automatic criteria are untouched."""
    proto = make_protocol(NAME, judge=_FixedJudge(RuntimeError("server down")), **SMALL)
    result = run_episode(proto, make_agent(NAME, "oracle", proto), 0)
    assert result.score.labels["judge"] == "failed"
    rubric = result.score.details["rubric_0_5"]
    assert rubric["hypothesis"] == pytest.approx(2.5) and rubric["data_analysis"] == pytest.approx(3.0)
    assert result.score.score == pytest.approx(sum(rubric.values()) / 25) and result.score.score < 0.9
