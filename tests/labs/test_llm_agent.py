"""LLMLabAgent with scripted model replies: every action format renders messages its protocol accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.llm_agent import LLMLabAgent, _cap_strings
from discoverylab.labs.llm_formats import SMALL_MODEL_LIMITS, hidden_property_format, macro_format
from discoverylab.labs.protocol import Protocol, make_protocol
from discoverylab.llm import LLMClient, LLMUnavailable, validate
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply, error_body

CHEAP_MACRO_TRUTH = {"replicates": 2, "steps": 40, "short_window": (1, 10), "long_window": (21, 40)}


def client_for(server: ScriptedLLMServer) -> LLMClient:
    return LLMClient(base_url=server.base_url, model="m", max_retries=0, sleep=lambda _: None)


def push_json(server: ScriptedLLMServer, *objects: dict[str, Any]) -> None:
    server.push_text(*(json.dumps(obj) for obj in objects))


def lab_errors(protocol: Protocol) -> list[str]:
    return [e.info["error"] for e in protocol.transcript if e.role == "lab" and "error" in e.info]


def sent_schemas(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    return [r["response_format"]["json_schema"]["schema"] for r in server.requests]


def test_hidden_property_sample_then_final_answer(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/hidden-property", rounds=1, n_predictions=3)
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    reply_round = {"reasoning": "probe high values", "action": "SAMPLE", "value": "0.75"}
    reply_final = {"hypotheses": [{"description": "fraction of G or C", "python": ""}],
                   "predictions": ["0.1", "0.5", "1"]}
    push_json(scripted_llm, reply_round, reply_final)

    result = run_episode(protocol, agent, seed=3)

    assert lab_errors(protocol) == []
    schemas = sent_schemas(scripted_llm)
    assert validate(reply_round, schemas[0]) == [] and validate(reply_final, schemas[1]) == []
    assert agent.turns[0].message == "SAMPLE 0.750"
    final = json.loads(agent.turns[1].message)
    assert final["predictions"] == dict(zip(protocol.prediction_sequences, [0.1, 0.5, 1.0], strict=True))
    assert final["hypotheses"] == [{"rank": 1, "description": "fraction of G or C"}]
    assert 0.0 <= result.score.score <= 1.0


def test_hidden_property_sequence_batch_is_evaluated(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/hidden-property", rounds=2, batch=3, length=6, n_predictions=2)
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    batch = ["ACGTAC", "GGGGGG", "ATATAT"]
    push_json(scripted_llm, {"reasoning": "", "action": "SEQUENCES", "sequences": batch})
    agent.reset(0)
    reply = protocol.step(agent.act(protocol.reset(0)))
    assert "error" not in reply.info
    assert reply.info["action"] == {"kind": "query", "sequences": batch}


def test_unknown_dynamics_experiment_then_report(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/unknown-dynamics", preset="paper", rounds=1, length=8, max_steps=5,
                             n_heldout=2)
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    experiment = {"reasoning": "start GC-rich", "sequence": "GCGCGCAT", "measurables": ["gc_content"], "steps": 5}
    rest = {"hamming_distance": "0.5", "entropy_score": "0.5"}
    report = {
        "hypothesis": "sequences drift to two attractors", "evidence": "experiment 1",
        "attractors": [{"gc_content": "0.8", "palindrome_score": "0.8", "type": "2-cycle"} | rest,
                       {"gc_content": "0.4", "palindrome_score": "0.2", "type": "fixed"} | rest],
        "drivers": ["gc_content", "palindrome_score"], "basins": [1, 2],
    }
    push_json(scripted_llm, experiment, report)

    result = run_episode(protocol, agent, seed=1)

    assert lab_errors(protocol) == []
    assert protocol.done and [t.format for t in agent.turns] == ["experiment", "report"]
    sent = json.loads(agent.turns[1].message)
    assert sent["attractors"][0] == {"gc_content": 0.8, "palindrome_score": 0.8, "hamming_distance": 0.5,
                                     "entropy_score": 0.5, "type": "2-cycle"}
    assert set(sent["predictions"]) == {s.sid for s in protocol.starts}
    assert 0.0 <= result.score.score <= 1.0


def test_unknown_dynamics_report_keyed_by_measurable_for_other_drivers(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol(
        "sequence/unknown-dynamics", rounds=1, length=8, max_steps=5, n_heldout=2,
        drivers=("alternation_k", "gc_content"), attractors=((0.7, 0.3), (0.2, 0.8)),
        measurables=("alternation_k", "gc_content", "entropy_score"))
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    experiment = {"reasoning": "", "sequence": "GCGCGCAT", "measurables": ["gc_content"], "steps": 5}
    point = {"alternation_k": "0.7", "gc_content": "0.3", "entropy_score": "0.9", "type": "2-cycle"}
    report = {"hypothesis": "h", "evidence": "e", "attractors": [point], "drivers": ["alternation_k", "gc_content"],
              "basins": [1, 1]}
    push_json(scripted_llm, experiment, report)

    run_episode(protocol, agent, seed=1)

    schema = sent_schemas(scripted_llm)[1]
    assert set(schema["properties"]["attractors"]["items"]["properties"]) == {
        "alternation_k", "gc_content", "entropy_score", "type"}  # every measurable, not the hidden drivers
    assert lab_errors(protocol) == [] and protocol.report is not None and not protocol.report.warnings
    assert protocol.report.attractors[0].coords == {"alternation_k": 0.7, "gc_content": 0.3, "entropy_score": 0.9}


def test_macro_experiment_value_is_clamped_and_report_accepted(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("macro/causal-discovery", budget=1, held_out=1, max_turns=4,
                             ground_truth=CHEAP_MACRO_TRUTH)
    agent = LLMLabAgent(protocol, client_for(scripted_llm), limits=SMALL_MODEL_LIMITS)
    experiment = {"hypothesis": "transfers cut unemployment", "design": "raise g0", "parameter": "g0",
                  "value": "5", "number_of_steps": 50}
    report = {"edges": ["g0 -> unemployment (-, long)"], "claims": [],
              "predictions": ["0.1, 1000"], "narrative": "n"}
    push_json(scripted_llm, experiment, report)

    result = run_episode(protocol, agent, seed=2)

    assert lab_errors(protocol) == []
    assert json.loads(agent.turns[0].message)["params"] == {"g0": 0.6}  # 5 clamped to g0's maximum
    assert protocol.done and [t.format for t in agent.turns] == ["experiment", "report"]
    assert 0.0 <= result.score.score <= 1.0


def test_macro_updates_after_the_first_experiment_and_reports_claims(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("macro/causal-discovery", budget=2, held_out=1, max_turns=5,
                             ground_truth=CHEAP_MACRO_TRUTH)
    agent = LLMLabAgent(protocol, client_for(scripted_llm), limits=SMALL_MODEL_LIMITS)
    first = {"hypothesis": "g0 lowers unemployment", "design": "d1", "parameter": "g0", "value": "0.3",
             "number_of_steps": 50}
    second = {"update": {"indicator": "unemployment", "change": "fell", "verdict": "supports"},
              "hypothesis": "tau0 raises unemployment", "design": "d2", "parameter": "tau0", "value": "0.3",
              "number_of_steps": 50}
    claims = ["exp 1 unemployment mean = 0.1", "exp 2 gov_debt last = -12.5 vs exp 1"]
    edges = [f"{k} -> unemployment (-, long)" for k in ("g0", "tau0", "markup", "r0", "c1", "c2", "phi")]
    edges.append("gdp_real -> inflation (+, short)")
    report = {"edges": edges, "claims": claims,
              "predictions": ["0.1, 1000"], "narrative": "n"}
    push_json(scripted_llm, first, second, report)

    result = run_episode(protocol, agent, seed=2)

    schemas = sent_schemas(scripted_llm)
    assert all("update" not in option["properties"] for option in schemas[0]["anyOf"])  # nothing to update on yet
    assert validate(second, schemas[1]) == [] and validate(report, schemas[2]) == []
    assert schemas[2]["properties"]["edges"]["maxItems"] == 8 and schemas[2]["properties"]["claims"]["maxItems"] == 2
    assert lab_errors(protocol) == []
    update = protocol.log.experiments[1].update_from_previous
    assert update == "In experiment 1, unemployment fell; this supports the previous hypothesis."
    assert result.score.details["workflow"]["well_formed_experiments"] == 2
    stated = protocol.log.report.claims
    assert [(c.experiment_id, c.kind, c.baseline_id, c.value) for c in stated] == [
        (1, "level", None, 0.1), (2, "difference", 1, -12.5)]
    assert result.score.details["data_analysis"]["claims"] == 2
    predicted = protocol.log.report.predictions
    assert [(p.setting_id, p.unemployment_mean_q50_100, p.gov_debt_final) for p in predicted] == [
        (protocol.log.held_out[0].setting_id, 0.1, 1000.0)]
    assert len(result.score.details["edges"]) == 8
    assert result.score.details["edges"][-1] | {"truth": None} == {
        "cause": "gdp_real", "effect": "inflation", "horizon": "short", "sign": "+", "truth": None}
    assert validate({**report, "edges": ["g0 -> unemployment (-, medium)"]}, schemas[2])  # the pattern fixes choices
    assert validate({**report, "claims": ["exp 3 unemployment mean = 0.1"]}, schemas[2])  # no experiment 3


def test_unusable_model_output_never_crashes_the_episode(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/hidden-property", rounds=1, n_predictions=2, final_retries=0)
    agent = LLMLabAgent(protocol, client_for(scripted_llm), bad_output_retries=0)
    scripted_llm.push_text("I think it is GC content", "no idea")

    result = run_episode(protocol, agent, seed=0)

    assert protocol.done and len(agent.turns) == 2
    assert all(turn.error and turn.data is None for turn in agent.turns)
    assert agent.turns[0].message == "I think it is GC content"  # sent as-is; the lab explains the problem
    assert lab_errors(protocol)
    assert 0.0 <= result.score.score <= 1.0


def test_unregistered_protocol_uses_the_generic_message_format(scripted_llm: ScriptedLLMServer) -> None:
    agent = LLMLabAgent(client=client_for(scripted_llm), protocol_name="other/lab")
    push_json(scripted_llm, {"reasoning": "greet", "message": "HELLO LAB"})
    agent.reset(0)
    assert agent.act("Welcome. Say something.") == "HELLO LAB"
    schema = sent_schemas(scripted_llm)[0]
    assert set(schema["properties"]) == {"reasoning", "message"}
    assert schema["properties"]["message"]["maxLength"] == 400  # the default max_text_chars


def test_history_is_bounded_and_keeps_the_first_message(scripted_llm: ScriptedLLMServer) -> None:
    agent = LLMLabAgent(client=client_for(scripted_llm), protocol_name="other/lab", history_turns=1,
                        max_message_chars=300)
    push_json(scripted_llm, *[{"reasoning": "", "message": f"m{i}"} for i in range(4)])
    agent.reset(0)
    for text in ["INTRO " + "x" * 1000, "lab 2", "lab 3", "lab 4"]:
        agent.act(text)
    last = scripted_llm.requests[-1]["messages"]
    contents = [m["content"] for m in last]
    assert contents[1].startswith("INTRO ") and "characters omitted" in contents[1] and len(contents[1]) < 400
    assert "lab 3" in contents and "lab 2" not in contents and contents[-1] == "lab 4"


def test_unreachable_model_stops_the_run(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/hidden-property", rounds=1)
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    scripted_llm.push(Scripted(status=503, body=error_body("down")))
    with pytest.raises(LLMUnavailable):
        run_episode(protocol, agent, seed=0)


def test_llm_agent_is_registered_for_every_lab(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/hidden-property")
    agent = make_agent("sequence/hidden-property", "llm", protocol, client=client_for(scripted_llm))
    assert isinstance(agent, LLMLabAgent) and agent.protocol is protocol


def test_turn_records_are_json_ready(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(Scripted(body=chat_reply(json.dumps({"reasoning": "r", "message": "x"}), 5, 3)))
    agent = LLMLabAgent(client=client_for(scripted_llm), protocol_name="other/lab")
    agent.reset(0)
    agent.act("hi")
    (record,) = agent.turn_records()
    assert json.loads(json.dumps(record))["completion_tokens"] == 3 and record["message"] == "x"


def test_cap_strings_only_touches_free_text() -> None:
    schema = {"type": "object", "properties": {
        "free": {"type": "string", "maxLength": 500}, "unbounded": {"type": "string"},
        "short": {"type": "string", "maxLength": 10}, "coded": {"type": "string", "pattern": "^[AC]+$"},
        "choice": {"type": "string", "enum": ["a"]}}}
    props = _cap_strings(schema, 50)["properties"]
    assert [props[k].get("maxLength") for k in ("free", "unbounded", "short", "coded", "choice")] == [
        50, 50, 10, None, None]


def test_default_limits_are_fair_for_a_32k_model() -> None:
    """Programs can be submitted, macro reports hold a real graph, experiments may change several factors."""
    hidden = make_protocol("sequence/hidden-property", rounds=1)
    hidden.reset(0)
    hidden.step("SAMPLE 0.5")
    final = hidden_property_format(hidden, "")
    assert "python" in final.schema["properties"]["hypotheses"]["items"]["properties"]
    rendered = json.loads(final.render({"hypotheses": [{"description": "gc", "python": "def f(s):\n    return 0.5"}],
                                        "predictions": ["0.5"] * 20}))
    assert rendered["hypotheses"][0]["python"].startswith("def f(s)")
    small = hidden_property_format(hidden, "", SMALL_MODEL_LIMITS)
    assert "python" not in small.schema["properties"]["hypotheses"]["items"]["properties"]
    macro = make_protocol("macro/causal-discovery", budget=2, structure={"n_households": 50})
    macro.reset(0)
    experiment = macro_format(macro, "")
    assert experiment.schema["properties"]["changes"]["maxItems"] == 3
    sent = json.loads(experiment.render({"hypothesis": "g0 lowers unemployment", "design": "d", "number_of_steps": 50,
                                         "changes": [{"parameter": "g0", "value": "0.3"},
                                                     {"parameter": "tau0", "value": "0.1"}]}))
    assert sent["params"] == {"g0": 0.3, "tau0": 0.1}
    agent = LLMLabAgent(macro, limits={"macro_max_edges": 12})
    assert agent.limits.macro_max_edges == 12 and agent.history_turns >= 6 and agent.max_message_chars >= 8000


def test_population_experiment_then_report_keyed_by_held_out_ids(scripted_llm: ScriptedLLMServer) -> None:
    protocol = make_protocol("sequence/population-dynamics", rounds=1, size=3, length=6, n_heldout=3,
                             max_generations=4, replicates=8)
    agent = LLMLabAgent(protocol, client_for(scripted_llm))
    experiment = {"reasoning": "start all alike", "population": ["AAAAAA", "AAAAAA", "GCGCGC"], "generations": 3,
                  "measurables": ["gc_content"]}
    push_json(scripted_llm, experiment)
    agent.reset(0)
    reply = protocol.step(agent.act(protocol.reset(0)))
    assert "error" not in reply.info and protocol.phase == "report"
    targets = list(protocol.problem.targets)
    report = {"hypothesis": "h", "evidence": "e", "predictions": [{t: v for t in targets} for v in ("0.1", "0.5", "1.0")]}
    push_json(scripted_llm, report)
    protocol.step(agent.act(reply.text))

    schemas = sent_schemas(scripted_llm)
    assert validate(experiment, schemas[0]) == [] and validate(report, schemas[1]) == []
    assert schemas[0]["properties"]["population"]["minItems"] == 3
    assert validate(experiment | {"population": ["AAAAAA", "AAAAAA"]}, schemas[0])  # P sequences exactly
    assert validate(experiment | {"population": ["AAAAA", "AAAAAA", "GCGCGC"]}, schemas[0])  # L letters
    assert [t.format for t in agent.turns] == ["experiment", "report"] and lab_errors(protocol) == []
    assert protocol.done and protocol.report is not None and not protocol.report.warnings
    ids = [h.pid for h in protocol.heldout]
    assert protocol.report.predictions == {pid: {t: v for t in targets} for pid, v in zip(ids, (0.1, 0.5, 1.0), strict=True)}


def test_population_report_retry_keeps_the_held_out_ids(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.labs.llm_formats import population_format

    protocol = make_protocol("sequence/population-dynamics", rounds=1, size=3, length=6, n_heldout=4, replicates=8)
    protocol.reset(2)
    protocol.step(json.dumps({"type": "experiment", "population": ["ACGTAC"] * 3, "generations": 2,
                              "measurables": ["gc_content"]}))
    assert protocol.phase == "report"
    retry = population_format(protocol, "Your report could not be parsed: `predictions` is missing.")
    assert retry.name == "report" and retry.schema["properties"]["predictions"]["minItems"] == 4
    assert "P1, P2, P3, P4" in retry.instructions


@pytest.mark.parametrize("seed", [0, 2, 5])
def test_attack_population_format_carries_no_hidden_truth(seed: int) -> None:
    """A format is built from the protocol object, which holds the truth: nothing of it (the
    hidden operators, the held-out truths) may reach the schema or the instructions the model sees."""
    from discoverylab.labs.llm_formats import population_format

    protocol = make_protocol("sequence/population-dynamics", rounds=1, size=3, length=6, n_heldout=4, replicates=8)
    intro = protocol.reset(seed)
    reply = protocol.step(json.dumps({"type": "experiment", "population": ["ACGTAC"] * 3, "generations": 2,
                                      "measurables": ["gc_content"]}))
    shown = ""
    for message in (intro, reply.text, "Your report could not be parsed."):
        action_format = population_format(protocol, message)
        shown += json.dumps(action_format.schema) + action_format.instructions
    hidden = [protocol.problem.compose.kind] + ([protocol.problem.evolve.kind] if protocol.problem.evolve else [])
    assert not [name for name in hidden if name in shown]
    truths = {f"{v:.3f}"[:5] for h in protocol.heldout for v in h.truth.values()} - {"0.000", "1.000", "0.500"}
    assert not [t for t in truths if t in shown]
