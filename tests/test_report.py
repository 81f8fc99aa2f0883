"""`discoverylab report RUN_DIR`: the paper's Table 4/5 layout from any finished or partial run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from discoverylab.bench import records
from discoverylab.bench.report import load_report, to_markdown
from discoverylab.bench.runner import make_jobs, run_jobs
from discoverylab.cli import app

cli = CliRunner()


def _run(out: Path) -> None:
    jobs = make_jobs([("PickAndPlaceTest", "normal"), ("ReactorLab", "easy"), ("ReactorLab", "normal")], [0, 1],
                     "random", 20)  # fmt: skip
    jobs += make_jobs([("PickAndPlaceTest", "normal")], [0, 1], "oracle", 20)
    run_jobs(jobs, out)


def test_report_averages_per_task_agent_and_difficulty(tmp_path: Path) -> None:
    _run(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    # A judged episode, a failed one (never a score) and a corrupt line.
    easy_s0 = next(x for x in lines if (x["task"], x["difficulty"], x["seed"]) == ("ReactorLab", "easy", 0))
    easy_s0["knowledge_score"] = 0.5
    normal_s0 = next(x for x in lines if (x["task"], x["difficulty"], x["seed"]) == ("ReactorLab", "normal", 0))
    failed = {**normal_s0, "seed": 9, "status": "llm_error", "error": "server down", "procedure_score": 0.0}
    (tmp_path / "results.jsonl").write_text("\n".join(records.dumps(x) for x in [*lines, failed]) + "\n[]\n")
    rep = load_report(tmp_path)
    assert rep.agents == ["oracle", "random"] and [t.suite for t in rep.tables] == ["discovery", "unit"]
    assert len(rep.bad_lines) == 1 and rep.statuses == {"ok": 8, "llm_error": 1}
    discovery, unit = rep.tables
    assert discovery.knowledge and not unit.knowledge
    easy = next(r for r in discovery.rows if r.label == "Reactor Lab" and r.difficulty == "easy")
    mine = [x for x in lines if x["task"] == "ReactorLab" and x["difficulty"] == "easy"]
    assert easy.cells["random"].procedure == sum(x["procedure_score"] for x in mine) / 2
    assert easy.cells["random"].knowledge == 0.5 and easy.cells["oracle"].episodes == 0
    labels = [r.label for r in discovery.rows]
    assert labels[-3:] == ["Average", "Average (Easy)", "Average (Normal)"]
    pick = next(r for r in unit.rows if not r.average)
    assert pick.cells["oracle"].completion == 1.0 and pick.cells["oracle"].procedure == 1.0
    normal = next(r for r in discovery.rows if r.label == "Reactor Lab" and r.difficulty == "normal")
    assert normal.cells["random"].failed == 1 and normal.cells["random"].episodes == 2
    text = to_markdown(rep)
    assert "| 1 | Reactor Lab | easy |" in text and "**Average (Easy)**" in text


def test_attack_abstaining_with_garbage_replies_scores_zero_not_missing(tmp_path: Path) -> None:
    """An agent that answers garbage on the episodes it finds hard (ending them `agent_error`) must
    not lift its average: those episodes count as 0, unlike a dead server's (`llm_error`)."""
    _run(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    picks = [x for x in lines if x["agent"] == "oracle"]
    honest = load_report(tmp_path).tables[1].rows[0].cells["oracle"]
    abstained = {**picks[0], "seed": 7, "status": "agent_error", "success": False, "procedure_score": 0.0,
                 "error": "not one reply matched the action schema"}
    server_down = {**picks[0], "seed": 8, "status": "llm_error", "success": False, "procedure_score": 0.0}
    (tmp_path / "results.jsonl").write_text(
        "\n".join(records.dumps(x) for x in [*lines, abstained, server_down]) + "\n")
    cell = load_report(tmp_path).tables[1].rows[0].cells["oracle"]
    assert honest.completion == 1.0 and honest.episodes == 2
    assert cell.episodes == 3 and cell.failed == 1
    assert cell.completion == pytest.approx(2 / 3) and cell.procedure == pytest.approx(2 / 3)


def test_report_command_terminal_markdown_and_figure(tmp_path: Path) -> None:
    _run(tmp_path)
    result = cli.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Table 4 layout" in result.output and "Table 5 layout" in result.output and "knowledge" in result.output
    md = cli.invoke(app, ["report", str(tmp_path), "--markdown", "--figure", str(tmp_path / "fig.png")])
    assert md.exit_code == 0 and md.stdout.startswith("# Results")
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_on_a_missing_or_empty_run_is_a_clear_error(tmp_path: Path) -> None:
    result = cli.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "no results.jsonl" in result.output
    (tmp_path / "results.jsonl").write_text("garbage\n")
    result = cli.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "holds no DiscoveryWorld episode records" in result.output


def test_figure_says_where_it_went_and_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    """Before: `--figure NAME` wrote NAME.png and printed `figure: NAME`, and `--figure fig.txt` (or a
    folder) ended in a ValueError traceback after the tables."""
    out = tmp_path / "run"
    run_jobs(make_jobs([("PickAndPlaceTest", "normal")], [0], "oracle", 20), out)
    result = cli.invoke(app, ["report", str(out), "--figure", str(tmp_path / "chart")])
    assert result.exit_code == 0, result.output
    assert f"figure: {tmp_path / 'chart.png'}" in result.output and (tmp_path / "chart.png").is_file()
    for bad, message in ((tmp_path / "fig.txt", "cannot write '.txt' files"), (out, "is a folder")):
        result = cli.invoke(app, ["report", str(out), "--figure", str(bad)])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output and "Unit tests" not in result.output  # refused before the tables
    assert not (tmp_path / "fig.txt").exists()


def test_report_takes_knowledge_scores_from_a_later_judge_pass(tmp_path: Path) -> None:
    """`discoverylab judge` writes knowledge.jsonl beside results.jsonl; the report reads it."""
    _run(tmp_path)
    rows = [{"task": "ReactorLab", "difficulty": "easy", "seed": s, "agent": "random", "knowledge_score": v}
            for s, v in ((0, 1.0), (1, 0.0))]  # fmt: skip
    records.write_jsonl(tmp_path / "knowledge.jsonl", rows)
    easy = next(r for r in load_report(tmp_path).tables[0].rows if r.label == "Reactor Lab" and r.difficulty == "easy")
    assert easy.cells["random"].knowledge == 0.5


@pytest.mark.parametrize("score", ["high", True, 7, -0.5])
def test_a_knowledge_row_that_is_no_grade_is_skipped_and_named(tmp_path: Path, score: object) -> None:
    """Before: a row with `knowledge_score: "high"` was copied into the records unchecked and the
    report died in the mean with a TypeError traceback (7 or -0.5 gave a knowledge mean out of 0..1)."""
    _run(tmp_path)
    rows = [{"task": "ReactorLab", "difficulty": "easy", "seed": 0, "agent": "random", "knowledge_score": score},
            {"task": "ReactorLab", "difficulty": "easy", "seed": 1, "agent": "random", "knowledge_score": 1.0}]
    records.write_jsonl(tmp_path / "knowledge.jsonl", rows)
    rep = load_report(tmp_path)
    easy = next(r for r in rep.tables[0].rows if r.label == "Reactor Lab" and r.difficulty == "easy")
    assert rep.bad_grades == 1 and easy.cells["random"].knowledge == 1.0  # only the valid grade counts
    result = cli.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert "1 row(s) of" in result.output and "knowledge_score is not a number in 0..1" in result.output


def test_report_says_whether_the_folder_is_missing_a_file_or_has_no_results(tmp_path: Path) -> None:
    """Before: `report /nonexistent` (and a file given as the folder; judge and audit too) said "no
    results.jsonl in ...", as if the folder existed. Three cases, three messages, exit code 2, no traceback."""
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "nested" / "results.jsonl").mkdir(parents=True)
    cases = {tmp_path / "missing": "no such folder", tmp_path / "a-file": "is a file, not a folder",
             tmp_path: "no results.jsonl in the folder", tmp_path / "nested": "results.jsonl is not a file"}
    for folder, message in cases.items():
        for command in ("report", "judge", "audit"):
            result = cli.invoke(app, [command, str(folder)], env={"DISCOVERYLAB_EVAL_KEY": "k" * 32})
            assert result.exit_code == 2 and message in result.output, (command, folder, result.output)
            assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


