"""Ctrl-C or SIGTERM while a finished episode is being judged keeps the episode (the runner loses no
finished episode).

Before: the worker was still judging when the runner stopped, so the finished episode counted as
"in flight": dropped, and a resume played it again on the same instance (paid again; a sealed
instance replayed). A real `discoverylab run` in its own process group plays a ReAct agent against
our scripted server on 127.0.0.1 (the oracle's moves, so it solves the task), whose judge stalls;
the test signals the group as a terminal does once the judge's first request came in.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.cli import app
from llm_scripted_server import Scripted, ScriptedLLMServer
from rubric_judge import OracleReplay, judge_user_text, oracle_actions, rubric_judge
from stop_kit import stop_when

TASK, DIFFICULTY, SEED = "LostInTranslation", "easy", 0
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def _records(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_judging_keeps_the_finished_episode_unjudged(scripted_llm: ScriptedLLMServer, tmp_path: Path,
                                                                   sig: signal.Signals, code: int) -> None:
    actions, discovery = oracle_actions(TASK, DIFFICULTY, SEED)
    stall = Scripted(hang=60.0)  # the judge never answers until the server stops
    replay = OracleReplay(actions, discovery, judge=lambda _request: stall)
    scripted_llm.responder = replay
    out = tmp_path / "run"
    args = ["run", "--agent", "react", "--task", TASK, "-d", DIFFICULTY, "--seeds", str(SEED),
            "--max-steps", str(len(actions)), "--base-url", scripted_llm.base_url, "--model", "m", "--out", str(out)]
    returncode, text = stop_when(args, lambda: replay.judge_requests > 0, sig, tmp_path)
    assert returncode == code, text[-2000:]
    (rec,) = _records(out)
    assert (rec["status"], rec["success"], rec["steps"]) == ("ok", True, len(actions)), rec
    assert rec["knowledge_status"] == "unjudged" and rec["knowledge_score"] is None
    assert "discoverylab judge" in rec["knowledge_error"] and "--unjudged-only" in rec["knowledge_error"]
    assert rec["usage"]["requests"] >= len(actions)
    log = [json.loads(line) for line in (out / "logs" / f"{TASK}-{DIFFICULTY}-s{SEED}-react.jsonl").read_text().splitlines()]
    assert log[-1]["type"] == "end" and log[-1]["record"]["success"] is True
    assert f"Interrupted by {sig.name}" in text and "0 in flight dropped" in text, text[-2000:]

    # the resume plays nothing again (the agent's server is not asked) and says how to grade it
    agent_requests = len(scripted_llm.requests)
    scripted_llm.responder = rubric_judge
    again = CliRunner().invoke(app, args, env={"DISCOVERYLAB_LLM_BASE_URL": None})
    assert again.exit_code == 0, again.output
    assert len(scripted_llm.requests) == agent_requests and len(_records(out)) == 1
    assert "--unjudged-only" in again.output
    graded = CliRunner().invoke(app, ["judge", str(out), "--unjudged-only", "--base-url", scripted_llm.base_url,
                                      "--model", "m"])  # fmt: skip
    assert graded.exit_code == 0 and "1 graded" in graded.output, graded.output
    assert all(judge_user_text(r) is not None for r in scripted_llm.requests[agent_requests:])
