"""ASGI guards for a UI server that may face a network: a streaming body limit and a Host
allow-list.

The body limit counts the bytes as they arrive, so a chunked body (no Content-Length) is cut
off at the limit instead of being read whole into memory. The Host allow-list answers only
requests addressed to a loopback name or a name the server was started for: a page on another
site whose name was re-pointed at this machine (DNS rebinding) sends its own name as Host and
gets 421. Host headers are read by `discoverylab.hostnames`, as env-serve's guard reads them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from starlette.exceptions import HTTPException

from discoverylab.hostnames import LOOPBACK_NAMES, host_name, is_loopback

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _TooLarge(HTTPException):
    """Raised from `receive` mid-body; FastAPI passes HTTPExceptions through as their status."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"Request bodies are limited to {limit} bytes.")


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"x-content-type-options", b"nosniff")]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Wraps the app: Host allow-list first (loopback names and `allowed_hosts`; `*`: any), then
    the streaming body limit."""

    def __init__(self, app: ASGIApp, max_body: int, allowed_hosts: Iterable[str]) -> None:
        self.app, self.max_body = app, max_body
        self.allowed = frozenset(host_name(h) for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        name = host_name(headers.get("host", ""))
        if "*" not in self.allowed and name not in self.allowed and not is_loopback(name):
            names = ", ".join([*LOOPBACK_NAMES, *sorted(self.allowed - set(LOOPBACK_NAMES))])
            await _refuse(send, 421, f"This server answers only requests addressed to {names} "
                                     "(start it with --allowed-host NAME for another name).")  # fmt: skip
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _refuse(send, 413, f"Request bodies are limited to {self.max_body} bytes.")
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _TooLarge(self.max_body)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _refuse(send, 413, f"Request bodies are limited to {self.max_body} bytes.")
