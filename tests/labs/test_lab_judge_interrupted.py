"""Ctrl-C or SIGTERM while `lab run` judges a finished episode keeps the episode (the runner loses no
finished episode), as `discoverylab run` does (tests/test_judge_interrupted.py).

Before: the worker was still grading when the runner stopped, so the played episode counted as
"in flight": dropped ("1 in flight dropped"), nothing recorded, and a resume played it again. A real
`discoverylab lab run` in its own process group plays the oracle; its judge is our scripted server
on 127.0.0.1, which stalls; the test signals the group, as a terminal does, once the judge was asked.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest
from test_lab_judge import CONFIG, judge_responder
from typer.testing import CliRunner

from discoverylab.labs.cli import lab_app
from discoverylab.labs.run_record import LabRecord
from llm_scripted_server import Scripted, ScriptedLLMServer
from stop_kit import stop_when

HIDDEN = "sequence/hidden-property"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def _records(out: Path) -> list[LabRecord]:
    path = out / "results.jsonl"
    return [LabRecord.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []  # fmt: skip


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_the_lab_judge_grades_keeps_the_finished_episode_unjudged(
        scripted_llm: ScriptedLLMServer, tmp_path: Path, sig: signal.Signals, code: int) -> None:
    scripted_llm.responder = lambda _request: Scripted(hang=60.0)  # the judge never answers until the server stops
    out = tmp_path / "run"
    args = ["run", HIDDEN, "--agent", "oracle", "--seeds", "0", "--out", str(out), "--no-plots",
            "--config", json.dumps(CONFIG), "--judge-model", "scripted-model", "--judge-base-url", scripted_llm.base_url]
    returncode, err = stop_when(["lab", *args], lambda: bool(scripted_llm.requests), sig, tmp_path)
    text = " ".join(err.split())
    assert returncode == code, text[-2000:]
    assert f"Interrupted by {sig.name}" in text and "0 in flight dropped" in text, text[-2000:]
    assert "1 episode: 1 ok" in text and "lab judge" in text and "--unjudged-only" in text, text[-2000:]
    (rec,) = _records(out)
    assert rec.status == "ok" and rec.turns > 0 and rec.labels["judge_status"] == "unjudged", rec
    assert "stopped" in rec.labels["judge_error"] and "--unjudged-only" in rec.labels["judge_error"]
    assert rec.transcript is not None and (out / rec.transcript).is_file()
    assert rec.score_file is not None and json.loads((out / rec.score_file).read_text())["labels"]["judge_status"] == "unjudged"

    # a resume plays nothing again; `lab judge --unjudged-only` grades the kept episode from its transcript
    asked = len(scripted_llm.requests)
    scripted_llm.responder = judge_responder
    again = CliRunner().invoke(lab_app, args)
    assert again.exit_code == 0, again.output
    assert len(_records(out)) == 1 and len(scripted_llm.requests) == asked
    graded = CliRunner().invoke(lab_app, ["judge", str(out), "--unjudged-only", "--judge-model", "scripted-model",
                                          "--judge-base-url", scripted_llm.base_url])  # fmt: skip
    assert graded.exit_code == 0, graded.output
    last = _records(out)[-1]
    assert last.labels["judge_status"] == "judged" and last.turns == rec.turns and last.score is not None
