"""How a command run stops after a signal: the exit codes and the late-signal rule, shared by
`discoverylab bench` and `discoverylab lab run` (one helper, so the two commands cannot drift)."""

from __future__ import annotations

import atexit
import os
import signal
import sys

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


def exit_at_once_on_another_signal() -> None:
    """The run was stopped by a signal and the command is on its way out: one more Ctrl-C or
    SIGTERM (a second press, or a group signal arriving late) ends the process with the stop's
    code at once. Python's own handler would raise KeyboardInterrupt wherever it lands, and
    during interpreter shutdown (handlers back at SIG_DFL) a late signal turned the exit into
    death by SIGINT (-2) instead of 130; from the exit handlers on, late signals are ignored."""

    def now(signum: int, _frame: object) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM)

    def ignore() -> None:  # Python's shutdown resets handlers it set to SIG_DFL, never SIG_IGN
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, now)
    atexit.register(ignore)  # runs first at exit: the code is decided, a late signal must not change it


def second_signal_code(exc: BaseException) -> int:
    """The exit code of a run stopped at once by a second signal (`runs._Stop` names it in the
    KeyboardInterrupt it raises): 143 for SIGTERM, else 130 (a Ctrl-C, or Python's own handler)."""
    return EXIT_SIGTERM if "SIGTERM" in str(exc) else EXIT_SIGINT
