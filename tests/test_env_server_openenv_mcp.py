"""OpenEnv's own `MCPToolClient` (openenv-core) plays env-serve's episodes over the socket `/ws`.

Before, it could not: its `list_tools()` and `call_tool()` are socket steps whose data is
`{"type": "list_tools"}` / `{"type": "call_tool", ...}`, which the server took for game actions
("Call reset before step."), so the client raised before any tool was listed. Now they are
answered as OpenEnv's `MCPEnvironment` answers them, with env-serve's tools on the socket's own
session: the same observations, reward, sheet, records and sealed rules as HTTP and `/mcp`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from discoverylab.env import GOLD_KEYS
from discoverylab.server.client import EnvServerClient
from env_server_kit import oracle_episode, running_env_server

pytest.importorskip("openenv.core", reason="the openenv-core package (dev extra) is not installed")
from openenv.core.env_server.mcp_types import RESERVED_TOOL_NAMES, CallToolAction  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402

SHEET_TASK = ("ArchaeologyDating", "easy", 0)
KEY = b"o" * 32


def test_mcp_tool_client_lists_tools_resets_steps_hands_in_and_closes(tmp_path: Path) -> None:
    task, difficulty, seed = SHEET_TASK
    actions, knowledge, answers = oracle_episode(task, difficulty, seed)
    out = tmp_path / "served"
    with running_env_server(max_sessions=4, ttl_s=60, out=out) as (url, app):
        with EnvServerClient(url) as http:
            first = http.reset(task, difficulty, seed=seed).observation
        with MCPToolClient(base_url=url).sync() as env:
            tools = {tool.name: tool for tool in env.list_tools()}
            assert set(tools) == {"act", "observe", "answer_sheet", "hand_in"}
            assert not set(tools) & RESERVED_TOOL_NAMES  # OpenEnv's own reset/step/state/close stay its messages
            assert all("session_id" not in t.input_schema["properties"] for t in tools.values())
            reset = env.reset(task=task, difficulty=difficulty, seed=seed, agent="openenv-mcp")
            assert not reset.done and reset.reward == 0.0
            assert env.call_tool("observe")["observation"] == first  # HTTP's text, byte for byte
            for action in actions[:-1]:
                played = env.call_tool("act", action=action)
                assert not played["done"] and set(GOLD_KEYS).isdisjoint(played["scorecard"] or {})
            last = env.step(CallToolAction(tool_name="act", arguments={"action": actions[-1]}))
            assert last.done and last.reward == 1.0  # the env's reward, as an OpenEnv step pays it
            assert env.call_tool("answer_sheet")["answer_sheet"]["fields"]
            grade = env.call_tool("hand_in", answers=answers, knowledge=knowledge)
            assert grade["score"] == 1.0
            assert env.call_tool("observe")["scorecard"]["completedSuccessfully"]
            assert env.state().step_count == len(actions)
        deadline = time.monotonic() + 10  # the server frees the socket's session once it reads the close
        while app.state.pool.slots and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.state.pool.slots == {}  # the client's close freed the session
    [row] = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()][-1:]
    assert row["agent"] == "openenv-mcp" and row["success"] and row["answers_score"] == 1.0


def test_mcp_tool_client_gets_refusals_it_can_read() -> None:
    with running_env_server(max_sessions=4, ttl_s=60) as (url, _):
        with MCPToolClient(base_url=url).sync() as env:
            with pytest.raises(RuntimeError, match=r"Call reset before step.*execution_error"):
                env.call_tool("act", action={"action": "WAIT"})
            with pytest.raises(RuntimeError, match=r"Unknown tool 'reset'.*client's own calls.*tool_not_found"):
                env.call_tool("reset", task="PickAndPlaceTest", seed=0)
            env.reset(task="PickAndPlaceTest", seed=0)
            with pytest.raises(RuntimeError, match=r"Bad arguments to act - action.*invalid_args"):
                env.call_tool("act", action=5)
            with pytest.raises(RuntimeError, match=r"without session_id.*invalid_args"):
                env.call_tool("observe", session_id="someone-elses")
            assert env.call_tool("act", action={"action": "WAIT"})["step"] == 1  # the session plays on


def test_attack_a_sealed_sheet_handed_in_through_the_tool_client_reveals_no_grade() -> None:
    with running_env_server(max_sessions=4, ttl_s=60, key=KEY) as (url, _):
        with MCPToolClient(base_url=url).sync() as env:
            env.reset(task="ArchaeologyDating", difficulty="easy", split="test", index=0, max_steps=2)
            for _ in range(2):
                played = env.call_tool("act", action={"action": "WAIT"})
            assert played["done"] and played["instance"].get("seed") is None and played["reward"] == 0
            receipt = env.call_tool("hand_in", answers={}, knowledge="")
            assert receipt["received"] and "score" not in receipt
            text = json.dumps(env.call_tool("observe"))
            assert not any(key in text for key in GOLD_KEYS)


def test_mcp_tool_client_in_production_mode_plays_over_http_mcp() -> None:
    """Production mode: JSON-RPC to /mcp with OpenEnv's session methods (before: "Method not
    found", so the client listed no tool and every call raised)."""
    import asyncio

    import httpx

    async def play(url: str) -> tuple[list[str], dict, dict, str | None]:
        env = MCPToolClient(base_url=url)
        env.use_production_mode = True  # openenv-core 0.3.0 has no constructor argument for it
        try:
            names = [tool.name for tool in await env.list_tools()]
            reset = await env.call_tool("reset", task="PickAndPlaceTest", seed=0)
            step = await env.call_tool("step", action={"action": "WAIT"})
            return names, reset, step, env._production_session_id
        finally:
            await env.close()

    with running_env_server(max_sessions=4, ttl_s=60) as (url, app):
        names, reset, step, sid = asyncio.run(play(url))
        assert app.state.pool.slots == {}  # openenv/session/close freed it
        again = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "openenv/session/close",
                                               "params": {"session_id": sid}}).json()  # fmt: skip
    assert names == ["reset", "step", "observe", "answer_sheet", "hand_in", "close"]
    assert reset["structuredContent"]["session_id"] == sid and "Task:" in reset["structuredContent"]["observation"]
    assert not step["isError"] and step["structuredContent"]["step"] == 1
    assert again["error"]["code"] == -32602 and "Unknown session_id" in again["error"]["message"]
