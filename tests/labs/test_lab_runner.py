"""The Tiny Labs runner: records, transcripts, score files, resume, failures and retries, plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from discoverylab.bench import records
from discoverylab.labs import agents as lab_agents
from discoverylab.labs.jobs import LabJob, config_for, expand_protocols, make_jobs
from discoverylab.labs.protocol import Protocol, UnknownProtocolError, make_protocol, protocol_names
from discoverylab.labs.run_record import config_hash
from discoverylab.labs.runner import RunConfigMismatch, run_lab_jobs
from discoverylab.labs.summary import summarize

HIDDEN = "sequence/hidden-property"
DYNAMICS = "sequence/unknown-dynamics"
MACRO = "macro/causal-discovery"
SMALL_A: dict[str, Any] = {"rounds": 2, "n_predictions": 5}
SMALL_B: dict[str, Any] = {"rounds": 2, "n_heldout": 4, "max_steps": 8, "end_steps": 8, "length": 12}
SMALL_MACRO: dict[str, Any] = {
    "structure": {"n_households": 50, "n_firms": 5}, "budget": 2,
    "ground_truth": {"replicates": 2, "steps": 40, "short_window": [1, 10], "long_window": [21, 40]},
}


def _jobs(seeds: list[int], agents: list[str], config: dict[str, Any] = SMALL_A) -> list[LabJob]:
    return make_jobs([HIDDEN], seeds, agents, config)


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every line must be valid JSON (no torn or merged lines)."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_records_transcripts_and_score_files(tmp_path: Path) -> None:
    results = run_lab_jobs(_jobs([0], ["oracle", "random"]), tmp_path, plots=False, retry_delay=0)
    assert [(r.agent, r.seed) for r in results] == [("oracle", 0), ("random", 0)]
    assert all(r.status == "ok" and r.lab == "sequence" and r.protocol == HIDDEN for r in results)
    oracle = [r.score for r in results if r.agent == "oracle"]
    rand = [r.score for r in results if r.agent == "random"]
    assert min(oracle) == 1.0 and max(rand) < 0.5
    assert {r.config_hash for r in results} == {config_hash(HIDDEN, SMALL_A)}
    stored = _lines(tmp_path / "results.jsonl")
    assert len(stored) == 2 and {(s["agent"], s["seed"]) for s in stored} == {(r.agent, r.seed) for r in results}

    record = results[0]
    assert record.transcript == "transcripts/sequence-hidden-property-s0-oracle.jsonl"
    lines = _lines(tmp_path / record.transcript)
    assert lines[0]["type"] == "start" and lines[0]["seed"] == 0 and lines[0]["config"] == SMALL_A
    assert lines[-1]["type"] == "end" and lines[-1]["score"] == record.score
    messages = [line for line in lines if line["type"] == "message"]
    agent_msgs = [m for m in messages if m["role"] == "agent"]
    assert len(agent_msgs) == record.turns and messages[0]["role"] == "lab"
    assert all(m["seconds"] >= 0.0 for m in messages[1:])
    # The transcript holds the exact conversation: replaying the agent's messages gives the same grade.
    replay = make_protocol(HIDDEN, **SMALL_A)
    replay.reset(0)
    for message in agent_msgs:
        replay.step(message["text"])
    assert replay.done and replay.grade().score == record.score

    assert record.score_file is not None
    score = json.loads((tmp_path / record.score_file).read_text())
    assert score["score"] == record.score and score["parts"] == record.parts
    assert "details" in score and "ground_truth" in score

    rows = {(row["protocol"], row["agent"]): row for row in summarize(results)}
    assert set(rows) == {(HIDDEN, "oracle"), (HIDDEN, "random")}
    assert rows[(HIDDEN, "random")]["score"] == results[1].score and rows[(HIDDEN, "random")]["episodes"] == 1
    assert rows[(HIDDEN, "oracle")]["parts"]["prediction"] == 1.0


def test_resume_skips_finished_and_survives_a_torn_line(tmp_path: Path) -> None:
    run_lab_jobs(_jobs([0, 1], ["random"]), tmp_path, plots=False)
    results_path = tmp_path / "results.jsonl"
    before = results_path.read_text()
    (tmp_path / "transcripts" / "sequence-hidden-property-s0-random.jsonl").unlink()
    with results_path.open("a") as fh:  # a run killed while writing seed 2's record
        fh.write('{"protocol": "sequence/hidden-property", "seed": 2, "ag')
    seen: list[int] = []
    results = run_lab_jobs(_jobs([0, 1, 2], ["random"]), tmp_path, plots=False, on_done=lambda r: seen.append(r.seed))
    assert [r.seed for r in results] == [0, 1, 2] and sorted(seen) == [0, 1, 2]
    after = results_path.read_text()
    assert after.startswith(before)
    assert [line["seed"] for line in _lines(results_path)] == [0, 1, 2]
    # Seed 0 was not run again (its deleted transcript stays deleted); seed 2 was run.
    assert not (tmp_path / "transcripts" / "sequence-hidden-property-s0-random.jsonl").exists()
    assert (tmp_path / "transcripts" / "sequence-hidden-property-s2-random.jsonl").exists()
    # A third run has nothing left to do and leaves the file alone.
    run_lab_jobs(_jobs([0, 1, 2], ["random"]), tmp_path, plots=False)
    assert results_path.read_text() == after


def test_a_changed_config_is_refused_on_resume(tmp_path: Path) -> None:
    run_lab_jobs(_jobs([0], ["random"]), tmp_path, plots=False)
    with pytest.raises(RunConfigMismatch, match="another --out"):
        run_lab_jobs(_jobs([0], ["random"], {**SMALL_A, "n_predictions": 6}), tmp_path, plots=False)


def test_a_discoveryworld_run_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """`lab run --out` naming a DiscoveryWorld run (its run.json) appended lab records to its
    results, which `report` then counted as bad lines; it is refused before anything is written."""
    from discoverylab.bench.runner import make_jobs as bench_jobs
    from discoverylab.bench.runner import run_bench, run_config

    run_bench(bench_jobs([("DialogTest", "normal")], [0], "oracle", 3), tmp_path, 1, total=1, config=run_config(3))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    with pytest.raises(RunConfigMismatch, match="holds a DiscoveryWorld run"):
        run_lab_jobs(_jobs([0], ["random"]), tmp_path, plots=False)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


class _FailingAgent:
    """Raises `error` at the first message of its kind's first `failures` episodes, then plays randomly."""

    calls: dict[str, int] = {}

    def __init__(self, protocol: Protocol, kind: str, error: type[Exception], failures: int) -> None:
        self.inner = lab_agents.make_agent(HIDDEN, "random", protocol)
        self.kind, self.error, self.failures = kind, error, failures
        self.calls[kind] = self.calls.get(kind, 0) + 1

    def reset(self, seed: int) -> None:
        self.inner.reset(seed)

    def act(self, message: str) -> str:
        if self.calls[self.kind] <= self.failures:
            raise self.error("endpoint went away")
        return self.inner.act(message)


