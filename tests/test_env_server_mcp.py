"""`discoverylab env-serve`'s MCP endpoint (`/mcp`) driven by the official `mcp` package's client
against a real server on 127.0.0.1, as an MCP-speaking harness would: the same episodes as the
HTTP routes (same observations, rewards, sheet and sealed rules), bad calls answered with short
clear errors, the pool's cap and idle TTL holding for MCP sessions too, and `openenv validate`
(which probes `/mcp`) passing.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from discoverylab.env import GOLD_KEYS
from discoverylab.server.client import EnvServerClient
from discoverylab.server.session import MAX_ACTION_CHARS
from discoverylab.server.tools import MAX_ERROR_CHARS
from env_server_kit import oracle_episode, running_env_server

mcp = pytest.importorskip("mcp", reason="the mcp package (server and dev extras) is not installed")

SHEET_TASK = ("ArchaeologyDating", "easy", 0)
KEY = b"m" * 32
JSON_RPC_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _run(url: str, scenario: Callable[[Any], Awaitable[Any]], mode: str = "auto") -> Any:
    """`scenario(client)` with an MCP client connected to the server's /mcp."""

    async def main() -> Any:
        async with mcp.Client(f"{url}/mcp", mode=mode) as client:
            return await scenario(client)

    return asyncio.run(main())


def _ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
    return result.structured_content  # type: ignore[no-any-return]


