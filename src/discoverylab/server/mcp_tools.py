"""The MCP tools of `discoverylab env-serve`'s `/mcp` endpoint (the official `mcp` package's server).

The tools themselves (`tools.TOOLS`: reset, step, observe, answer_sheet, hand_in, close) are the
HTTP routes on the same `SessionPool`; this module puts them in MCP's types: the listing, each
call's result as JSON text and structured content, a refusal as a tool error with HTTP's status.
The session's id travels in the arguments, not in the MCP connection: a session outlives a
reconnect, and the pool's cap and idle TTL bound it as over HTTP.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server

from discoverylab.server.app import NoSession, PoolFull
from discoverylab.server.session import SessionError
from discoverylab.server.tools import INSTRUCTIONS, TOOLS, ToolRefused, checked_call, clip_error

if TYPE_CHECKING:
    from discoverylab.server.app import SessionPool


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=tool.description, input_schema=tool.args.model_json_schema(),
                       annotations=types.ToolAnnotations(read_only_hint=tool.read_only))
            for name, tool in TOOLS.items()]  # fmt: skip


def _error(message: str, status: int) -> types.CallToolResult:
    """A tool's refusal, as MCP puts it (the model sees it and may try again), with HTTP's status."""
    message = clip_error(message)
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                structured_content={"error": message, "status": status}, is_error=True)  # fmt: skip


def _mcp_hint(exc: SessionError) -> str:
    """HTTP's message, with what an MCP client does instead of HTTP's route."""
    if isinstance(exc, NoSession):
        return f"{exc} Over MCP, reset without a session_id opens a new one."
    if isinstance(exc, PoolFull):
        return f"{exc} Over MCP, the close tool closes a session."
    return str(exc)


async def call_tool(pool: SessionPool, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """One tool call: its arguments checked as HTTP checks a body, its work on a worker thread."""
    try:
        tool, args = checked_call(name, arguments)
        payload = await anyio.to_thread.run_sync(tool.run, pool, args)
    except ToolRefused as exc:
        return _error(str(exc), exc.status)
    except SessionError as exc:
        return _error(_mcp_hint(exc), exc.status)
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(payload))],
                                structured_content=payload)  # fmt: skip


def mcp_server(pool: SessionPool) -> Server[Any]:
    """The MCP server: tools/list and tools/call on `pool`."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def tools_call(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await call_tool(pool, params.name, params.arguments)

    return Server("discoverylab", version="0.1.0", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=tools_call)  # fmt: skip
