"""Issue 23.8: duplicate seeds, records of another config on resume, and a judge that fails or hangs.

Real runs: worker processes, run directories on disk and a real HTTP server of our own on
127.0.0.1 for the agent and another for the judge. Each test fails on the code before the fix
(see the docstrings); the judge's HTTP failures were already survived and are kept as guards.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench import records
from discoverylab.bench.pool import LocalPool
from discoverylab.bench.runner import make_jobs, parse_seeds, run_bench, run_config
from discoverylab.bench.runs import execute
from discoverylab.cli import app
from discoverylab.llm.client import ENV_REQUEST_TIMEOUT
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply, error_body

cli = CliRunner()
RUN = ["run", "--agent", "oracle", "--task", "PickAndPlaceTest", "--max-steps", "3"]
WAIT = json.dumps({"thought": "look around", "action": "WAIT", "arg1": None, "arg2": None})
JUDGED_TASK = ("ArchaeologyDating", "easy")  # asks critical questions, so the judge is called


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- duplicate seeds


@pytest.mark.parametrize(("text", "seeds"), [("0,0,0-1", [0, 1]), ("3-6,0-10,5", [3, 4, 5, 6, 0, 1, 2, 7, 8, 9, 10]),
                                             ("2,0-2", [2, 0, 1]), ("0-3,1-2", [0, 1, 2, 3])])  # fmt: skip
def test_seeds_given_twice_are_kept_once_in_first_order(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


def test_seeds_0_0_0_1_run_seed_0_once(tmp_path: Path) -> None:
    """Before: `--seeds 0,0,0-1` ran and recorded seed 0 three times (3 lines, 3 logs written over each other)."""
    result = cli.invoke(app, [*RUN, "--seeds", "0,0,0-1", "--workers", "2", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(r["seed"] for r in _lines(tmp_path)) == [0, 1]


def test_duplicate_jobs_run_once_through_the_api(tmp_path: Path) -> None:
    jobs = make_jobs([("PickAndPlaceTest", "normal")], [0, 1, 0, 1, 0], "random", 3)
    outcome = run_bench(jobs, tmp_path, 2, total=len(jobs), config=run_config(3))
    assert [r.seed for r in outcome.results] == [0, 1] and len(_lines(tmp_path)) == 2


# --------------------------------------------------------------------------- another config's record


def test_attack_a_record_of_another_config_is_not_taken_on_resume(tmp_path: Path) -> None:
    """Before: an `ok` record made with other settings (here --max-steps 50, pasted in from another
    run) was accepted on resume as this run's result and never redone."""
    other, run = tmp_path / "other", tmp_path / "run"
    assert cli.invoke(app, [*RUN[:-1], "50", "--seeds", "0-1", "--out", str(other)]).exit_code == 0
    assert cli.invoke(app, [*RUN, "--seeds", "0", "--out", str(run)]).exit_code == 0
    pasted = next(r for r in _lines(other) if r["seed"] == 1)
    with (run / "results.jsonl").open("a") as fh:
        fh.write(records.dumps(pasted) + "\n")
    result = cli.invoke(app, [*RUN, "--seeds", "0-1", "--out", str(run), "--json"])
    assert result.exit_code == 0, result.output
    assert "made with another config" in result.output and "redone" in result.output
    latest = {r["seed"]: r for r in _lines(run)}
    assert latest[1]["config_hash"] == latest[0]["config_hash"] != pasted["config_hash"]
    assert latest[1]["config"]["max_steps"] == 3 and latest[1]["steps"] <= 3
    assert sum(r["seed"] == 0 for r in _lines(run)) == 1  # the good record was not redone


def test_a_record_without_a_config_hash_is_redone(tmp_path: Path) -> None:
    assert cli.invoke(app, [*RUN, "--seeds", "0", "--out", str(tmp_path)]).exit_code == 0
    bare = {**_lines(tmp_path)[0], "seed": 1, "config_hash": ""}
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write(records.dumps(bare) + "\n")
    result = cli.invoke(app, [*RUN, "--seeds", "0-1", "--out", str(tmp_path)])
    assert result.exit_code == 0 and "config_hash 'missing'" in " ".join(result.output.split()), result.output
    assert len(_lines(tmp_path)) == 3


# --------------------------------------------------------------------------- the judge never costs the episode