def _refused(result: Any) -> str:
    assert result.is_error, result.structured_content
    text: str = result.content[0].text
    assert len(text) <= MAX_ERROR_CHARS and "Traceback" not in text, text
    return text


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The server (a key, so the test split is served) and the folder of its own records."""
    out = tmp_path_factory.mktemp("mcp") / "served"
    with running_env_server(max_sessions=16, ttl_s=60, key=KEY, out=out) as (base, _):
        yield base, out


@pytest.fixture
def url(served):
    return served[0]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026 protocol and the initialize handshake
def test_mcp_client_plays_a_discovery_episode_as_http_does(url, mode):
    """The oracle's episode over MCP tools: the tools are listed, every observation is HTTP's own
    byte for byte, the reward pays the success once, the gold waits for the sheet, the sheet
    grades 1.0, then observe shows the full scorecard and close frees the session."""
    task, difficulty, seed = SHEET_TASK
    actions, knowledge, answers = oracle_episode(task, difficulty, seed)
    with EnvServerClient(url) as env:
        http = [env.reset(task, difficulty, seed=seed).observation] + [env.step(a).observation for a in actions]

    async def play(client: Any) -> dict[str, Any]:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"reset", "step", "observe", "answer_sheet", "hand_in", "close"}
        assert "seed" in tools["reset"].input_schema["properties"] and tools["observe"].annotations.read_only_hint
        first = _ok(await client.call_tool("reset", {"task": task, "difficulty": difficulty, "seed": seed}))
        sid, seen, rewards = first["session_id"], [first["observation"]], []
        sheet = _ok(await client.call_tool("answer_sheet", {"session_id": sid}))["answer_sheet"]
        assert sheet["fields"] and "json_schema" in sheet
        early = _refused(await client.call_tool("hand_in", {"session_id": sid, "answers": answers}))
        assert "after the episode ends" in early
        for action in actions:
            result = _ok(await client.call_tool("step", {"session_id": sid, "action": action}))
            seen.append(result["observation"])
            rewards.append(result["reward"])
        assert result["done"] and result["scorecard"]["completedSuccessfully"] and result["answer_sheet"]
        assert not any(key in result["scorecard"] for key in GOLD_KEYS)  # the gold waits for the sheet
        assert seen == http and rewards[-1] == 1.0 and sum(rewards) == 1.0
        grade = _ok(await client.call_tool("hand_in", {"session_id": sid, "answers": answers, "knowledge": knowledge}))
        assert grade["score"] == 1.0
        assert "already handed in" in _refused(await client.call_tool("hand_in", {"session_id": sid, "answers": answers}))
        state = _ok(await client.call_tool("observe", {"session_id": sid}))
        assert state["done"] and state["observation"] == seen[-1] and all(key in state["scorecard"] for key in GOLD_KEYS)
        assert _ok(await client.call_tool("close", {"session_id": sid})) == {"closed": sid}
        return await client.call_tool("step", {"session_id": sid, "action": {"action": "WAIT"}})

    gone = _refused(_run(url, play, mode))
    assert "No session" in gone and "reset without a session_id" in gone


def test_a_session_opened_over_http_plays_on_over_mcp(url):
    """One pool behind both: MCP's tools take the session id HTTP's POST /sessions made."""
    with EnvServerClient(url) as env:
        first = env.reset("PickAndPlaceTest", seed=0)

        async def play(client: Any) -> tuple[dict[str, Any], dict[str, Any]]:
            step = _ok(await client.call_tool("step", {"session_id": env.session_id, "action": '{"action": "WAIT"}'}))
            return step, _ok(await client.call_tool("observe", {"session_id": env.session_id}))

        step, seen = _run(url, play)
        assert env.state()["step_count"] == 1
    assert step["step"] == 1 and seen["observation"] == step["observation"] != first.observation


def test_a_tiny_lab_takes_its_message_as_the_action(url):
    async def play(client: Any) -> tuple[dict[str, Any], str]:
        first = _ok(await client.call_tool("reset", {"task": "sequence/hidden-property", "split": "dev", "index": 0}))
        sid = first["session_id"]
        step = _ok(await client.call_tool("step", {"session_id": sid, "action": "SAMPLE 0.5"}))
        long = _refused(await client.call_tool("step", {"session_id": sid, "action": "A" * (MAX_ACTION_CHARS + 1)}))
        await client.call_tool("close", {"session_id": sid})
        return step, long

    step, long = _run(url, play)
    assert step["step"] == 1 and step["task"] == "sequence/hidden-property" and step["observation"]
    assert f"at most {MAX_ACTION_CHARS} characters" in long


def test_bad_calls_get_short_clear_errors_and_the_server_stays_up(url):
    """An unknown tool, missing, mistyped or unknown arguments, huge strings and an unknown
    session: each is a tool error naming what was wrong (never a traceback, never the huge value
    echoed whole), and the next good call works."""
    huge = "x" * 30_000

    async def calls(client: Any) -> dict[str, str]:
        out = {
            "unknown tool": _refused(await client.call_tool("teleport_to_gold", {})),
            "missing": _refused(await client.call_tool("reset", {})),
            "mistyped": _refused(await client.call_tool("reset", {"task": "PickAndPlaceTest", "seed": "zero"})),
            "unknown argument": _refused(await client.call_tool("reset", {"task": "PickAndPlaceTest", "seed": 0, "gold": True})),
            "huge key": _refused(await client.call_tool("reset", {"task": "PickAndPlaceTest", huge: 1})),
            "huge task": _refused(await client.call_tool("reset", {"task": huge})),
            "huge session": _refused(await client.call_tool("observe", {"session_id": huge})),
            "unknown session": _refused(await client.call_tool("step", {"session_id": "nope", "action": "WAIT"})),
            "bad task": _refused(await client.call_tool("reset", {"task": "NoSuchTask", "seed": 0})),
            "no instance": _refused(await client.call_tool("reset", {"task": "PickAndPlaceTest"})),
        }
        _ok(await client.call_tool("close", {"session_id": _ok(await client.call_tool(
            "reset", {"task": "PickAndPlaceTest", "seed": 0}))["session_id"]}))  # fmt: skip
        return out

    errors = _run(url, calls)
    assert errors["unknown tool"].startswith("Unknown tool 'teleport_to_gold'") and "reset, step" in errors["unknown tool"]
    assert errors["missing"] == "Bad arguments to reset - task: Field required"
    assert "seed" in errors["mistyped"] and "integer" in errors["mistyped"]
    assert "gold: Extra inputs are not permitted" in errors["unknown argument"]
    assert huge not in errors["huge key"] and huge not in errors["huge task"] and huge not in errors["huge session"]
    assert "task: String should have at most 200 characters" in errors["huge task"]
    assert "session_id: String should have at most 64 characters" in errors["huge session"]
    assert "No session 'nope'" in errors["unknown session"]
    assert "Unknown task 'NoSuchTask'" in errors["bad task"] and "Name the instance" in errors["no instance"]


def test_raw_posts_get_bounded_json_rpc_answers(url):
    """Below the client: a body over the server's limit gets HTTP's 413, a body that is no JSON-RPC
    (OpenEnv's probe) a JSON-RPC error with 200, and a plain JSON-RPC tools/list its tools."""
    with httpx.Client(base_url=url, headers=JSON_RPC_HEADERS, timeout=30) as http:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "reset", "arguments": {"task": "x" * 100_000}}}  # fmt: skip
        big = http.post("/mcp", json=call)
        assert big.status_code == 413 and "limit of 65536 bytes" in big.json()["detail"]
        probe = http.post("/mcp", json={})
        assert probe.status_code == 200 and probe.json()["jsonrpc"] == "2.0"
        assert probe.json()["error"]["code"] == -32600 and "MCP endpoint" in probe.json()["error"]["message"]
        listed = http.post("/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}})
        assert listed.status_code == 200 and listed.json()["id"] == 7
        assert [t["name"] for t in listed.json()["result"]["tools"]][:2] == ["reset", "step"]


def test_a_get_or_delete_is_answered_at_once_not_held_open(url):
    """The endpoint is stateless: a GET (the transport's server-sent event stream, which would
    never end and hold its connection) and a DELETE (no MCP session to end) get 405 at once."""
    with httpx.Client(base_url=url, headers=JSON_RPC_HEADERS, timeout=5) as http:
        for method in ("GET", "DELETE"):
            answer = http.request(method, "/mcp")
            assert answer.status_code == 405 and answer.headers["allow"] == "POST", method
            assert "POST each JSON-RPC message" in answer.json()["error"]["message"]


def test_attack_a_page_rebound_to_localhost_cannot_drive_episodes(url):
    """DNS rebinding: a page whose name now points at 127.0.0.1 sends its own Host (or Origin);
    the loopback server refuses it, and still serves a local browser tool (Origin localhost)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with httpx.Client(base_url=url, headers=JSON_RPC_HEADERS, timeout=30) as http:
        host = http.post("/mcp", json=body, headers={"host": "attacker.example:8000"})
        origin = http.post("/mcp", json=body, headers={"origin": "http://attacker.example"})
        local = http.post("/mcp", json=body, headers={"origin": "http://localhost:6274"})
    assert host.status_code == 403 and "Refused Host 'attacker.example'" in host.json()["error"]["message"]
    assert origin.status_code == 403 and "Origin" in origin.json()["error"]["message"]
    assert local.status_code == 200 and local.json()["result"]["tools"]


def test_attack_a_sealed_hand_in_over_mcp_gets_the_receipt_never_the_grade(served):
    """The sealed rules as over HTTP: the instance's seed never comes, the end shows no gold, the
    hand-in is a receipt (no score, no right/wrong, no gold) while the grade goes to the
    evaluator's records, and a second reset of that instance, in any session, is refused."""
    url, out = served

    async def play(client: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], str]:
        args = {"task": "Proteomics", "difficulty": "easy", "split": "test", "index": 2, "max_steps": 1,
                "agent": "mcp-agent"}
        first = _ok(await client.call_tool("reset", args))
        end = _ok(await client.call_tool("step", {"session_id": first["session_id"], "action": {"action": "WAIT"}}))
        receipt = _ok(await client.call_tool("hand_in", {"session_id": first["session_id"],
                                                         "answers": {"outlier_species": "echojelly"}}))  # fmt: skip
        state = _ok(await client.call_tool("observe", {"session_id": first["session_id"]}))
        again = _refused(await client.call_tool("reset", args))
        return first, end, receipt, again + json.dumps(state)

    first, end, receipt, rest = _run(url, play)
    assert "seed" not in first["instance"] and first["instance"]["split"] == "test"
    assert end["done"] and end["answer_sheet"]["fields"]
    assert receipt["received"] is True and "score" not in receipt and "correct" not in json.dumps(receipt)
    for text in (json.dumps(end), json.dumps(receipt), rest):
        assert not any(key in text for key in GOLD_KEYS) and '"gold"' not in text, text
    assert "already played on this server" in rest
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    mine = [row for row in rows if row["agent"] == "mcp-agent"]
    assert mine[-1]["answers"] == {"outlier_species": "echojelly"} and mine[-1]["answers_score"] is not None


