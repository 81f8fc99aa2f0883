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

from discoverylab.agents import AGENT_NAMES, LLM_AGENTS
from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.presets import PRESETS, resolve
from discoverylab.bench.runner import SUITES, make_jobs, parse_seeds, run_jobs, suite_tasks, summarize
from discoverylab.labs.cli import lab_app

app = typer.Typer(help="discoverylab: scientific-discovery environments for AI agents.", no_args_is_help=True)
# Piped output (CI logs, `make run | tee`) gets a fixed width wide enough for the result tables.
console = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

AGENTS = AGENT_NAMES
AGENT_HELP = "random, oracle, react, plan-execute or hypothesizer"
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="LLM model name (default: the endpoint's first)")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint ending in /v1 (default: $DISCOVERYLAB_LLM_BASE_URL, else the embedded offline model)")]
MaxCostOpt = Annotated[float | None, typer.Option("--max-cost", help="per-episode cost ceiling in USD (prices: built-in table + --prices)")]
PricesOpt = Annotated[Path | None, typer.Option("--prices", help='JSON file {"model": [usd_per_M_input, usd_per_M_output]} extending the price table')]
TempOpt = Annotated[float, typer.Option("--temperature")]
JsonModeOpt = Annotated[str, typer.Option("--json-mode", help="json_schema (constrained decoding), json_object or prompt, for servers without schema support")]
JSON_MODES = ("json_schema", "json_object", "prompt")
VisionOpt = Annotated[bool, typer.Option("--vision", help="hypothesizer: also send the rendered view as a PNG (models that read images)")]
JudgeOpt = Annotated[bool, typer.Option("--judge/--no-judge", help="grade LLM agents' knowledge at the end of each episode")]
JudgeModelOpt = Annotated[str | None, typer.Option("--judge-model", help="judge model (default: the agent's)")]
JudgeUrlOpt = Annotated[str | None, typer.Option("--judge-base-url", help="judge endpoint (default: the agent's)")]


def _llm_settings(agent: str, model: str | None, base_url: str | None, temperature: float,
                  max_cost: float | None, prices: Path | None, json_mode: str = "json_schema",
                  vision: bool = False) -> LLMSettings | None:  # fmt: skip
    if agent not in LLM_AGENTS:
        return None
    if json_mode not in JSON_MODES:
        _fail(f"Unknown --json-mode {json_mode!r}. Valid: {', '.join(JSON_MODES)}.")
    from discoverylab.agents.pricing import PriceError, load_prices, price_of

    settings = LLMSettings(model=model, base_url=base_url, temperature=temperature, max_cost=max_cost,
                           prices_file=str(prices) if prices else None, json_mode=json_mode, vision=vision)  # fmt: skip
    try:
        table = load_prices(settings.prices_file)
    except PriceError as exc:
        _fail(str(exc))
    if max_cost is not None and not settings.embedded and (model is None or price_of(model, table) is None):
        _fail(f"--max-cost needs the price of the model {model!r}: pass --model and add it with --prices FILE.")
    return settings


def _judge_settings(llm: LLMSettings | None, judge: bool, model: str | None, base_url: str | None) -> LLMSettings | None:
    if llm is None or not judge:
        return None
    if model is None and base_url is None:
        return LLMSettings(model=llm.model, base_url=llm.base_url)
    return LLMSettings(model=model, base_url=base_url)


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
    _print_scorecard(info["scorecard"])


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
    agent: Annotated[str, typer.Option("--agent", "-a", help=AGENT_HELP)] = "random",
    task: Annotated[str, typer.Option("--task", "-t")] = "PickAndPlaceTest",
    difficulty: Annotated[str, typer.Option("--difficulty", "-d")] = "normal",
    seeds: Annotated[str, typer.Option("--seeds", help="e.g. 0-4 or 0,2,5")] = "0",
    max_steps: Annotated[int | None, typer.Option("--max-steps")] = None,
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("runs/run"),
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    temperature: TempOpt = 0.0,
    json_mode: JsonModeOpt = "json_schema",
    vision: VisionOpt = False,
    max_cost: MaxCostOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = True,
    judge_model: JudgeModelOpt = None,
    judge_base_url: JudgeUrlOpt = None,
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
    llm = _llm_settings(agent, model, base_url, temperature, max_cost, prices, json_mode, vision)
    jobs = make_jobs([(cls.task_id, diff)], seed_list, agent, max_steps, llm, _judge_settings(llm, judge, judge_model, judge_base_url))
    _execute(jobs, out, 1, as_json, f"{agent} on {cls.task_id}")


@app.command()
def bench(
    agent: Annotated[str, typer.Option("--agent", "-a", help=AGENT_HELP)] = "oracle",
    suite: Annotated[str | None, typer.Option("--suite", help="unit, discovery, tutorial or all (default all)")] = None,
    difficulty: Annotated[str | None, typer.Option("--difficulty", "-d")] = None,
    seeds: Annotated[str | None, typer.Option("--seeds", help="e.g. 0-4 (default) or 0,2,5")] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", help="processes (1 for LLM agents on the embedded model)")] = 2,
    max_steps: Annotated[int | None, typer.Option("--max-steps")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="results dir (resumable)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
    preset: Annotated[str | None, typer.Option("--preset", help=f"paper setting: {', '.join(PRESETS)}")] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    temperature: TempOpt = 0.0,
    json_mode: JsonModeOpt = "json_schema",
    vision: VisionOpt = False,
    max_cost: MaxCostOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = True,
    judge_model: JudgeModelOpt = None,
    judge_base_url: JudgeUrlOpt = None,
) -> None:
    """Benchmark an agent over a suite, in parallel; a table per task (procedure, completion, steps)."""
    try:
        opts = resolve(preset, suite=suite, difficulty=difficulty, seeds=seeds, max_steps=max_steps, max_cost=max_cost)
    except ValueError as exc:
        _fail(str(exc))
    suite, difficulty, seeds, max_steps = opts["suite"], opts["difficulty"], opts["seeds"], opts["max_steps"]
    assert suite is not None and seeds is not None
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
    llm = _llm_settings(agent, model, base_url, temperature, opts["max_cost"], prices, json_mode, vision)
    if llm is not None and llm.embedded:
        workers = 1  # one embedded model per process would share the same cores
    jobs = make_jobs(pairs, seed_list, agent, max_steps, llm, _judge_settings(llm, judge, judge_model, judge_base_url))
    _execute(jobs, out, workers, as_json, f"{agent} agent, suite {suite}")


@app.command("judge")
def judge_cmd(
    run_dir: Annotated[Path, typer.Argument(help="a folder written by `bench --out` / `run --out`")],
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print rows as JSON")] = False,
) -> None:
    """Re-grade the knowledge of every episode of a saved run (writes RUN_DIR/knowledge.jsonl)."""
    from discoverylab.bench.judging import KNOWLEDGE_FILE, judge_run, make_judge

    if not (run_dir / "results.jsonl").is_file():
        _fail(f"no results.jsonl in {run_dir}: pass a folder written by `discoverylab bench --out`.")
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
