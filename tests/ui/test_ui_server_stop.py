"""`discoverylab serve` (the browser UI) stopped by Ctrl-C or SIGTERM says so in its exit status.

Before, uvicorn re-raised the Ctrl-C under asyncio's runner and the command exited 0, as if it had
finished its work (a study script or a supervisor reading the status could not tell); SIGTERM killed
it by the signal. Now it ends 130 or 143 as `env-serve`, `run` and `bench` do, and says why.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_stopped_by_a_signal_exits_with_its_status(tmp_path: Path, sig: int, status: int) -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    server = subprocess.Popen([sys.executable, "-m", "discoverylab", "serve", "--logs", str(tmp_path / "logs"),
                               "--port", str(port)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                assert server.poll() is None and time.monotonic() < deadline, server.communicate()[1]
                time.sleep(0.2)
        with httpx.Client() as keep_alive:  # an idle keep-alive client must not hold the stop
            keep_alive.get(f"http://127.0.0.1:{port}/", timeout=5).raise_for_status()
            server.send_signal(sig)
            _, stderr = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == status, stderr
    assert f"UI server stopped ({signal.Signals(sig).name})" in stderr
    assert "Traceback" not in stderr
