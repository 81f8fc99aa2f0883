"""The MCP tools of `discoverylab env-serve`'s `/mcp` endpoint (the official `mcp` package's server).

Each tool is one of the HTTP routes on the same `SessionPool`: `reset` (a new session unless one is
named), `step`, `observe` (state and the latest observation), `answer_sheet`, `hand_in` and `close`.
They call the same `EpisodeSession` methods, so the observation, reward, scorecard, ledger and
records are the HTTP routes' own: a sealed instance plays once per server, its hand-in gets the
receipt, never a score. The session's id travels in the arguments, not in the MCP connection:
a session outlives a reconnect, and the pool's cap and idle TTL bound it as over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discoverylab.server.app import NoSession, PoolFull
from discoverylab.server.openenv_ws import validation_text
from discoverylab.server.session import AnswersRequest, ResetRequest, SessionError

if TYPE_CHECKING:
    from discoverylab.server.app import SessionPool

MAX_ERROR_CHARS = 2_000  # an error names what was wrong; it never echoes a huge argument back
SESSION_ID = Field(min_length=1, max_length=64, description="the session_id that reset answered with")
INSTRUCTIONS = (
    "Scientific-discovery episodes (DiscoveryWorld tasks and Tiny Labs protocols). Call reset with a task "
    "and an instance (seed, or split and index): it answers with a session_id and the first observation, "
    "which explains the actions. Call step with that session_id and one action until done is true. A "
    "discovery task then carries its answer_sheet: hand it in once with hand_in (answers and your "
    "knowledge report). Call close when finished; an idle session expires.")  # fmt: skip


class SessionArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = SESSION_ID


class ResetArgs(ResetRequest):
    """HTTP's reset body, and optionally the session to play it in."""

    session_id: str | None = Field(default=None, min_length=1, max_length=64,
                                   description="play in this session (its running episode ends); none: a new session")  # fmt: skip


class StepArgs(SessionArgs):
    action: dict[str, Any] | str = Field(description=(
        'DiscoveryWorld: {"action": NAME, "arg1": ..., "arg2": ...} or {"chosen_dialog_option_int": N} '
        "(or that object as JSON text); a Tiny Lab: the message text"))  # fmt: skip


class HandInArgs(AnswersRequest, SessionArgs):
    """The filled answer sheet (its form: the ending step's answer_sheet, or the answer_sheet tool)."""


@dataclass(frozen=True)
class Tool:
    args: type[BaseModel]
    description: str
    run: Callable[[SessionPool, Any], Any]  # blocking (the session's lock, the env): runs in a worker thread
    read_only: bool = False


def _reset(pool: SessionPool, args: ResetArgs) -> dict[str, Any]:
    req = ResetRequest(**args.model_dump(exclude={"session_id"}))
    sid = args.session_id
    if sid is not None:
        return {"session_id": sid, **pool.run(sid, lambda s: s.reset(req)).model_dump(mode="json")}
    sid = pool.create()
    try:
        result = pool.run(sid, lambda s: s.reset(req))
    except BaseException:
        pool.close(sid, "its first reset was refused")  # no slot held by a session that never played
        raise
    return {"session_id": sid, **result.model_dump(mode="json")}


def _observe(pool: SessionPool, args: SessionArgs) -> dict[str, Any]:
    def work(s: Any) -> dict[str, Any]:
        return {**s.state(), "observation": s.last.observation if s.last is not None else None}

    return pool.run(args.session_id, work)  # type: ignore[no-any-return]


def _close(pool: SessionPool, args: SessionArgs) -> dict[str, Any]:
    if not pool.close(args.session_id, "the client closed its session (MCP close)"):
        raise NoSession(f"No session {args.session_id[:40]!r} (already closed or expired).")
    return {"closed": args.session_id}


TOOLS: dict[str, Tool] = {
    "reset": Tool(ResetArgs, "Start an episode: a task (DiscoveryWorld task id or Tiny Labs protocol) and an "
                  "instance (seed, or split and index). Answers with session_id and the first observation.", _reset),
    "step": Tool(StepArgs, "Play one action in the session's episode; answers with the observation, reward and done "
                 "(at a discovery task's end, its answer_sheet).",
                 lambda pool, a: pool.run(a.session_id, lambda s: s.step(a.action)).model_dump(mode="json")),
    "observe": Tool(SessionArgs, "Where the session's episode stands (step count, done, the scorecard once done) "
                    "and its latest observation.", _observe, read_only=True),
    "answer_sheet": Tool(SessionArgs, "The task's answer sheet (fields, options, JSON schema, text); null when the "
                         "task has none.", lambda pool, a: {"answer_sheet": pool.run(a.session_id, lambda s: s.answer_sheet())},
                         read_only=True),  # fmt: skip
    "hand_in": Tool(HandInArgs, "Hand in the filled answer sheet, once, after the episode ended, with your "
                    "knowledge report; answers with its grade (a sealed test instance: a receipt, no grade).",
                    lambda pool, a: pool.run(a.session_id, lambda s: s.hand_in(a.answers, a.knowledge))),
    "close": Tool(SessionArgs, "Close the session (free its slot).", _close),
}


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=tool.description, input_schema=tool.args.model_json_schema(),
                       annotations=types.ToolAnnotations(read_only_hint=tool.read_only))
            for name, tool in TOOLS.items()]  # fmt: skip


def _error(message: str, status: int) -> types.CallToolResult:
    """A tool's refusal, as MCP puts it (the model sees it and may try again), with HTTP's status."""
    if len(message) > MAX_ERROR_CHARS:
        message = message[: MAX_ERROR_CHARS - 1] + "…"
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
    tool = TOOLS.get(name)
    if tool is None:
        return _error(f"Unknown tool {name[:40]!r}: the tools are {', '.join(TOOLS)}.", 404)
    try:
        args = tool.args.model_validate(arguments or {})
    except ValidationError as exc:
        return _error(f"Bad arguments to {name} - " + validation_text(list(exc.errors())).removeprefix("Bad request body - "), 422)
    try:
        payload = await anyio.to_thread.run_sync(tool.run, pool, args)
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