@pytest.fixture
def failing_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_FailingAgent, "calls", {})
    for kind, error, failures in (("flaky", ConnectionError, 2), ("down", ConnectionError, 99),
                                  ("broken", RuntimeError, 99)):
        def factory(protocol: Protocol, _k: str = kind, _e: type[Exception] = error, _f: int = failures) -> Any:
            return _FailingAgent(protocol, _k, _e, _f)

        monkeypatch.setitem(lab_agents._AGENTS, ("sequence", kind), factory)


@pytest.mark.usefixtures("failing_agents")
def test_failures_become_error_records_and_transient_ones_are_retried(tmp_path: Path) -> None:
    jobs = [LabJob(HIDDEN, 0, kind, SMALL_A) for kind in ("flaky", "broken", "down")]
    flaky, broken, down = run_lab_jobs(jobs, tmp_path, retries=2, retry_delay=0.0, plots=False)
    assert flaky.status == "ok" and flaky.attempts == 3
    assert broken.status == "error" and broken.attempts == 1 and "RuntimeError" in (broken.error or "")
    assert down.status == "error" and down.attempts == 3 and "ConnectionError" in (down.error or "")
    assert broken.score == 0.0
    end = _lines(tmp_path / "transcripts" / "sequence-hidden-property-s0-broken.jsonl")[-1]
    assert end["type"] == "end" and end["status"] == "error" and "RuntimeError" in end["traceback"]
    # Failed episodes are not "finished": a resumed run tries them again.
    redo = run_lab_jobs(jobs, tmp_path, retries=0, retry_delay=0.0, plots=False)
    assert [r.attempts for r in redo] == [3, 1, 1]
    assert len(_lines(tmp_path / "results.jsonl")) == 5


