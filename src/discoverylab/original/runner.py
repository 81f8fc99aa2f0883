"""`python -m discoverylab.compat script.py [args...]`: run a script written for the original.

The script runs as `python script.py args...` would run it (as `__main__`, with `sys.argv` set
and its folder first on `sys.path`), with `shim.installed()` mapping its `discoveryworld`
imports to ours. Its exit status passes through: its own exit calls end the process with their
status, an uncaught exception with Python's traceback and status 1.
"""

from __future__ import annotations

import os
import runpy
import sys

USAGE = "usage: python -m discoverylab.compat SCRIPT.py [ARGS...]  (runs a script written for the original DiscoveryWorld on discoverylab)\n"


def main(argv: list[str]) -> int:
    """Run `argv[0]` with `argv[1:]` as its arguments; 0 when it ends without `sys.exit`, 2 for
    a missing script (a one-line message on stderr). `SystemExit` from the script propagates."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write(USAGE)
        return 0 if argv else 2
    script = argv[0]
    if not os.path.isfile(script):
        why = "is a directory, not a script" if os.path.isdir(script) else "no such file"
        sys.stderr.write(f"discoverylab.compat: cannot run {script!r}: {why}.\n")
        return 2
    from discoverylab.original.shim import installed

    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script, *argv[1:]]
    folder = os.path.dirname(os.path.abspath(script))
    if sys.path:
        sys.path[0] = folder
    else:
        sys.path.append(folder)
    try:
        with installed():
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0
    return 0
