"""OpenEnv's `MCPToolClient` on env-serve: the env server's tools as OpenEnv's MCP steps on `/ws`,
and OpenEnv's session methods on `/mcp` (the client's production mode).

openenv-core's `MCPToolClient` (an `EnvClient`) speaks OpenEnv's socket messages, not MCP's
transport: `reset()` is a reset message, `list_tools()` a step whose data is `{"type":
"list_tools"}`, `call_tool(name, **arguments)` a step whose data is `{"type": "call_tool",
"tool_name", "arguments"}`, and `close()` closes the socket. Each is answered as OpenEnv's
`MCPEnvironment` answers: an observation message whose observation holds `tools`, or `tool_name`
with `result` (the tool's JSON as `data`, and as text in `content`) or `error` (`error_type`,
`message`; the client raises it). The tools are `tools.TOOLS` on the socket's own session, so they
take no `session_id`; OpenEnv reserves `reset`, `step`, `state` and `close` for its own messages,
so the step tool is `act` here and reset and close are the client's own calls.

With `use_production_mode = True` the client POSTs JSON-RPC to `/mcp` instead, without MCP's
handshake: `openenv/session/create` (answered with a pool session's id), `tools/list` and
`tools/call` with that id in `params.session_id`, then `openenv/session/close`. The first and last
are answered here; a call's `params.session_id` goes into its arguments (the tools of `/mcp` take
it there), and the MCP transport answers the rest as for any MCP client.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from discoverylab.server.session import SessionError
from discoverylab.server.tools import TOOLS, ToolRefused, checked_call, clip_error

if TYPE_CHECKING:
    from discoverylab.server.app import SessionPool

INVALID_PARAMS = -32602
SERVER_ERROR = -32000

SOCKET_TOOLS = {"act": "step", "observe": "observe", "answer_sheet": "answer_sheet", "hand_in": "hand_in"}


def socket_tools() -> list[dict[str, Any]]:
    """The tools as OpenEnv's `Tool` (name, description, input_schema), without `session_id`."""
    listed = []
    for name, route in SOCKET_TOOLS.items():
        schema = TOOLS[route].args.model_json_schema()
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k != "session_id"}
        schema["required"] = [k for k in schema.get("required", []) if k != "session_id"]
        listed.append({"name": name, "description": TOOLS[route].description.replace("the session's", "the"),
                       "input_schema": schema})  # fmt: skip
    return listed


def _refused(name: str, error_type: str, message: str) -> dict[str, Any]:
    return {"observation": {"tool_name": name, "result": None, "error": {"error_type": error_type, "message": clip_error(message)}},
            "reward": None, "done": False}  # fmt: skip


def socket_tool_step(pool: SessionPool, sid: str, data: dict[str, Any]) -> dict[str, Any]:
    """A tool step of session `sid` answered as OpenEnv's observation message data (blocking)."""
    if data.get("type") == "list_tools":
        return {"observation": {"tools": socket_tools()}, "reward": None, "done": False}
    name, arguments = data.get("tool_name"), data.get("arguments") or {}
    shown = str(name)[:40]
    if not isinstance(name, str) or name not in SOCKET_TOOLS:
        return _refused(shown, "tool_not_found", f"Unknown tool {shown!r}: the tools are {', '.join(SOCKET_TOOLS)} "
                        "(reset and close are the client's own calls).")  # fmt: skip
    if not isinstance(arguments, dict) or "session_id" in arguments:
        return _refused(name, "invalid_args", f"Bad arguments to {name}: an object of the tool's arguments, without "
                        "session_id (the socket is the session).")  # fmt: skip
    try:
        tool, args = checked_call(SOCKET_TOOLS[name], {**arguments, "session_id": sid}, shown=name)
        payload = tool.run(pool, args)
    except ToolRefused as exc:
        return _refused(name, "invalid_args", str(exc))
    except SessionError as exc:
        return _refused(name, "execution_error", str(exc))
    result = {"content": [{"type": "text", "text": json.dumps(payload)}], "data": payload, "is_error": False}
    done = bool(pool.run(sid, lambda s: s.done))  # whether the episode has ended, whatever the tool
    reward = payload.get("reward") if name == "act" else None  # the env's reward, paid by the step alone
    return {"observation": {"tool_name": name, "result": result, "error": None}, "reward": reward, "done": done}


def _message(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC request in a POST body with an object `params` (None otherwise: the transport's)."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) and isinstance(message.get("params"), dict) else None


def openenv_session_rpc(pool: SessionPool, body: bytes) -> dict[str, Any] | None:
    """The answer to OpenEnv's `openenv/session/create` or `close` (None: another message).
    Blocking: making and closing sessions may write records."""
    message = _message(body)
    if message is None or message.get("method") not in ("openenv/session/create", "openenv/session/close"):
        return None
    rid, sid = message.get("id"), message["params"].get("session_id")
    if message["method"] == "openenv/session/create":
        try:
            return {"jsonrpc": "2.0", "id": rid, "result": {"session_id": pool.create()}}
        except SessionError as exc:  # the pool is full
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": SERVER_ERROR, "message": str(exc)}}
    if isinstance(sid, str) and pool.close(sid, "the client closed its session (OpenEnv session/close)"):
        return {"jsonrpc": "2.0", "id": rid, "result": {"session_id": sid, "closed": True}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": INVALID_PARAMS,
            "message": f"Unknown session_id: {str(sid)[:40]!r} (closed, expired or never made)."}}  # fmt: skip


def session_in_arguments(body: bytes) -> bytes:
    """A `tools/call` naming its session in `params.session_id` (OpenEnv's way), with the id moved
    into its arguments, where the tools of `/mcp` take it; any other body as it came."""
    message = _message(body)
    if message is None or message.get("method") != "tools/call":
        return body
    params = message["params"]
    sid, arguments = params.get("session_id"), params.get("arguments")
    if not isinstance(sid, str) or not isinstance(arguments, dict) or "session_id" in arguments:
        return body
    message["params"] = {**params, "arguments": {**arguments, "session_id": sid}}
    return json.dumps(message).encode()
