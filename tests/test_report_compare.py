"""`discoverylab report RUN_A RUN_B ...`: an LLM agent's run and the baselines' runs (separate
runs, different configs by design) compared in one table, as the paper's tables do. Before,
`report` took one folder, so they could not be put side by side."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from discoverylab.bench import records
from discoverylab.bench.compare import load_comparison
from discoverylab.bench.report import load_report
from discoverylab.bench.runner import iter_jobs, make_jobs, run_jobs
from discoverylab.cli import app

cli = CliRunner()
TASKS = [("PickAndPlaceTest", "normal"), ("ReactorLab", "easy")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baselines run (oracle and random) and an 'LLM' run (random episodes recorded as a
    hypothesizer with a model, as a real run's records name it), with another max_steps."""
    root = tmp_path_factory.mktemp("compare")
    base, llm = root / "baselines", root / "hyp-gpt"
    run_jobs(make_jobs(TASKS, [0, 1], "random", 20) + make_jobs(TASKS[:1], [0, 1], "oracle", 20), base)
    run_jobs(make_jobs(TASKS, [0, 1], "random", 10), llm)
    lines = [json.loads(x) for x in (llm / "results.jsonl").read_text().splitlines()]
    for line in lines:
        line.update(agent="hypothesizer", llm={"model": "gpt-4o", "base_url": "https://api.example/v1"})
    (llm / "results.jsonl").write_text("\n".join(records.dumps(x) for x in lines) + "\n")
    return base, llm


