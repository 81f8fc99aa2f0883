"""Macro protocol: parser tables, the experiment loop, budget and error handling (spec §3.5, §7)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discoverylab.labs.macroecon.parsing import (
    ExperimentRequest,
    FinalReport,
    ParseFailure,
    extract_json_objects,
    parse_agent_message,
)
from discoverylab.labs.macroecon.protocol import MacroCausalDiscovery, MacroLabConfig
from discoverylab.labs.protocol import ProtocolStateError, make_protocol, protocol_names

# A small economy and a cheap ground-truth measurement keep these tests fast.
SMALL = {"structure": {"n_households": 200, "n_firms": 4},
         "ground_truth": {"replicates": 2, "steps": 100, "long_window": (51, 100)}}

VALID_EXPERIMENTS = [
    ('{"g0": 0.10, "number_of_steps": 100}', {"g0": 0.10}, 100, "bare"),
    ('{"type": "experiment", "params": {"tau0": 0.3, "phi": 2}, "number_of_steps": 150}',
     {"tau0": 0.3, "phi": 2.0}, 150, "full"),
    ('I will lower taxes.\n```json\n{"params": {"tau0": 0.1}}\n```', {"tau0": 0.1}, 100, "full"),
    ('{"type": "experiment", "params": {}, "number_of_steps": 200.0}', {}, 200, "full"),
    ('{"r0": 0, "markup": 1.0, "number_of_steps": 10}', {"r0": 0.0, "markup": 1.0}, 10, "bare"),
    ('{"params": {"g0": 0.2}, "g0": 0.2}', {"g0": 0.2}, 100, "full"),
]


@pytest.mark.parametrize(("text", "params", "steps", "form"), VALID_EXPERIMENTS)
def test_valid_experiments_parse(text: str, params: dict[str, float], steps: int, form: str) -> None:
    parsed = parse_agent_message(text)
    assert isinstance(parsed, ExperimentRequest)
    assert parsed.params == params
    assert parsed.number_of_steps == steps
    assert parsed.form == form


INVALID_MESSAGES = [
    ("let us think about it", "no JSON object"),
    ("{not json", "no JSON object"),
    ('{"g0": 5}', "out of range"),
    ('{"interest_rate": 0.1}', "unknown parameter 'interest_rate'"),
    ('{"g0": "0.1"}', "must be a finite number"),
    ('{"g0": true}', "must be a finite number"),
    ('{"g0": NaN}', "must be a finite number"),
    ('{"g0": 0.1, "number_of_steps": 5}', "out of range 10..200"),
    ('{"g0": 0.1, "number_of_steps": 50.5}', "must be an integer"),
    ('{"params": {"g0": 0.1}, "g0": 0.2}', "given twice"),
    ('{"params": [0.1]}', '"params" must be an object'),
    ('{"type": "simulate"}', "unknown message type"),
    ('{"g0": 0.1} {"tau0": 0.1}', "exactly one"),
    ('{"hypothesis": 3, "g0": 0.1}', "'hypothesis' must be a string"),
    ('{"type": "report", "causal_graph": {"edges": [{"cause": "g0", "effect": "gdp", "sign": "+"}]}}',
     "is not an indicator"),
    ('{"type": "report", "causal_graph": {"edges": [{"cause": "x", "effect": "unemployment", "sign": "+"}]}}',
     "neither a tunable parameter nor an indicator"),
    ('{"type": "report", "causal_graph": {"edges": [{"cause": "g0", "effect": "unemployment", "sign": "up!"}]}}',
     "sign must be"),
    ('{"type": "report", "causal_graph": {"edges": [{"cause": "g0", "effect": "unemployment", "sign": "+", '
     '"horizon": "medium"}]}}', "horizon must be"),
    ('{"type": "report", "claims": [{"experiment_id": 1, "indicator": "gdp_real", "statistic": "median", '
     '"value": 3}]}', "statistic must be one of"),
    ('{"type": "report", "claims": [{"experiment_id": 1, "indicator": "gdp_real", "statistic": "mean", '
     '"value": 3, "kind": "difference"}]}', "needs baseline_id"),
    ('{"type": "report", "predictions": [{"setting_id": "h1", "gov_debt_final": "big"}]}', "must be a number"),
    ('{"type": "report", "verdict": "done"}', "unknown report keys"),
]


@pytest.mark.parametrize(("text", "fragment"), INVALID_MESSAGES)
def test_invalid_messages_give_clear_errors(text: str, fragment: str) -> None:
    parsed = parse_agent_message(text)
    assert isinstance(parsed, ParseFailure)
    assert fragment in parsed.error


def test_report_parses_with_sign_synonyms_and_default_horizon() -> None:
    text = json.dumps({"type": "report", "causal_graph": {"edges": [
        {"cause": "g0", "effect": "unemployment", "sign": "negative"},
        {"cause": "unemployment", "effect": "gov_transfers", "sign": "+", "horizon": "short", "confidence": 0.7}]},
        "claims": [{"experiment_id": 2, "baseline_id": 1, "kind": "elasticity", "indicator": "unemployment",
                    "statistic": "mean", "value": -1.5}],
        "predictions": [{"setting_id": "h2", "unemployment_mean_q50_100": 0.2}], "narrative": "n"})
    parsed = parse_agent_message(text)
    assert isinstance(parsed, FinalReport)
    assert [e.sign for e in parsed.edges] == ["-", "+"]
    assert parsed.edges[0].horizon == "long"
    assert parsed.claims[0].kind == "elasticity"
    assert parsed.predictions[0].gov_debt_final is None


def test_extract_skips_prose_and_nested_objects() -> None:
    objects = extract_json_objects('text {"a": {"b": 1}} more {bad} {"c": 2}')
    assert objects == [{"a": {"b": 1}}, {"c": 2}]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_raises(text: str) -> None:
    assert parse_agent_message(text).kind in ("experiment", "report", "error")


def _protocol(**overrides: object) -> MacroCausalDiscovery:
    proto = make_protocol("macro/causal-discovery", **{**SMALL, **overrides})
    assert isinstance(proto, MacroCausalDiscovery)
    return proto


def test_protocol_is_registered() -> None:
    assert "macro/causal-discovery" in protocol_names("macro")


def test_experiment_loop_budget_and_errors() -> None:
    proto = _protocol(budget=2)
    prompt = proto.reset(seed=0)
    assert "g0" in prompt and "h1:" not in prompt and "unemployment" in prompt
    bad = proto.step('{"g0": 9}')
    assert not bad.done and "error" in bad.info and json.loads(bad.text)["budget_remaining"] == 2
    first = json.loads(proto.step('{"g0": 0.1, "number_of_steps": 40}').text)
    assert first["type"] == "lab_results" and first["experiment_id"] == 1
    assert first["params_used"]["g0"] == 0.1 and first["params_used"]["tau0"] == 0.2
    assert len(first["summary"]) == 16 and first["summary"]["unemployment"]["argmax"] >= 1
    assert len(first["trajectory"]["quarters"]) <= 40 and first["trajectory"]["quarters"][-1] == 40
    second = proto.step('{"type": "experiment", "params": {}, "number_of_steps": 10, "full_trajectory": true, '
                        '"last_observation": true}')
    payload = json.loads(second.text.splitlines()[0])
    assert len(payload["trajectory"]["quarters"]) == 10 and len(payload["trajectory"]) == 16 + 2
    assert len(payload["last_observation"]) == 64
    assert "Send your final report" in second.text and "h1:" in second.text
    over = proto.step('{"g0": 0.2}')
    assert "used up" in over.info["error"]
    end = proto.step('{"type": "report", "causal_graph": {"edges": []}}')
    assert end.done
    assert proto.log.invalid_messages == 2 and len(proto.log.experiments) == 2
    with pytest.raises(ProtocolStateError):
        proto.step("{}")


def test_held_out_settings_stay_hidden_until_experiments_close_and_cannot_be_run() -> None:
    """The issue's attack: held-out settings listed up front were run as ordinary experiments."""
    proto = _protocol(budget=5)
    prompt = proto.reset(seed=1)
    settings = [json.dumps(s.params) for s in proto.log.held_out]
    assert not any(text in prompt for text in settings) and "h1:" not in prompt
    proto.step('{"g0": 0.1, "number_of_steps": 20}')
    early = proto.step('{"type": "report", "causal_graph": {"edges": []}}')
    assert not early.done and proto.log.report is None and all(text in early.text for text in settings)
    held = proto.log.held_out[0].params
    refused = proto.step(json.dumps({"type": "experiment", "params": held, "number_of_steps": 100}))
    assert "closed" in refused.info["error"] and len(proto.log.experiments) == 1
    assert proto.step('{"type": "report", "causal_graph": {"edges": []}}').done


