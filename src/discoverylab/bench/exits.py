"""How a command run stops: the exit codes, the late-signal rule and what is said about a stop
(second signal, full disk, circuit breaker, resume hint), shared by `discoverylab bench` and
`discoverylab lab run` (one helper, so the two commands cannot drift)."""

from __future__ import annotations

import atexit
import shlex
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from rich.markup import escape

from discoverylab.bench.rundir import Scan, describe_io_error
from discoverylab.bench.runs import Outcome, exit_on_signal

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


def exit_at_once_on_another_signal() -> None:
    """The run was stopped by a signal and the command is on its way out: one more Ctrl-C or
    SIGTERM (a second press, or a group signal arriving late) ends the process with the stop's
    code at once. Python's own handler would raise KeyboardInterrupt wherever it lands, and
    during interpreter shutdown (handlers back at SIG_DFL) a late signal turned the exit into
    death by SIGINT (-2) instead of 130; from the exit handlers on, late signals are ignored."""

    def ignore() -> None:  # Python's shutdown resets handlers it set to SIG_DFL, never SIG_IGN
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)

    exit_on_signal()
    atexit.register(ignore)  # runs first at exit: the code is decided, a late signal must not change it


def server_stopped(stopped_by: int) -> int:
    """A server command stopped by a signal (`serving.serve_until_signal`) is on its way out: late
    signals as for a run (`exit_at_once_on_another_signal`); its exit code, 143 for SIGTERM, else 130."""
    exit_at_once_on_another_signal()
    return EXIT_SIGTERM if stopped_by == signal.SIGTERM else EXIT_SIGINT


def second_signal_code(exc: BaseException) -> int:
    """The exit code of a run stopped at once by a second signal (`runs._Stop` names it in the
    KeyboardInterrupt it raises): 143 for SIGTERM, else 130 (a Ctrl-C, or Python's own handler)."""
    return EXIT_SIGTERM if "SIGTERM" in str(exc) else EXIT_SIGINT


EXIT_FAILED, EXIT_IO = 1, 74  # an episode failed; a write failed (sysexits' EX_IOERR, e.g. a full disk)


class _Printer(Protocol):
    def print(self, *objects: Any, soft_wrap: bool = ...) -> None: ...


def resume_hint(out: Path | None) -> str:
    """How to go on after a stop (rich markup, escaped): the same command line again, which
    resumes from the run directory; without `--out` nothing was recorded to resume from."""
    if out is None:
        return "nothing was recorded (no --out); give --out DIR to make a run resumable"
    return escape("resume with: discoverylab " + shlex.join(sys.argv[1:]))


def redone_notice(err: _Printer, out: Path | None) -> Callable[[Scan[Any]], None]:
    """The `on_resume` callback of a resumed run: say which recorded lines were unreadable (and
    are therefore run again)."""

    def resumed(scan: Scan[Any]) -> None:
        if scan.bad and out is not None:
            err.print(f"[yellow]{out / 'results.jsonl'}: {escape(scan.describe_bad())}; those episodes are redone[/yellow]")

    return resumed


def stopped_code(err: _Printer, exc: BaseException, out: Path | None) -> int:
    """A run that stopped by raising (a second signal, or a failed read or lock of the run
    directory): say so and return the exit code the command ends with."""
    if isinstance(exc, KeyboardInterrupt):
        exit_at_once_on_another_signal()
        err.print(f"[red]Stopped at once (second signal).[/red] Finished episodes are recorded; {resume_hint(out)}",
                  soft_wrap=True)  # fmt: skip
        return second_signal_code(exc)
    assert isinstance(exc, OSError)
    err.print(f"[red]Stopped:[/red] {escape(describe_io_error(exc))}; free space, then {resume_hint(out)}", soft_wrap=True)
    return EXIT_IO


def outcome_code(err: _Printer, outcome: Outcome[Any], total: int, out: Path | None) -> int:
    """After the results are shown: the circuit breaker, a full disk or a signal stop, each said
    with what was recorded and how to go on; the exit code (0 when the run was not cut short:
    the caller then decides on failed episodes)."""
    recorded = len(outcome.results)
    if outcome.breaker_message:
        not_run = total - recorded - outcome.dropped
        err.print(f"[red]Circuit breaker:[/red] {escape(outcome.breaker_message)} ({not_run} not run)", soft_wrap=True)
    if outcome.io_error:
        err.print(f"[red]Stopped:[/red] {escape(outcome.io_error)}; {recorded} of {total} episodes recorded, "
                  f"{outcome.dropped} dropped; free space, then {resume_hint(out)}", soft_wrap=True)  # fmt: skip
        return EXIT_IO
    if outcome.interrupted:
        err.print(f"[yellow]Interrupted by {outcome.interrupted}[/yellow]: {recorded} of {total} episodes done, "
                  f"{outcome.dropped} in flight dropped; {resume_hint(out)}", soft_wrap=True)  # fmt: skip
        return EXIT_SIGINT if outcome.interrupted == "SIGINT" else EXIT_SIGTERM
    return 0
