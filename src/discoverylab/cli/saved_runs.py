"""The commands that read a finished (or partial) run folder: `report` and `judge`.

They start no episodes: `report` lays out RUN_DIR/results.jsonl as the paper's tables (several
RUN_DIRs side by side, `bench/compare.py`) and
`judge` re-grades the stored knowledge answers (taking the LLM options `bench` takes; an episode
it cannot grade is listed and left unjudged, never a traceback). `main` registers them on the `discoverylab`
command in their place after `bench`, so the command list and help stay as they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.schema import status_line
from discoverylab.cli.options import (
    JSON_MODES,
    BaseUrlOpt,
    ContextTokensOpt,
    JsonModeOpt,
    ModelOpt,
    RequestTimeoutOpt,
    UnjudgedOnlyOpt,
    check_base_url,
    check_sealed_judge,
    console,
    err,
    fail,
    warn_embedded_judge,
)

if TYPE_CHECKING:
    from discoverylab.bench.report import Report
    from discoverylab.bench.rundir import BadLine


def report(
    run_dirs: Annotated[list[Path], typer.Argument(
        help="the --out directory of a bench or run command; several to compare their runs in one table",
        metavar="RUN_DIR", show_default=False)],
    markdown: Annotated[bool, typer.Option("--markdown", help="print markdown instead of terminal tables")] = False,
    figure: Annotated[Path | None, typer.Option("--figure", help="also save a matplotlib figure (PNG, PDF, SVG)")] = None,
) -> None:
    """The paper's Table 4/5 layout for a finished or partial run: procedure, completion, knowledge (and the
    answer sheet's exact score on discovery tasks). Several runs (an LLM agent's and the baselines')
    are compared in one table, a column group per run and agent."""
    from discoverylab.cli.ui_logs import report_ui_logs
    from discoverylab.ui.study_report import is_ui_logs

    if len(run_dirs) == 1:
        if is_ui_logs(run_dirs[0]):  # a UI logs folder: Table 6
            if figure is not None:  # before: the report came out and no figure, exit 0
                fail(f"--figure draws bench and run results; {run_dirs[0]} is a folder of UI game logs, whose "
                     "report (Table 6 layout) has no figure: leave out --figure")
            report_ui_logs(run_dirs[0], markdown=markdown)
        else:
            _report_one(run_dirs[0], markdown, figure)
        return
    for run_dir in run_dirs:
        if is_ui_logs(run_dir):
            fail(f"{run_dir} is a folder of UI game logs: report it on its own (`discoverylab report {run_dir}`); "
                 "only bench and run folders can be compared")
    _report_many(run_dirs, markdown, figure)


def _report_one(run_dir: Path, markdown: bool, figure: Path | None) -> None:
    from discoverylab.bench.report import ReportError, figure_path, load_report, to_markdown

    try:
        if figure is not None:
            figure = figure_path(figure)  # checked before any output
        rep = load_report(run_dir)
    except ReportError as exc:
        fail(str(exc))
    _warn_skipped(run_dir, rep.bad_lines, rep.bad_grades)
    if markdown:
        typer.echo(to_markdown(rep), nl=False)
    else:
        _print_tables(rep)
        err.print(status_line(list(rep.statuses.elements())), soft_wrap=True)
    _warn_unjudged(run_dir, rep.unjudged)
    if figure is not None:
        _save_figure(rep, figure)


def _report_many(run_dirs: list[Path], markdown: bool, figure: Path | None) -> None:
    """Several runs in one report: each run's columns named in a `Runs` table; warnings per run."""
    from discoverylab.bench.compare import comparison_markdown, load_comparison
    from discoverylab.bench.report import ReportError, figure_path

    try:
        if figure is not None:
            figure = figure_path(figure)  # checked before any output
        comparison = load_comparison(run_dirs)
    except ReportError as exc:
        fail(str(exc))
    for run in comparison.runs:
        _warn_skipped(run.run_dir, run.bad_lines, run.bad_grades)
    if markdown:
        typer.echo(comparison_markdown(comparison), nl=False)
    else:
        table = Table(title="Runs")
        for col in ("column", "run folder", "agent", "model", "split", "episodes", "config"):
            table.add_column(col, justify="right" if col == "episodes" else "left")
        for c in comparison.columns:
            table.add_row(escape(c.label), escape(str(c.run_dir)), escape(c.agent), escape(c.model or "–"), c.splits,
                          str(c.episodes), c.config_hash)  # fmt: skip
        console.print(table)
        _print_tables(comparison.report)
        for run in comparison.runs:
            err.print(f"{escape(str(run.run_dir))}: {status_line(r.status for r in run.records)}", soft_wrap=True)
    for run in comparison.runs:
        _warn_unjudged(run.run_dir, sum(r.status == "ok" and r.knowledge_status == "unjudged" for r in run.records))
    if figure is not None:
        _save_figure(comparison.report, figure)


