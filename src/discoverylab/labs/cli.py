"""`discoverylab lab ...`: list the Tiny Labs, play one as the agent, run baseline or LLM agents.

    discoverylab lab list
    discoverylab lab play sequence/hidden-property --seed 3
    discoverylab lab run all --agent oracle,random --seeds 0-4 --out runs/labs --workers 2 --json
    discoverylab lab run all --agent heuristic --config paper      # the paper's fixed instances
    discoverylab lab generate --complexity medium --n 20 --out suite.yaml
    discoverylab lab run --spec suite.yaml --agent oracle,random,heuristic --seeds 0-2
    discoverylab lab verify suite.yaml

`PROTOCOL` is a protocol name (`sequence/hidden-property`), a lab name (`sequence`: all of its
protocols) or `all`. Only this module talks to the terminal; the work is in `labs.runner`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from discoverylab.labs.agents import UnknownAgentError
from discoverylab.labs.jobs import LabJob, available_agents, expand_protocols, make_jobs, make_spec_jobs
from discoverylab.labs.protocol import ProtocolError, Score, make_protocol, protocol_entry, protocol_names
from discoverylab.labs.run_record import LabRecord
from discoverylab.labs.runner import run_lab, write_json
from discoverylab.labs.summary import summarize

lab_app = typer.Typer(help="Tiny Labs: small black-box scientific sandboxes.", no_args_is_help=True)
# Piped output (logs, `| tee`) gets a fixed width wide enough for the result tables.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

PLAY_HELP = ("Type your message to the lab; an empty line sends it (messages may span several lines). "
             "Commands: ':quit' ends the episode and grades it, ':help' shows this text.")


def _split_key(split: str | None, key_file: Path | None) -> bytes | None:
    """The evaluator's key when `split` is the sealed test split; a missing key is a one-line error."""
    from discoverylab.instances import SEALED_SPLIT, SPLITS, InstanceError, load_key

    if split is None:
        if key_file is not None:
            _fail("--eval-key-file goes with --split test")
        return None
    if split not in SPLITS:
        _fail(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    if split != SEALED_SPLIT:
        return None
    try:
        key = load_key(key_file)
    except InstanceError as exc:
        _fail(str(exc))
    if key is None:
        _fail("the test split is sealed: it needs the evaluator's key (set $DISCOVERYLAB_EVAL_KEY or pass --eval-key-file FILE)")
    return key


def _fail(message: str) -> NoReturn:
    err.print(f"[red]Error:[/red] {escape(message)}", soft_wrap=True)
    raise typer.Exit(2)


def _parse_config(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    if text.strip().isidentifier():  # a preset name: --config paper
        return {"preset": text.strip()}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"--config must be a JSON object, e.g. '{{\"rounds\": 6}}' ({exc})")
    if not isinstance(config, dict):
        _fail("--config must be a JSON object, e.g. '{\"rounds\": 6}'")
    return config


def parse_seeds(text: str) -> list[int]:
    """'0-4' -> [0..4]; '1,3,5' -> [1, 3, 5]; '7' -> [7]."""
    from discoverylab.bench.runner import parse_seeds as parse

    seeds = parse(text)
    if any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be >= 0, got {text!r}")
    return seeds


@lab_app.command("list")
def list_labs(as_json: Annotated[bool, typer.Option("--json", help="print the list as JSON")] = False) -> None:
    """List the labs, their protocols, agents and Gymnasium ids."""
    from discoverylab.labs.gym_text import lab_gym_id

    rows: list[dict[str, Any]] = []
    for name in protocol_names():
        lab = name.split("/", 1)[0]
        rows.append({"lab": lab, "protocol": name, "agents": available_agents(lab), "gym_id": lab_gym_id(name),
                     "summary": protocol_entry(name).summary})
    if as_json:
        typer.echo(json.dumps(rows))
        return
    table = Table(title="Tiny Labs")
    table.add_column("protocol", no_wrap=True)
    table.add_column("agents")
    table.add_column("summary", overflow="fold")
    for row in rows:
        table.add_row(row["protocol"], ", ".join(row["agents"]), row["summary"])
    console.print(table)
    console.print("Gymnasium ids (registered by `import discoverylab`):")
    for row in rows:
        console.print(f"  {row['gym_id']}", soft_wrap=True)


# ---------------------------------------------------------------------- play
def _read_message() -> str | None:
    """Lines up to an empty line; None at end of input with nothing typed."""
    lines: list[str] = []
    while True:
        try:
            line = console.input("[bold cyan]> [/bold cyan]" if not lines else "[cyan]. [/cyan]")
        except (EOFError, KeyboardInterrupt):
            return "\n".join(lines) if lines else None
        if not line.strip():
            if lines:
                return "\n".join(lines)
            continue
        lines.append(line)


def _print_score(title: str, score: Score) -> None:
    table = Table(title=title)
    table.add_column("part")
    table.add_column("value", justify="right")
    for name, value in score.parts.items():
        table.add_row(name, f"{value:.3f}")
    table.add_row("[bold]score[/bold]", f"[bold]{score.score:.3f}[/bold]")
    console.print(table)
    if score.labels:
        console.print("labels: " + ", ".join(f"{k}={escape(str(v))}" for k, v in score.labels.items()))


@lab_app.command()
def play(
    protocol: Annotated[str, typer.Argument(help="protocol name, e.g. sequence/hidden-property")],
    seed: Annotated[int, typer.Option("--seed", "-s")] = 0,
    config: Annotated[str | None, typer.Option("--config", help="protocol options as a JSON object, or a preset name (paper)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="save transcript and score here")] = None,
) -> None:
    """Play a protocol yourself: you type the agent's messages, the lab replies, the grade comes last."""
    options = _parse_config(config)
    try:
        lab = make_protocol(protocol, **options)
    except (ProtocolError, KeyError, ValueError, TypeError) as exc:
        _fail(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))
    console.print(f"[bold]{escape(protocol)}[/bold], seed {seed}. {PLAY_HELP}\n")
    console.print(escape(lab.reset(seed)))
    while not lab.done:
        message = _read_message()
        if message is None or message.strip() in (":quit", ":q"):
            console.print("[yellow]Episode stopped before the lab ended it.[/yellow]")
            break
        if message.strip() == ":help":
            console.print(PLAY_HELP)
            continue
        console.print(escape(lab.step(message).text))
    try:
        score = lab.grade()
    except Exception as exc:  # noqa: BLE001 - an unfinished episode may not be gradable; say so
        _fail(f"could not grade this episode: {exc}")
    _print_score(f"Grade ({protocol}, seed {seed})", score)
    if out is not None:
        job = LabJob(protocol, seed, "human", options)
        record = LabRecord(lab=job.lab, protocol=protocol, seed=seed, agent="human", score=score.score,
                           parts=score.parts, labels=score.labels, turns=lab.turn, config=options)
        transcript = [{"type": "message", **e.model_dump(mode="json")} for e in lab.transcript]
        from discoverylab.bench import records

        records.write_jsonl(out / "transcripts" / f"{job.stem}.jsonl", transcript)
        write_json(out / "scores" / f"{job.stem}.json", {**record.model_dump(mode="json"), "details": score.details})
        console.print(f"Saved to {out}")


# ---------------------------------------------------------------------- run
def _results_table(results: list[LabRecord]) -> Table:
    table = Table(title="Tiny Labs results (mean score per protocol and agent)")
    for col, just in (("protocol", "left"), ("agent", "left"), ("n", "right"), ("err", "right"),
                      ("score", "right"), ("95% CI", "right"), ("pass@3", "right"), ("turns", "right"),
                      ("s/ep", "right")):
        table.add_column(col, justify=just, no_wrap=col in ("protocol", "agent"))  # type: ignore[arg-type]
    for row in summarize(results):
        table.add_row(row["protocol"], row["agent"], str(row["episodes"]), str(row["errors"]), f"{row['score']:.3f}",
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


def _parse_json_object(text: str | None, option: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"{option} must be a JSON object ({exc})")
    if not isinstance(value, dict):
        _fail(f"{option} must be a JSON object")
    return value


@lab_app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", "-o", help="suite file: .yaml (a list of specs) or .jsonl")],
    complexity: Annotated[str, typer.Option("--complexity", "-c", help="easy, medium or hard")] = "medium",
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="number of verified labs")] = 10,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0)] = 0,
    lab: Annotated[str, typer.Option("--lab")] = "sequence",
) -> None:
    """Generate N labs at a complexity, keep those that pass `verify`, and write them as a suite."""
    from discoverylab.labs.core.errors import LabError
    from discoverylab.labs.core.generator import generate_suite, write_suite

    try:
        kept = generate_suite(n, complexity, seed, lab=lab)
    except (LabError, KeyError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    write_suite(out, [spec for spec, _ in kept])
    table = Table(title=f"{len(kept)} verified {complexity} labs")
    for col in ("name", "protocol", "length", "verify s"):
        table.add_column(col)
    for spec, report in kept:
        table.add_row(spec.name, spec.protocol.kind if spec.protocol else "-", str(spec.objects.length),
                      f"{report.seconds:.1f}")
    console.print(table)
    console.print(f"Suite: {out}  (run it: discoverylab lab run --spec {out} --agent heuristic)")


@lab_app.command("verify")
def verify_labs(
    spec: Annotated[Path, typer.Argument(help="a spec file (YAML/JSON) or a suite written by `lab generate`")],
    quick: Annotated[bool, typer.Option("--quick", help="the lighter budget used by `generate`")] = False,
    modules: Annotated[list[str] | None, typer.Option("--import", help="module registering custom kinds")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the reports as JSON")] = False,
) -> None:
    """Verify labs (spec §1.6 plus learnability and determinism across processes); exit 1 if one fails."""
    import importlib

    from discoverylab.labs.core.generator import read_suite
    from discoverylab.labs.core.verify import QUICK, verify

    for module in modules or []:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            _fail(f"cannot import {module!r}: {exc}")
    try:
        specs = read_suite(spec)
    except (OSError, ValueError) as exc:
        _fail(f"cannot read {spec}: {exc}")
    reports = [verify(s, budget=QUICK if quick else None) for s in specs]
    if as_json:
        console.print_json(json.dumps([r.to_dict() for r in reports]))
    else:
        for report in reports:
            table = Table(title=f"{report.spec_name}: {'PASS' if report.passed else 'FAIL'}")
            for col in ("check", "result", "detail"):
                table.add_column(col)
            for c in report.checks:
                table.add_row(c.name, {True: "pass", False: "FAIL", None: "-"}[c.passed], escape(c.detail[:200]))
            console.print(table)
    if not all(r.passed for r in reports):
        raise typer.Exit(1)


@lab_app.command()
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
                jobs = make_spec_jobs(read_suite(spec), parse_seeds(seeds), agents, agent_kwargs, judge,
                                      split=split, key=key)
            except (LabError, OSError) as exc:
                _fail(f"--spec {spec}: {exc}")
        else:
            assert protocol is not None
            jobs = make_jobs(expand_protocols(protocol), parse_seeds(seeds), agents, options, agent_kwargs, judge,
                             split=split, key=key)
    except (ProtocolError, UnknownAgentError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    except ValueError as exc:
        _fail(str(exc))
    if not jobs:
        _fail("nothing to run: give at least one agent")
    progress = Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=err, disable=as_json and not err.is_terminal)
    from discoverylab.bench.rundir import RunConfigMismatch, RunDirError, RunLocked, Scan, describe_io_error
    from discoverylab.bench.schema import status_line
    from discoverylab.llm.client import ENV_REQUEST_TIMEOUT

    if request_timeout is not None:
        os.environ[ENV_REQUEST_TIMEOUT] = str(request_timeout)  # workers inherit it

    def resumed(scan: Scan[LabRecord]) -> None:
        if scan.bad and out is not None:
            err.print(f"[yellow]{out / 'results.jsonl'}: {escape(scan.describe_bad())}; those episodes are redone[/yellow]")

    hint = ("resume with: discoverylab " + shlex.join(sys.argv[1:])) if out is not None else \
        "nothing was recorded (no --out); give --out DIR to make a run resumable"
    try:
        with progress:
            bar = progress.add_task(f"{agent} on {label}", total=len(jobs))
            outcome = run_lab(jobs, out, workers, on_done=lambda _r: progress.advance(bar), on_resume=resumed,
                              retries=retries, plots=plots, episode_timeout=episode_timeout)
    except (RunConfigMismatch, RunDirError, RunLocked) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        err.print(f"[red]Stopped at once (second signal).[/red] Finished episodes are recorded; {escape(hint)}", soft_wrap=True)
        raise typer.Exit(130) from None
    except OSError as exc:  # e.g. the disk filled while the run directory was being read or locked
        err.print(f"[red]Stopped:[/red] {escape(describe_io_error(exc))}; free space, then {escape(hint)}", soft_wrap=True)
        raise typer.Exit(74) from None
    results = outcome.results
    failed = any(r.status != "ok" for r in results)
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results]))
    else:
        _print_run(results, out, plots)
    err.print(status_line([r.status for r in results] + ["interrupted"] * outcome.dropped), soft_wrap=True)
    if outcome.breaker_message:
        not_run = len(jobs) - len(results) - outcome.dropped
        err.print(f"[red]Circuit breaker:[/red] {escape(outcome.breaker_message)} ({not_run} not run)", soft_wrap=True)
    if outcome.io_error:  # a full disk: exit 74 (EX_IOERR), like `discoverylab bench`
        err.print(f"[red]Stopped:[/red] {escape(outcome.io_error)}; {len(results)} of {len(jobs)} episodes recorded, "
                  f"{outcome.dropped} dropped; free space, then {escape(hint)}", soft_wrap=True)
        raise typer.Exit(74)
    if outcome.interrupted:
        err.print(f"[yellow]Interrupted by {outcome.interrupted}[/yellow]: {len(results)} of {len(jobs)} episodes done, "
                  f"{outcome.dropped} in flight dropped; {escape(hint)}", soft_wrap=True)
        raise typer.Exit(130 if outcome.interrupted == "SIGINT" else 143)
    if failed:
        raise typer.Exit(1)


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
