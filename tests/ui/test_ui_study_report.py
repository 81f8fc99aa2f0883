"""`discoverylab report` and `judge` on the UI's logs folder (issue #26): the study's results in
the paper's Table 6 layout with times, and offline grading of the human reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from ui_kit import oracle_log

from discoverylab.cli import app
from discoverylab.ui.server import create_app
from discoverylab.ui.study_report import human_games, is_ui_logs, table6

KEY = b"0123456789abcdef-study-report-key"


class KeywordJudge:
    """A stand-in for the LLM judge: yes when the reference facts' outlier is named."""

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, question: str, evidence: dict[str, Any]) -> Any:
        self.calls += 1
        species = evidence["Reference facts"][0].split()[1]
        return type("Verdict", (), {"evaluation": int(species in evidence["Agent's knowledge"]), "explanation": "kw"})()


def _study(tmp_path: Path) -> Path:
    """A study folder: two participants' Proteomics games (one handed in, one abandoned), a
    DialogTest game ended without a report, and an oracle run beside them."""
    client = TestClient(create_app(tmp_path, study_key=KEY), base_url="http://127.0.0.1")
    for who, report in (("p01", "The outlier is the one whose proteins differ."), ("p02", None)):
        game = client.post("/api/games", json={"task": "Proteomics", "difficulty": "easy", "participant": who}).json()
        client.post(f"/api/games/{game['id']}/command", json={"text": "wait"})
        if report is None:
            client.delete(f"/api/games/{game['id']}")
        else:
            client.post(f"/api/games/{game['id']}/report", json={"report": report})
    oracle_log(tmp_path / "agents", "Proteomics", difficulty="easy")
    return tmp_path


def test_report_on_the_ui_logs_folder_prints_table_6_with_times(tmp_path: Path) -> None:
    """`report` refused the UI's log folder (no results.jsonl)."""
    folder = _study(tmp_path)
    assert is_ui_logs(folder)
    result = CliRunner().invoke(app, ["report", str(folder)])
    assert result.exit_code == 0, result.output
    assert "Table 6" in result.output and "Human games" in result.output and "p01" in result.output
    md = CliRunner().invoke(app, ["report", str(folder), "--markdown"])
    assert md.exit_code == 0 and md.output.startswith("| task | difficulty | human procedure")
    assert "human minutes" in md.output and "oracle procedure" in md.output
    assert "| p01 | Proteomics | easy | test#0 | 1 |" in md.output and "| p02 |" in md.output and "abandoned" in md.output
    (row,) = table6(folder)["rows"]
    assert row["cells"]["human"]["n"] == 2 and row["cells"]["human"]["minutes"] is not None
    assert row["cells"]["oracle"]["completion"] == 1.0
    games = {g["participant"]: g for g in human_games(folder)}
    assert games["p01"]["instance"] == "test#0" and games["p02"]["instance"] == "test#1"
    assert games["p01"]["steps"] == 1 and games["p02"]["status"] == "abandoned"


def test_judge_grades_the_human_reports_of_a_ui_logs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`judge` refused the UI's log folder, though docs/ui.md said reports can be graded offline."""
    folder = _study(tmp_path)
    judge = KeywordJudge()
    monkeypatch.setattr("discoverylab.bench.judging.make_judge", lambda *a, **k: judge)
    result = CliRunner().invoke(app, ["judge", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["participant"] for r in rows] == ["p01", "p02"] and judge.calls > 0
    assert rows[1]["knowledge_score"] == 0.0  # abandoned: nothing to grade, 0
    written = [json.loads(line) for line in (folder / "knowledge.jsonl").read_text().splitlines()]
    assert [r["log"] for r in written] == [r["log"] for r in rows]
    games = {g["participant"]: g for g in human_games(folder)}
    assert games["p01"]["knowledge"] == rows[0]["knowledge_score"]  # the report uses the offline grade
    logs = client_logs = TestClient(create_app(folder), base_url="http://127.0.0.1").get("/api/logs").json()
    assert "knowledge.jsonl" not in {entry["name"] for entry in client_logs} and logs


def test_report_and_judge_on_a_bench_folder_are_unchanged(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code != 0 and "results.jsonl" in result.output


def test_report_says_which_games_saw_another_games_gold(tmp_path: Path) -> None:
    """A game open while another game of its seed ended (its gold shown) is listed apart, and
    the per-game rows say why: `gold seen`, not a replay of an earlier game."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    first = client.post("/api/games", json={"task": "DialogTest", "seed": 1}).json()
    peek = client.post("/api/games", json={"task": "DialogTest", "seed": 1}).json()
    client.post(f"/api/games/{peek['id']}/report", json={"report": ""})
    client.post(f"/api/games/{first['id']}/command", json={"text": "wait"})
    client.post(f"/api/games/{first['id']}/report", json={"report": "x"})
    md = CliRunner().invoke(app, ["report", str(tmp_path), "--markdown"])
    assert md.exit_code == 0, md.output
    assert "| ok (gold seen) |" in md.output and "| ok (replay) |" in md.output
    plain = CliRunner().invoke(app, ["report", str(tmp_path)], env={"COLUMNS": "300"})
    assert "ok (gold seen)" in plain.output


def test_a_game_left_without_an_end_still_shows_its_instance_steps_and_minutes(tmp_path: Path) -> None:
    """A participant's tab closed mid-game (no `end` line): the per-game row said instance `?`,
    steps `–` and minutes `–`, though the log holds all three."""
    client = TestClient(create_app(tmp_path, study_key=KEY), base_url="http://127.0.0.1")
    game = client.post("/api/games", json={"task": "Proteomics", "difficulty": "easy", "participant": "p09"}).json()
    for _ in range(3):
        client.post(f"/api/games/{game['id']}/command", json={"text": "wait"})
    (row,) = human_games(tmp_path)
    assert row["status"] == "abandoned" and row["instance"] == "test#0" and row["steps"] == 3
    assert row["minutes"] is not None and row["minutes"] >= 0.0
    md = CliRunner().invoke(app, ["report", str(tmp_path), "--markdown"])
    assert "| p09 | Proteomics | easy | test#0 | 3 |" in md.output


def test_report_figure_on_a_ui_logs_folder_is_refused_not_ignored(tmp_path: Path) -> None:
    """`report <ui logs> --figure out.png` printed the tables and exit 0, and wrote no figure."""
    _study(tmp_path)
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--figure", str(tmp_path / "fig.png")])
    assert result.exit_code == 2 and "--figure" in result.output
    assert not (tmp_path / "fig.png").exists()
