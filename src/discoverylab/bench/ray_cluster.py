"""A local Ray cluster that goes when the runner goes, however it goes (issue 23.6).

`ray.init()` without an address starts Ray's daemons (GCS, raylet, dashboard and runtime-env
agents, workers) as children of the runner. After `kill -9` of the runner nobody stops them: the
DashboardAgent and RuntimeEnvAgent outlived the run by over a minute. So on Linux the runner
starts the cluster through a keeper process instead:

* the keeper is a Linux *child subreaper* (`PR_SET_CHILD_SUBREAPER`): every process `ray start`
  leaves behind, and every orphan of those, is re-parented to the keeper, never to init, so the
  keeper can always find all of them by walking its own descendants;
* the keeper reads a pipe from the runner; the kernel closes it when the runner exits for any
  reason (normal exit, exception, SIGTERM, SIGKILL), and on end-of-file the keeper kills all its
  descendants and exits.

Elsewhere (no subreaper) the runner falls back to a plain `ray.init()`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
START_TIMEOUT_S = 180.0


class ClusterStartError(RuntimeError):
    """The local Ray cluster did not start (the message holds the end of `ray start`'s output)."""


def supported() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


class OwnedCluster:
    """The keeper process of a local cluster; the cluster lives as long as this object's process."""

    def __init__(self, num_cpus: int | None = None) -> None:
        args = [sys.executable, "-m", "discoverylab.bench.ray_cluster"]
        if num_cpus is not None:
            args.append(str(num_cpus))
        # A fresh secret per cluster: Ray >= 2.5x turns token authentication on by itself when
        # ~/.ray/auth_token exists, and a driver that guessed otherwise could not connect.
        auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        # Own session: the runner's Ctrl-C / SIGTERM go to the runner, which decides; the keeper
        # learns of the runner's end from the pipe, whatever signal caused it.
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True,
                                        env={**os.environ, **auth})  # fmt: skip
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode("utf-8", "replace").strip()
        if not line.startswith("address "):
            self.stop()
            raise ClusterStartError(f"the local Ray cluster did not start: {line[-800:] or 'the keeper died'}")
        self.address = line.split(" ", 1)[1]
        _use_auth(auth)

    def stop(self, wait: float = 10.0) -> None:
        """Stop the cluster now (the keeper kills every Ray process it holds, then exits)."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(wait)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _use_auth(auth: dict[str, str]) -> None:
    """Make this process's Ray driver present the cluster's token (Ray older than token
    authentication ignores these variables)."""
    os.environ.update(auth)
    if "ray" in sys.modules:  # refresh what Ray read when it was imported (private, best effort)
        try:
            from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

            Config.initialize("")
            getattr(AuthenticationTokenLoader.instance(), "reset_cache", lambda: None)()
        except Exception:  # noqa: BLE001, S110 - an older Ray: nothing to refresh
            pass


# --------------------------------------------------------------------------- the keeper process


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (Linux /proc)."""
    children = _children_map()
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_descendants(deadline_s: float = 20.0) -> None:
    """SIGKILL every descendant until none is left (new ones may be forked meanwhile)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
        _reap()


def _say(line: str) -> None:
    """One line of the keeper's protocol to the runner, on the pipe that is its stdout."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def keeper_main(argv: list[str]) -> int:
    """Become a subreaper, start Ray's head node, say its address, and wait for the pipe to close."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides; its exit closes our stdin
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _say("error cannot become a child subreaper")
        return 1
    port = _free_port()
    # A private temp dir: `ray start` writes its address to TEMP/ray_current_cluster, and in the
    # shared /tmp/ray any `ray.init()` on the machine (another user's run, a test) would join us.
    temp_dir = tempfile.mkdtemp(prefix="dlray-", dir="/tmp")  # short: Ray's socket paths must fit
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", f"--port={port}",
               "--node-ip-address=127.0.0.1", "--include-dashboard=false", "--disable-usage-stats",
               f"--temp-dir={temp_dir}"]  # fmt: skip
    if argv:
        command.append(f"--num-cpus={int(argv[0])}")
    # A file, not a pipe, for `ray start`'s output: the daemons it leaves behind inherit it, and a
    # pipe would stay open (and unread) as long as they live.
    with tempfile.TemporaryFile() as output:
        try:
            code = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                  timeout=START_TIMEOUT_S).returncode  # fmt: skip
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            kill_descendants()
            shutil.rmtree(temp_dir, ignore_errors=True)
            output.seek(0)
            tail = output.read().decode("utf-8", "replace").strip().splitlines()[-5:]
            why = f"took over {START_TIMEOUT_S:g} s" if code is None else "failed"
            _say(f"error `ray start` {why}: " + " | ".join(tail))
            return 1
    _say(f"address 127.0.0.1:{port}")
    try:
        while sys.stdin.buffer.read(4096):
            pass  # nothing is ever sent: end-of-file is the message
    except OSError:
        pass
    kill_descendants()
    shutil.rmtree(temp_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(keeper_main(sys.argv[1:]))
