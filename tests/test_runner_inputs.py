"""`bench`, `run` and `lab run` under bad input, a busy or broken run directory and failed episodes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.bench import records
from discoverylab.bench import runner as bench_runner
from discoverylab.bench.rundir import RunLock
from discoverylab.cli import app

cli = CliRunner()
RUN = ["run", "--agent", "oracle", "--task", "PickAndPlaceTest"]


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- 4: two runners


def test_a_second_runner_on_the_same_out_is_refused(tmp_path: Path) -> None:
    """Before: both ran, 320 lines for 160 episodes and false `error` records."""
    with RunLock(tmp_path):  # the first runner holds the directory
        result = cli.invoke(app, [*RUN, "--seeds", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert f"another runner (pid {os.getpid()})" in result.output
    assert not (tmp_path / "results.jsonl").exists()
    result = cli.invoke(app, [*RUN, "--seeds", "0", "--out", str(tmp_path)])  # free again
    assert result.exit_code == 0, result.output
    assert len(_lines(tmp_path)) == 1


def test_lab_run_is_locked_too(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        result = cli.invoke(app, ["lab", "run", "sequence/hidden-property", "--out", str(tmp_path), "--no-plots"])
    assert result.exit_code == 2 and "another runner" in result.output


# --------------------------------------------------------------------------- 7: exit code


def _flaky_episode(real: Any) -> Any:
    def run_episode(task: str, difficulty: str, seed: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(seed, "seed", seed) == 1:  # the runner passes the Instance
            raise RuntimeError("simulated crash")
        return real(task, difficulty, seed, *args, **kwargs)

    return run_episode


def test_exit_code_is_nonzero_when_an_episode_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: exit code 0 even when every episode failed."""
    monkeypatch.setattr(bench_runner, "run_episode", _flaky_episode(bench_runner.run_episode))  # forked workers inherit it
    result = cli.invoke(app, [*RUN, "--seeds", "0-2", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "3 episodes: 2 ok, 1 error" in result.output
    assert "simulated crash" in result.output


def test_lab_run_exit_code_is_nonzero_when_an_episode_failed(tmp_path: Path) -> None:
    result = cli.invoke(app, ["lab", "run", "sequence/hidden-property", "--seeds", "0", "--no-plots",
                              "--config", '{"rounds": 0}', "--out", str(tmp_path)])
    assert result.exit_code in (1, 2), result.output  # a bad config is refused up front (2) or fails (1)


# --------------------------------------------------------------------------- 8: bad --out


def test_out_that_is_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    """Before: a traceback only after all the work ran, and nothing recorded."""
    target = tmp_path / "taken"
    target.write_text("not a directory")
    result = cli.invoke(app, ["bench", "--suite", "unit", "--seeds", "0", "--out", str(target)])
    assert result.exit_code == 2 and "is a file" in result.output and "Traceback" not in result.output
    result = cli.invoke(app, ["lab", "run", "sequence/hidden-property", "--out", str(target)])
    assert result.exit_code == 2 and "is a file" in result.output


def test_out_that_cannot_be_created_is_refused(tmp_path: Path) -> None:
    result = cli.invoke(app, [*RUN, "--out", "/proc/discoverylab-cannot-exist/run"])
    assert result.exit_code == 2 and "cannot create the run directory" in result.output


def test_results_file_that_cannot_be_appended_is_refused(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").mkdir()
    result = cli.invoke(app, [*RUN, "--out", str(tmp_path)])
    assert result.exit_code == 2 and "results.jsonl is not a file" in result.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_out_is_refused(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        result = cli.invoke(app, [*RUN, "--out", str(tmp_path)])
    finally:
        tmp_path.chmod(0o700)
    assert result.exit_code == 2 and "cannot write" in result.output


# --------------------------------------------------------------------------- 9: corrupted results


def test_corrupted_results_are_skipped_reported_and_redone(tmp_path: Path) -> None:
    """Before: a non-object line, an `ok` line missing fields or invalid UTF-8 stopped resume with a traceback."""
    assert cli.invoke(app, [*RUN, "--seeds", "0-1", "--out", str(tmp_path)]).exit_code == 0
    good = (tmp_path / "results.jsonl").read_bytes()
    failed = {**_lines(tmp_path)[0], "seed": 3, "status": "error", "error": "boom", "success": False}
    with (tmp_path / "results.jsonl").open("ab") as fh:
        fh.write(b"[1, 2, 3]\n")
        fh.write(b'{"status": "ok", "task": "PickAndPlaceTest", "seed": 2}\n')
        fh.write(b'\xff\xfe{"status": "ok"}\n')
        fh.write(records.dumps(failed).encode() + b"\n")
    result = cli.invoke(app, [*RUN, "--seeds", "0-3", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    assert "skipped 3 bad lines" in result.output and "line 3: not a JSON object" in result.output
    assert "invalid UTF-8" in result.output
    assert (tmp_path / "results.jsonl").read_bytes().startswith(good)  # the good lines are kept
    shown = json.loads(result.stdout[result.stdout.index("["):result.stdout.rindex("]") + 1])
    assert [(r["seed"], r["status"]) for r in shown] == [(0, "ok"), (1, "ok"), (2, "ok"), (3, "ok")]
    seeds = [r.get("seed") for r in records.read_jsonl(tmp_path / "results.jsonl") if r.get("status") == "ok"
             and "procedure_score" in r]  # fmt: skip
    assert sorted(seeds) == [0, 1, 2, 3]  # 0 and 1 not redone; 2 and 3 redone once


# --------------------------------------------------------------------------- 10: input checks


@pytest.mark.parametrize(("args", "message"), [
    (["--seeds", "-3"], "Bad seeds"),
    (["--seeds", "abc"], "seeds are whole numbers"),
    (["--seeds", "5-2"], "end before start"),
    (["--workers", "0"], "--workers"),
    (["--max-steps", "0"], "--max-steps"),
    (["--episode-timeout", "0"], "--episode-timeout"),
    (["--backend", "spark"], "Valid backends"),
])  # fmt: skip
def test_bad_bench_input_is_refused_clearly(args: list[str], message: str) -> None:
    result = cli.invoke(app, ["bench", "--suite", "unit", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "invalid literal" not in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(("env", "args", "message"), [
    ({"DISCOVERYLAB_LLM_REQUEST_TIMEOUT": "abc"}, [], "$DISCOVERYLAB_LLM_REQUEST_TIMEOUT must be a number"),
    ({"DISCOVERYLAB_LLM_REQUEST_TIMEOUT": "nan"}, [], "$DISCOVERYLAB_LLM_REQUEST_TIMEOUT must be > 0"),
    ({"DISCOVERYLAB_LLM_MAX_REPLY_BYTES": "8MB"}, [], "$DISCOVERYLAB_LLM_MAX_REPLY_BYTES must be a number"),
    ({"DISCOVERYLAB_LLM_PRICE": "cheap"}, [], "$DISCOVERYLAB_LLM_PRICE must be"),
    ({}, ["--temperature", "nan"], "--temperature must be a number >= 0"),
    ({}, ["--temperature", "-1"], "--temperature must be a number >= 0"),
    ({}, ["--max-cost", "-5"], "--max-cost must be a number of USD >= 0"),
])  # fmt: skip
def test_bad_llm_settings_are_refused_before_any_episode(tmp_path: Path, scripted_llm: Any,
                                                        monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                        args: list[str], message: str) -> None:
    """Before: each worker read the bad value, so every episode ended `error` with the same
    ValueError (or, for a price, the cost was silently unknown) and the run exited 1."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = cli.invoke(app, ["bench", "--agent", "react", "--task", "DialogTest", "--seeds", "0-1",
                              "--max-steps", "2", "--no-judge", "--model", "m", "--base-url", scripted_llm.base_url,
                              *args, "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output, result.output
    assert not (tmp_path / "results.jsonl").exists() and not scripted_llm.requests


@pytest.mark.parametrize(("env", "args", "message"), [
    ({}, ["--base-url", "127.0.0.1:8080/v1"], "--base-url '127.0.0.1:8080/v1' is not an http://"),
    ({}, ["--judge-base-url", "localhost:8000/v1"], "--judge-base-url 'localhost:8000/v1' is not an http://"),
    ({"DISCOVERYLAB_LLM_BASE_URL": "127.0.0.1:8080/v1"}, [], "$DISCOVERYLAB_LLM_BASE_URL '127.0.0.1:8080/v1' is not"),
])  # fmt: skip
def test_an_endpoint_without_a_scheme_is_refused_before_any_episode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    env: dict[str, str], args: list[str],
                                                                    message: str) -> None:
    """Before: every episode tried the URL and ended `llm_error` (UnsupportedProtocol: Request URL is
    missing an 'http://' or 'https://' protocol) until the circuit breaker stopped the run, exit 1."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = cli.invoke(app, ["bench", "--agent", "react", "--task", "DialogTest", "--seeds", "0-1", "--max-steps", "1",
                              "--model", "m", *args, "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "results.jsonl").exists()
    (tmp_path / "results.jsonl").write_text("")
    judged = cli.invoke(app, ["judge", str(tmp_path), "--base-url", "x/v1"])
    assert judged.exit_code == 2 and "--base-url 'x/v1' is not an http://" in judged.output, judged.output


def test_a_request_timeout_option_replaces_a_bad_variable(tmp_path: Path, scripted_llm: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCOVERYLAB_LLM_REQUEST_TIMEOUT", "abc")
    result = cli.invoke(app, ["bench", "--agent", "react", "--task", "DialogTest", "--seeds", "0", "--max-steps", "1",
                              "--no-judge", "--model", "m", "--base-url", scripted_llm.base_url,
                              "--request-timeout", "5", "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code != 2, result.output
    assert [r["status"] for r in _lines(tmp_path)] != ["error"]


def test_workers_are_capped_at_the_job_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real = bench_runner.LocalPool

    def recording_pool(run_one: Any, workers: int, **kwargs: Any) -> Any:
        sizes.append(workers)
        return real(run_one, workers, **kwargs)

    monkeypatch.setattr(bench_runner, "LocalPool", recording_pool)
    result = cli.invoke(app, [*RUN, "--seeds", "0-1", "--workers", "300", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sizes == [2]


# --------------------------------------------------------------------------- 11: config changes


def test_resume_with_another_config_is_refused(tmp_path: Path) -> None:
    """Before: results made with --max-steps 5 were silently reused by a run without it."""
    assert cli.invoke(app, [*RUN, "--seeds", "0", "--max-steps", "5", "--out", str(tmp_path)]).exit_code in (0, 1)
    before = (tmp_path / "results.jsonl").read_text()
    assert json.loads((tmp_path / "run.json").read_text())["config"]["max_steps"] == 5
    assert _lines(tmp_path)[0]["config"]["max_steps"] == 5
    result = cli.invoke(app, [*RUN, "--seeds", "0-1", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "another --out" in result.output and '"max_steps": 5' in result.output
    assert (tmp_path / "results.jsonl").read_text() == before
    again = cli.invoke(app, [*RUN, "--seeds", "0-1", "--max-steps", "5", "--out", str(tmp_path)])
    assert again.exit_code in (0, 1) and len(_lines(tmp_path)) == 2


def test_a_resume_under_another_endpoint_from_the_environment_is_refused(tmp_path: Path, scripted_llm: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The endpoint and model taken from $DISCOVERYLAB_LLM_BASE_URL / _MODEL were stored as null:
    a resume without them played the rest of the run with the embedded model, mixing two models
    in one run. They are stored when used, and a resume under other ones is refused."""
    monkeypatch.setenv("DISCOVERYLAB_LLM_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("DISCOVERYLAB_LLM_MODEL", "scripted-model")
    command = ["bench", "--agent", "react", "--task", "DialogTest", "--max-steps", "1", "--no-judge", "--out", str(tmp_path)]
    assert cli.invoke(app, [*command, "--seeds", "0"]).exit_code in (0, 1)
    stored = json.loads((tmp_path / "run.json").read_text())["config"]
    assert stored["endpoint_from_env"] == {"llm": {"base_url": scripted_llm.base_url, "model": "scripted-model"}}
    before = (tmp_path / "results.jsonl").read_text()
    monkeypatch.delenv("DISCOVERYLAB_LLM_BASE_URL")
    monkeypatch.delenv("DISCOVERYLAB_LLM_MODEL")
    result = cli.invoke(app, [*command, "--seeds", "0-1"])
    assert result.exit_code == 2 and "another --out" in result.output
    assert (tmp_path / "results.jsonl").read_text() == before
    explicit = cli.invoke(app, [*command, "--seeds", "0-1", "--base-url", scripted_llm.base_url, "--model", "scripted-model"])
    assert explicit.exit_code == 2  # the same endpoint given as options is another config: no silent mix either


# --------------------------------------------------------------------------- 12: usage in records


def test_bench_refuses_a_tiny_labs_run_directory(tmp_path: Path) -> None:
    """Before: the lab records were all skipped as "bad lines ... those episodes are redone", and
    bench wrote its DiscoveryWorld records and its run.json into the lab run's results.jsonl."""
    result = cli.invoke(app, ["lab", "run", "sequence/hidden-property", "--agent", "random", "--seeds", "0",
                              "--no-plots", "--out", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    before = (tmp_path / "results.jsonl").read_bytes()
    result = cli.invoke(app, [*RUN, "--seeds", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "holds results but no run.json" in result.output and "redone" not in result.output
    assert (tmp_path / "results.jsonl").read_bytes() == before and not (tmp_path / "run.json").exists()


def test_records_carry_wall_time_and_exact_config(tmp_path: Path) -> None:
    assert cli.invoke(app, [*RUN, "--seeds", "0", "--max-steps", "50", "--out", str(tmp_path)]).exit_code in (0, 1)
    (rec,) = _lines(tmp_path)
    assert rec["seconds"] > 0 and rec["config"] == {"runner": "discoveryworld", "max_steps": 50}
    assert rec["config_hash"] and rec["usage"] is None  # the oracle calls no LLM
