"""One reading of Host and Origin headers for env-serve's loopback guard and the UI's Host allow-list.

Before, server/local_guard.py read names with `urlsplit` and ui/guards.py with its own split, and
they disagreed: env-serve answered `Host: evil.example@127.0.0.1` and `localhost/x` (urlsplit
takes the part after `@`, drops a path) that the UI refused, refused `127.0.0.2` that is loopback
while the UI answered only three spellings, and a malformed `Host: [::1` raised from urlsplit
inside env-serve's middleware (a traceback and a 500 instead of a refusal). Both now ask
`discoverylab.hostnames`, so every header below gets the same verdict in both servers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.testclient import TestClient

from discoverylab.hostnames import host_name, is_loopback, origin_host
from discoverylab.server.local_guard import LoopbackOnly
from discoverylab.ui.server import create_app as ui_app

# (Host header, answered by a loopback server) - each a name the two parsers judged apart, or a plain one
HOSTS = [
    ("localhost", True), ("LOCALHOST:80", True), ("127.0.0.1:8000", True), ("[::1]:8765", True),
    ("127.0.0.2:80", True), ("[0:0:0:0:0:0:0:1]:80", True), ("::1", True),
    ("evil.example@127.0.0.1", False), ("localhost/x", False), ("localhost#x", False),
    ("localhost:8000:9000", False), ("localhost:abc", False), ("[::1", False), ("[::2]:80", False),
    ("127.0.0.1.nip.io", False), ("evil.example:8000", False), ("", False),
]  # fmt: skip


async def _ok(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def _status(middleware: Any, host: str, origin: str | None = None) -> int:
    """The status a middleware answers a GET / with this Host (and Origin) on a 127.0.0.1 server."""
    headers = [(b"host", host.encode("latin-1"))] + ([(b"origin", origin.encode("latin-1"))] if origin else [])
    scope = {"type": "http", "method": "GET", "path": "/", "headers": headers, "server": ("127.0.0.1", 8000)}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(middleware(scope, receive, send))
    return int(sent[0]["status"])


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    return TestClient(ui_app(tmp_path_factory.mktemp("ui")), base_url="http://127.0.0.1:8765")


@pytest.mark.parametrize(("host", "answered"), HOSTS)
def test_env_serve_and_the_ui_judge_every_host_header_alike(ui: TestClient, host: str, answered: bool) -> None:
    served = _status(LoopbackOnly(_ok), host)  # before: a traceback for "[::1"
    ui_status = ui.get("/api/config", headers={"host": host}).status_code
    assert (served == 200, ui_status == 200) == (answered, answered), (served, ui_status)
    assert served in (200, 403) and ui_status in (200, 421)  # a refusal, never a crash


@pytest.mark.parametrize(("origin", "answered"), [
    ("http://localhost:3000", True), ("http://127.0.0.1:8000", True), ("http://[::1]:5173", True),
    ("http://evil.example@localhost", False), ("http://[::1", False), ("null", False),
    ("http://attacker.example", False),
])  # fmt: skip
def test_env_serve_reads_an_origin_with_the_same_parser(origin: str, answered: bool) -> None:
    assert (_status(LoopbackOnly(_ok), "127.0.0.1:8000", origin) == 200) == answered
    assert is_loopback(origin_host(origin)) == answered


def test_host_name_keeps_what_both_guards_relied_on() -> None:
    assert host_name("[::1]:8765") == "::1" and host_name("Example.org:80") == "example.org"
    assert host_name(" LAB.example.org ") == "lab.example.org"
    assert is_loopback("127.0.0.2") and is_loopback("[::1]") and not is_loopback("0.0.0.0")