def test_two_runs_are_compared_in_one_table_with_each_run_s_own_numbers(runs: tuple[Path, Path], tmp_path: Path) -> None:
    base, llm = runs
    comparison = load_comparison([base, llm])
    assert [c.label for c in comparison.columns] == ["oracle", "random", "hypothesizer/gpt-4o"]
    assert [c.run_dir for c in comparison.columns] == [base, base, llm]
    alone = {"oracle": load_report(base), "random": load_report(base), "hypothesizer/gpt-4o": load_report(llm)}
    for table in comparison.report.tables:
        for row in table.rows:
            for label, single in alone.items():
                agent = label.split("/")[0]
                mine = next(t for t in single.tables if t.suite == table.suite)
                theirs = next(r for r in mine.rows if (r.label, r.difficulty) == (row.label, row.difficulty))
                assert row.cells[label] == theirs.cells[agent], (table.suite, row.label, label)
    result = cli.invoke(app, ["report", str(base), str(llm), "--figure", str(tmp_path / "cmp.png")])
    assert result.exit_code == 0, result.output
    assert "hypothesizer/gpt-4o" in result.output and "Runs" in result.output
    assert f"{base}: 6 episodes: 6 ok" in result.output and f"{llm}: 4 episodes: 4 ok" in result.output
    assert (tmp_path / "cmp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = cli.invoke(app, ["report", str(base), str(llm), "--markdown"])
    assert md.exit_code == 0 and md.stdout.startswith(f"# Results: {base}, {llm}\n\n## Runs\n")
    assert f"| hypothesizer/gpt-4o | {llm} | hypothesizer | gpt-4o | seeds | 4 |" in md.stdout
    assert "| hypothesizer/gpt-4o procedure | hypothesizer/gpt-4o completion |" in md.stdout


def test_a_single_folder_prints_what_it_printed_before(runs: tuple[Path, Path]) -> None:
    from discoverylab.bench.report import to_markdown

    md = cli.invoke(app, ["report", str(runs[0]), "--markdown"])
    assert md.exit_code == 0 and md.stdout == to_markdown(load_report(runs[0]))
    assert "## Runs" not in md.stdout


def test_columns_that_would_read_the_same_are_told_apart(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The same agent in two runs gets its folder's name; runs on different splits get the split."""
    base, _ = runs
    other = tmp_path / "baselines"
    run_jobs(make_jobs(TASKS[:1], [0], "random", 20), other)
    labels = [c.label for c in load_comparison([base, other]).columns]
    assert labels == ["oracle", f"random ({base})", f"random ({other})"]  # same folder name: the paths
    more = tmp_path / "more"
    run_jobs(make_jobs(TASKS[:1], [0], "random", 20), more)
    assert [c.label for c in load_comparison([base, more]).columns] == ["oracle", "random (baselines)", "random (more)"]
    dev = tmp_path / "dev"
    run_jobs(list(iter_jobs(TASKS[:1], [0], "random", 20, split="dev")), dev)
    labels = [c.label for c in load_comparison([base, dev]).columns]
    assert labels == ["oracle, seeds", "random, seeds", "random, dev"]


def test_bad_folders_among_several_are_named_and_refused(runs: tuple[Path, Path], tmp_path: Path) -> None:
    base, llm = runs
    ui_logs = tmp_path / "ui"
    ui_logs.mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    (ui_logs / "g.jsonl").write_text(json.dumps({"agent": "human", "task": "DialogTest"}) + "\n")
    cases = [([base, tmp_path / "nope"], f"{tmp_path / 'nope'}: no such folder"),
             ([base, llm, base], f"{base} is given twice"),
             ([base, empty], f"no results.jsonl in the folder {empty}"),
             ([base, ui_logs], f"{ui_logs} is a folder of UI game logs")]
    for folders, message in cases:
        result = cli.invoke(app, ["report", *map(str, folders)])
        assert result.exit_code == 2 and message in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_an_unreadable_results_file_is_a_one_line_error(runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a PermissionError traceback from reading results.jsonl."""
    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = cli.invoke(app, ["report", str(runs[0])])
    assert result.exit_code == 2 and "cannot read" in result.output and "Permission denied" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


def test_a_figure_that_cannot_be_written_leaves_the_old_one_whole(runs: tuple[Path, Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Before: matplotlib wrote straight into FILE, so a full disk (or a second `report` writing the
    same file at the same time) left a half-written figure in place of a good one, and the OSError
    ended in a traceback after the tables. The figure is written beside it and moved into place."""
    import errno

    from matplotlib.figure import Figure

    figure = tmp_path / "fig.png"
    figure.write_bytes(b"the good figure")

    def full_disk(self: Figure, fname: Path, **kwargs: object) -> None:
        Path(fname).write_bytes(b"half a PNG")
        raise OSError(errno.ENOSPC, "No space left on device", str(fname))

    monkeypatch.setattr(Figure, "savefig", full_disk)
    for folders in ([runs[0]], list(runs)):
        result = cli.invoke(app, ["report", *map(str, folders), "--figure", str(figure)])
        assert result.exit_code == 74 and "No space left on device" in result.output, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert figure.read_bytes() == b"the good figure" and sorted(tmp_path.iterdir()) == [figure]


def test_a_folder_name_with_brackets_is_printed_as_it_is(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Before: the skipped-lines warning read `x[red]y` as terminal markup and printed `xy/results.jsonl`."""
    import shutil

    odd = tmp_path / "x[red]y"
    shutil.copytree(runs[1], odd)
    with (odd / "results.jsonl").open("a") as fh:
        fh.write("[]\n")
    for folders in ([odd], [odd, runs[0]]):
        result = cli.invoke(app, ["report", *map(str, folders)])
        assert result.exit_code == 0 and f"1 bad line(s) in {odd / 'results.jsonl'} skipped" in result.output, result.output


def test_records_pasted_in_from_another_config_are_not_counted_as_this_run_s(runs: tuple[Path, Path],
                                                                             tmp_path: Path) -> None:  # fmt: skip
    """Before: `report` counted every record of results.jsonl, so the old way of comparing runs
    (pasting one run's records into another's folder) silently averaged episodes made with other
    settings into the run's cells; `run`, `bench` and `judge` already kept to run.json's config."""
    import shutil

    base, llm = runs
    mixed = tmp_path / "mixed"
    shutil.copytree(base, mixed)
    with (mixed / "results.jsonl").open("a") as fh:
        fh.write((llm / "results.jsonl").read_text())
    rep = load_report(mixed)
    assert rep.agents == ["oracle", "random"] and sum(rep.statuses.values()) == 6
    assert len(rep.bad_lines) == 4 and all("made with another config" in b.reason for b in rep.bad_lines)
    result = cli.invoke(app, ["report", str(mixed)])
    assert result.exit_code == 0 and "4 bad line(s)" in result.output
    assert "discoverylab report RUN_DIR RUN_DIR" in result.output, result.output


def test_figure_on_a_ui_logs_folder_is_refused_not_silently_skipped(tmp_path: Path) -> None:
    """Before: `report UI_LOGS --figure f.png` printed the Table 6 report and exited 0 with no figure."""
    ui_logs = tmp_path / "ui"
    ui_logs.mkdir()
    (ui_logs / "g.jsonl").write_text(json.dumps({"agent": "human", "task": "DialogTest"}) + "\n")
    result = cli.invoke(app, ["report", str(ui_logs), "--figure", str(tmp_path / "f.png")])
    assert result.exit_code == 2 and "--figure" in result.output and "UI game logs" in result.output, result.output


def test_a_folder_name_with_a_pipe_keeps_the_markdown_tables_whole(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Before: a column named after a folder `a|b` split its markdown header cell in two, so every
    column after it was shifted under the wrong head."""
    import shutil

    piped = tmp_path / "a|b"
    shutil.copytree(runs[0], piped)
    md = cli.invoke(app, ["report", str(runs[0]), str(piped), "--markdown"])
    assert md.exit_code == 0, md.output
    assert "random (a\\|b) procedure" in md.stdout
    for block in md.stdout.split("\n\n"):  # every row of a table has as many cells as its head
        rows = [line for line in block.splitlines() if line.startswith("|")]
        assert len({len(re.findall(r"(?<!\\)\|", row)) for row in rows}) <= 1, block


def test_a_figure_under_a_file_is_refused_before_the_tables(runs: tuple[Path, Path], tmp_path: Path) -> None:
    """Before: `--figure afile/x.png` printed the tables, then ended in a NotADirectoryError traceback."""
    (tmp_path / "afile").write_text("x")
    for folders in ([runs[0]], list(runs)):
        result = cli.invoke(app, ["report", *map(str, folders), "--figure", str(tmp_path / "afile" / "x.png")])
        assert result.exit_code == 2 and f"{tmp_path / 'afile'} is a file, not a folder" in result.output, result.output
        assert "Unit tests" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit))