def test_same_messages_same_transcript() -> None:
    messages = ['{"g0": 0.1, "number_of_steps": 30}', "oops", '{"tau0": 0.4, "number_of_steps": 20}',
                '{"type": "report"}']

    def play(seed: int) -> list[str]:
        proto = _protocol()
        proto.reset(seed)
        for m in messages:
            proto.step(m)
        return [e.text for e in proto.transcript]

    assert play(3) == play(3)
    assert play(3) != play(4)


def test_turn_limit_ends_the_episode() -> None:
    proto = MacroCausalDiscovery(MacroLabConfig(max_turns=3, **SMALL))  # type: ignore[arg-type]
    proto.reset(0)
    replies = [proto.step("nothing useful") for _ in range(3)]
    assert replies[-1].done and not replies[0].done


def test_every_seed_draws_an_economy_and_the_paper_preset_keeps_one() -> None:
    drawn, paper = set(), set()
    for seed in range(20):
        proto = make_protocol("macro/causal-discovery", **SMALL)
        proto.reset(seed)
        drawn.add(proto.problem_signature())  # type: ignore[attr-defined]
        fixed = make_protocol("macro/causal-discovery", preset="paper", **SMALL)
        fixed.reset(seed)
        paper.add(fixed.problem_signature())  # type: ignore[attr-defined]
    assert len(drawn) == 20 and len(paper) == 1


def test_held_out_settings_run_as_experiments_do_not_give_the_answer() -> None:
    """Each experiment has its own simulation seed and the held-out truth uses hidden seeds."""
    from discoverylab.labs.macroecon.grading import prediction_skill
    from discoverylab.labs.macroecon.parsing import Prediction

    proto = make_protocol("macro/causal-discovery", budget=6, held_out=2, **SMALL)
    assert isinstance(proto, MacroCausalDiscovery)
    proto.reset(3)
    same = [json.loads(proto.step('{"g0": 0.1, "number_of_steps": 50}').text)["summary"] for _ in range(2)]
    assert same[0] != same[1]  # the same settings, a fresh draw of the shocks
    predictions = []
    for setting in proto.log.held_out:
        reply = json.loads(proto.step(json.dumps({"params": setting.params, "number_of_steps": 100})).text)
        run = proto.runs[reply["experiment_id"]]
        predictions.append(Prediction(setting_id=setting.setting_id,
                                      unemployment_mean_q50_100=run.window_mean("unemployment", 50, 100),
                                      gov_debt_final=float(reply["summary"]["gov_debt"]["last"])))
    proto.log.report = FinalReport(predictions=predictions)
    skill, _ = prediction_skill(proto.log, proto.config)
    assert skill < 0.999
