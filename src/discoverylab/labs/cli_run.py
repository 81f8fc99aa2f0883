"""`discoverylab lab run`: run agents on protocols or on the labs of a suite, resumably, in parallel.

Only the terminal side is here (options, progress, tables, exit codes); the work is in `labs.runner`.
Exit codes: 0 all episodes ok, 1 some failed (error, llm_error, agent_error, timeout), 2 bad usage,
74 a write failed (full disk), 130/143 stopped by SIGINT/SIGTERM (a second signal exits at once).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from discoverylab.bench.exits import (
    EXIT_FAILED,
    exit_at_once_on_another_signal,
    outcome_code,
    redone_notice,
    stopped_code,
)
from discoverylab.labs.agents import UnknownAgentError
from discoverylab.labs.cli_common import (
    _fail,
    _parse_config,
    _parse_json_object,
    _split_key,
    console,
    err,
)
from discoverylab.labs.jobs import expand_protocols, make_jobs, make_spec_jobs
from discoverylab.labs.protocol import ProtocolError
from discoverylab.labs.run_record import LabRecord
from discoverylab.labs.runner import run_lab
from discoverylab.labs.summary import summarize


def _results_table(results: list[LabRecord]) -> Table:
    table = Table(title="Tiny Labs results (mean score per protocol and agent)")
    for col, just in (("protocol", "left"), ("agent", "left"), ("n", "right"), ("err", "right"),
                      ("score", "right"), ("95% CI", "right"), ("pass@3", "right"), ("turns", "right"),
                      ("s/ep", "right")):
        table.add_column(col, justify=just, no_wrap=col in ("protocol", "agent"))  # type: ignore[arg-type]
    for row in summarize(results):
        # A mean over unjudged episodes is not final (their judge part is missing): marked with `*`.
        score = f"{row['score']:.3f}" + (f"* ({row['unjudged']} unjudged)" if row["unjudged"] else "")
        table.add_row(row["protocol"], row["agent"], str(row["episodes"]), str(row["errors"]), score,
                      f"{row['ci_low']:.3f}-{row['ci_high']:.3f}", f"{row['pass_at_3']:.2f}",
                      f"{row['turns']:.1f}", f"{row['seconds']:.2f}")
    return table


def _parts_tables(results: list[LabRecord]) -> list[Table]:
    """One table per protocol: the grader's parts (rows) averaged per agent (columns)."""
    tables = []
    rows = summarize(results)
    for protocol in sorted({row["protocol"] for row in rows}):
        mine = [row for row in rows if row["protocol"] == protocol]
        names = sorted({name for row in mine for name in row["parts"]})
        if not names:
            continue
        table = Table(title=f"{protocol}: grader parts (mean over ok episodes)")
        table.add_column("part", no_wrap=True)
        for row in mine:
            table.add_column(row["agent"], justify="right")
        for name in names:
            table.add_row(name, *(f"{row['parts'][name]:.3f}" if name in row["parts"] else "-" for row in mine))
        tables.append(table)
    return tables


def _paper_tables(results: list[LabRecord]) -> list[Table]:
    """The paper's Tables 3, 5 and 7 (judged columns '-' when no judge ran)."""
    from discoverylab.labs.judging import paper_tables

    out = []
    titles = {"table3": "Table 3: hidden property, episode label and judge verdict (counts)",
              "table5": "Table 5: unknown dynamics rubric (0-5)", "table7": "Table 7: macro rubric (0-5)"}
    for key, rows in paper_tables(results).items():
        if not rows:
            continue
        table = Table(title=titles[key])
        for col in rows[0]:
            table.add_column(col, justify="left" if col in ("agent", "property") else "right")
        for row in rows:
            table.add_row(*("-" if v is None else str(v) for v in row.values()))
        out.append(table)
    return out


def _checked_seeds(text: str, labs: int, agents: int, what: str) -> list[int]:
    """The seeds of `--seeds`, once the run they make (every lab x agent x seed, listed before it
    starts) holds at most `bench.runner.MAX_SEEDS` episodes: before, `--seeds 0-99999999999` filled the memory."""
    from discoverylab.bench.runner import check_seed_count, parse_seed_ranges

    seeds = parse_seed_ranges(text)  # at most MAX_SEEDS seeds (whole numbers >= 0), not listed yet
    check_seed_count(len(seeds), text, labs * max(1, agents), f"{labs} {what} x {agents} agent(s) x ")
    return list(seeds)


