"""Smoke test of the chaos benchmark (benchmarks/chaos.py, issue 23): 30 LLM episodes against a
fault-injecting server of our own on 127.0.0.1, the runner killed three ways and resumed, the end
compared with a quiet run. The 500-episode figures are in docs/running.md."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench_loader import load_benchmark

# One worker runs the whole module, so the ~40 s smoke run (a module fixture) is made once, not per worker.
pytestmark = pytest.mark.xdist_group("chaos-smoke-run")


@pytest.fixture(scope="module")
def chaos() -> Any:
    return load_benchmark("chaos.py", "chaos_benchmark")


@pytest.fixture(scope="module")
def smoke_run(chaos: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("chaos")
    code = chaos.main(["--seeds", "0-2", "--kills", "3", "--kill-after", "3", "9", "--rate", "0.3",
                       "--request-timeout", "3", "--out", str(out)])  # fmt: skip
    summary = json.loads((out / "chaos_summary.json").read_text())
    assert code == (1 if summary["problems"] else 0)
    return out, summary


def test_chaos_ends_equal_to_a_quiet_run(smoke_run: tuple[Path, dict[str, Any]]) -> None:
    _, summary = smoke_run
    assert summary["problems"] == []
    assert summary["expected_episodes"] == 30
    assert summary["after_quiet_resume"]["equal_to_quiet"] == 30
    assert summary["after_chaos"]["episodes"] == 30
    statuses = summary["after_chaos"]["statuses"]
    assert set(statuses) <= {"ok", "agent_error", "llm_error", "timeout"}
    # the garbage model's task ends agent_error (or llm_error, when the server failed first)
    assert summary["quiet"]["statuses"]["agent_error"] == 3 == summary["after_quiet_resume"]["statuses"]["agent_error"]
    assert statuses.get("agent_error", 0) <= 3
    kills = [r["run"] for r in summary["rounds"] if "after" in r["run"]]
    assert [k.split()[1] for k in kills] == ["SIGKILL-runner", "SIGKILL-group", "SIGTERM-group"]
    faults = {k for k, n in summary["faults_injected"].items() if n and k != "none"}
    assert len(faults) >= 6, summary["faults_injected"]  # 30% of ~100 requests over 13 kinds


def _tampered(chaos: Any, out: Path, tmp: Path, change: Any) -> list[str]:
    copy = tmp / "chaos"
    shutil.copytree(out / "chaos", copy)
    rows = [json.loads(line) for line in (copy / "results.jsonl").read_text().splitlines()]
    rows = change(rows)
    (copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return list(chaos.check(out / "quiet", copy, 30, final=True)[1])


def _ok(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in rows if r["status"] == "ok")


@pytest.mark.parametrize("attack", ["lost", "duplicated", "changed", "false-llm-error", "false-agent-error"])
def test_attack_the_checker_catches_a_run_that_went_wrong(chaos: Any, smoke_run: tuple[Path, dict[str, Any]],
                                                          tmp_path: Path, attack: str) -> None:  # fmt: skip
    out, _ = smoke_run
    changes = {
        "lost": lambda rows: [r for r in rows if r is not _ok(rows)],
        "duplicated": lambda rows: [*rows, _ok(rows)],
        "changed": lambda rows: [*rows, {**_ok(rows), "procedure_score": 1.0 - _ok(rows)["procedure_score"]}],
        "false-llm-error": lambda rows: [*rows, {**_ok(rows), "status": "llm_error", "error": "nothing happened"}],
        "false-agent-error": lambda rows: [*rows, {**_ok(rows), "status": "agent_error", "error": "garbage"}],
    }
    assert _tampered(chaos, out, tmp_path, changes[attack]), f"the checker missed a {attack} episode"


def test_a_garbage_task_that_matched_no_episode_is_a_problem(chaos: Any, tmp_path: Path) -> None:
    """`--garbage-task DoorTest` (no task text holds it) once passed with no agent_error checked."""
    (tmp_path / "results.jsonl").write_text(json.dumps({"status": "ok"}) + "\n")
    assert chaos.garbage_problems(tmp_path, "DoorTest")
    (tmp_path / "results.jsonl").write_text(json.dumps({"status": "ok"}) + "\n" + json.dumps({"status": "agent_error"}) + "\n")
    assert chaos.garbage_problems(tmp_path, "Discovery Feed") == []
    assert chaos.garbage_problems(tmp_path, "") == []
