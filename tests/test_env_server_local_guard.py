"""A loopback env-serve answers only loopback names, on every route and on its sockets.

Before, only `/mcp` checked: any web page the user visited could open `ws://127.0.0.1:PORT/ws`
(browsers apply no same-origin rule to WebSockets) and play, burn or hand in the evaluator's
sealed instances, and a page whose name was re-pointed at 127.0.0.1 (DNS rebinding) could drive
`/sessions` and read the answers. Now a request or socket naming a foreign Host or Origin is
refused (403) before anything is read, while programs and local pages are served as before.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from env_server_kit import running_env_server

websockets_sync = pytest.importorskip("websockets.sync.client")

FOREIGN_HOST = {"host": "attacker.example:8000"}
FOREIGN_ORIGIN = {"origin": "http://attacker.example"}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with running_env_server(max_sessions=4, ttl_s=60) as (base, _):
        yield base


@pytest.mark.parametrize("headers", [FOREIGN_HOST, FOREIGN_ORIGIN], ids=["host", "origin"])
def test_attack_a_foreign_page_cannot_drive_the_http_routes(url: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=url, timeout=30) as http:
        before = http.get("/health").json()["sessions"]
        made = http.post("/sessions", headers=headers)
        listed = http.get("/health", headers=headers)
        after = http.get("/health").json()["sessions"]
    assert made.status_code == 403 and "Refused" in made.json()["detail"] and "loopback" in made.json()["detail"]
    assert listed.status_code == 403
    assert after == before  # the refused POST made no session


def _handshake_status(url: str, host: str, origin: str | None) -> int:
    """The status line's code of a WebSocket opening handshake sent as a browser would (one Host)."""
    parts = urlsplit(url)
    lines = ["GET /ws HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]  # fmt: skip
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = conn.recv(4096).split(b"\r\n", 1)[0]
    return int(status.split()[1])


def test_attack_a_foreign_page_cannot_open_the_socket(url: str) -> None:
    local = urlsplit(url).netloc
    assert _handshake_status(url, "attacker.example:8000", None) == 403  # DNS rebinding
    assert _handshake_status(url, local, "http://attacker.example") == 403  # any page's script
    assert _handshake_status(url, local, "http://localhost:3000") == 101  # a local page: served


def test_programs_and_local_pages_are_served(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as http:
        for headers in ({}, {"origin": "http://localhost:5173"}, {"origin": "http://127.0.0.1:8000"}):
            sid = http.post("/sessions", headers=headers).json()["session_id"]
            reset = http.post(f"/sessions/{sid}/reset", json={"task": "PickAndPlaceTest", "seed": 0}, headers=headers)
            assert reset.status_code == 200, reset.text
            assert http.delete(f"/sessions/{sid}", headers=headers).status_code == 200
    ws_url = url.replace("http://", "ws://") + "/ws"
    with websockets_sync.connect(ws_url, additional_headers={"origin": "http://localhost:3000"}, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task": "PickAndPlaceTest", "seed": 0}}))
        answer = json.loads(ws.recv(timeout=30))
    assert answer["type"] == "observation", answer
