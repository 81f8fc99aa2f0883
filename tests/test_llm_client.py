"""LLMClient against a real scripted HTTP server: configuration, retries, timeouts, validation."""

from __future__ import annotations

import time

import pytest

from discoverylab.llm import (
    LLMBadOutput,
    LLMBadResponse,
    LLMClient,
    LLMError,
    LLMRequestError,
    LLMUnavailable,
)
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply, error_body

ENV_VARS = (
    "DISCOVERYLAB_LLM_BASE_URL",
    "DISCOVERYLAB_LLM_MODEL",
    "DISCOVERYLAB_LLM_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
)

PROBABILITY_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["answer", "confidence"],
    "additionalProperties": False,
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


class SleepRecorder:
    """Stands in for time.sleep so backoff schedules are observed without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make_client(server: ScriptedLLMServer, **kwargs: object) -> tuple[LLMClient, SleepRecorder]:
    sleep = SleepRecorder()
    options: dict[str, object] = {"model": "m", "timeout": 5.0, "sleep": sleep, **kwargs}
    return LLMClient(base_url=server.base_url, **options), sleep  # type: ignore[arg-type]


# --------------------------------------------------------------------------- configuration


def test_complete_returns_text_tokens_and_latency(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(Scripted(body=chat_reply("hello there", prompt_tokens=21, completion_tokens=3)))
    client, _ = make_client(scripted_llm, temperature=0.3, max_tokens=77)
    result = client.complete([{"role": "user", "content": "hi"}])
    assert result.text == "hello there"
    assert (result.prompt_tokens, result.completion_tokens) == (21, 3)
    assert result.latency_s > 0 and result.attempts == 1
    sent = scripted_llm.requests[0]
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("m", 0.3, 77)


def test_per_call_options_override_defaults(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text("ok")
    client, _ = make_client(scripted_llm)
    client.complete([{"role": "user", "content": "x"}], temperature=0.9, seed=5, stop=["\n"])
    sent = scripted_llm.requests[0]
    assert (sent["temperature"], sent["seed"], sent["stop"]) == (0.9, 5, ["\n"])


def test_usage_accumulates_over_calls(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(
        Scripted(body=chat_reply("a", prompt_tokens=10, completion_tokens=2)),
        Scripted(status=503, body=error_body("busy")),
        Scripted(body=chat_reply("b", prompt_tokens=30, completion_tokens=4)),
    )
    client, _ = make_client(scripted_llm)
    client.complete([{"role": "user", "content": "1"}])
    client.complete([{"role": "user", "content": "2"}])
    usage = client.usage
    assert (usage.requests, usage.attempts, usage.retries) == (2, 3, 1)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (40, 6, 46)
    assert usage.latency_s > 0


def test_settings_come_from_discoverylab_env(scripted_llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCOVERYLAB_LLM_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("DISCOVERYLAB_LLM_MODEL", "env-model")
    monkeypatch.setenv("DISCOVERYLAB_LLM_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-should-lose")
    scripted_llm.push_text("ok")
    LLMClient().complete([{"role": "user", "content": "x"}])
    assert scripted_llm.requests[0]["model"] == "env-model"
    assert scripted_llm.headers[0]["authorization"] == "Bearer sk-env"


def test_openai_env_is_the_fallback(scripted_llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    scripted_llm.push_text("ok")
    client = LLMClient(model="m")
    client.complete([{"role": "user", "content": "x"}])
    assert client.base_url == scripted_llm.base_url
    assert scripted_llm.headers[0]["authorization"] == "Bearer sk-openai"


def test_arguments_beat_environment(scripted_llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCOVERYLAB_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DISCOVERYLAB_LLM_MODEL", "env-model")
    scripted_llm.push_text("ok")
    LLMClient(base_url=scripted_llm.base_url, model="arg-model").complete([{"role": "user", "content": "x"}])
    assert scripted_llm.requests[0]["model"] == "arg-model"


def test_no_endpoint_and_no_key_is_an_actionable_error() -> None:
    with pytest.raises(LLMError, match="DISCOVERYLAB_LLM_BASE_URL"):
        LLMClient()


def test_model_is_discovered_from_the_endpoint_when_unset(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text("ok")
    client = LLMClient(base_url=scripted_llm.base_url)
    client.complete([{"role": "user", "content": "x"}])
    assert client.model == "scripted-model"
    assert scripted_llm.requests[0]["model"] == "scripted-model"
    assert scripted_llm.headers[0]["authorization"] == "Bearer not-needed"


# --------------------------------------------------------------------------- retries and failures


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_transient_status_is_retried(scripted_llm: ScriptedLLMServer, status: int) -> None:
    scripted_llm.push(Scripted(status=status, body=error_body("transient")), Scripted(body=chat_reply("fine")))
    client, sleep = make_client(scripted_llm)
    result = client.complete([{"role": "user", "content": "x"}])
    assert result.text == "fine" and result.attempts == 2
    assert len(scripted_llm.requests) == 2 and len(sleep.delays) == 1


def test_persistent_failure_raises_unavailable_with_exponential_backoff(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(*[Scripted(status=500, body=error_body("down")) for _ in range(10)])
    client, sleep = make_client(scripted_llm, max_retries=4, backoff_base=0.5, backoff_max=100.0)
    with pytest.raises(LLMUnavailable, match="after 5 attempts"):
        client.complete([{"role": "user", "content": "x"}])
    assert len(scripted_llm.requests) == 5
    ceilings = [0.5 * 2**k for k in range(4)]
    assert len(sleep.delays) == 4
    for delay, ceiling in zip(sleep.delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling


def test_backoff_is_capped(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(*[Scripted(status=500, body=error_body("down")) for _ in range(7)])
    client, sleep = make_client(scripted_llm, max_retries=6, backoff_base=1.0, backoff_max=2.0)
    with pytest.raises(LLMUnavailable):
        client.complete([{"role": "user", "content": "x"}])
    assert max(sleep.delays) <= 2.0


def test_backoff_jitter_is_seeded(scripted_llm: ScriptedLLMServer) -> None:
    def delays(seed: int) -> list[float]:
        scripted_llm.push(*[Scripted(status=500, body=error_body("down")) for _ in range(4)])
        client, sleep = make_client(scripted_llm, max_retries=3, seed=seed)
        with pytest.raises(LLMUnavailable):
            client.complete([{"role": "user", "content": "x"}])
        return sleep.delays

    first, again, other = delays(1), delays(1), delays(2)
    assert first == again
    assert first != other


def test_retry_after_header_is_honoured(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(
        Scripted(status=429, body=error_body("slow down"), headers={"retry-after": "7"}),
        Scripted(body=chat_reply("ok")),
    )
    client, sleep = make_client(scripted_llm, backoff_base=0.1, backoff_max=30.0)
    client.complete([{"role": "user", "content": "x"}])
    assert sleep.delays[0] >= 7.0


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(scripted_llm: ScriptedLLMServer, status: int) -> None:
    scripted_llm.push(Scripted(status=status, body=error_body("no")), Scripted(body=chat_reply("never")))
    client, sleep = make_client(scripted_llm)
    with pytest.raises(LLMRequestError) as info:
        client.complete([{"role": "user", "content": "x"}])
    assert info.value.status_code == status
    assert len(scripted_llm.requests) == 1 and sleep.delays == []


def test_malformed_body_is_retried_then_reported(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(Scripted(body="{not json"), Scripted(body=chat_reply("recovered")))
    client, _ = make_client(scripted_llm)
    assert client.complete([{"role": "user", "content": "x"}]).text == "recovered"

    scripted_llm.push(*[Scripted(body="<html>proxy error</html>") for _ in range(3)])
    client, _ = make_client(scripted_llm, max_retries=2)
    # A body that is not a chat completion is a server fault, never the model's (bad) answer.
    with pytest.raises(LLMBadResponse) as info:
        client.complete([{"role": "user", "content": "x"}])
    assert isinstance(info.value, LLMUnavailable) and not isinstance(info.value, LLMBadOutput)


def test_body_without_choices_is_a_bad_response(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(Scripted(body={"id": "x", "object": "chat.completion", "choices": []}))
    client, _ = make_client(scripted_llm, max_retries=0)
    with pytest.raises(LLMBadResponse, match="no choices"):
        client.complete([{"role": "user", "content": "x"}])


def test_hanging_server_times_out_and_is_retried(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(Scripted(hang=10.0, body=chat_reply("too late")), Scripted(body=chat_reply("on time")))
    client, sleep = make_client(scripted_llm, timeout=0.3)
    started = time.perf_counter()
    assert client.complete([{"role": "user", "content": "x"}]).text == "on time"
    assert time.perf_counter() - started < 5.0
    assert len(sleep.delays) == 1


def test_hanging_server_exhausts_retries(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push(*[Scripted(hang=10.0, body=chat_reply("too late")) for _ in range(2)])
    client, _ = make_client(scripted_llm, timeout=0.3, max_retries=1)
    with pytest.raises(LLMUnavailable, match="after 2 attempts"):
        client.complete([{"role": "user", "content": "x"}])


def test_unreachable_endpoint_is_unavailable(scripted_llm: ScriptedLLMServer) -> None:
    url = scripted_llm.base_url
    scripted_llm.stop()  # nothing listens on this port any more
    client = LLMClient(base_url=url, model="m", max_retries=1, sleep=SleepRecorder())
    with pytest.raises(LLMUnavailable):
        client.complete([{"role": "user", "content": "x"}])


# --------------------------------------------------------------------------- structured output


def test_complete_json_sends_the_schema_and_returns_valid_data(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"answer": "yes", "confidence": 0.8}')
    client, _ = make_client(scripted_llm)
    data = client.complete_json([{"role": "user", "content": "?"}], PROBABILITY_SCHEMA, name="guess")
    assert data == {"answer": "yes", "confidence": 0.8}
    response_format = scripted_llm.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "guess"
    assert response_format["json_schema"]["schema"] == PROBABILITY_SCHEMA


def test_out_of_range_number_is_rejected_and_the_model_is_told_why(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"answer": "yes", "confidence": 1.7}', '{"answer": "yes", "confidence": 0.7}')
    client, _ = make_client(scripted_llm)
    result = client.complete_structured([{"role": "user", "content": "?"}], PROBABILITY_SCHEMA)
    assert result.data["confidence"] == 0.7
    assert result.rejected == ('{"answer": "yes", "confidence": 1.7}',)
    retry_messages = scripted_llm.requests[1]["messages"]
    assert retry_messages[-2] == {"role": "assistant", "content": '{"answer": "yes", "confidence": 1.7}'}
    assert "maximum" in retry_messages[-1]["content"]
    assert client.usage.bad_outputs == 1


def test_persistently_invalid_output_raises_bad_output(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"answer": "maybe", "confidence": 0.5}', "not json at all", '{"answer": "no"}')
    client, _ = make_client(scripted_llm)
    with pytest.raises(LLMBadOutput) as info:
        client.complete_json([{"role": "user", "content": "?"}], PROBABILITY_SCHEMA, bad_output_retries=2)
    assert len(scripted_llm.requests) == 3
    assert info.value.text == '{"answer": "no"}'
    assert any("confidence" in problem for problem in info.value.problems)


def test_clamp_keeps_out_of_range_numbers_inside_bounds(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"answer": "no", "confidence": -3}')
    client, _ = make_client(scripted_llm)
    data = client.complete_json([{"role": "user", "content": "?"}], PROBABILITY_SCHEMA, clamp=True)
    assert data == {"answer": "no", "confidence": 0}
    assert len(scripted_llm.requests) == 1


def test_prompt_mode_puts_schema_in_the_prompt_and_tolerates_fences(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('Sure! ```json\n{"answer": "no", "confidence": 0.25}\n``` Hope that helps.')
    client, _ = make_client(scripted_llm, json_mode="prompt")
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "?"}]
    data = client.complete_json(messages, PROBABILITY_SCHEMA)
    assert data == {"answer": "no", "confidence": 0.25}
    sent = scripted_llm.requests[0]
    assert "response_format" not in sent
    assert sent["messages"][0]["content"].startswith("You are terse.")
    assert '"maximum": 1' in sent["messages"][0]["content"]


def test_json_object_mode_requests_json_object(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text('{"answer": "yes", "confidence": 1}')
    client, _ = make_client(scripted_llm, json_mode="json_object")
    client.complete_json([{"role": "user", "content": "?"}], PROBABILITY_SCHEMA)
    sent = scripted_llm.requests[0]
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["messages"][0]["role"] == "system" and '"confidence"' in sent["messages"][0]["content"]