def test_parallel_workers_give_the_same_records_as_one(tmp_path: Path) -> None:
    jobs = _jobs([0, 1], ["heuristic"])
    serial = run_lab_jobs(jobs, tmp_path / "serial", workers=1, plots=False)
    parallel = run_lab_jobs(jobs, tmp_path / "parallel", workers=2, plots=False)

    def strip(r: Any) -> dict[str, Any]:
        return r.model_dump(exclude={"seconds"})

    assert [strip(r) for r in serial] == [strip(r) for r in parallel]
    for r in serial:
        a = [(m["role"], m["text"]) for m in _lines(tmp_path / "serial" / r.transcript) if m["type"] == "message"]
        b = [(m["role"], m["text"]) for m in _lines(tmp_path / "parallel" / r.transcript) if m["type"] == "message"]
        assert a == b


def test_protocol_selection_and_configs() -> None:
    assert expand_protocols("all") == protocol_names()
    assert expand_protocols("sequence") == [HIDDEN, "sequence/population-dynamics", DYNAMICS]
    assert expand_protocols(MACRO) == [MACRO]
    for bad in ("nope", "sequence/nope", "../x"):
        with pytest.raises(UnknownProtocolError):
            expand_protocols(bad)
    keyed = {HIDDEN: SMALL_A, DYNAMICS: SMALL_B}
    assert config_for(HIDDEN, keyed) == SMALL_A and config_for(MACRO, keyed) == {}
    assert config_for(HIDDEN, SMALL_A) == SMALL_A
    with pytest.raises(UnknownProtocolError):
        config_for(HIDDEN, {"nope/x": {}})
    with pytest.raises(lab_agents.UnknownAgentError, match="valid agents"):
        make_jobs([HIDDEN], [0], ["genius"])
    with pytest.raises(ValueError, match="bad config"):
        make_jobs([HIDDEN], [0], ["random"], {"rounds": 0})


def _is_png(path: Path) -> bool:
    return path.stat().st_size > 2000 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plots_are_written_next_to_the_run(tmp_path: Path) -> None:
    jobs = make_jobs([DYNAMICS, MACRO], [0], ["heuristic"], {DYNAMICS: SMALL_B, MACRO: SMALL_MACRO})
    results = run_lab_jobs(jobs, tmp_path, plots=True)
    assert all(r.status == "ok" for r in results), [r.error for r in results]
    dynamics, macro = results
    assert dynamics.plots == ["plots/sequence-unknown-dynamics-s0-heuristic-trajectories.png"]
    assert sorted(macro.plots) == ["plots/macro-causal-discovery-causal-graph.png",
                                   "plots/macro-causal-discovery-s0-heuristic-indicators.png"]
    for rel in [*dynamics.plots, *macro.plots, "plots/scores.png"]:
        assert _is_png(tmp_path / rel), rel


def test_trajectories_are_read_back_from_the_transcript() -> None:
    from discoverylab.labs.plots import dynamics_trajectories

    protocol = make_protocol(DYNAMICS, **SMALL_B)
    protocol.reset(0)
    start = "ACGT" * 3
    protocol.step(json.dumps({"type": "experiment", "sequence": start, "measurables": ["gc_content"], "steps": 3}))
    protocol.step("not json at all")
    paths = dynamics_trajectories(protocol.transcript)
    assert len(paths) == 1 and paths[0][0] == start and len(paths[0]) == 4
    assert records.dumps({"p": paths})  # plain strings, JSON-ready


