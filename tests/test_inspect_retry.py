"""Inspect's `eval-retry` of a sealed evaluation: the retried samples must be drawn from the same
test set (the same $DISCOVERYLAB_EVAL_KEY) as the samples the retry keeps."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai", reason="the inspect-ai package (dev extra) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai import eval_retry  # noqa: E402
from inspect_ai.model import get_model  # noqa: E402

from discoverylab.instances import key_id, make_instance  # noqa: E402
from discoverylab.integrations import inspect_tasks  # noqa: E402
from env_server_kit import tool_call_reply  # noqa: E402
from llm_scripted_server import Scripted, ScriptedLLMServer, error_body  # noqa: E402

KEY_A, KEY_B = "a" * 32, "b" * 32


def _responder(llm: ScriptedLLMServer, fail_first: bool):
    """WAIT once, then submit; the very first request (one sample's) is refused when `fail_first`,
    so that sample errors and the log is left for a retry."""

    def respond(request):
        if fail_first and len(llm.requests) == 1:
            return Scripted(status=400, body=error_body("refused once"))
        if "episode has ended" in str(request["messages"][-1].get("content") or ""):
            return Scripted(body=tool_call_reply("submit", {"answer": "nothing"}, len(llm.requests)))
        return Scripted(body=tool_call_reply("act", {"action": "WAIT"}, len(llm.requests)))

    return respond


def _first_run(tmp_path, monkeypatch, llm):
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", KEY_A)
    monkeypatch.setenv("SCRIPTED_API_KEY", "x")  # the retry rebuilds the model from the log
    model = get_model("openai-api/scripted/scripted-model", base_url=llm.base_url, api_key="x")
    task_obj = inspect_tasks.pick_and_place_test(split="test", indices="0-1", max_steps=1, judge=False)
    log = inspect_eval(task_obj, model=model, log_dir=str(tmp_path), display="none", max_samples=1,
                       fail_on_error=False)[0]  # fmt: skip
    assert [s.error is not None for s in log.samples].count(True) == 1  # one sample left to retry
    return log


def test_a_sealed_sample_and_its_task_carry_the_key_fingerprint(tmp_path, monkeypatch):
    """The log says under which key its test instances were drawn (a fingerprint, not the key)."""
    llm = ScriptedLLMServer().start()
    llm.responder = _responder(llm, fail_first=True)
    try:
        log = _first_run(tmp_path, monkeypatch, llm)
    finally:
        llm.stop()
    fingerprint = key_id(KEY_A.encode())
    assert all(s.metadata["key_id"] == fingerprint for s in log.samples)
    assert inspect_tasks.key_ids(log.eval.metadata) == [fingerprint]
    assert KEY_A not in log.model_dump_json()


def test_retry_under_another_key_is_refused_before_any_sample(tmp_path, monkeypatch):
    """Before: the retry kept the sample played under key A and played the errored one's index
    under key B, another world, in the same log (two test sets mixed, silently). Now the retry
    fails at once, saying why, and plays nothing."""
    llm = ScriptedLLMServer().start()
    llm.responder = _responder(llm, fail_first=True)
    try:
        first = _first_run(tmp_path, monkeypatch, llm)
        monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", KEY_B)
        played = len(llm.requests)
        retried = eval_retry(first, log_dir=str(tmp_path / "retry"), display="none")[0]
    finally:
        llm.stop()
    commitments = {make_instance("PickAndPlaceTest", "normal", "test", i, k.encode()).commitment: k
                   for i in (0, 1) for k in (KEY_A, KEY_B)}  # fmt: skip
    drawn = {commitments[s.scores["episode_scorer"].metadata["instance"]["commitment"]]
             for s in retried.samples or [] if s.scores}  # fmt: skip
    assert drawn == {KEY_A}  # the sample the retry kept
    assert KEY_B not in drawn  # no instance of the other test set entered the log
    assert retried.status == "error" and len(llm.requests) == played
    message = str(retried.error.message if retried.error else "")
    assert "DISCOVERYLAB_EVAL_KEY" in message and key_id(KEY_A.encode()) in message and key_id(KEY_B.encode()) in message


def test_eval_set_under_another_key_never_resumes_the_first_key_s_log(tmp_path, monkeypatch):
    """`eval_set` on the same log folder resumed a failed sealed log under another key, as the
    retry did: one log, two test sets. A sealed task's version now names its key's fingerprint,
    so the other key's task is another task to `eval_set`: it refuses the folder, saying why."""
    from inspect_ai import eval_set

    llm = ScriptedLLMServer().start()
    llm.responder = _responder(llm, fail_first=True)
    monkeypatch.setenv("SCRIPTED_API_KEY", "x")
    model = get_model("openai-api/scripted/scripted-model", base_url=llm.base_url, api_key="x")
    args = {"log_dir": str(tmp_path), "model": model, "display": "none", "max_samples": 1, "retry_attempts": 0,
            "continue_on_fail": True}  # fmt: skip
    try:
        for key in (KEY_A, KEY_B):
            monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", key)
            task_obj = inspect_tasks.pick_and_place_test(split="test", indices="0-1", max_steps=1, judge=False)
            if key == KEY_A:
                assert not eval_set(task_obj, **args)[0]  # one sample failed: the log is left to resume
                played = len(llm.requests)
            else:
                with pytest.raises(Exception, match="not associated with a task"):
                    eval_set(task_obj, **args)
    finally:
        llm.stop()
    assert len(llm.requests) == played


def test_retry_under_the_same_key_completes_the_log(tmp_path, monkeypatch):
    """The guard refuses only a change of key: the same key's retry plays the errored sample."""
    llm = ScriptedLLMServer().start()
    llm.responder = _responder(llm, fail_first=True)
    try:
        first = _first_run(tmp_path, monkeypatch, llm)
        retried = eval_retry(first, log_dir=str(tmp_path / "retry"), display="none")[0]
    finally:
        llm.stop()
    assert retried.status == "success", retried.error
    assert all(s.error is None for s in retried.samples) and len(retried.samples) == 2


def test_a_sealed_row_is_played_only_under_its_key(monkeypatch):
    """The rows are shared with verifiers, whose dataset may be built in one process and rolled out
    in another: a row drawn under key A, played where the key is B (or unset), is refused, saying
    so, before any session starts; under A it plays."""
    from discoverylab.integrations import common

    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", KEY_A)
    row = common.rows("PickAndPlaceTest", split="test", indices="0")[0]
    assert row["key_id"] == key_id(KEY_A.encode())
    for other in (KEY_B, None):
        if other is None:
            monkeypatch.delenv("DISCOVERYLAB_EVAL_KEY")
        else:
            monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", other)
        with pytest.raises(ValueError, match="drawn from the test set of the key") as refused:
            common.start(row)
        assert ("unset" if other is None else key_id(other.encode())) in str(refused.value)
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", KEY_A)
    session, first = common.start(row)
    session.close()
    assert first
