"""Stop a real `discoverylab` command with a signal at a chosen moment, as a terminal does.

The "a stop while the judge grades keeps the finished episode" tests (`run`, `bench --backend
ray`, `lab run`) each start the command in its own process group, wait until its judge was asked,
signal the group and read what it printed: one driver for the three. The servers' stop tests
(`serve`, `env-serve`) start theirs with `start_server`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[1] / "src"


def stop_when(args: list[str], ready: Callable[[], bool], sig: signal.Signals, folder: Path, *,
              request_timeout: float = 120, wait_s: float = 120, settle_s: float = 0.3,
              stop_s: float = 30) -> tuple[int, str]:  # fmt: skip
    """Run `discoverylab *args` (the agent's endpoint from its options, not the environment) in a
    process group of its own; once `ready()` (within `wait_s`) and `settle_s` later, send `sig` to
    the group. (exit code, stderr). Stderr goes to a file in `folder`: a pipe nobody reads would
    block the command once full. The group is killed if it outlives `stop_s` after the signal."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "DISCOVERYLAB_LLM_REQUEST_TIMEOUT": str(request_timeout)}  # fmt: skip
    env.pop("DISCOVERYLAB_LLM_BASE_URL", None)
    stderr = folder / "stderr.log"
    with stderr.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", "from discoverylab.cli.main import main; main()", *args],
                                env=env, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + wait_s
        while not ready():  # the episode has been played; its judge is now waiting
            assert proc.poll() is None, stderr.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the judge was never asked"
            time.sleep(0.05)
        time.sleep(settle_s)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=stop_s)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stderr.read_text(errors="replace")


def start_server(args: list[str], probe: str, env: dict[str, str] | None = None,
                 wait_s: float = 60) -> tuple[subprocess.Popen[str], str]:  # fmt: skip
    """`discoverylab *args --port P` (P a free port) as a real process with this checkout's
    package (`env` added to the environment), pipes for its output; (the process, its base URL)
    once GET `probe` answers. A server that dies or never answers fails the test with its stderr."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    full_env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}", **(env or {})}
    server = subprocess.Popen([sys.executable, "-m", "discoverylab", *args, "--port", str(port)], env=full_env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while True:
        try:
            httpx.get(f"{url}{probe}", timeout=1).raise_for_status()
            return server, url
        except httpx.HTTPError:
            assert server.poll() is None and time.monotonic() < deadline, server.communicate()[1]
            time.sleep(0.2)