def test_llm_agent_runs_through_the_runner(tmp_path: Path, scripted_llm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `llm` kind against a real HTTP endpoint that answers off-format: the episode still ends,
    as `agent_error` (no reply could be acted on: issue 23.2), and the transcript keeps the model's
    raw turns with token counts."""
    from discoverylab.llm.client import ENV_BASE_URL, ENV_MODEL

    monkeypatch.setenv(ENV_BASE_URL, scripted_llm.base_url)
    monkeypatch.setenv(ENV_MODEL, "scripted-model")
    scripted_llm.push_text(*['{"nonsense": true}'] * 60)
    (record,) = run_lab_jobs(make_jobs([HIDDEN], [0], ["llm"], SMALL_A), tmp_path, plots=False, retries=0)
    assert record.status == "agent_error", record.error
    assert record.score == 0.0 and record.turns >= 1
    lines = _lines(tmp_path / (record.transcript or ""))
    turns = [line for line in lines if line["type"] == "agent_turns"]
    assert len(turns) == 1 and len(turns[0]["turns"]) == record.turns
    assert all(t["raw_text"] for t in turns[0]["turns"]) and scripted_llm.requests


def test_parallel_llm_workers_share_one_endpoint(tmp_path: Path, scripted_llm: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """With the embedded model the parent serves and spawned workers get its address: simulated here
    by handing the scripted endpoint to the workers (the parent's environment does not name it)."""
    from discoverylab.labs import runner
    from discoverylab.llm.client import ENV_BASE_URL, ENV_MODEL

    monkeypatch.delenv(ENV_BASE_URL, raising=False)
    env = {ENV_BASE_URL: scripted_llm.base_url, ENV_MODEL: "scripted-model"}
    monkeypatch.setattr(runner, "_shared_llm_environment", lambda jobs, workers: env)
    scripted_llm.push_text(*['{"reasoning": "r", "action": "SAMPLE", "value": "0.5"}'] * 120)  # a usable action
    results = run_lab_jobs(make_jobs([HIDDEN], [0, 1], ["llm"], SMALL_A), tmp_path, workers=2, plots=False,
                           retries=0)
    assert [r.status for r in results] == ["ok", "ok"], [r.error for r in results]
    assert len(scripted_llm.requests) >= 2


def test_missing_embedded_model_is_not_retried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from discoverylab.llm.errors import EmbeddedServerError

    monkeypatch.setattr(_FailingAgent, "calls", {})
    monkeypatch.setitem(lab_agents._AGENTS, ("sequence", "nomodel"),
                        lambda protocol: _FailingAgent(protocol, "nomodel", EmbeddedServerError, 99))
    [record] = run_lab_jobs([LabJob(HIDDEN, 0, "nomodel", SMALL_A)], tmp_path, retries=3, retry_delay=0.0,
                            plots=False)
    assert record.status == "llm_error" and record.attempts == 1  # a server failure, not retried


def test_summary_reports_pass_at_3_and_a_bootstrap_interval() -> None:
    from discoverylab.labs.run_record import LabRecord
    from discoverylab.labs.summary import pass_at_k, summarize

    records = [LabRecord(lab="sequence", protocol=HIDDEN, seed=s, agent="x", score=v,
                         labels={"label": "pass" if v > 0.9 else "fail"})
               for s, v in enumerate([1.0, 0.2, 0.1, 0.3, 0.0])]
    [row] = summarize(records)
    assert row["pass_at_3"] == pytest.approx(pass_at_k(5, 1, 3)) == pytest.approx(0.6)
    assert row["ci_low"] <= row["score"] <= row["ci_high"] and row["ci_high"] > row["ci_low"]
    assert pass_at_k(5, 0) == 0.0 and pass_at_k(2, 2) == 1.0
