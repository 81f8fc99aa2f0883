"""`discoverylab env-serve` stopped by Ctrl-C or SIGTERM with clients still connected.

Before, a Ctrl-C ended the server with status 0 (uvicorn re-raised SIGINT under asyncio's runner,
whose handler only cancels a task that had already finished), a SIGTERM killed it by the signal
(-15) before the command let go of its ledger, and a client whose request body stalled held the
stop for as long as it stayed connected (uvicorn waits for every request to finish). Now the
command exits 130 or 143 as `run` and `bench` do, idle clients (a WebSocket episode in play, an
MCP client, keep-alive HTTP) are closed at once, a stalled request gets `STOP_GRACE_S`, and the
ended episode still waiting for its sheet is recorded.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from discoverylab.server.client import EnvServerClient
from discoverylab.serving import STOP_GRACE_S
from env_server_kit import oracle_episode
from stop_kit import start_server

mcp = pytest.importorskip("mcp", reason="the mcp package (server and dev extras) is not installed")
websockets_sync = pytest.importorskip("websockets.sync.client")

KEY = b"s" * 32
IDLE_EXIT_S = 3.0  # generous for two shared cores; measured 0.2-0.3 s on an idle machine


def _start(out: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    return start_server(["env-serve", "--out", str(out)], "/health",
                        {"DISCOVERYLAB_EVAL_KEY": KEY.decode(), "XDG_STATE_HOME": str(tmp_path / "state")})


def _idle_mcp_client(url: str, connected: threading.Event, stop: threading.Event) -> None:
    async def main() -> None:
        async with mcp.Client(f"{url}/mcp") as client:
            await client.list_tools()
            connected.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)

    try:
        asyncio.run(main())
    except Exception:  # noqa: BLE001 - the server went away under it: what this test does
        pass


def _stalled_step(url: str, sid: str) -> socket.socket:
    """A step whose body never arrives in full: the client is still sending, as far as the server knows."""
    host, port = url.removeprefix("http://").split(":")
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall((f"POST /sessions/{sid}/step HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
                  "Content-Length: 100\r\n\r\n{\"action\": ").encode())  # fmt: skip
    return conn


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_stop_with_idle_clients_is_prompt_truthful_and_keeps_the_pending_sheet(tmp_path, sig, code):
    out = tmp_path / "served"
    server, url = _start(out, tmp_path)
    stop = threading.Event()
    with ExitStack() as closing:
        task, difficulty, seed = "ArchaeologyDating", "easy", 0
        actions, _, _ = oracle_episode(task, difficulty, seed)
        sheet = EnvServerClient(url)  # keep-alive HTTP: its episode ended, its sheet not handed in
        result = sheet.reset(task, difficulty, seed=seed)
        for action in actions:
            result = sheet.step(action)
        assert result.done and result.answer_sheet is not None
        closing.callback(lambda: server.kill() if server.poll() is None else None)
        closing.callback(stop.set)
        ws = closing.enter_context(websockets_sync.connect(url.replace("http://", "ws://") + "/ws"))  # mid-episode
        ws.send(json.dumps({"type": "reset", "data": {"task": "PickAndPlaceTest", "seed": 1}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        connected = threading.Event()
        threading.Thread(target=_idle_mcp_client, args=(url, connected, stop), daemon=True).start()
        assert connected.wait(30)
        started = time.monotonic()
        server.send_signal(sig)
        assert server.wait(30) == code  # before: 0 for SIGINT, -15 for SIGTERM
        assert time.monotonic() - started < IDLE_EXIT_S
    stderr = server.stderr.read() if server.stderr else ""
    assert f"env server stopped ({sig.name})" in stderr and "Traceback" not in stderr, stderr
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["task"] for r in rows] == ["ArchaeologyDating", "ArchaeologyDating"]
    assert rows[-1]["success"] and "not handed in: the server stopped" in rows[-1]["error"]


def test_a_client_whose_request_stalls_holds_the_stop_only_for_the_grace(tmp_path):
    """Before, the server waited for the stalled body as long as the client stayed connected."""
    out = tmp_path / "served"
    server, url = _start(out, tmp_path)
    try:
        with EnvServerClient(url) as env:
            env.reset("PickAndPlaceTest", "normal", seed=3)
            stalled = _stalled_step(url, env.session_id or "")
            time.sleep(0.3)  # the request is in the server's hands
            started = time.monotonic()
            server.send_signal(signal.SIGINT)
            assert server.wait(STOP_GRACE_S + 30) == 130
            assert time.monotonic() - started < STOP_GRACE_S + IDLE_EXIT_S
            stalled.close()
    finally:
        if server.poll() is None:
            server.kill()
    stderr = server.stderr.read() if server.stderr else ""
    assert "Traceback" not in stderr, stderr
