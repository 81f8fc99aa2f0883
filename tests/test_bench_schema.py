"""Record statuses, their classification and the usage a record carries."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.bench import episode as episode_module
from discoverylab.bench.episode import run_episode
from discoverylab.bench.schema import ENV_PRICE, STATUSES, classify, status_line, usage_of
from discoverylab.llm import (
    LLMBadOutput,
    LLMBadResponse,
    LLMClient,
    LLMDeadlineExceeded,
    LLMRequestError,
    LLMUnavailable,
)
from discoverylab.llm.client import Usage


class _AgentError(RuntimeError):
    episode_status = "agent_error"


@pytest.mark.parametrize(("exc", "status"), [
    (LLMUnavailable("down"), "llm_error"),
    (LLMBadResponse("html page"), "llm_error"),
    (LLMDeadlineExceeded("too slow"), "llm_error"),
    (LLMRequestError("bad key", status_code=401), "llm_error"),
    (LLMBadOutput("never valid JSON"), "agent_error"),
    (_AgentError("cannot act"), "agent_error"),
    (RuntimeError("bug"), "error"),
])  # fmt: skip
def test_exceptions_map_to_statuses(exc: BaseException, status: str) -> None:
    assert classify(exc) == status


def test_status_line_counts_in_schema_order() -> None:
    assert status_line(["timeout", "ok", "llm_error", "ok"]) == "4 episodes: 2 ok, 1 llm_error, 1 timeout"
    assert set(STATUSES) >= {"ok", "error", "llm_error", "agent_error", "timeout", "interrupted"}


def test_usage_comes_from_a_held_client_with_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    class Agent:
        def __init__(self) -> None:
            self._client = LLMClient(base_url="http://127.0.0.1:9/v1", model="m")

    agent = Agent()
    monkeypatch.setattr(agent._client, "_usage", Usage(requests=3, attempts=5, retries=2, prompt_tokens=1000,
                                                       completion_tokens=200))  # fmt: skip
    monkeypatch.setenv(ENV_PRICE, "2.5,10")
    usage = usage_of(agent, before=Usage(requests=1, attempts=1, prompt_tokens=100))
    assert usage is not None
    assert (usage.requests, usage.attempts, usage.retries, usage.total_tokens) == (2, 4, 2, 1100)
    assert usage.cost_usd == pytest.approx((900 * 2.5 + 200 * 10) / 1e6)
    assert usage_of(object()) is None  # no LLM, no usage


def test_a_dead_server_mid_episode_is_llm_error_not_a_score(monkeypatch: pytest.MonkeyPatch) -> None:
    """A DiscoveryWorld agent whose server dies after two steps: the episode ends `llm_error`, unscored."""

    class DyingAgent:
        def __init__(self) -> None:
            self.calls = 0

        def reset(self, obs: Any) -> None:
            pass

        def act(self, obs: Any) -> dict[str, Any]:
            self.calls += 1
            if self.calls == 3:
                raise LLMUnavailable("LLM request failed after 5 attempts: HTTP 503")
            return {"action": "WAIT"}

    monkeypatch.setattr(episode_module, "make_agent", lambda name, task, seed, llm=None: DyingAgent())
    record, log = run_episode("PickAndPlaceTest", "normal", 0, "dying", max_steps=20)
    assert record.status == "llm_error" and record.steps == 2
    assert record.procedure_score == 0.0 and not record.success and "HTTP 503" in (record.error or "")
    assert log[-2]["type"] == "error" and log[-1]["type"] == "end"
