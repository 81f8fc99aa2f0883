"""`/mcp` on `discoverylab env-serve`: the Model Context Protocol's Streamable HTTP transport.

The official `mcp` package serves it (stateless: each POST is one JSON-RPC exchange, answered as
JSON; the tools, in `mcp_tools`, keep the episode in the env server's own sessions). Two checks
come before the package's transport (after the whole server's `local_guard`: DNS rebinding):

- Methods: POST only. The transport would answer a GET with an event stream that, with no
  session behind it, never ends (a connection held for ever); the specification lets a server
  without such a stream answer `405`, as it lets one without sessions refuse DELETE.
- OpenEnv's probe: `openenv validate --url` POSTs `{}` and wants a JSON-RPC answer with 200. A body
  that is no JSON-RPC message at all (an object without `"jsonrpc"`) gets JSON-RPC's Invalid Request
  error that way; real MCP messages are the package's alone.
- OpenEnv's session methods: `MCPToolClient` in production mode opens a session with
  `openenv/session/create`, names it in each call's `params.session_id` and ends it with
  `openenv/session/close` (`openenv_tools`): the pool's own sessions.

Without the `mcp` package (the `server` extra) `/mcp` answers every request with a JSON-RPC error
naming it, and the rest of the server runs as before.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, MutableMapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse

if TYPE_CHECKING:
    from discoverylab.server.app import SessionPool

INVALID_REQUEST = -32600
SERVER_ERROR = -32000
NOT_POST = ("This MCP endpoint is stateless: POST each JSON-RPC message. It opens no server-sent event stream "
            "(GET) and holds no MCP session to end (DELETE); episodes live in the tools' session_id.")
MISSING = ("This server has no MCP support: the `mcp` package is not installed "
           "(pip install 'discoverylab[server]'). Its HTTP routes and OpenEnv's WebSocket /ws serve the same episodes.")  # fmt: skip


def _rpc_error(code: int, message: str, status: int = 200) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, status_code=status)


def _not_json_rpc(body: bytes) -> bool:
    """A JSON object with no "jsonrpc" member: no MCP client sends one (OpenEnv's probe sends `{}`)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    return isinstance(message, dict) and "jsonrpc" not in message


class McpEndpoint:
    """The ASGI app at `/mcp`; `running()` goes in the server's lifespan (the transport's task group)."""

    def __init__(self, pool: SessionPool, max_body: int) -> None:
        self.pool = pool
        try:
            from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

            from discoverylab.server.mcp_tools import mcp_server
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("mcp"):
                raise
            self.manager = None
        else:
            self.manager = StreamableHTTPSessionManager(mcp_server(pool), json_response=True, stateless=True,
                                                        max_request_body_size=max_body)  # fmt: skip

    def running(self) -> AbstractAsyncContextManager[None]:
        return self.manager.run() if self.manager is not None else _nothing()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        refusal = None
        if self.manager is None:
            refusal = _rpc_error(SERVER_ERROR, MISSING, status=501)
        if refusal is None and scope["method"] != "POST":  # the transport's GET stream would never end here
            refusal = _rpc_error(INVALID_REQUEST, NOT_POST, status=405)
            refusal.headers["allow"] = "POST"
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        body = await request.body()  # bounded: the server's body limit (413) wraps every route
        if _not_json_rpc(body):
            await _rpc_error(INVALID_REQUEST, 'Invalid Request: a JSON-RPC 2.0 message has "jsonrpc": "2.0". '
                             "This is discoverylab env-serve's MCP endpoint (Streamable HTTP): connect an MCP "
                             "client here; tools/list names the tools.")(scope, receive, send)  # fmt: skip
            return
        # OpenEnv's MCPToolClient (production mode); not at the top: openenv_tools imports the app
        from discoverylab.server.openenv_tools import openenv_session_rpc, session_in_arguments

        if b"openenv/session/" in body:
            answer = await run_in_threadpool(openenv_session_rpc, self.pool, body)
            if answer is not None:
                await JSONResponse(answer)(scope, receive, send)
                return
        body = session_in_arguments(body)
        assert self.manager is not None
        await self.manager.handle_request(scope, _replay(body, receive), send)


def _replay(body: bytes, receive: Any) -> Any:
    """The request's body, read once here, for the transport to read again."""
    sent = False

    async def again() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return again


@asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield
