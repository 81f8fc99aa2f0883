"""The `discoverylab` command: list tasks, play in the terminal, run agents, benchmark.

Shared options and the error exit live in `options`; `report` and `judge` (saved runs) in
`saved_runs`; both are registered here so the command list keeps its order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
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
from discoverylab.bench.exits import EXIT_FAILED, outcome_code, redone_notice, stopped_code
from discoverylab.bench.exits import exit_at_once_on_another_signal as _exit_at_once_on_another_signal
from discoverylab.bench.live import LiveBoard
from discoverylab.bench.presets import PRESETS, resolve
from discoverylab.bench.rundir import (
    RUN_FILE,
    RunConfigMismatch,
    RunDirError,
    RunLock,
    RunLocked,
    check_config,
    check_out,
)
from discoverylab.bench.runner import (
    BACKENDS,
    SUITES,
    Job,
    iter_jobs,
    parse_seed_ranges,
    run_bench,
    suite_tasks,
)
from discoverylab.bench.schema import status_line
from discoverylab.cli import audit as audit_cmd
from discoverylab.cli import saved_runs, ui_logs
from discoverylab.cli.native_cli import native_app
from discoverylab.cli.options import (
    AGENT_HELP,
    AGENTS,
    AddressOpt,
    BackendOpt,
    BaseUrlOpt,
    EndActionOpt,
    EpisodeTimeoutOpt,
    EvalKeyOpt,
    JsonModeOpt,
    JudgeModelOpt,
    JudgeOpt,
    JudgeUrlOpt,
    MaxCostOpt,
    MaxStepsOpt,
    ModelOpt,
    PricesOpt,
    RequestTimeoutOpt,
    SplitOpt,
    TempOpt,
    VisionOpt,
    WorkersOpt,
    any_embedded,
    check_indices,
    check_llm_env,
    check_sealed_judge,
    console,
    err,
    fail,
    judge_settings,
    llm_settings,
    split_key,
    stored_config,
    warn_embedded_judge,
)
from discoverylab.cli.tables import print_scorecard, results_table
from discoverylab.labs.cli import lab_app
from discoverylab.server import cli as server_cli
from discoverylab.ui import cli as ui_cli

app = typer.Typer(help="discoverylab: scientific-discovery environments for AI agents.", no_args_is_help=True)



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
    logs: Annotated[Path, typer.Option("--logs", help="folder for the game's log (as the browser UI's)")] = Path("runs/play"),
) -> None:
    """Play a task in the terminal (type 'help' for commands); logged like a browser game."""
    from discoverylab.cli.terminal_play import play_in_terminal
    from discoverylab.ui.games import UIError

    try:
        game = play_in_terminal(console, task, difficulty, seed, max_steps, logs)
    except UIError as exc:
        fail(str(exc))
    if not game.log_path.exists():  # left before the first move: no record, so no gold (as the page)
        console.print("Nothing was recorded (no move was made), so no scorecard is shown.")
        return
    print_scorecard(game.env.scorecard(reveal=True))  # the session is over and recorded: the full card


def _execute(jobs: Iterable[Job], total: int, out: Path | None, workers: int, as_json: bool, title: str,
             config: dict[str, Any], episode_timeout: float | None = None, request_timeout: float | None = None,
             backend: str = "local", address: str | None = None, embedded: bool = False) -> None:

    if embedded and workers > 1:  # one embedded model per worker would fight over the same cores
        err.print("[dim]The embedded model serves one episode at a time: 1 worker (a --base-url server can take "
                  "parallel episodes).[/dim]", soft_wrap=True)  # fmt: skip
        workers = 1

    if backend not in BACKENDS:
        fail(f"Unknown backend {backend!r}. Valid backends: {', '.join(BACKENDS)}.")
    if out is not None:
        try:
            check_out(out)  # before the progress bar: a bad --out is a one-line error, nothing else
            with RunLock(out):  # so is a folder in use or one of other settings (before: a 0/N bar first)
                if (out / RUN_FILE).is_file():  # (a stored config is only compared; the run checks it again)
                    check_config(out, "discoveryworld", config, has_records=True)
        except (RunDirError, RunLocked, RunConfigMismatch) as exc:
            fail(str(exc))
    progress = Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[live]}"), console=err,
        disable=as_json and not err.is_terminal,
    )  # fmt: skip

    board = LiveBoard()  # steps, requests, tokens and cost of this run so far, running episodes included

    def done(record: EpisodeRecord) -> None:
        board.add_record(record)
        progress.update(bar, advance=1, live=board.describe())

    try:
        from discoverylab.llm.deadline import request_timeout_env

        # --request-timeout: an environment variable the workers inherit, restored after the run
        with request_timeout_env(request_timeout), progress, board.refreshing(lambda t: progress.update(bar, live=t)):
            bar = progress.add_task(title, total=total, live="")
            outcome = run_bench(jobs, out, workers, total=total, config=config, on_done=done, on_resume=redone_notice(err, out),
                                episode_timeout=episode_timeout, backend=backend, address=address)  # fmt: skip
    except (RunDirError, RunLocked, RunConfigMismatch) as exc:
        fail(str(exc))
    except (KeyboardInterrupt, OSError) as exc:  # a second signal; a failed read or lock (e.g. a full disk)
        raise typer.Exit(stopped_code(err, exc, out)) from None
    finally:
        board.close()
    if outcome.interrupted:
        _exit_at_once_on_another_signal()
    results = outcome.results
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=None))
    else:
        console.print(results_table(title, results))
        if out is not None:
            console.print(f"Results: {out / 'results.jsonl'}  logs: {out / 'logs'}")
    statuses = [r.status for r in results] + ["interrupted"] * outcome.dropped
    err.print(status_line(statuses), soft_wrap=True)
    for rec in results:
        if rec.status != "ok":
            first = (rec.error or "").strip().splitlines()[:1]
            err.print(f"[red]{rec.status}[/red] {rec.task} {rec.difficulty} {rec.key[2]}: {escape(first[0] if first else '')}")
    unjudged = sum(r.status == "ok" and r.knowledge_status == "unjudged" for r in results)
    if unjudged:  # the episodes are ok (exit 0) but their knowledge is not graded: say so, as `report` does
        how = f"`discoverylab judge {escape(str(out))} --unjudged-only`" if out is not None else "`discoverylab judge` on a run saved with --out"
        err.print(f"[yellow]{unjudged} ok episode(s) with unjudged knowledge (the judge failed or was stopped; see knowledge_error): "
                  f"grade them with {how}[/yellow]", soft_wrap=True)  # fmt: skip
    code = outcome_code(err, outcome, total, out)
    if code:
        raise typer.Exit(code)
    if any(r.status != "ok" for r in results):
        raise typer.Exit(EXIT_FAILED)


@app.command()
def run(
    agent: Annotated[str, typer.Option("--agent", "-a", help=AGENT_HELP)] = "random",
    task: Annotated[str, typer.Option("--task", "-t")] = "PickAndPlaceTest",
    difficulty: Annotated[str, typer.Option("--difficulty", "-d")] = "normal",
    seeds: Annotated[str, typer.Option("--seeds", help="e.g. 0-4 or 0,2,5 (instance indices with --split)")] = "0",
    split: SplitOpt = None,
    eval_key_file: EvalKeyOpt = None,
    max_steps: MaxStepsOpt = None,
    out: Annotated[Path, typer.Option("--out", "-o")] = Path("runs/run"),
    workers: WorkersOpt = 1,
    episode_timeout: EpisodeTimeoutOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    temperature: TempOpt = 0.0,
    json_mode: JsonModeOpt = "json_schema",
    vision: VisionOpt = False,
    end_action: EndActionOpt = False,
    max_cost: MaxCostOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = True,
    judge_model: JudgeModelOpt = None,
    judge_base_url: JudgeUrlOpt = None,
) -> None:
    """Run an agent on one task; one JSONL log per episode plus results.jsonl."""
    from discoverylab.scenarios.registry import check_difficulty, get_task

    if agent not in AGENTS:
        fail(f"Unknown agent {agent!r}. Valid agents: {', '.join(AGENTS)}.")
    try:
        cls = get_task(task)
        diff = check_difficulty(cls, difficulty)
        seed_list = parse_seed_ranges(seeds)
    except ValueError as exc:
        fail(str(exc))
    key = split_key(split, eval_key_file)
    check_indices(cls.task_id, diff, split, key, seed_list)
    pairs = [(cls.task_id, diff)]
    llm = llm_settings(agent, model, base_url, temperature, max_cost, prices, json_mode, vision, end_action)
    if llm is not None:
        check_llm_env(request_timeout)
    check_sealed_judge(split, pairs, llm, judge, judge_model, judge_base_url)
    judge_llm = judge_settings(llm, judge, judge_model, judge_base_url)
    warn_embedded_judge(judge_llm, pairs)
    jobs = iter_jobs(pairs, seed_list, agent, max_steps, llm, judge_llm, split=split, key=key)
    _execute(jobs, len(seed_list), out, workers, as_json,
             f"{agent} on {cls.task_id}", stored_config(max_steps, llm, judge_llm, split, key), episode_timeout,
             request_timeout, embedded=any_embedded(llm, judge_llm))  # fmt: skip


@app.command()
def bench(
    agent: Annotated[str, typer.Option("--agent", "-a", help=AGENT_HELP)] = "oracle",
    suite: Annotated[str | None, typer.Option("--suite", help="unit, discovery, tutorial or all (default all)")] = None,
    task: Annotated[str | None, typer.Option("--task", "-t", help="only this task (all its difficulties)")] = None,
    difficulty: Annotated[str | None, typer.Option("--difficulty", "-d")] = None,
    seeds: Annotated[str | None, typer.Option("--seeds", help="e.g. 0-4 (default) or 0,2,5 (instance indices with --split)")] = None,
    split: SplitOpt = None,
    eval_key_file: EvalKeyOpt = None,
    workers: WorkersOpt = 2,
    max_steps: MaxStepsOpt = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="results dir (resumable)")] = None,
    episode_timeout: EpisodeTimeoutOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print records as JSON")] = False,
    preset: Annotated[str | None, typer.Option("--preset", help=f"paper setting: {', '.join(PRESETS)}")] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    temperature: TempOpt = 0.0,
    json_mode: JsonModeOpt = "json_schema",
    vision: VisionOpt = False,
    end_action: EndActionOpt = False,
    max_cost: MaxCostOpt = None,
    prices: PricesOpt = None,
    judge: JudgeOpt = True,
    judge_model: JudgeModelOpt = None,
    judge_base_url: JudgeUrlOpt = None,
) -> None:
    """Benchmark an agent over a suite, in parallel; a table per task (procedure, completion, steps)."""
    try:
        opts = resolve(preset, suite=suite, difficulty=difficulty, seeds=seeds, max_steps=max_steps, max_cost=max_cost,
                       vision=vision or None, end_action=end_action or None)  # fmt: skip
    except ValueError as exc:
        fail(str(exc))
    suite, difficulty, seeds, max_steps = opts["suite"], opts["difficulty"], opts["seeds"], opts["max_steps"]
    assert suite is not None and seeds is not None
    if agent not in AGENTS:
        fail(f"Unknown agent {agent!r}. Valid agents: {', '.join(AGENTS)}.")
    if suite not in SUITES:
        fail(f"Unknown suite {suite!r}. Valid suites: {', '.join(SUITES)}.")
    try:
        pairs = suite_tasks(suite, difficulty)
        if task is not None:
            from discoverylab.scenarios.registry import check_difficulty, get_task

            cls = get_task(task)
            if difficulty is not None:
                check_difficulty(cls, difficulty)  # the task's own levels (before: "no tasks in suite 'all'")
            if suite != "all" and cls.suite != suite:  # before: "No tasks in suite 'unit' at difficulty None."
                raise ValueError(f"Task {cls.task_id} is in suite {cls.suite!r}, not {suite!r}: leave out --suite "
                                 f"or use --suite {cls.suite}.")  # fmt: skip
            pairs = [(tid, diff) for tid, diff in pairs if tid == cls.task_id]
        seed_list = parse_seed_ranges(seeds)
    except ValueError as exc:
        fail(str(exc))
    if not pairs:
        fail(f"No tasks in suite {suite!r} at difficulty {difficulty!r}.")
    key = split_key(split, eval_key_file)
    check_indices(*pairs[0], split, key, seed_list)
    llm = llm_settings(agent, model, base_url, temperature, opts["max_cost"], prices, json_mode, opts["vision"],
                       opts["end_action"])  # fmt: skip
    if llm is not None:
        check_llm_env(request_timeout)
    check_sealed_judge(split, pairs, llm, judge, judge_model, judge_base_url)
    judge_llm = judge_settings(llm, judge, judge_model, judge_base_url)
    warn_embedded_judge(judge_llm, pairs)
    jobs = iter_jobs(pairs, seed_list, agent, max_steps, llm, judge_llm, split=split, key=key)
    title = f"{agent} agent, " + (f"task {pairs[0][0]}" if task is not None else f"suite {suite}")
    _execute(jobs, len(pairs) * len(seed_list), out, workers,
             as_json, title, stored_config(max_steps, llm, judge_llm, split, key), episode_timeout,
             request_timeout, backend, address, embedded=any_embedded(llm, judge_llm))  # fmt: skip


app.command()(saved_runs.report)  # (a UI logs folder: Table 6, see saved_runs.report)
app.command("judge")(ui_logs.or_ui_logs(saved_runs.judge_cmd, ui_logs.judge_ui_logs))
app.command()(audit_cmd.audit)


@app.command(hidden=True)
def docs(out: Annotated[Path, typer.Option("--out")] = Path("docs/tasks.md")) -> None:
    """Regenerate docs/tasks.md from the task registry (and docs/answer_sheets.md beside it)."""
    from discoverylab.scenarios.answer_docs import answer_sheets_markdown
    from discoverylab.scenarios.docs import tasks_markdown

    out.write_text(tasks_markdown(), encoding="utf-8")
    sheets = out.parent / "answer_sheets.md"
    sheets.write_text(answer_sheets_markdown(), encoding="utf-8")
    console.print(f"wrote {out} and {sheets}")


app.add_typer(lab_app, name="lab", help="Tiny Labs: small black-box scientific sandboxes.")
app.add_typer(native_app, name="native")
app.command()(ui_cli.serve)
app.command()(ui_cli.replay)
app.command("env-serve")(server_cli.env_serve)
app.command("export-sft")(server_cli.export_sft)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
