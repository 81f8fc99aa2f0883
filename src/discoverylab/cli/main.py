"""The `discoverylab` command: list tasks, play in the terminal, run agents, benchmark."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.runner import SUITES, make_jobs, parse_seeds, run_jobs, suite_tasks, summarize
from discoverylab.labs.cli import lab_app

app = typer.Typer(help="discoverylab: scientific-discovery environments for AI agents.", no_args_is_help=True)
# Piped output (CI logs, `make run | tee`) gets a fixed width wide enough for the result tables.
console = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

AGENTS = ("random", "oracle")


def _fail(message: str) -> None:
    err.print(f"[red]Error:[/red] {message}")
    raise typer.Exit(2)


@app.command()
def tasks() -> None:
    """List tasks, their suites and difficulties."""
    from discoverylab.scenarios.registry import all_tasks

    table = Table(title="discoverylab tasks")
    # Task ids are what users type: never wrap or cut them, let the other columns wrap.
    table.add_column("task", no_wrap=True, min_width=max(map(len, all_tasks())))
    for col in ("suite", "difficulties", "title"):
        table.add_column(col)
    for tid, cls in all_tasks().items():
        table.add_row(tid, cls.suite, ", ".join(cls.difficulties), cls.title)
    console.print(table)


@app.command()
def play(
    task: str,
    difficulty: Annotated[str, typer.Option("--difficulty", "-d")] = "normal",
    seed: Annotated[int, typer.Option("--seed", "-s")] = 0,
    max_steps: Annotated[int | None, typer.Option("--max-steps")] = None,
) -> None:
    """Play a task in the terminal (type 'help' for commands)."""
    from discoverylab.cli.textui import HELP, parse_command
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.render.text import render_text

    try:
        env = DiscoveryWorldEnv(task, difficulty, max_steps=max_steps)
    except ValueError as exc:
        _fail(str(exc))
    _, info = env.reset(seed=seed)
    console.print(render_text(info["observation"]))
    while True:
        try:
            line = console.input("[bold cyan]> [/bold cyan]")
        except (EOFError, KeyboardInterrupt):
            break
        if line.strip().lower() in ("quit", "exit", "q"):
            break
        if line.strip().lower() in ("help", "?"):
            console.print(HELP)
            continue
        try:
            action = parse_command(line)
        except ValueError as exc:
            console.print(f"[yellow]{exc}[/yellow]")
            continue
        _, _, terminated, truncated, info = env.step(action)
        console.print(render_text(info["observation"]))
        if terminated or truncated:
            console.print("[bold]Episode over[/bold] (" + ("task decided" if terminated else "step limit") + ")")
            break
    _print_scorecard(env.scorecard(reveal=True))  # the session is over: the full card


def _print_scorecard(card: dict[str, object]) -> None:
    table = Table(title=f"Scorecard: {card['taskName']}")
    table.add_column("item")
    table.add_column("score", justify="right")
    for item in card["scoreCard"]:  # type: ignore[attr-defined]
        table.add_row(item["name"], f"{item['score']}/{item['maxScore']}")
    table.add_row("[bold]total[/bold]", f"{card['score']}/{card['maxScore']} ({card['scoreNormalized']:.2f})")
    console.print(table)
    console.print(f"completed: {card['completed']}  success: {card['completedSuccessfully']}")


def _results_table(title: str, results: list[EpisodeRecord]) -> Table:
    table = Table(title=title)
    for col, just in (("task", "left"), ("difficulty", "left"), ("episodes", "right"), ("completion", "right"),
                      ("procedure", "right"), ("steps", "right"), ("errors", "right")):  # fmt: skip
        table.add_column(col, justify=just, no_wrap=col in ("task", "difficulty"))  # type: ignore[arg-type]
    rows = summarize(results)
    for row in rows:
        table.add_row(
            str(row["task"]), str(row["difficulty"]), str(row["episodes"]), f"{row['completion']:.2f}",
            f"{row['procedure']:.2f}", f"{row['steps']:.1f}", str(row["errors"]),
        )  # fmt: skip
    if rows:
        n = len(results)
        table.add_row(
            "[bold]all[/bold]", "", str(n), f"{sum(r.success for r in results) / n:.2f}",
            f"{sum(r.procedure_score for r in results) / n:.2f}", f"{sum(r.steps for r in results) / n:.1f}",
            str(sum(r.status != 'ok' for r in results)),
        )  # fmt: skip
    return table


def _execute(jobs: list, out: Path | None, workers: int, as_json: bool, title: str) -> None:  # type: ignore[type-arg]
    progress = Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=err, disable=as_json and not err.is_terminal,
    )  # fmt: skip
    with progress:
        bar = progress.add_task(title, total=len(jobs))
        results = run_jobs(jobs, out, workers, on_done=lambda _rec: progress.advance(bar))
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=None))
        return
    console.print(_results_table(title, results))
    if out is not None:
        console.print(f"Results: {out / 'results.jsonl'}  logs: {out / 'logs'}")


@app.command()
def run(
    agent: Annotated[str, typer.Option("--agent", "-a", help="random or oracle")] = "random",
    task: Annotated[str, typer.Option("--task", "-t")] = "PickAndPlaceTest",
    difficulty: Annotated[str, typer.Option("--difficulty", "-d")] = "normal",
    seeds: Annotated[str, typer.Option("--seeds", help="e.g. 0-4 or 0,2,5")] = "0",
    max_steps: Annotated[int | None, typer.Option("--max-steps")] = None,
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("runs/run"),
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
) -> None:
    """Run an agent on one task; one JSONL log per episode plus results.jsonl."""
    from discoverylab.scenarios.registry import check_difficulty, get_task

    if agent not in AGENTS:
        _fail(f"Unknown agent {agent!r}. Valid agents: {', '.join(AGENTS)}.")
    try:
        cls = get_task(task)
        diff = check_difficulty(cls, difficulty)
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        _fail(str(exc))
    jobs = make_jobs([(cls.task_id, diff)], seed_list, agent, max_steps)
    _execute(jobs, out, 1, as_json, f"{agent} on {cls.task_id}")


@app.command()
def bench(
    agent: Annotated[str, typer.Option("--agent", "-a", help="random or oracle")] = "oracle",
    suite: Annotated[str, typer.Option("--suite", help="unit, discovery, tutorial or all")] = "all",
    difficulty: Annotated[str | None, typer.Option("--difficulty", "-d")] = None,
    seeds: Annotated[str, typer.Option("--seeds")] = "0-4",
    workers: Annotated[int, typer.Option("--workers", "-w")] = 2,
    max_steps: Annotated[int | None, typer.Option("--max-steps")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="results dir (resumable)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
) -> None:
    """Benchmark an agent over a suite, in parallel; a table per task (procedure, completion, steps)."""
    if agent not in AGENTS:
        _fail(f"Unknown agent {agent!r}. Valid agents: {', '.join(AGENTS)}.")
    if suite not in SUITES:
        _fail(f"Unknown suite {suite!r}. Valid suites: {', '.join(SUITES)}.")
    try:
        pairs = suite_tasks(suite, difficulty)
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        _fail(str(exc))
    if not pairs:
        _fail(f"No tasks in suite {suite!r} at difficulty {difficulty!r}.")
    jobs = make_jobs(pairs, seed_list, agent, max_steps)
    _execute(jobs, out, workers, as_json, f"{agent} agent, suite {suite}")


@app.command(hidden=True)
def docs(out: Annotated[Path, typer.Option("--out")] = Path("docs/tasks.md")) -> None:
    """Regenerate docs/tasks.md from the task registry."""
    from discoverylab.scenarios.docs import tasks_markdown

    out.write_text(tasks_markdown(), encoding="utf-8")
    console.print(f"wrote {out}")


app.add_typer(lab_app, name="lab", help="Tiny Labs: small black-box scientific sandboxes.")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
