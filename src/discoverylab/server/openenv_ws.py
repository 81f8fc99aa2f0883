"""OpenEnv's WebSocket messages on `discoverylab env-serve`'s `/ws` (one socket = one session).

OpenEnv's client sends `{"type": "reset"|"step"|"state"|"close", "data": ...}` and reads
`observation`, `state` or `error` messages back (`openenv.core.GenericEnvClient` connects as is).
Every message maps onto the session's `EpisodeSession`, as the HTTP routes do: a reset's data is
a `ResetRequest`, a step's data the action itself, and, after a discovery episode has ended, a
step whose data is `{"answers": ..., "knowledge": ...}` hands in its answer sheet (HTTP's
`POST /sessions/{id}/answers`; OpenEnv's client has only reset, step and state to send).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from discoverylab.server.session import AnswersRequest, EpisodeSession, ResetRequest, SessionError, StepResult

if TYPE_CHECKING:
    from discoverylab.server.app import SessionPool

# What a socket step's data may be (`GET /schema`'s action): OpenEnv's client sends the action itself.
_ARG = {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
ACTION_SCHEMA: dict[str, Any] = {"title": "DiscoveryLabAction", "anyOf": [
    {"type": "object", "description": "a DiscoveryWorld action (names and arguments: the first observation's instructions)",
     "properties": {"action": {"type": "string"}, "arg1": _ARG, "arg2": _ARG}, "required": ["action"]},
    {"type": "object", "description": "a choice in a DiscoveryWorld dialog",
     "properties": {"chosen_dialog_option_int": {"type": "integer"}}, "required": ["chosen_dialog_option_int"]},
    {"type": "object", "description": "a message to a Tiny Lab", "properties": {"message": {"type": "string"}},
     "required": ["message"]},
    {"type": "object", "description": "the answer sheet of a discovery episode that has ended (its form: the "
     "ending observation's answer_sheet), with the agent's knowledge report; handed in once",
     "properties": {"answers": {"type": "object"}, "knowledge": {"type": "string"}}, "required": ["answers"]},
    {"type": "object", "description": "OpenEnv's MCPToolClient: list the tools (act, observe, answer_sheet, hand_in)",
     "properties": {"type": {"const": "list_tools"}}, "required": ["type"]},
    {"type": "object", "description": "OpenEnv's MCPToolClient: call a tool on this socket's session",
     "properties": {"type": {"const": "call_tool"}, "tool_name": {"type": "string"}, "arguments": {"type": "object"}},
     "required": ["type", "tool_name"]}]}  # fmt: skip


def validation_text(errors: list[Any]) -> str:
    """Pydantic's errors as one line naming each field and its reason (HTTP's 422, the socket's VALIDATION_ERROR)."""
    parts = []
    for err in errors[:5]:
        if err.get("type") == "json_invalid":  # its loc is ("body", character offset), not a field
            reason = (err.get("ctx") or {}).get("error", "")
            where = f"body (not JSON at character {err.get('loc', ('', '?'))[-1]})"
            parts.append(f"{where}: {err.get('msg', 'JSON decode error')}" + (f": {reason}" if reason else ""))
            continue
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "Bad request body - " + "; ".join(parts)


def ws_error(message: str, code: str) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code}})


def openenv_observation(result: StepResult) -> dict[str, Any]:
    """OpenEnv's observation message data: the observation fields, then reward and done beside them."""
    return {"observation": result.model_dump(exclude={"reward", "done"}), "reward": result.reward, "done": result.done}


def _hand_in(session: EpisodeSession, sheet: AnswersRequest) -> dict[str, Any]:
    """A sheet handed in over OpenEnv's socket, answered as an observation: its grade and the
    scorecard the client may now see. The reward is null, not 0: the episode's reward was paid
    at its end, and OpenEnv's harnesses take the last non-null reward as the episode's."""
    grade = session.hand_in(sheet.answers, sheet.knowledge)
    return {"observation": {"task": session.task, "difficulty": session.difficulty,
                            "instance": session.instance.public() if session.instance else {},
                            "answers_grade": grade, "scorecard": session.client_card()},
            "reward": None, "done": True}  # fmt: skip


def ws_answer(pool: SessionPool, sid: str, raw: str) -> tuple[str, bool]:
    """One OpenEnv WebSocket message answered (text), and whether the client closed."""
    try:
        message = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ws_error(f"Invalid JSON: {exc}", "INVALID_JSON"), False
    if not isinstance(message, dict):
        return ws_error("A message is an object with a type.", "INVALID_JSON"), False
    kind, data = message.get("type"), message.get("data") or {}
    try:
        if kind == "reset":
            req = ResetRequest.model_validate(data)  # not **data: a list or string is a validation error
            return json.dumps({"type": "observation", "data": openenv_observation(pool.run(sid, lambda s: s.reset(req)))}), False
        if kind == "step" and isinstance(data, dict) and data.get("type") in ("list_tools", "call_tool"):
            from discoverylab.server.openenv_tools import socket_tool_step  # OpenEnv's MCPToolClient

            return json.dumps({"type": "observation", "data": socket_tool_step(pool, sid, data)}), False
        if kind == "step" and isinstance(data, dict) and "answers" in data:  # the sheet: HTTP's POST .../answers
            sheet = AnswersRequest.model_validate(data)
            handed = pool.run(sid, lambda s: _hand_in(s, sheet))
            return json.dumps({"type": "observation", "data": handed}), False
        if kind == "step":
            result = pool.run(sid, lambda s: s.step(data))  # OpenEnv sends the action itself as data
            return json.dumps({"type": "observation", "data": openenv_observation(result)}), False
        if kind == "state":
            return json.dumps({"type": "state", "data": pool.run(sid, lambda s: s.state())}), False
        if kind == "close":
            return "", True
    except ValidationError as exc:
        return ws_error(validation_text(list(exc.errors())), "VALIDATION_ERROR"), False
    except SessionError as exc:
        return ws_error(str(exc), "EXECUTION_ERROR"), False
    return ws_error(f"Unknown message type: {kind!r} (reset, step, state or close).", "UNKNOWN_TYPE"), False