def _save_figure(rep: Report, figure: Path) -> None:
    from discoverylab.bench.exits import EXIT_IO
    from discoverylab.bench.report import FigureWriteError, plot_report

    try:
        err.print(f"figure: {plot_report(rep, figure)}", soft_wrap=True)
    except FigureWriteError as exc:  # the tables are out already; the old figure, if any, is whole
        err.print(f"[red]Error:[/red] {escape(str(exc))}; the figure was not saved", soft_wrap=True)
        raise typer.Exit(EXIT_IO) from None


def _warn_skipped(run_dir: Path, bad_lines: list[BadLine], bad_grades: int) -> None:
    """Which lines were skipped and why (before, only how many: a torn last line of a run still
    writing it read like damage)."""
    from discoverylab.bench.rundir import bad_lines_text

    if bad_lines:
        err.print(f"[yellow]{len(bad_lines)} bad line(s) in {escape(str(run_dir / 'results.jsonl'))} skipped: "
                  f"{escape(bad_lines_text(bad_lines))}[/yellow]", soft_wrap=True)  # fmt: skip
    if any(b.reason.startswith("made with another config") for b in bad_lines):
        err.print("[yellow]Records of runs made with other settings are compared, never mixed: keep each run in "
                  "its own folder and name them all: discoverylab report RUN_DIR RUN_DIR ...[/yellow]", soft_wrap=True)
    if bad_grades:
        err.print(f"[yellow]{bad_grades} row(s) of {escape(str(run_dir / 'knowledge.jsonl'))} skipped: their knowledge_score "
                  "is not a number in 0..1[/yellow]", soft_wrap=True)


def _warn_unjudged(run_dir: Path, unjudged: int) -> None:
    if unjudged:
        err.print(f"[yellow]{unjudged} episode(s) with unjudged knowledge (their knowledge cells show –): "
                  f"grade them with `discoverylab judge {escape(str(run_dir))} --unjudged-only`[/yellow]", soft_wrap=True)  # fmt: skip


def _print_tables(rep: Report) -> None:
    """The report's tables on the terminal: agents (or compared runs' columns) side by side."""
    from discoverylab.bench.report import fmt, metrics

    for tab in rep.tables:
        names = metrics(tab)
        caption = ("metrics: procedure, completion, knowledge (LLM-judged), answers (answer sheet, graded exactly)"
                   if "answers" in names else None)  # (narrow terminals shorten the column heads)
        table = Table(title=tab.title, caption=caption)
        for col in ("#", "task", "difficulty"):
            table.add_column(col, no_wrap=True)
        for agent in rep.agents:
            for metric in names:
                table.add_column(f"{agent}\n{metric}", justify="right")
        table.add_column("n (failed)", justify="right")
        number = 0
        for row in tab.rows:
            number += 0 if row.average else 1
            cells = [fmt(getattr(row.cells[a], m)) for a in rep.agents for m in names]
            counts = ", ".join(f"{row.cells[a].episodes} ({row.cells[a].failed})" for a in rep.agents)
            label = f"[bold]{escape(row.label)}[/bold]" if row.average else escape(row.label)
            table.add_row("" if row.average else str(number), label, row.difficulty if not row.average else "",
                          *cells, counts, end_section=row.label == "Average")  # fmt: skip
        console.print(table)
    if rep.costs:  # LLM runs: the paper's cost notes (App. C.4)
        table = Table(title="Cost (paper App. C.4 layout)")
        for col in ("task", "difficulty", "agent", "episodes", "steps", "requests", "tokens in", "tokens out",
                    "USD", "USD / 100 steps"):  # fmt: skip
            table.add_column(col, justify="left" if col in ("task", "difficulty", "agent") else "right")
        for c in rep.costs:
            table.add_row(escape(c.label), c.difficulty, escape(c.agent), str(c.episodes), str(c.steps), str(c.requests),
                          f"{c.prompt_tokens:,}", f"{c.completion_tokens:,}",
                          "?" if c.cost_usd is None else f"{c.cost_usd:.4f}",
                          "?" if c.per_100_steps is None else f"{c.per_100_steps:.4f}")  # fmt: skip
        console.print(table)


EXIT_UNGRADED = 1  # `judge`: some episodes could not be graded (listed on stderr); 2 is a usage error


