"""Helpers for the integration tests: a real env server on 127.0.0.1 in a thread, and an LLM side
that plays the oracle (the scripted OpenAI-compatible server answering with the oracle's actions)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from discoverylab.bench.episode import run_episode
from discoverylab.server.app import create_app
from llm_scripted_server import Scripted, chat_reply
from rubric_judge import judge_user_text, rubric_judge
from uvicorn_kit import serve_in_thread


@contextmanager
def running_env_server(**options: Any) -> Iterator[tuple[str, Any]]:
    """An env server on a free port of 127.0.0.1; yields its base URL and the app."""
    app = create_app(**options)
    with serve_in_thread(app, what="the env server") as port:
        yield f"http://127.0.0.1:{port}", app


def tool_call_reply(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    """An OpenAI chat-completions body whose assistant message calls tool `name`."""
    call = {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": "scripted-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                         "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}  # fmt: skip


def oracle_episode(task: str, difficulty: str, seed: int) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    """The oracle's actions, knowledge report and answer sheet on this instance."""
    record, log = run_episode(task, difficulty, seed, "oracle")
    assert record.success, "the oracle must solve the episode"
    return [e["action"] for e in log if e["type"] == "step"], record.knowledge or "", record.answers or {}


class ToolOracleReplay:
    """Scripted-server responder for tool-calling harnesses (Inspect, verifiers): agent requests
    get the oracle's next action as an `act` tool call, then `submit` with its report; an
    answer-sheet request gets the oracle's sheet; judge requests go to the rubric judge."""

    def __init__(self, actions: list[dict[str, Any]], discovery: str, answers: dict[str, Any]) -> None:
        self.actions = deque(actions)
        self.discovery, self.answers = discovery, answers
        self.calls = 0
        self.judge_requests = 0
        self.sheet_requests = 0

    def __call__(self, request: dict[str, Any]) -> Scripted:
        self.calls += 1
        if judge_user_text(request) is not None:
            self.judge_requests += 1
            return rubric_judge(request)
        last = str(request["messages"][-1].get("content") or "")
        if "Fill in the answer sheet" in last:
            self.sheet_requests += 1
            return Scripted(body=chat_reply(json.dumps(self.answers)))
        if self.actions:
            action = self.actions.popleft()
            args = ({"chosen_dialog_option_int": action["chosen_dialog_option_int"]} if "chosen_dialog_option_int" in action
                    else {"action": action["action"], "arg1": action.get("arg1"), "arg2": action.get("arg2")})  # fmt: skip
            return Scripted(body=tool_call_reply("act", args, self.calls))
        return Scripted(body=tool_call_reply("submit", {"answer": self.discovery}, self.calls))