def run(
    protocol: Annotated[str | None, typer.Argument(help="protocol name, lab name, or 'all' (not with --spec)")]
    = None,
    agent: Annotated[str, typer.Option("--agent", "-a", help="oracle, random, heuristic or llm (comma-separated)")]
    = "oracle",
    seeds: Annotated[str, typer.Option("--seeds", help="e.g. 0-4 or 0,2,5 (instance indices with --split)")] = "0",
    split: Annotated[str | None, typer.Option("--split", help="paper, dev, train or test (sealed): --seeds are "
                                              "then instance indices (default: raw public seeds)")] = None,
    eval_key_file: Annotated[Path | None, typer.Option("--eval-key-file", help="the evaluator's key for --split "
                                                       "test (default: $DISCOVERYLAB_EVAL_KEY)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="run directory (resumable)")] = None,
    workers: Annotated[int, typer.Option("--workers", "-w", min=1)] = 1,
    config: Annotated[str | None, typer.Option("--config", help="protocol options as a JSON object (shared or keyed by protocol name), or a preset name: paper")] = None,
    retries: Annotated[int, typer.Option("--retries", min=0, help="fresh attempts after a transient failure")] = 2,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="write PNG plots under OUT/plots")] = True,
    episode_timeout: Annotated[float | None, typer.Option(
        "--episode-timeout", min=0.001, envvar="DISCOVERYLAB_EPISODE_TIMEOUT",
        help="total seconds per episode (status timeout after)")] = None,
    request_timeout: Annotated[float | None, typer.Option(
        "--request-timeout", min=0.001, help="total seconds per LLM request, retries included "
        "(env DISCOVERYLAB_LLM_REQUEST_TIMEOUT)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON record per episode")] = False,
    spec: Annotated[Path | None, typer.Option("--spec", help="a lab spec file or a suite (from `lab generate`)")]
    = None,
    agent_options: Annotated[str | None, typer.Option(
        "--agent-options", help='LLM agent options as JSON, e.g. \'{"history_turns": 4, "limits": '
                                '{"macro_max_edges": 20}}\'')] = None,
    judge_model: Annotated[str | None, typer.Option(
        "--judge-model", help="grade with this LLM judge ('embedded': the offline model)")] = None,
    judge_base_url: Annotated[str | None, typer.Option(
        "--judge-base-url", help="OpenAI-compatible endpoint of the judge (default: the embedded model)")] = None,
) -> None:
    """Run agents on protocols (or on the labs of --spec): results.jsonl, transcripts, scores, plots."""
    options = _parse_config(config)
    judge = None
    if judge_model is not None or judge_base_url is not None:
        model = None if judge_model in (None, "embedded") else judge_model
        judge = {"model": model or "", "base_url": judge_base_url or ""}
    agent_kwargs = _parse_json_object(agent_options, "--agent-options")
    agents = [a.strip() for a in agent.split(",") if a.strip()]
    if (protocol is None) == (spec is None):
        _fail("give either a PROTOCOL (name, lab or 'all') or --spec FILE|SUITE")
    label = protocol or str(spec)
    key = _split_key(split, eval_key_file)
    try:
        if spec is not None:
            from discoverylab.labs.core.errors import LabError
            from discoverylab.labs.core.generator import read_suite

            try:
                suite = read_suite(spec)
                seed_list = _checked_seeds(seeds, len(suite), len(agents), "lab spec(s)")
                jobs = make_spec_jobs(suite, seed_list, agents, agent_kwargs, judge, split=split, key=key)
            except (LabError, OSError) as exc:
                _fail(f"--spec {spec}: {exc}")
        else:
            assert protocol is not None
            names = expand_protocols(protocol)
            seed_list = _checked_seeds(seeds, len(names), len(agents), "protocol(s)")
            jobs = make_jobs(names, seed_list, agents, options, agent_kwargs, judge, split=split, key=key)
    except (ProtocolError, UnknownAgentError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    except ValueError as exc:
        _fail(str(exc))
    if not jobs:
        _fail("nothing to run: give at least one agent")
    progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=err, disable=as_json and not err.is_terminal)
    from discoverylab.bench.rundir import RunConfigMismatch, RunDirError, RunLocked
    from discoverylab.bench.schema import status_line
    from discoverylab.llm.deadline import request_timeout_env

    try:
        with progress:
            bar = progress.add_task(f"{agent} on {label}", total=len(jobs))
            with request_timeout_env(request_timeout):  # workers inherit it; restored after the run
                outcome = run_lab(jobs, out, workers, on_done=lambda _r: progress.advance(bar), on_resume=redone_notice(err, out),
                                  retries=retries, plots=plots, episode_timeout=episode_timeout)
    except (RunConfigMismatch, RunDirError, RunLocked) as exc:
        _fail(str(exc))
    except (KeyboardInterrupt, OSError) as exc:  # a second signal; a failed read or lock (e.g. a full disk)
        raise typer.Exit(stopped_code(err, exc, out)) from None
    if outcome.interrupted:  # a late or second signal from here on exits at once, with the stop's code
        exit_at_once_on_another_signal()
    results = outcome.results
    failed = any(r.status != "ok" for r in results)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results]))
    else:
        _print_run(results, out, plots)
    unjudged = sum(r.status == "ok" and r.labels.get("judge_status") == "unjudged" for r in results)
    if unjudged and out is not None:
        err.print(f"[yellow]{unjudged} episode(s) unjudged (the judge failed, ran out of time or was stopped): their scores "
                  "leave the judge out and the means marked * are not final; grade them with "
                  f"`discoverylab lab judge {escape(str(out))} --unjudged-only`[/yellow]", soft_wrap=True)
    err.print(status_line([r.status for r in results] + ["interrupted"] * outcome.dropped), soft_wrap=True)
    code = outcome_code(err, outcome, len(jobs), out)  # breaker, full disk (74, as `discoverylab bench`), signal
    if code:
        raise typer.Exit(code)
    if failed:
        raise typer.Exit(EXIT_FAILED)


def _print_run(results: list[LabRecord], out: Path | None, plots: bool) -> None:
    console.print(_results_table(results))
    for table in _parts_tables(results):
        console.print(table)
    for table in _paper_tables(results):
        console.print(table)
    for record in results:
        if record.status != "ok":
            where = f"seed {record.seed}" if record.split == "seed" else f"{record.split}#{record.index}"
            err.print(f"[red]{record.protocol} {where} {record.agent}:[/red] {escape(record.error or '')}")
    if out is not None:
        console.print(f"Results: {out / 'results.jsonl'}  transcripts: {out / 'transcripts'}  "
                      f"scores: {out / 'scores'}" + (f"  plots: {out / 'plots'}" if plots else ""))
