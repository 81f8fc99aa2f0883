"""`discoverylab lab run` after a signal stopped it: another SIGINT/SIGTERM exits at once with 130/143,
and late signals never turn the exit into death by signal (the bench CLI's rule, one shared helper:
`bench.exits.exit_at_once_on_another_signal`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from test_runner_signals import _assert_no_orphans, _cli, _env, _lines, _wait_for_records

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")


def _start_lab(out: Path) -> subprocess.Popen[bytes]:
    args = _cli("lab", "run", "sequence/hidden-property", "--agent", "random", "--seeds", "0-500",
                "--workers", "2", "--no-plots", "--out", str(out))
    return subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _one_record_per_episode(out: Path) -> None:
    keys = Counter((r["protocol"], r["seed"], r["agent"]) for r in _lines(out))
    assert set(keys.values()) <= {1} and {str(r["status"]) for r in _lines(out)} <= {"ok"}


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_lab_run_second_signal_exits_at_once(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    proc = _start_lab(tmp_path)
    _wait_for_records(tmp_path, 2, proc)
    os.killpg(proc.pid, sig)
    time.sleep(0.02)
    os.killpg(proc.pid, sig)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == code, err.decode()[-1500:]
    _assert_no_orphans(proc.pid)
    _one_record_per_episode(tmp_path)


def test_lab_run_late_signals_during_shutdown_keep_the_exit_code(tmp_path: Path) -> None:
    """A stream of Ctrl-C after the first (a held key, a group signal arriving late) lands in the
    output, the exit handlers and interpreter shutdown: the exit code stays 130 (before: a
    traceback, exit 1, or death by SIGINT, -2)."""
    proc = _start_lab(tmp_path)
    _wait_for_records(tmp_path, 2, proc)
    os.killpg(proc.pid, signal.SIGINT)
    deadline = time.monotonic() + 15
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.003)
        try:
            os.kill(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            break
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err.decode()[-1500:]
    assert "Traceback" not in err.decode()
    _assert_no_orphans(proc.pid)
    _one_record_per_episode(tmp_path)
