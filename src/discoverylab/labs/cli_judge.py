"""`discoverylab lab judge RUN_DIR [--unjudged-only]`: grade a saved Tiny Labs run with an LLM judge.

The counterpart of DiscoveryWorld's `discoverylab judge`: episodes whose judge failed or ran out of
time during `lab run` are recorded `ok` and `unjudged`; this grades them (or, without
`--unjudged-only`, every `ok` episode) by replaying their transcripts (`labs.rejudge`). Exit 0 when
every episode it tried was judged, 1 when some could not be (listed; they stay as they were, run the
command again to retry them), 2 on bad usage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from discoverylab.labs.cli_common import _fail, console, err


def judge(
    run_dir: Annotated[Path, typer.Argument(help="a run directory written by `lab run --out`")],
    unjudged_only: Annotated[bool, typer.Option("--unjudged-only", help="grade only episodes not judged yet")]
    = False,
    judge_model: Annotated[str | None, typer.Option(
        "--judge-model", help="the judge model ('embedded' or none: the offline model)")] = None,
    judge_base_url: Annotated[str | None, typer.Option(
        "--judge-base-url", help="OpenAI-compatible endpoint of the judge (default: the embedded model)")] = None,
    request_timeout: Annotated[float | None, typer.Option(
        "--request-timeout", min=0.001, help="total seconds per judge request, retries included")] = None,
    spec: Annotated[Path | None, typer.Option("--spec", help="the suite of a `lab run --spec` run")] = None,
    eval_key_file: Annotated[Path | None, typer.Option(
        "--eval-key-file", help="the evaluator's key, for a run of the sealed test split")] = None,
) -> None:
    """Grade a saved run's episodes with the LLM judge (by replaying their transcripts)."""
    from discoverylab.bench.rundir import RunLocked
    from discoverylab.instances import InstanceError, load_key
    from discoverylab.labs.judging import make_judge_client
    from discoverylab.labs.rejudge import rejudge_run
    from discoverylab.labs.run_record import GraderVersionMismatch
    from discoverylab.llm.deadline import request_timeout_env

    specs: dict[str, Any] = {}
    if spec is not None:
        from discoverylab.labs.core.generator import read_suite
        from discoverylab.labs.jobs import spec_label

        try:
            specs = {spec_label(s): s for s in read_suite(spec)}
        except (OSError, ValueError) as exc:
            _fail(f"cannot read {spec}: {exc}")
    try:
        key = load_key(eval_key_file)
    except InstanceError as exc:
        _fail(str(exc))
    model = None if judge_model in (None, "embedded") else judge_model
    clients: list[Any] = []

    def factory() -> Any:  # one client for the whole pass
        if not clients:
            clients.append(make_judge_client(model, judge_base_url))
        return clients[0]

    try:
        with request_timeout_env(request_timeout):
            done = rejudge_run(run_dir, factory, only_unjudged=unjudged_only, key=key, specs=specs)
    except FileNotFoundError as exc:
        _fail(str(exc))
    except (RunLocked, OSError) as exc:  # a run in progress there, or an unreadable directory
        _fail(f"cannot judge {run_dir}: {exc}")
    except GraderVersionMismatch as exc:  # graded by an older grader: judging now would mix grades
        _fail(str(exc))
    console.print(f"Judged {len(done.judged)} episode(s); skipped {done.skipped} "
                  f"({'already judged, ' if unjudged_only else ''}not ok, or nothing to judge). "
                  f"Results: {run_dir / 'results.jsonl'}")
    for name, reason in done.failed:
        err.print(f"[red]unjudged[/red] {escape(name)}: {escape(reason)}", soft_wrap=True)
    if done.failed:
        err.print(f"[yellow]{len(done.failed)} episode(s) could not be judged; they stay as they were: run "
                  f"`discoverylab lab judge {escape(str(run_dir))} --unjudged-only` again to retry them[/yellow]",
                  soft_wrap=True)
        raise typer.Exit(1)
