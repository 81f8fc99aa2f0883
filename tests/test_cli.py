"""The `discoverylab` command, run as a user would (typer's runner, real files)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from discoverylab.bench import records
from discoverylab.bench.runner import Job, parse_seeds, run_jobs
from discoverylab.cli import app

runner = CliRunner()


def test_tasks_lists_every_task() -> None:
    import discoverylab

    result = runner.invoke(app, ["tasks"])
    assert result.exit_code == 0
    for task in discoverylab.tasks():
        assert task in result.output


def test_tasks_of_an_unknown_suite_is_an_error_and_python_m_runs_the_command() -> None:
    """`discoverylab.tasks("Unit")` returned {} (read as "no tasks"); `python -m discoverylab`
    said "No module named discoverylab.__main__" though users try it first."""
    import subprocess
    import sys

    import pytest

    import discoverylab

    with pytest.raises(ValueError, match="Valid suites: discovery, tutorial, unit"):
        discoverylab.tasks("Unit")
    assert set(discoverylab.tasks("unit")) < set(discoverylab.tasks())
    done = subprocess.run([sys.executable, "-m", "discoverylab", "tasks"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "PickAndPlaceTest" in done.stdout, done.stderr


def test_bench_json_records(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bench", "--agent", "oracle", "--suite", "unit", "--seeds", "0-1", "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    recs = json.loads(result.stdout[result.stdout.index("["):])
    assert recs and all(r["agent"] == "oracle" and r["seed"] in (0, 1) for r in recs)
    for key in ("task", "difficulty", "seed", "agent", "status", "steps", "completed", "success", "procedure_score", "scorecard"):
        assert key in recs[0]
    assert all(0.0 <= r["procedure_score"] <= 1.0 for r in recs)


def test_bench_task_option_keeps_one_task_at_every_difficulty() -> None:
    result = runner.invoke(app, ["bench", "--task", "Space Sick", "--difficulty", "easy", "--seeds", "0", "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    recs = json.loads(result.stdout[result.stdout.index("["):])
    assert [(r["task"], r["difficulty"]) for r in recs] == [("SpaceSick", "easy")] and recs[0]["success"]
    bad = runner.invoke(app, ["bench", "--task", "NoSuchTask"])
    assert bad.exit_code != 0 and "Unknown task" in bad.output


def test_run_writes_logs_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", "--agent", "random", "--task", "PickAndPlaceTest", "--seeds", "0-2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    recs = list(records.read_jsonl(out / "results.jsonl"))
    assert [r["seed"] for r in recs] == [0, 1, 2]
    log = list(records.read_jsonl(out / "logs" / "PickAndPlaceTest-normal-s1-random.jsonl"))
    assert log[0]["type"] == "start" and log[-1]["type"] == "end"
    assert sum(1 for e in log if e["type"] == "step") == recs[1]["steps"]
    # Resume: nothing is redone, nothing lost; new seeds are added.
    before = (out / "results.jsonl").read_text()
    result = runner.invoke(app, ["run", "--agent", "random", "--task", "PickAndPlaceTest", "--seeds", "0-3", "--out", str(out)])
    assert result.exit_code == 0
    after = (out / "results.jsonl").read_text()
    assert after.startswith(before) and len(after.splitlines()) == 4


def test_resume_after_torn_write(tmp_path: Path) -> None:
    """A kill mid-write leaves a torn last line: it is ignored and that episode is redone."""
    jobs = [Job("PickAndPlaceTest", "normal", s, "oracle") for s in range(3)]
    run_jobs(jobs[:2], tmp_path)
    with (tmp_path / "results.jsonl").open("a") as fh:
        fh.write('{"task": "PickAndPlaceTest", "seed": 2, "agen')
    results = run_jobs(jobs, tmp_path)
    assert [r.seed for r in results] == [0, 1, 2]
    assert all(r.success for r in results)
    on_disk = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [r["seed"] for r in on_disk] == [0, 1, 2]  # every line parses; the torn one is gone
    assert [r.seed for r in run_jobs(jobs, tmp_path)] == [0, 1, 2]  # and a further resume redoes nothing
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 3


def test_bad_names_give_clear_errors() -> None:
    result = runner.invoke(app, ["run", "--task", "Nope"])
    assert result.exit_code == 2 and "Valid tasks" in result.output
    result = runner.invoke(app, ["bench", "--suite", "nope"])
    assert result.exit_code == 2 and "Valid suites" in result.output
    result = runner.invoke(app, ["bench", "--agent", "genius"])
    assert result.exit_code == 2 and "Valid agents" in result.output


def test_parse_seeds() -> None:
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("1,3, 5") == [1, 3, 5]
    assert parse_seeds("7") == [7]


def test_play_in_terminal(tmp_path: Path) -> None:
    from discoverylab.cli.textui import parse_command

    assert parse_command("use 12 on 34") == {"action": "USE", "arg1": 12, "arg2": 34}
    assert parse_command("n") == {"action": "MOVE_DIRECTION", "arg1": "north"}
    assert parse_command("take 5") == {"action": "PICKUP", "arg1": 5}
    assert parse_command("2") == {"chosen_dialog_option_int": 2}
    result = runner.invoke(app, ["play", "PickAndPlaceTest", "--seed", "1", "--logs", str(tmp_path)],
                           input="help\nmove north\nfly\nwait\nquit\n")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Commands:" in result.output and "Scorecard" in result.output
    assert "I waited." in result.output


def test_embedded_model_runs_one_worker_in_run_and_bench(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One embedded model per worker would fight over the same cores: `run` and `bench` with an
    LLM agent and no base URL use one worker and say so (the episodes themselves are not run)."""
    import discoverylab.cli.main as cli_main
    from discoverylab.bench.runs import Outcome

    monkeypatch.delenv("DISCOVERYLAB_LLM_BASE_URL", raising=False)
    seen: list[int] = []

    def fake_run_bench(jobs, out, workers, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(workers)
        return Outcome()

    monkeypatch.setattr(cli_main, "run_bench", fake_run_bench)
    for args in (["run", "--agent", "react", "--workers", "2", "--out", str(tmp_path / "a")],
                 ["bench", "--agent", "react", "--suite", "unit", "--workers", "2", "--out", str(tmp_path / "b")],
                 ["bench", "--agent", "react", "--suite", "unit", "--workers", "2", "--base-url", "http://127.0.0.1:9/v1",
                  "--out", str(tmp_path / "c")],
                 ["bench", "--agent", "oracle", "--suite", "unit", "--workers", "2", "--out", str(tmp_path / "d")]):  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert seen == [1, 1, 2, 2]
    assert "embedded model serves one episode at a time" in runner.invoke(app, ["run", "--agent", "react", "--workers", "3", "--out", str(tmp_path / "e")]).output


def test_a_difficulty_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    """Before: `bench --difficulty hard` said "No tasks in suite 'all' at difficulty 'hard'" (as if
    the suite lacked it), `bench --task Tutorial -d challenge` blamed the suite too, and `--task
    ReactorLab --suite unit` said "No tasks in suite 'unit' at difficulty None"."""
    result = runner.invoke(app, ["bench", "--difficulty", "hard", "--out", str(tmp_path / "a")])
    assert result.exit_code == 2 and "Unknown difficulty 'hard'" in result.output, result.output
    assert "Valid difficulties: easy, normal, challenge" in result.output
    result = runner.invoke(app, ["bench", "--task", "Tutorial", "-d", "challenge", "--out", str(tmp_path / "b")])
    assert result.exit_code == 2 and "Unknown difficulty 'challenge' for task Tutorial" in result.output, result.output
    result = runner.invoke(app, ["bench", "--task", "ReactorLab", "--suite", "unit", "--out", str(tmp_path / "c")])
    assert result.exit_code == 2 and "Task ReactorLab is in suite 'discovery', not 'unit'" in result.output, result.output
    assert not any((tmp_path / name).exists() for name in "abc")


def test_a_folder_in_use_is_refused_before_the_progress_bar(tmp_path: Path) -> None:
    """Before: `bench --out X` while another runner held X drew its progress bar at 0/N first, as if
    it had started, then said that the folder is in use."""
    from discoverylab.bench.rundir import RunLock

    with RunLock(tmp_path):
        result = runner.invoke(app, ["bench", "--agent", "random", "--suite", "unit", "--seeds", "0", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "another runner" in result.output, result.output
    assert "random agent" not in result.output and "0/10" not in result.output, result.output


def test_a_resume_with_other_settings_is_refused_before_the_progress_bar(tmp_path: Path) -> None:
    """Before: `bench --out X --max-steps 7` on X made with --max-steps 5 drew a 0/N bar, then refused."""
    argv = ["bench", "--agent", "random", "--task", "DialogTest", "--seeds", "0", "--out", str(tmp_path)]
    assert runner.invoke(app, [*argv, "--max-steps", "5"]).exit_code == 0
    result = runner.invoke(app, [*argv, "--max-steps", "7"])
    assert result.exit_code == 2 and "holds a run with config" in result.output, result.output
    assert "random agent" not in result.output, result.output
