"""Loopback servers answer only loopback names: DNS rebinding and cross-site WebSockets refused.

`env-serve` listens on 127.0.0.1 by default. A web page the user happens to visit can still reach
it: its scripts may open `ws://127.0.0.1:8000/ws` (browsers apply no same-origin rule to
WebSockets), and a page whose own name was re-pointed at 127.0.0.1 (DNS rebinding) may send it
requests and read the answers as its own origin's. Either could play, burn or hand in the
evaluator's sealed instances, or read public gold. So a server bound to a loopback address refuses
a request or socket whose Host is not a loopback name, or whose Origin (browsers always send one
on sockets and cross-origin requests) names another host. Programs (httpx, OpenEnv's client, MCP
clients) send a loopback Host and no foreign Origin; a server bound to another address (`--host
0.0.0.0`) is meant to be reached by other names and checks none (the MCP specification asks this
of local servers; the same holds for every route here).
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from typing import Any

from discoverylab.hostnames import host_name, is_loopback, origin_host

JSON_RPC_PATHS = ("/mcp",)  # their refusals are JSON-RPC errors (MCP clients read those)


def refusal(scope: MutableMapping[str, Any]) -> str | None:
    """Why a loopback server refuses this request (None: it is served)."""
    server = scope.get("server")
    if not server or not isinstance(server[0], str) or not is_loopback(server[0]):
        return None  # listening on a public interface: any name may reach it
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
    host = host_name(headers.get("host", ""))
    origin = headers.get("origin")
    if is_loopback(host) and (origin is None or is_loopback(origin_host(origin))):
        return None
    what = f"Origin {origin[:100]!r}" if is_loopback(host) and origin else f"Host {host[:100]!r}"
    return (f"Refused {what}: this server listens on a loopback address and answers only 127.0.0.1, localhost "
            "or [::1] (DNS-rebinding and cross-site protection); serve other names with env-serve --host 0.0.0.0.")


class LoopbackOnly:
    """ASGI middleware: `refusal`'s requests get 403 (JSON; JSON-RPC on `/mcp`), its sockets are
    closed at the handshake (403 there too)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        why = refusal(scope) if scope["type"] in ("http", "websocket") else None
        if why is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
            return
        if str(scope.get("path", "")).startswith(JSON_RPC_PATHS):
            payload: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": why}}
        else:
            payload = {"detail": why}
        body = json.dumps(payload).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
