"""The env server's tools, one per HTTP route on the same `SessionPool`: `reset` (a new session
unless one is named), `step`, `observe` (state and the latest observation), `answer_sheet`,
`hand_in` and `close`. They call the same `EpisodeSession` methods, so the observation, reward,
scorecard, ledger and records are the HTTP routes' own: a sealed instance plays once per server,
its hand-in gets the receipt, never a score. `/mcp` serves them (`mcp_tools`), and so does
OpenEnv's socket to its `MCPToolClient` (`openenv_tools`); neither needs the other's package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discoverylab.server.app import NoSession
from discoverylab.server.openenv_ws import validation_text
from discoverylab.server.session import AnswersRequest, ResetRequest

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


class ToolRefused(Exception):
    """A call refused before its tool ran: an unknown tool (404) or arguments that do not fit (422)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def checked_call(name: str, arguments: dict[str, Any] | None, shown: str | None = None) -> tuple[Tool, BaseModel]:
    """The tool and its arguments, checked as HTTP checks a body (`ToolRefused` otherwise;
    `shown`: the tool's name where the caller knows it by another)."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ToolRefused(f"Unknown tool {name[:40]!r}: the tools are {', '.join(TOOLS)}.", 404)
    try:
        return tool, tool.args.model_validate(arguments or {})
    except ValidationError as exc:
        raise ToolRefused(f"Bad arguments to {shown or name} - "
                          + validation_text(list(exc.errors())).removeprefix("Bad request body - "), 422) from None


def clip_error(message: str) -> str:
    """An error at most `MAX_ERROR_CHARS` long (its end marked), as every tool client gets it."""
    return message if len(message) <= MAX_ERROR_CHARS else message[: MAX_ERROR_CHARS - 1] + "…"
