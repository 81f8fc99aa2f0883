"""`discoverylab env-serve` driven by OpenEnv's own package (`openenv-core`), as an OpenEnv user would.

Two gaps a researcher plugging OpenEnv's harness in used to hit:

- OpenEnv's harness (`openenv.core.harness.StepEnvSessionAdapter`, which its `collect` runner
  builds) resets with `episode_id=...`, a standard argument of OpenEnv's `reset`: the server
  refused every such reset (`episode_id: Extra inputs are not permitted`), so no episode started.
- Over the WebSocket a discovery episode's answer sheet could be neither read nor handed in (only
  HTTP had `/answer_sheet` and `/answers`): an OpenEnv agent's answers were lost, its end never
  showed the gold, and the server's records said "not handed in: the WebSocket closed".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from discoverylab.env import GOLD_KEYS
from env_server_kit import oracle_episode, running_env_server

openenv = pytest.importorskip("openenv.core", reason="the openenv-core package (dev extra) is not installed")

SHEET_TASK = ("ArchaeologyDating", "easy", 0)


def test_openenv_harness_adapter_plays_an_episode_with_its_episode_id():
    """OpenEnv's harness session: reset(seed, episode_id, **reset_kwargs), one tool call per
    step, the state read after each, and its verify() forwarding the env's reward."""
    from openenv.core.env_server.mcp_types import Tool
    from openenv.core.harness import StepEnvSessionAdapter

    task, difficulty, seed = "PickAndPlaceTest", "normal", 0
    actions, _, _ = oracle_episode(task, difficulty, seed)
    tool = Tool(name="act", description="one DiscoveryWorld action", input_schema={"type": "object"})
    with running_env_server(max_sessions=4, ttl_s=60) as (url, _):
        session = StepEnvSessionAdapter(
            openenv.GenericEnvClient(base_url=url), seed=seed, episode_id="ep-000007",
            reset_kwargs={"task": task, "difficulty": difficulty}, tool_specs=[tool],
            action_builder=lambda name, arguments: arguments,
            initial_messages_builder=lambda result, _task: [{"role": "user", "content": result.observation["observation"]}],
        )  # fmt: skip
        try:
            assert "PickAndPlace" in session.initial_messages()[0]["content"]
            results = [session.call_tool("act", action) for action in actions]
            verdict = session.verify([])
        finally:
            session.close()
    assert results[-1].done and verdict.env_reward == 1.0 and verdict.metrics["step_count"] == len(actions)
    assert verdict.artifacts["final_state"]["episode_id"] == "ep-000007"


def test_openenv_client_hands_in_the_answer_sheet_over_the_socket(tmp_path: Path):
    """A full discovery episode over OpenEnv's GenericEnvClient: the ending observation carries the
    sheet's form, a step with {"answers", "knowledge"} hands it in (before the end, or twice:
    refused), the grade and the now-revealed scorecard come back, and the server's records keep
    the answers and the report."""
    task, difficulty, seed = SHEET_TASK
    actions, knowledge, answers = oracle_episode(task, difficulty, seed)
    with running_env_server(max_sessions=4, ttl_s=60, out=tmp_path / "served") as (url, _):
        with openenv.GenericEnvClient(base_url=url).sync() as env:
            result = env.reset(task=task, difficulty=difficulty, seed=seed, agent="openenv-agent")
            with pytest.raises(RuntimeError, match="after the episode ends"):
                env.step({"answers": answers})
            for action in actions:
                assert result.observation["answer_sheet"] is None
                result = env.step(action)
            assert result.done and result.reward == 1.0
            sheet = result.observation["answer_sheet"]
            assert sheet is not None and set(answers) <= {field["name"] for field in sheet["fields"]}
            assert not any(key in result.observation["scorecard"] for key in GOLD_KEYS)  # the gold waits
            handed = env.step({"answers": answers, "knowledge": knowledge})
            assert handed.done and handed.reward is None  # the episode's reward was paid at its end
            assert handed.observation["answers_grade"]["score"] == 1.0
            assert all(key in handed.observation["scorecard"] for key in GOLD_KEYS)  # the sheet is in
            with pytest.raises(RuntimeError, match="already handed in"):
                env.step({"answers": {}})
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                env.step({"answers": ["not", "a", "sheet"]})
    rows = [json.loads(line) for line in (tmp_path / "served" / "results.jsonl").read_text().splitlines()]
    last: dict[str, Any] = rows[-1]
    assert last["agent"] == "openenv-agent" and last["answers_score"] == 1.0 and last["error"] is None
    assert last["answers"] == answers and last["knowledge"] == knowledge


def test_schema_route_names_the_answer_sheet_step():
    """`GET /schema`'s action (what a socket step's data may be) includes the sheet hand-in."""
    import httpx

    with running_env_server(max_sessions=1, ttl_s=60) as (url, _):
        schema = httpx.get(f"{url}/schema", timeout=10).json()
    assert {"answers"} in [set(option["required"]) for option in schema["action"]["anyOf"]]
    assert "answer_sheet" in schema["observation"]["properties"] and "episode_id" in schema["reset"]["properties"]


def test_attack_a_sealed_sheet_handed_in_over_the_socket_reveals_no_gold():
    """The socket's hand-in answers with what the client may see: for a sealed instance a receipt,
    no score, no right/wrong per field and never the gold (as over HTTP)."""
    with running_env_server(max_sessions=2, ttl_s=60, key=b"s" * 32) as (url, _):
        with openenv.GenericEnvClient(base_url=url).sync() as env:
            env.reset(task="Proteomics", difficulty="easy", split="test", index=2, max_steps=1)
            end = env.step({"action": "WAIT"})
            assert end.done and end.observation["answer_sheet"]["fields"]
            handed = env.step({"answers": {"outlier_species": "echojelly"}})
    text = json.dumps(handed.observation)
    grade = handed.observation["answers_grade"]
    assert grade["received"] is True and "score" not in grade and "correct" not in text, grade
    assert not any(key in text for key in GOLD_KEYS) and '"gold"' not in text, text


def test_openenv_validate_passes_every_check():
    """`openenv validate --url` on env-serve: OpenAPI, health, metadata, schema, the mode contract
    and its MCP probe (POST /mcp with `{}`, answered by a JSON-RPC payload) all pass."""
    from openenv.cli._validation import validate_running_environment

    with running_env_server(max_sessions=1, ttl_s=60) as (url, _):
        report = validate_running_environment(url, timeout_s=10)
    assert report["passed"] and report["summary"]["failed_criteria"] == [], report["summary"]