def test_a_run_being_written_an_empty_file_and_a_tiny_labs_run_are_said_as_they_are(tmp_path: Path) -> None:
    """Before: a torn last line (a run still appending it, or killed mid-line) gave only "1 bad line(s)
    ... skipped"; an empty results.jsonl and a Tiny Labs run both "hold no DiscoveryWorld episode
    records", which named neither."""
    run = tmp_path / "run"
    run_jobs(make_jobs([("PickAndPlaceTest", "normal")], [0, 1], "random", 5), run)
    whole = (run / "results.jsonl").read_bytes()
    (run / "results.jsonl").write_bytes(whole + whole[:200])  # another record, half written
    result = cli.invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    assert "1 bad line(s)" in result.output and "line 3: torn last line" in result.output
    assert "or is still writing it" in result.output and "2 episodes: 2 ok" in result.output
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("\n")
    result = cli.invoke(app, ["report", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "results.jsonl is empty: no episode has finished there yet" in result.output
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "results.jsonl").write_text(json.dumps({"protocol": "sequence/hidden-property", "agent": "llm"}) + "\n")
    result = cli.invoke(app, ["report", str(tmp_path / "labs")])
    assert result.exit_code == 2 and "is a Tiny Labs run" in result.output, result.output


def test_a_run_that_has_just_started_is_not_called_a_wrong_folder(tmp_path: Path) -> None:
    """Before: a run's folder before its first episode ended (run.json, no results.jsonl yet) got
    "no results.jsonl in ...; give the --out directory of a bench or run command", which it is."""
    (tmp_path / "run.json").write_text(json.dumps({"config_hash": "abc", "runner": "discoveryworld", "config": {}}))
    for command in ("report", "judge"):
        result = cli.invoke(app, [command, str(tmp_path)])
        assert result.exit_code == 2 and "no episode of the run has finished yet" in result.output, result.output
