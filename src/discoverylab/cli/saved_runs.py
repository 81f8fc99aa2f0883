"""The commands that read a finished (or partial) run folder: `report` and `judge`.

They start no episodes: `report` lays out RUN_DIR/results.jsonl as the paper's tables and
`judge` re-grades the stored knowledge answers. `main` registers them on the `discoverylab`
command in their place after `bench`, so the command list and help stay as they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.schema import status_line
from discoverylab.cli.options import BaseUrlOpt, ModelOpt, console, err, fail


def report(
    run_dir: Annotated[Path, typer.Argument(help="the --out directory of a bench or run command")],
    markdown: Annotated[bool, typer.Option("--markdown", help="print markdown instead of terminal tables")] = False,
    figure: Annotated[Path | None, typer.Option("--figure", help="also save a matplotlib figure (PNG, PDF, SVG)")] = None,
) -> None:
    """The paper's Table 4/5 layout for a finished or partial run: procedure, completion, knowledge."""
    from discoverylab.bench.report import ReportError, fmt, load_report, metrics, plot_report, to_markdown

    try:
        rep = load_report(run_dir)
    except ReportError as exc:
        fail(str(exc))
    if rep.bad_lines:
        err.print(f"[yellow]{len(rep.bad_lines)} bad line(s) in {run_dir / 'results.jsonl'} skipped[/yellow]", soft_wrap=True)
    if markdown:
        typer.echo(to_markdown(rep), nl=False)
    else:
        for tab in rep.tables:
            names = metrics(tab)
            table = Table(title=tab.title)
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
        err.print(status_line(list(rep.statuses.elements())), soft_wrap=True)
    if figure is not None:
        err.print(f"figure: {plot_report(rep, figure)}", soft_wrap=True)


def judge_cmd(
    run_dir: Annotated[Path, typer.Argument(help="a folder written by `bench --out` / `run --out`")],
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print rows as JSON")] = False,
) -> None:
    """Re-grade the knowledge of every episode of a saved run (writes RUN_DIR/knowledge.jsonl)."""
    from discoverylab.bench.judging import KNOWLEDGE_FILE, judge_run, make_judge

    if not (run_dir / "results.jsonl").is_file():
        fail(f"no results.jsonl in {run_dir}: pass a folder written by `discoverylab bench --out`.")
    settings = LLMSettings(model=model, base_url=base_url)
    rows = judge_run(run_dir, make_judge(settings), judge_name=model or settings.describe()["base_url"] or "")
    if as_json:
        typer.echo(json.dumps(rows))
        return
    table = Table(title=f"Knowledge of {run_dir}")
    for col in ("task", "difficulty", "seed", "agent", "questions", "knowledge"):
        table.add_column(col)
    for row in rows:
        score = row["knowledge_score"]
        table.add_row(str(row["task"]), str(row["difficulty"]), str(row["seed"]), str(row["agent"]),
                      str(len(row["knowledge_verdicts"])), "n/a" if score is None else f"{score:.2f}")  # fmt: skip
    console.print(table)
    console.print(f"Verdicts: {run_dir / KNOWLEDGE_FILE}")
