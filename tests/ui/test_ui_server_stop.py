"""`discoverylab serve` (the browser UI) stopped by Ctrl-C or SIGTERM says so in its exit status.

Before, uvicorn re-raised the Ctrl-C under asyncio's runner and the command exited 0, as if it had
finished its work (a study script or a supervisor reading the status could not tell); SIGTERM killed
it by the signal. Now it ends 130 or 143 as `env-serve`, `run` and `bench` do, and says why.
"""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from stop_kit import start_server


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_serve_stopped_by_a_signal_exits_with_its_status(tmp_path: Path, sig: int, status: int) -> None:
    server, url = start_server(["serve", "--logs", str(tmp_path / "logs")], "/")
    try:
        with httpx.Client() as keep_alive:  # an idle keep-alive client must not hold the stop
            keep_alive.get(f"{url}/", timeout=5).raise_for_status()
            server.send_signal(sig)
            _, stderr = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == status, stderr
    assert f"UI server stopped ({signal.Signals(sig).name})" in stderr
    assert "Traceback" not in stderr
