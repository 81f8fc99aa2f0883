"""`discoverylab lab ...`: list the Tiny Labs, play one as the agent, run baseline or LLM agents.

    discoverylab lab list
    discoverylab lab play sequence/hidden-property --seed 3
    discoverylab lab run all --agent oracle,random --seeds 0-4 --out runs/labs --workers 2 --json
    discoverylab lab run all --agent heuristic --config paper      # the paper's fixed instances
    discoverylab lab generate --complexity medium --n 20 --out suite.yaml
    discoverylab lab run --spec suite.yaml --agent oracle,random,heuristic --seeds 0-2
    discoverylab lab verify suite.yaml
    discoverylab lab judge runs/labs --unjudged-only --judge-base-url URL   # grade what the judge missed

`PROTOCOL` is a protocol name (`sequence/hidden-property`), a lab name (`sequence`: all of its
protocols) or `all`. Only the `cli*` modules talk to the terminal (`run` is in `cli_run`, `judge` in
`cli_judge`, what they share in `cli_common`); the work is in `labs.runner` and `labs.rejudge`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from discoverylab.labs.cli_common import _fail, _parse_config, console
from discoverylab.labs.cli_judge import judge
from discoverylab.labs.cli_run import run
from discoverylab.labs.jobs import LabJob, available_agents
from discoverylab.labs.protocol import ProtocolError, Score, make_protocol, protocol_entry, protocol_names
from discoverylab.labs.run_record import LabRecord
from discoverylab.labs.runner import write_json

lab_app = typer.Typer(help="Tiny Labs: small black-box scientific sandboxes.", no_args_is_help=True)
lab_app.command("run")(run)
lab_app.command("judge")(judge)

PLAY_HELP = ("Type your message to the lab; an empty line sends it (messages may span several lines). "
             "Commands: ':quit' ends the episode and grades it, ':help' shows this text.")


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
    seed: Annotated[int, typer.Option("--seed", "-s", min=0)] = 0,
    config: Annotated[str | None, typer.Option("--config", help="protocol options as a JSON object, or a preset name (paper)")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="save transcript and score here")] = None,
) -> None:
    """Play a protocol yourself: you type the agent's messages, the lab replies, the grade comes last."""
    options = _parse_config(config)
    try:
        lab = make_protocol(protocol, **options)
    except (ProtocolError, KeyError, ValueError, TypeError) as exc:
        _fail(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))
    if out is not None:  # before the episode: a bad --out must not lose what the player typed
        from discoverylab.bench.rundir import RunDirError, check_out

        try:
            check_out(out)
        except RunDirError as exc:
            _fail(str(exc))
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
                           parts=score.parts, labels=score.labels, turns=lab.turn, config=options,
                           config_hash=job.config_hash, grader_version=job.grader_version)
        transcript = [{"type": "message", **e.model_dump(mode="json")} for e in lab.transcript]
        from discoverylab.bench import records

        records.write_jsonl(out / "transcripts" / f"{job.stem}.jsonl", transcript)
        write_json(out / "scores" / f"{job.stem}.json", {**record.model_dump(mode="json"), "details": score.details})
        console.print(f"Saved to {out}")


@lab_app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", "-o", help="suite file: .yaml or .json (a list of specs) or .jsonl")],
    complexity: Annotated[str, typer.Option("--complexity", "-c", help="easy, medium or hard")] = "medium",
    n: Annotated[int, typer.Option("--n", "-n", min=1, help="number of verified labs")] = 10,
    seed: Annotated[int, typer.Option("--seed", "-s", min=0)] = 0,
    lab: Annotated[str, typer.Option("--lab", help="family: sequence (hidden property, dynamics), population "
                                      "(branching processes) or macro (economies)")] = "sequence",
) -> None:
    """Generate N labs at a complexity, keep those that pass `verify`, and write them as a suite."""
    from discoverylab.labs.core.errors import LabError
    from discoverylab.labs.core.generator import generate_suite, write_suite

    if out.is_dir():  # checked before generating (minutes for macro labs), not found when writing
        _fail(f"--out {out} is a directory; give a suite file, e.g. {out / 'suite.yaml'}")
    try:
        kept = generate_suite(n, complexity, seed, lab=lab)
    except (LabError, KeyError) as exc:
        _fail(str(exc.args[0]) if exc.args else str(exc))
    try:
        write_suite(out, [spec for spec, _ in kept])
    except OSError as exc:
        _fail(f"cannot write the suite to {out}: {exc.strerror or exc}")
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
