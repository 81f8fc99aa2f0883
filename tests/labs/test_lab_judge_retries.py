"""The Tiny Labs judges retry, never lose an episode, are bounded by --episode-timeout, and an
unjudged episode is graded later by `lab judge RUN_DIR --unjudged-only` (issue #22).

Every judge here is a real HTTP server on 127.0.0.1 (`llm_scripted_server`) that fails in a
scripted way, then answers like a rule-following judge.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from test_lab_judge import CONFIG, judge_responder
from typer.testing import CliRunner

from discoverylab.labs.cli import lab_app
from discoverylab.labs.judge_rules import ask_judge
from discoverylab.labs.run_record import LabRecord
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply, error_body

HIDDEN, DYNAMICS, MACRO = "sequence/hidden-property", "sequence/unknown-dynamics", "macro/causal-discovery"
PROTOCOLS = [HIDDEN, DYNAMICS, MACRO]


def _records(out: Path) -> list[LabRecord]:
    return [LabRecord.model_validate_json(line) for line in (out / "results.jsonl").read_text().splitlines()
            if line.strip()]


def _latest(out: Path) -> LabRecord:
    return _records(out)[-1]


def _run(out: Path, protocol: str, server: ScriptedLLMServer, *extra: str) -> Any:
    return CliRunner().invoke(lab_app, [
        "run", protocol, "--agent", "oracle", "--seeds", "0", "--out", str(out), "--no-plots",
        "--config", json.dumps(CONFIG), "--judge-model", "scripted-model", "--judge-base-url", server.base_url, *extra])


def _judge(out: Path, server: ScriptedLLMServer, *extra: str) -> Any:
    return CliRunner().invoke(lab_app, ["judge", str(out), "--judge-model", "scripted-model", "--judge-base-url",
                                        server.base_url, *extra])


def _garbage(n: int) -> list[Scripted]:
    return [Scripted(body=chat_reply("I refuse to answer in JSON.")) for _ in range(n)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_judge_retries_5xx_and_malformed_replies_then_judges(scripted_llm: ScriptedLLMServer, tmp_path: Path,
                                                             protocol: str) -> None:
    """Two 503s (the client's HTTP retries), then four unusable replies: the client re-asks twice
    and gives up, `ask_judge` asks afresh, and the fourth reply is followed by a valid one."""
    scripted_llm.push(Scripted(status=503, body=error_body("overloaded")), Scripted(status=503, body=error_body("x")),
                      *_garbage(4))
    scripted_llm.responder = judge_responder
    result = _run(tmp_path, protocol, scripted_llm)
    assert result.exit_code == 0, result.output
    record = _latest(tmp_path)
    assert record.status == "ok" and record.labels["judge_status"] == "judged", record.labels
    assert "judge_error" not in record.labels and len(scripted_llm.requests) >= 7


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_failing_judge_leaves_the_episode_ok_and_unjudged_then_lab_judge_grades_it(
        scripted_llm: ScriptedLLMServer, tmp_path: Path, protocol: str) -> None:
    scripted_llm.responder = lambda _request: Scripted(status=500, body=error_body("down"))
    result = _run(tmp_path, protocol, scripted_llm, "--request-timeout", "1")
    assert result.exit_code == 0, result.output  # the episode is ok: its judge is what failed
    first = _latest(tmp_path)
    assert first.status == "ok" and first.labels["judge_status"] == "unjudged" and first.labels["judge_error"]
    assert "lab judge" in result.output and "--unjudged-only" in result.output

    scripted_llm.responder = judge_responder  # the endpoint is back
    result = _judge(tmp_path, scripted_llm, "--unjudged-only")
    assert result.exit_code == 0, result.output
    records = _records(tmp_path)
    assert len(records) == 2 and records[-1].labels["judge_status"] == "judged"
    assert records[-1].turns == first.turns and records[-1].agent == first.agent
    score_file = json.loads((tmp_path / records[-1].score_file).read_text())  # type: ignore[operator]
    assert score_file["labels"]["judge_status"] == "judged"

    result = _judge(tmp_path, scripted_llm, "--unjudged-only")  # nothing left to judge
    assert result.exit_code == 0 and "Judged 0 episode(s)" in result.output and len(_records(tmp_path)) == 2


def test_lab_judge_exits_1_and_keeps_the_record_while_the_judge_still_fails(scripted_llm: ScriptedLLMServer,
                                                                            tmp_path: Path) -> None:
    scripted_llm.responder = lambda _request: Scripted(status=500, body=error_body("down"))
    assert _run(tmp_path, HIDDEN, scripted_llm, "--request-timeout", "1").exit_code == 0
    result = _judge(tmp_path, scripted_llm, "--unjudged-only", "--request-timeout", "1")
    assert result.exit_code == 1 and "could not be judged" in result.output
    assert len(_records(tmp_path)) == 1 and _latest(tmp_path).labels["judge_status"] == "unjudged"


def test_episode_timeout_bounds_a_hanging_judge_and_keeps_the_episode(scripted_llm: ScriptedLLMServer,
                                                                     tmp_path: Path) -> None:
    """The judge hangs for 60 s; --episode-timeout 8 ends it in time: the record is `ok`, unjudged,
    and says why; nothing is lost and the run is not stopped as a timeout."""
    scripted_llm.responder = lambda _request: Scripted(hang=60.0, body=chat_reply("{}"))
    started = time.monotonic()
    result = _run(tmp_path, HIDDEN, scripted_llm, "--episode-timeout", "8")
    assert time.monotonic() - started < 30
    assert result.exit_code == 0, result.output
    record = _latest(tmp_path)
    assert record.status == "ok" and record.labels["judge_status"] == "unjudged"
    assert "deadline" in record.labels["judge_error"] or "episode-timeout" in record.labels["judge_error"]
    assert record.seconds < 8


def test_episode_timeout_that_stops_the_agent_is_recorded_as_timeout_and_exits_1(tmp_path: Path) -> None:
    """A deadline too short for the episode itself: status `timeout` (never a crash), exit code 1."""
    result = CliRunner().invoke(lab_app, ["run", MACRO, "--agent", "oracle", "--seeds", "0", "--out", str(tmp_path),
                                          "--no-plots", "--episode-timeout", "0.5"])
    assert result.exit_code == 1, result.output
    assert _latest(tmp_path).status == "timeout" and "--episode-timeout" in (_latest(tmp_path).error or "")


# ---------------------------------------------------------------------- attacks (each must lose)
class _Scripted:
    """A judge client answering from a list (exceptions are raised)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls = 0

    def complete_json(self, _messages: list[dict[str, str]], _schema: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return dict(answer)


def test_ask_judge_retries_then_gives_up_without_raising() -> None:
    good = {"x": 1}
    assert ask_judge(_Scripted(TimeoutError("t"), {"y": 2}, good), [], {}, lambda r: r.get("x")).as_dict() == \
        {"valid": True, "retries": 2, "error": None}
    failed = ask_judge(_Scripted(ConnectionError("c"), {}, {}), [], {}, lambda r: r.get("x"))
    assert not failed.valid and failed.retries == 2 and failed.error


def test_attack_a_request_the_endpoint_refuses_is_not_hammered() -> None:
    from discoverylab.llm.errors import LLMRequestError

    client = _Scripted(LLMRequestError("HTTP 400", status_code=400), {"x": 1})
    call = ask_judge(client, [], {}, lambda r: r.get("x"))
    assert not call.valid and client.calls == 1


def test_attack_breaking_the_judge_earns_nothing(scripted_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    """An answer that makes the judge fail earns nothing for it: the judge's part counts 0 (as
    judged wrong) until `lab judge` grades it, so no lift over a run without a judge (and the
    unjudged episode stays in the means: it is `ok`)."""
    plain = CliRunner().invoke(lab_app, ["run", HIDDEN, "--agent", "random", "--seeds", "0", "--out",
                                         str(tmp_path / "plain"), "--no-plots", "--config", json.dumps(CONFIG)])
    assert plain.exit_code == 0, plain.output
    scripted_llm.responder = lambda _request: Scripted(status=500, body=error_body("down"))
    broken = CliRunner().invoke(lab_app, [
        "run", HIDDEN, "--agent", "random", "--seeds", "0", "--out", str(tmp_path / "broken"), "--no-plots",
        "--config", json.dumps(CONFIG), "--judge-model", "m", "--judge-base-url", scripted_llm.base_url,
        "--request-timeout", "1"])
    assert broken.exit_code == 0, broken.output
    a, b = _latest(tmp_path / "plain"), _latest(tmp_path / "broken")
    assert b.parts["judge"] == 0.0 and b.score <= a.score and b.status == "ok"
    from discoverylab.llm.client import ENV_REQUEST_TIMEOUT

    # `--request-timeout 1` held for that command only: later clients in this process (an
    # in-process CLI, a notebook, the next test) must not inherit a 1-second deadline
    assert os.environ.get(ENV_REQUEST_TIMEOUT) != "1"


def test_attack_an_edited_transcript_is_not_judged(scripted_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    """Rewriting the agent's final answer in the saved transcript (to have a better one judged)
    fails the replay check: the episode is listed as not judged and its record is unchanged."""
    scripted_llm.responder = lambda _request: Scripted(status=500, body=error_body("down"))
    assert _run(tmp_path, HIDDEN, scripted_llm, "--request-timeout", "1").exit_code == 0
    record = _latest(tmp_path)
    path = tmp_path / record.transcript  # type: ignore[operator]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    first_agent = next(line for line in lines if line.get("role") == "agent")
    first_agent["text"] = "SAMPLE 0.123"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    scripted_llm.responder = judge_responder
    result = _judge(tmp_path, scripted_llm)
    assert result.exit_code == 1 and "does not replay" in result.output
    assert len(_records(tmp_path)) == 1


def test_lab_judge_errors_are_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(lab_app, ["judge", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "missing: no such folder" in result.output and "Traceback" not in result.output


def _wrong_judge(request: dict[str, Any]) -> Scripted:
    """A judge that rejects everything: `wrong` for each hypothesis, 0/5 for each criterion."""
    answer = json.loads(judge_responder(request).body["choices"][0]["message"]["content"])
    if "verdicts" in answer:
        answer = {"verdicts": [{**v, "label": "wrong"} for v in answer["verdicts"]]}
    else:
        answer = {k: {"score": 0, "justification": "no"} for k in answer}
    return Scripted(body=chat_reply(json.dumps(answer)))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_attack_breaking_the_judge_only_postpones_the_verdict(scripted_llm: ScriptedLLMServer, tmp_path: Path,
                                                             protocol: str) -> None:
    """An episode whose judge failed is flagged as not final (`*` and the unjudged count in the
    table) and `lab judge` later applies the verdict: a wrong answer that dodged the judge at run
    time scores as judged wrong from the start (its judge part counts 0 until judged), and ends
    with exactly the judged-wrong score."""
    scripted_llm.responder = lambda _request: Scripted(status=500, body=error_body("down"))
    result = _run(tmp_path, protocol, scripted_llm, "--request-timeout", "1")
    assert result.exit_code == 0 and "(1 unjudged)" in result.output and "not final" in result.output
    dodged = _latest(tmp_path)
    scripted_llm.responder = _wrong_judge
    assert _judge(tmp_path, scripted_llm, "--unjudged-only").exit_code == 0
    final = _latest(tmp_path)
    assert final.labels["judge_status"] == "judged" and final.score == pytest.approx(dodged.score)


def test_attack_an_oversized_hypothesis_cannot_make_the_judge_request_too_large() -> None:
    """Megabytes of hypothesis text would overflow the judge's context (HTTP 400, unjudged for good);
    the judge is shown a bounded cut of each statement and program."""
    from discoverylab.labs.sequence.judge import hypothesis_messages
    from discoverylab.labs.sequence.parsing import Hypothesis

    huge = [Hypothesis(rank=r, description="GC content " * 50_000, python="def f(s):\n" + "    x = 1\n" * 50_000)
            for r in (1, 2, 3)]
    user = hypothesis_messages({"property": "gc_content"}, huge)[1]["content"]
    assert len(user) < 30_000 and "more characters not shown" in user


# ---------------------------------------------------------------------- a re-ask must differ
_LABEL_SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}


def _label(reply: Any) -> str | None:
    if reply.get("label") not in ("exact", "wrong"):
        raise ValueError(f"label {reply.get('label')!r} is not one of exact, wrong")
    return str(reply["label"])


def _judge_client(server: ScriptedLLMServer) -> Any:
    from discoverylab.llm.client import LLMClient

    return LLMClient(base_url=server.base_url, model="scripted-model", backoff_base=0.0, json_mode="json_schema")


def _sent(server: ScriptedLLMServer) -> list[str]:
    return [json.dumps(r["messages"], sort_keys=True) for r in server.requests]


def test_a_reply_the_check_rejects_is_asked_again_with_the_reason_not_identically(
        scripted_llm: ScriptedLLMServer) -> None:
    """At temperature 0 the same request gets the same reply: the re-ask carries the rejected reply
    and what was wrong with it (the check's error) as a follow-up turn, so it can change."""
    scripted_llm.push_text('{"label": "maybe"}', '{"label": "exact"}')
    call = ask_judge(_judge_client(scripted_llm), [{"role": "user", "content": "grade"}], _LABEL_SCHEMA, _label)
    assert call.valid and call.value == "exact" and call.retries == 1
    first, second = (r["messages"] for r in scripted_llm.requests)
    assert first != second and second[:len(first)] == first
    assert second[len(first)] == {"role": "assistant", "content": '{"label": "maybe"}'}
    assert "'maybe' is not one of exact, wrong" in second[-1]["content"] and second[-1]["role"] == "user"
    assert all(r["temperature"] == 0 for r in scripted_llm.requests)


def test_a_reply_that_never_fits_the_schema_is_not_resent_unchanged(scripted_llm: ScriptedLLMServer) -> None:
    """The client re-asks a schema miss twice, then gives up; `ask_judge`'s next request used to be
    the first one again (three more identical calls at temperature 0). Every request now differs."""
    scripted_llm.responder = lambda _request: Scripted(body=chat_reply("I refuse to answer in JSON."))
    call = ask_judge(_judge_client(scripted_llm), [{"role": "user", "content": "grade"}], _LABEL_SCHEMA, _label)
    assert not call.valid and call.error and "schema" in call.error
    sent = _sent(scripted_llm)
    assert len(sent) == 9 and len(set(sent)) == len(sent), "a request was sent twice unchanged"
    assert "I refuse to answer in JSON." in scripted_llm.requests[3]["messages"][1]["content"]


def test_a_network_failure_is_still_asked_again_as_it_was(scripted_llm: ScriptedLLMServer) -> None:
    """A reset connection says nothing about the request: it is resent as it was."""
    from discoverylab.llm.client import LLMClient

    scripted_llm.push(Scripted(reset=True), Scripted(body=chat_reply('{"label": "wrong"}')))
    client = LLMClient(base_url=scripted_llm.base_url, model="scripted-model", max_retries=0, backoff_base=0.0,
                       json_mode="json_schema")
    call = ask_judge(client, [{"role": "user", "content": "grade"}], _LABEL_SCHEMA, _label)
    assert call.valid and call.value == "wrong" and call.retries == 1
    assert len(set(_sent(scripted_llm))) == 1 and len(scripted_llm.requests) == 2


def test_attack_a_huge_rejected_reply_does_not_grow_the_re_ask_without_bound(scripted_llm: ScriptedLLMServer) -> None:
    """A rejected reply of 200 kB is quoted back cut short, so the re-asks stay small."""
    huge = json.dumps({"label": "x" * 200_000})
    scripted_llm.responder = lambda _request: Scripted(body=chat_reply(huge))
    call = ask_judge(_judge_client(scripted_llm), [{"role": "user", "content": "grade"}], _LABEL_SCHEMA, _label)
    assert not call.valid and call.error
    sizes = [len(s) for s in _sent(scripted_llm)]
    assert len(sizes) == 3 and max(sizes) < 10_000 and len(set(_sent(scripted_llm))) == 3


class _Recording(_Scripted):
    """A scripted judge client that keeps each conversation it was sent."""

    def __init__(self, *answers: Any) -> None:
        super().__init__(*answers)
        self.sent: list[list[dict[str, str]]] = []

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(list(messages))
        return super().complete_json(messages, schema)


def test_the_dynamics_and_macro_re_asks_name_the_missing_criterion() -> None:
    from discoverylab.labs.macroecon.grading import _judge_scores
    from discoverylab.labs.sequence.judge import judge_dynamics_checked

    full = {c: {"score": 3, "justification": "ok"} for c in ("objective_inference", "use_of_evidence", "overall")}
    client = _Recording({"objective_inference": full["objective_inference"]}, full)
    call = judge_dynamics_checked(client, {"rule": "r"}, {"text": "t"}, {})
    assert call.valid and call.retries == 1
    assert "'use_of_evidence' has no numeric score" in client.sent[1][-1]["content"]
    macro = {"hypothesis": {"score": 2, "justification": "j"}, "data_analysis": {"score": 4, "justification": "j"}}
    client = _Recording({"hypothesis": macro["hypothesis"]}, macro)
    assert _judge_scores(client, [{"role": "user", "content": "grade"}]).valid
    assert "'data_analysis' has no numeric score" in client.sent[1][-1]["content"]