def judge_cmd(
    run_dir: Annotated[Path, typer.Argument(help="a folder written by `bench --out` / `run --out`")],
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    json_mode: JsonModeOpt = "json_schema",
    request_timeout: RequestTimeoutOpt = None,
    context_tokens: ContextTokensOpt = None,
    unjudged_only: UnjudgedOnlyOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="print rows as JSON")] = False,
) -> None:
    """Re-grade the knowledge of a saved run (writes RUN_DIR/knowledge.jsonl).

    Exit code 0 when every episode asked to be graded was; 1 when the judge could not grade
    some (one line each on stderr; they stay unjudged, run the command again to retry them);
    2 on a usage error.
    """
    from discoverylab.bench.exits import EXIT_IO
    from discoverylab.bench.judging import KNOWLEDGE_FILE, judge_run, make_judge
    from discoverylab.bench.records import read_jsonl
    from discoverylab.bench.rundir import RunDirError, RunLocked, describe_io_error, saved_results
    from discoverylab.llm.errors import LLMError

    try:
        results = saved_results(run_dir)
    except RunDirError as exc:
        fail(str(exc))
    stored = list(read_jsonl(results))
    if any("protocol" in rec and "task" not in rec for rec in stored):
        fail(f"{run_dir} is a Tiny Labs run: grade it with `discoverylab lab judge {run_dir}`.")
    if json_mode not in JSON_MODES:
        fail(f"Unknown --json-mode {json_mode!r}. Valid: {', '.join(JSON_MODES)}.")
    verdicts = run_dir / KNOWLEDGE_FILE
    if verdicts.exists() and not verdicts.is_file():  # before: an IsADirectoryError traceback
        fail(f"{verdicts} is not a file; move it away so that judge can write its verdicts there.")
    check_base_url(base_url, "--base-url")
    settings = LLMSettings(model=model, base_url=base_url, json_mode=json_mode)
    check_sealed_records(stored, settings)
    warn_embedded_judge(settings, [(str(rec["task"]), str(rec.get("difficulty"))) for rec in stored if "task" in rec],
                        "--model / --base-url")  # fmt: skip
    try:
        judge = make_judge(settings, request_timeout=request_timeout, context_tokens=context_tokens)
    except (LLMError, ValueError) as exc:
        err.print(f"[red]Error:[/red] could not start the judge: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(EXIT_UNGRADED) from None
    try:
        outcome = judge_run(run_dir, judge, judge_name=model or settings.describe()["base_url"] or "",
                            only_unjudged=unjudged_only)  # fmt: skip
    except RunLocked as exc:  # a run or another judge pass in progress there
        fail(f"cannot judge {run_dir} now: {exc}")
    except OSError as exc:  # e.g. a full disk: the rows already appended are kept
        err.print(f"[red]Stopped:[/red] {escape(describe_io_error(exc))}; the episodes graded so far are in "
                  f"{escape(str(verdicts))}; free space, then run the command again", soft_wrap=True)  # fmt: skip
        raise typer.Exit(EXIT_IO) from None
    if as_json:
        typer.echo(json.dumps(outcome.rows))
    else:
        table = Table(title=f"Knowledge of {escape(str(run_dir))}")
        for col in ("task", "difficulty", "instance", "agent", "questions", "knowledge"):
            table.add_column(col)
        for row in outcome.rows:
            score = row["knowledge_score"]
            table.add_row(str(row["task"]), str(row["difficulty"]), _instance(row), str(row["agent"]),
                          str(len(row["knowledge_verdicts"])), "n/a" if score is None else f"{score:.2f}")  # fmt: skip
        console.print(table)
        console.print(f"Verdicts: {escape(str(run_dir / KNOWLEDGE_FILE))}")
    for row, error in outcome.failed:
        err.print(f"[red]unjudged[/red] {row['task']} {row['difficulty']} {_instance(row)} {row['agent']}: "
                  f"{escape(error.splitlines()[0] if error else '')}", soft_wrap=True)  # fmt: skip
    err.print(f"{len(outcome.rows)} graded, {len(outcome.failed)} could not be graded, {outcome.skipped} skipped",
              soft_wrap=True)  # fmt: skip
    if outcome.failed:
        raise typer.Exit(EXIT_UNGRADED)


def check_sealed_records(stored: list[dict[str, Any]], settings: LLMSettings) -> None:
    """The judge of a sealed run's episodes reads each test instance's gold: with no --model or
    --base-url it would be $DISCOVERYLAB_LLM_BASE_URL's endpoint, maybe the submitter's (the one its
    agent talked to). The rule of a sealed `bench`/`run` applies (one helper): name the judge.
    `stored`: a run's records, or a UI study's game records (`judge LOGS_DIR`)."""
    from discoverylab.instances import SEALED_SPLIT
    from discoverylab.llm.client import ENV_BASE_URL

    sealed = sorted({(str(rec["task"]), str(rec.get("difficulty"))) for rec in stored
                     if rec.get("split") == SEALED_SPLIT and "task" in rec})  # fmt: skip
    if sealed:
        check_sealed_judge(SEALED_SPLIT, sealed, settings, True, settings.model, settings.base_url,
                           default=f"${ENV_BASE_URL}'s endpoint",
                           fix="name the judge with --model M --base-url U (that endpoint too, if the evaluator "
                               "runs it), or unset the variable to judge with the embedded model.")  # fmt: skip


def _instance(row: dict[str, Any]) -> str:
    """`seed 3` for raw seeds, `test#3` for a split's instance: a sealed record has no seed (before,
    every sealed episode showed as `None`, so they could not be told apart)."""
    if row.get("split") in (None, "seed"):
        return f"seed {row.get('seed')}"
    return f"{row.get('split')}#{row.get('index')}"