def test_mcp_sessions_respect_the_cap_and_expire_when_idle():
    """MCP's resets open the pool's sessions: at the cap a new one is refused (and a refused first
    reset holds no slot); an MCP client that vanishes has its session expire after the TTL."""
    with running_env_server(max_sessions=1, ttl_s=0.5) as (base, app):

        async def fill(client: Any) -> tuple[str, str, str]:
            bad = _refused(await client.call_tool("reset", {"task": "NoSuchTask", "seed": 0}))
            sid = _ok(await client.call_tool("reset", {"task": "PickAndPlaceTest", "seed": 0}))["session_id"]
            full = _refused(await client.call_tool("reset", {"task": "PickAndPlaceTest", "seed": 1}))
            return bad, sid, full

        bad, sid, full = _run(base, fill)
        assert "Unknown task" in bad
        assert "maximum of 1 sessions" in full and "the close tool" in full
        deadline = time.monotonic() + 10
        while app.state.pool.slots and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not app.state.pool.slots and app.state.pool.expired == 1

        async def after(client: Any) -> tuple[str, dict[str, Any]]:
            gone = _refused(await client.call_tool("step", {"session_id": sid, "action": {"action": "WAIT"}}))
            return gone, _ok(await client.call_tool("reset", {"task": "PickAndPlaceTest", "seed": 1}))

        gone, fresh = _run(base, after, mode="legacy")
    assert "No session" in gone and "expired after 0.5 s idle" in gone and fresh["step"] == 0


def test_without_the_mcp_package_mcp_says_so_and_the_rest_still_serves(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp.server.streamable_http_manager", None)  # as if not installed
    with running_env_server(max_sessions=2, ttl_s=60) as (base, _):
        with httpx.Client(base_url=base, headers=JSON_RPC_HEADERS, timeout=30) as http:
            answer = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        with EnvServerClient(base) as env:
            assert env.reset("PickAndPlaceTest", seed=0).step == 0
    assert answer.status_code == 501 and "pip install 'discoverylab[server]'" in answer.json()["error"]["message"]

