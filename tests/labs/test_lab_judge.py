"""`lab run --judge-model M --judge-base-url U`: the judge reaches every grader, and the run prints
the paper's Tables 3, 5 and 7 with their judged columns (issue #22). Plumbing only: a scripted
OpenAI-compatible server here, the embedded model in the `llm` test."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.labs.cli import lab_app
from discoverylab.labs.judging import paper_tables
from discoverylab.labs.run_record import LabRecord
from discoverylab.labs.sequence.judge import HYPOTHESIS_SCHEMA, MAX_QUOTE_CHARS
from discoverylab.labs.sequence.parsing import MAX_HYPOTHESES
from discoverylab.llm.schema import validate
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply

CONFIG = {"sequence/hidden-property": {"rounds": 2},
          "sequence/unknown-dynamics": {"preset": "paper", "rounds": 2},
          "macro/causal-discovery": {"budget": 3, "structure": {"n_households": 100, "n_firms": 4},
                                     "ground_truth": {"replicates": 2, "steps": 100, "long_window": [51, 100]}}}


def judge_responder(request: dict[str, Any]) -> Scripted:
    """A rule-following judge: exact for every hypothesis, 4/5 for every judged criterion."""
    system = request["messages"][0]["content"]
    if "hidden function of DNA" in system:
        user = request["messages"][1]["content"]
        ranks = sorted({int(r) for r in re.findall(r'"rank": (\d+)', user)}) or [1]
        answer: dict[str, Any] = {"verdicts": [{"rank": r, "label": "exact", "quote": "q"} for r in ranks]}
    elif "dynamics" in system:
        answer = {c: {"score": 4, "justification": "ok"} for c in ("objective_inference", "use_of_evidence", "overall")}
    else:
        answer = {c: {"score": 4, "justification": "ok"} for c in ("hypothesis", "data_analysis")}
    return Scripted(body=chat_reply(json.dumps(answer)))


def _records(out: Path) -> list[LabRecord]:
    return [LabRecord.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()
            if line.strip()]


def test_lab_run_judge_options_reach_every_grader_and_print_tables_3_5_7(scripted_llm: ScriptedLLMServer,
                                                                          tmp_path: Path) -> None:
    scripted_llm.responder = judge_responder
    out = tmp_path / "run"
    result = CliRunner().invoke(lab_app, [
        "run", "all", "--agent", "oracle", "--seeds", "0", "--out", str(out), "--no-plots",
        "--config", json.dumps(CONFIG), "--judge-model", "scripted-model", "--judge-base-url", scripted_llm.base_url])
    assert result.exit_code == 0, result.output
    for title in ("Table 3", "Table 5", "Table 7"):
        assert title in result.output
    tables = paper_tables(_records(out))
    assert tables["table3"][0]["judge_exact"] == 1 and tables["table3"][0]["label_pass"] == 1
    assert tables["table5"][0]["objective_inference"] == 4.0 and tables["table5"][0]["attractor_identification"] == 5.0
    assert tables["table7"][0]["judged_share"] == 1.0 and tables["table7"][0]["net"] is not None
    systems = [r["messages"][0]["content"] for r in scripted_llm.requests]
    assert any("hedged" in s for s in systems)  # the anti-hedging rubric reached the model


def test_without_a_judge_the_judged_columns_are_empty(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(lab_app, ["run", "sequence/hidden-property", "--agent", "oracle", "--seeds", "0",
                                          "--out", str(out), "--no-plots", "--config", '{"rounds": 1}'])
    assert result.exit_code == 0, result.output
    row = paper_tables(_records(out))["table3"][0]
    assert row["label_pass"] == 1 and row["judge_exact"] == 0 and "Table 3" in result.output


def test_the_verdict_schema_bounds_every_quote_and_the_verdict_count() -> None:
    """The local judge's grammar is made from this schema: unbounded, SmolLM2 wrote one endless quote
    per reply until max_tokens, so `lab run --judge-model embedded` spent 9 requests of 512 tokens
    (minutes) on every episode and still left it unjudged."""
    verdict = {"rank": 1, "label": "exact", "quote": "q" * MAX_QUOTE_CHARS}
    assert validate({"verdicts": [verdict] * MAX_HYPOTHESES}, HYPOTHESIS_SCHEMA) == []
    assert validate({"verdicts": [{**verdict, "quote": "q" * (MAX_QUOTE_CHARS + 1)}]}, HYPOTHESIS_SCHEMA)
    assert validate({"verdicts": [verdict] * (MAX_HYPOTHESES + 1)}, HYPOTHESIS_SCHEMA)


@pytest.mark.llm
def test_embedded_model_judges_a_lab_run(embedded_llm: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(lab_app, ["run", "sequence/hidden-property", "--agent", "oracle", "--seeds", "0",
                                          "--out", str(out), "--no-plots", "--config", '{"rounds": 1}',
                                          "--judge-model", "embedded"])
    assert result.exit_code == 0, result.output
    record = _records(out)[0]
    assert record.labels["judge"] in ("exact", "partial", "wrong", "invalid")
    assert "Table 3" in result.output