def _agent_server(server: ScriptedLLMServer) -> ScriptedLLMServer:
    server.responder = lambda _request: Scripted(body=chat_reply(WAIT))
    return server


@pytest.fixture
def judge_server() -> Any:
    server = ScriptedLLMServer().start()
    yield server
    server.stop()


def _judged_run(tmp_path: Path, agent: ScriptedLLMServer, judge: ScriptedLLMServer,
                episode_timeout: float | None) -> tuple[Any, list[dict[str, Any]]]:  # fmt: skip
    settings = LLMSettings(model="scripted-model", base_url=agent.base_url)
    judge_settings = LLMSettings(model="scripted-model", base_url=judge.base_url)
    jobs = make_jobs([JUDGED_TASK], [0], "react", 2, llm=settings, judge=judge_settings)
    outcome = run_bench(jobs, tmp_path, 1, total=1, config=run_config(2), episode_timeout=episode_timeout)
    (record,) = outcome.results
    log_path = tmp_path / "logs" / jobs[0].log_name
    log = [json.loads(line) for line in log_path.read_text().splitlines()] if log_path.exists() else []
    return record, log


def _kept(record: Any, log: list[dict[str, Any]]) -> None:
    """The agent's work survived the judge: status, usage, log with its end and judge entries."""
    assert record.status == "ok", (record.status, record.error)
    assert record.steps == 2 and record.usage is not None and record.usage.requests >= 2
    assert record.knowledge_status == "unjudged" and record.knowledge_score is None and record.knowledge_error
    kinds = [entry["type"] for entry in log]
    assert kinds[0] == "start" and kinds[-2:] == ["end", "judge"], kinds
    assert log[-1]["status"] == "unjudged"


JUDGE_FAULTS = {
    "500": Scripted(status=500, body=error_body("judge down")),
    "reset": Scripted(reset=True),
    "html": Scripted(body="<html>502 Bad Gateway</html>", content_type="text/html"),
    "not-a-verdict": Scripted(body=chat_reply("I would rather not say.")),
}


@pytest.mark.parametrize("fault", sorted(JUDGE_FAULTS))
def test_a_failing_judge_keeps_the_agents_usage_and_log(tmp_path: Path, scripted_llm: ScriptedLLMServer,
                                                        judge_server: ScriptedLLMServer, fault: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.setenv(ENV_REQUEST_TIMEOUT, "4")
    judge_server.responder = lambda _request: JUDGE_FAULTS[fault]
    record, log = _judged_run(tmp_path, _agent_server(scripted_llm), judge_server, None)
    _kept(record, log)
    assert judge_server.requests, "the judge was never asked"


def test_a_hanging_judge_cannot_cost_the_episode_its_record(tmp_path: Path, scripted_llm: ScriptedLLMServer,
                                                            judge_server: ScriptedLLMServer) -> None:  # fmt: skip
    """Before: a judge that hung past --episode-timeout got the worker killed: the finished
    episode was recorded `timeout`, with no usage and no log."""
    judge_server.responder = lambda _request: Scripted(body=chat_reply('{"evaluation": 1}'), hang=60.0)
    record, log = _judged_run(tmp_path, _agent_server(scripted_llm), judge_server, 10.0)
    _kept(record, log)
    assert "--episode-timeout" in (record.knowledge_error or "")
    assert record.seconds < 10.0


# --------------------------------------------------------------------------- the circuit breaker


BREAKER_STATUSES = ["llm_error", "llm_error", "agent_error", "llm_error", "llm_error", "ok"]


def _status_job(job: int) -> SimpleNamespace:
    return SimpleNamespace(status=BREAKER_STATUSES[job], error="injected")


def test_an_agent_error_episode_shows_the_endpoint_answers(tmp_path: Path) -> None:
    """An `agent_error` episode got replies (garbage ones), so it breaks a run of `llm_error`s.
    Before: it did not, and a garbage model's episodes redone on resume behind a flaky server
    tripped the breaker on every resume (the chaos benchmark never got past them)."""
    outcome = execute(range(len(BREAKER_STATUSES)), lambda j: j, _status_job, lambda j, s, m: None, {},  # type: ignore[arg-type,return-value]
                      pool=LocalPool(_status_job, 1), breaker=3)  # fmt: skip
    assert outcome.breaker_message is None
    assert [r.status for r in outcome.results] == BREAKER_STATUSES
