"""`discoverylab serve` and `discoverylab replay` (without video): what they print and serve."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner
from ui_kit import free_port, oracle_log

from discoverylab import serving
from discoverylab.cli import app


@pytest.fixture()
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stand in for the server's run (`serving.serve_until_signal`): record what would be served
    instead of blocking (None: stopped by no signal)."""
    seen: dict[str, Any] = {}
    monkeypatch.setattr(serving, "serve_until_signal", lambda app, host, port, **kw: seen.update(app=app, host=host, port=port, **kw))
    return seen


def test_serve_defaults_to_localhost_and_prints_the_url(tmp_path: Path, served: dict[str, Any]) -> None:
    result = CliRunner().invoke(app, ["serve", "--logs", str(tmp_path / "logs"), "--port", "9999"])
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:9999/" in result.output and "Warning" not in result.output
    assert served["host"] == "127.0.0.1" and served["port"] == 9999
    assert (tmp_path / "logs").is_dir()


def test_serve_with_a_file_as_the_logs_folder_says_so(tmp_path: Path, served: dict[str, Any]) -> None:
    """`--logs` naming a file was a FileExistsError traceback, exit 1."""
    (tmp_path / "afile").write_text("x")
    for logs in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        result = CliRunner().invoke(app, ["serve", "--logs", str(logs)])
        assert result.exit_code == 2 and "cannot use" in result.output and not served, result.output


def test_serve_on_another_host_warns(tmp_path: Path, served: dict[str, Any]) -> None:
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--logs", str(tmp_path)])
    assert result.exit_code == 0
    assert "Warning" in result.output and "no authentication" in result.output
    assert served["host"] == "0.0.0.0"


def test_serve_study_needs_the_evaluators_key(tmp_path: Path, served: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISCOVERYLAB_EVAL_KEY", raising=False)
    result = CliRunner().invoke(app, ["serve", "--study", "--logs", str(tmp_path)])
    assert result.exit_code == 2 and "--eval-key-file" in result.output and not served
    (tmp_path / "short").write_text("abc")
    result = CliRunner().invoke(app, ["serve", "--study", "--eval-key-file", str(tmp_path / "short"), "--logs", str(tmp_path)])
    assert result.exit_code == 2 and "too short" in result.output and not served
    (tmp_path / "key").write_text("0123456789abcdef0123456789abcdef\n")
    result = CliRunner().invoke(app, ["serve", "--eval-key-file", str(tmp_path / "key"), "--logs", str(tmp_path)])
    assert result.exit_code == 2 and "only for --study" in result.output and not served
    result = CliRunner().invoke(app, ["serve", "--study", "--eval-key-file", str(tmp_path / "key"), "--logs", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "study mode" in " ".join(result.output.split()) and served["app"].state.games.study
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", "fedcba9876543210fedcba9876543210")
    served.clear()
    result = CliRunner().invoke(app, ["serve", "--study", "--logs", str(tmp_path)])
    assert result.exit_code == 0 and served["app"].state.games.study_key == b"fedcba9876543210fedcba9876543210"


def test_replay_without_video_serves_the_log_folder(tmp_path: Path, served: dict[str, Any]) -> None:
    log = oracle_log(tmp_path, "DialogTest")
    result = CliRunner().invoke(app, ["replay", str(log), "--port", "9998"])
    assert result.exit_code == 0, result.output
    assert f"http://127.0.0.1:9998/replay?log={log.name}" in result.output.replace("\n", "")
    assert served["host"] == "127.0.0.1"

def test_replay_without_video_refuses_a_file_that_is_no_run_log(tmp_path: Path, served: dict[str, Any]) -> None:
    """`replay /etc/passwd` (no --gif) started a server whose page could not show it; now it is
    refused as the video path refuses it, and nothing is served."""
    (tmp_path / "notes.txt").write_text("root:x:0:0:root:/root:/bin/bash\n")
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "notes.txt"), "--port", "9998"])
    assert result.exit_code == 2 and "not JSON" in result.output and not served


def test_serve_runs_for_real(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "discoverylab.cli", "serve", "--port", str(port), "--logs", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/tasks", timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        assert response.status_code == 200 and any(t["task"] == "DialogTest" for t in response.json())
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/" in out


def test_serve_warns_when_the_log_limit_is_below_a_long_game(tmp_path: Path, served: dict[str, Any]) -> None:
    """docs/ui.md's own example, `--max-log-mb 5`, stopped games at about step 550 of 1,000 to
    1,500, and serve said nothing."""
    result = CliRunner().invoke(app, ["serve", "--logs", str(tmp_path), "--max-log-mb", "5"])
    assert result.exit_code == 0 and "Warning" in result.output and "--max-log-mb" in result.output
    quiet = CliRunner().invoke(app, ["serve", "--logs", str(tmp_path)])
    assert quiet.exit_code == 0 and "Warning" not in quiet.output
