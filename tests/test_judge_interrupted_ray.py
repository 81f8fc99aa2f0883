"""`bench --backend ray`: Ctrl-C while a finished episode is being judged keeps the episode, as the
local workers do (tests/test_judge_interrupted.py).

Before: a Ray task had no way to hand the runner its played record, so the episode counted as in
flight: dropped ("1 in flight dropped", nothing recorded) and played again on resume. A real
`discoverylab bench --backend ray` (its own local Ray cluster) in its own process group plays a
ReAct agent against our scripted server (the oracle's moves), whose judge stalls; the test presses
Ctrl-C for the group once the judge's first request came in. Ray starts in 10-30 s.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from discoverylab.cli import app
from llm_scripted_server import Scripted, ScriptedLLMServer
from rubric_judge import OracleReplay, oracle_actions, rubric_judge
from stop_kit import stop_when
from test_judge_interrupted import DIFFICULTY, SEED, TASK, _records

pytest.importorskip("ray", reason="the ray backend is optional: pip install 'discoverylab[ray]'")
pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals"),
              pytest.mark.xdist_group("ray")]  # fmt: skip


def test_ctrl_c_while_judging_on_ray_keeps_the_finished_episode_unjudged(scripted_llm: ScriptedLLMServer,
                                                                          tmp_path: Path) -> None:
    actions, discovery = oracle_actions(TASK, DIFFICULTY, SEED)
    stall = Scripted(hang=120.0)  # the judge never answers until the server stops
    replay = OracleReplay(actions, discovery, judge=lambda _request: stall)
    scripted_llm.responder = replay
    out = tmp_path / "run"
    args = ["bench", "--backend", "ray", "--agent", "react", "--task", TASK, "-d", DIFFICULTY, "--seeds", str(SEED),
            "--max-steps", str(len(actions)), "--base-url", scripted_llm.base_url, "--model", "m", "--out", str(out)]
    returncode, err = stop_when(args, lambda: replay.judge_requests > 0, signal.SIGINT, tmp_path, request_timeout=180,
                                wait_s=240, settle_s=0.5, stop_s=60)  # Ray starts in 10-30 s
    text = " ".join(err.split())
    assert returncode == 130, text[-2000:]
    assert "Interrupted by SIGINT" in text and "0 in flight dropped" in text, text[-2000:]
    (rec,) = _records(out)
    assert (rec["status"], rec["success"], rec["steps"]) == ("ok", True, len(actions)), rec
    assert rec["knowledge_status"] == "unjudged" and "--unjudged-only" in rec["knowledge_error"]
    log = [json.loads(line) for line in (out / "logs" / f"{TASK}-{DIFFICULTY}-s{SEED}-react.jsonl").read_text().splitlines()]
    assert log[-1]["type"] == "end" and log[-1]["record"]["success"] is True

    # the resume (local workers: the same run, the backend is no part of its config) plays nothing again
    asked = len(scripted_llm.requests)
    scripted_llm.responder = rubric_judge
    again = CliRunner().invoke(app, [a for a in args if a not in ("--backend", "ray")],
                               env={"DISCOVERYLAB_LLM_BASE_URL": None})  # fmt: skip
    assert again.exit_code == 0, again.output
    assert len(scripted_llm.requests) == asked and len(_records(out)) == 1
