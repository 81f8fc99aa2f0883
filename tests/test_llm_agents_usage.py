"""Token budgets (tokenizers), ReAct's END action, the one usage record per episode, live
progress and the cost table, against the scripted HTTP server where a model is involved."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.agents.react import END_ACTION, ReActAgent
from discoverylab.agents.tokens import TokenCounter, estimate_tokens, tiktoken_cached
from discoverylab.bench import records
from discoverylab.bench.episode import EpisodeRecord, run_episode
from discoverylab.bench.live import ENV_LIVE_DIR, LiveBoard, LiveReporter
from discoverylab.bench.report import load_report, to_markdown
from discoverylab.bench.schema import UsageRecord, merge_usage
from discoverylab.cli import app
from discoverylab.env import DiscoveryWorldEnv
from llm_scripted_server import ScriptedLLMServer


def _settings(server: ScriptedLLMServer, **kw: Any) -> LLMSettings:
    return LLMSettings(model="gpt-4o", base_url=server.base_url, **kw)


def _wait(thought: str = "t") -> str:
    return json.dumps({"thought": thought, "action": "WAIT", "arg1": None, "arg2": None})


# ---- token counts ---------------------------------------------------------------------------
def test_the_estimate_errs_high_where_four_characters_a_token_ran_low() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("1234567890") == 10  # digits: about a token each
    assert estimate_tokens("the cat sat on the mat") == 8  # letters and spaces at 3 a token (English ~4.5)
    assert estimate_tokens("温度计") == 3 and estimate_tokens('{"uuid": 42}') >= len('{"uuid": 42}') // 2
    observation = json.dumps({"x": 12, "y": 7, "objects": [{"uuid": 1234, "name": "flag"}]})
    assert estimate_tokens(observation) > len(observation) // 4 * 1.45  # the old count was ~1.45x under


def test_the_server_tokenizer_counts_once_per_text_and_a_missing_route_falls_back(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.tokenizer = lambda text: [0] * len(text.split())
    counter = TokenCounter("some-local-model", scripted_llm.base_url)
    assert counter.kind == "server" and counter.count("one two three") == 3 and counter.count("one two three") == 3
    assert len(scripted_llm.tokenize_requests) == 1 and scripted_llm.tokenize_requests[0]["content"] == "one two three"
    scripted_llm.tokenizer = None  # a server without /tokenize (404): one probe, then the estimate
    other = TokenCounter("some-local-model", scripted_llm.base_url)
    assert other.count("one two three") == estimate_tokens("one two three") and other.kind == "estimate"
    other.count("four five")
    assert len(scripted_llm.tokenize_requests) == 2 and not scripted_llm.requests  # never a chat request


def test_tiktoken_is_used_only_from_its_cache_never_downloaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tiktoken")
    import tiktoken.load

    def no_network(*_: Any, **__: Any) -> bytes:
        raise AssertionError("tiktoken tried to download")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert tiktoken_cached("gpt-4o") is None and tiktoken_cached("not-an-openai-model") is None
    assert TokenCounter("gpt-4o", None).kind == "estimate"


def test_react_trims_its_history_with_the_server_tokenizer(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.tokenizer = lambda text: [0] * (len(text) // 2)
    scripted_llm.push_text(*[_wait("x" * 200)] * 6)
    env = DiscoveryWorldEnv("PickAndPlaceTest", "normal")
    _, info = env.reset(seed=0)
    obs = info["observation"]
    agent = ReActAgent(_settings(scripted_llm, history_tokens=300))
    agent.reset(obs)
    for _ in range(6):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    assert agent.summary()["tokenizer"] == "server"
    history = scripted_llm.requests[-1]["messages"][1]["content"].split("History of thoughts, actions and observations:\n")[1]
    shown = history.split("\n\nCurrent observation:")[0]
    assert shown.startswith("[TRIMMED HISTORY]")
    assert sum(agent.count_tokens(e) + 1 for e in agent.trajectory[agent._history_start:]) <= 300


# ---- ReAct's END ------------------------------------------------------------------------------
def test_react_end_action_is_offered_only_when_asked_and_ends_the_episode(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(_wait(), json.dumps({"thought": "The flag is in the box.", "action": END_ACTION, "arg1": None, "arg2": None}))
    record, _ = run_episode("PickAndPlaceTest", "normal", 0, "react", max_steps=20, llm=_settings(scripted_llm, end_action=True))
    schema = scripted_llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert END_ACTION in schema["properties"]["action"]["enum"] and "END" in scripted_llm.requests[0]["messages"][1]["content"]
    assert record.status == "ok" and record.steps == 1 and record.llm is not None
    assert record.llm["stop_reason"] == "ended by the agent: The flag is in the box."
    scripted_llm.push_text(_wait())
    run_episode("PickAndPlaceTest", "normal", 0, "react", max_steps=1, llm=_settings(scripted_llm))
    assert END_ACTION not in scripted_llm.requests[-1]["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]


def test_attack_ending_the_episode_at_once_scores_what_was_done(scripted_llm: ScriptedLLMServer) -> None:
    """Ending early is no shortcut: the episode is scored as it stands (nothing done: nothing scored)."""
    scripted_llm.push_text(json.dumps({"thought": "Done, trust me.", "action": END_ACTION, "arg1": None, "arg2": None}))
    record, _ = run_episode("PickAndPlaceTest", "normal", 0, "react", max_steps=20, llm=_settings(scripted_llm, end_action=True))
    idle, _ = run_episode("PickAndPlaceTest", "normal", 0, "random", max_steps=0)
    assert record.steps == 0 and not record.success and not record.completed
    assert record.procedure_score == idle.procedure_score == 0.0


def test_attack_plan_execute_submit_loop_cannot_stall_the_episode(scripted_llm: ScriptedLLMServer) -> None:
    """A model that only plans and submits must still act within a bounded number of requests."""
    from discoverylab.agents.plan_execute import MAX_PLANS_PER_ACTION

    submit = json.dumps({"thought": "s", "action": "SUBMIT", "arg1": "Task completed!", "arg2": None})
    plan = json.dumps({"thought": "p", "next_step": "Think"})
    scripted_llm.push_text(*[plan, submit] * MAX_PLANS_PER_ACTION, plan, _wait())
    record, _ = run_episode("PickAndPlaceTest", "normal", 0, "plan-execute", max_steps=1, llm=_settings(scripted_llm))
    assert record.steps == 1 and len(scripted_llm.requests) == 2 * MAX_PLANS_PER_ACTION + 2


# ---- one usage record, live progress, cost table ------------------------------------------------
def test_merge_usage_gives_one_record_and_the_embedded_model_costs_zero_not_unknown() -> None:
    summary = {"model": "m", "base_url": "embedded", "requests": 2, "prompt_tokens": 30, "completion_tokens": 5,
               "invalid_replies": 0, "cost_usd": 0.0, "stop_reason": None, "tokenizer": "server"}  # fmt: skip
    usage, llm = merge_usage(UsageRecord(requests=3, attempts=3, prompt_tokens=30, completion_tokens=5, total_tokens=35), summary)
    assert usage.cost_usd == 0.0 and usage.requests == 3 and usage.total_tokens == 35
    assert set(llm) == {"model", "base_url", "invalid_replies", "stop_reason", "tokenizer"}
    unknown, _ = merge_usage(UsageRecord(cost_usd=1.5), {**summary, "cost_usd": None})
    assert unknown.cost_usd == 1.5  # no table price: $DISCOVERYLAB_LLM_PRICE's figure stays
    built, _ = merge_usage(None, summary)
    assert (built.requests, built.total_tokens, built.cost_usd) == (2, 35, 0.0)


class _FakeAgent:
    requests, prompt_tokens, completion_tokens = 4, 100, 20

    def cost_usd(self) -> float:
        return 0.25


def test_live_board_adds_running_episodes_to_finished_ones(tmp_path: Path) -> None:
    board = LiveBoard()
    try:
        assert os.environ[ENV_LIVE_DIR] == str(board.folder)
        reporter = LiveReporter.from_env("PickAndPlaceTest normal 0 react")
        assert reporter is not None
        reporter.update(7, _FakeAgent(), final=True)
        assert board.describe() == "0 steps"  # a finished episode counts through its record only
        following = LiveReporter.from_env("PickAndPlaceTest normal 1 react")  # the worker's next episode, running
        assert following is not None
        following.update(3, _FakeAgent())
        record = EpisodeRecord(task="t", difficulty="normal", seed=0, agent="react", steps=7,
                               usage=UsageRecord(requests=4, total_tokens=120, cost_usd=0.25))  # fmt: skip
        board.add_record(record)
        assert board.describe() == "10 steps, 8 requests, 240 tokens, $0.5000"
        board.add_record(record.model_copy(update={"usage": UsageRecord(requests=1, total_tokens=1, cost_usd=None)}))
        assert board.describe().endswith("$?")  # one unknown price makes the total unknown
    finally:
        board.close()
    assert ENV_LIVE_DIR not in os.environ and not board.folder.exists()
    assert LiveReporter.from_env("x") is None


def test_bench_with_task_names_the_task_not_the_suite(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "--agent", "oracle", "--task", "PickAndPlaceTest", "--difficulty", "normal",
                                      "--seeds", "0", "--max-steps", "3", "--workers", "1"])  # fmt: skip
    assert "task PickAndPlaceTest" in result.output and "suite all" not in result.output


def test_report_has_a_cost_table_per_task_and_per_100_steps(tmp_path: Path) -> None:
    def rec(seed: int, steps: int, cost: float | None, agent: str = "react") -> EpisodeRecord:
        usage = UsageRecord(requests=steps, prompt_tokens=1000 * steps, completion_tokens=10 * steps, cost_usd=cost)
        return EpisodeRecord(task="Proteomics", difficulty="easy", seed=seed, agent=agent, steps=steps, usage=usage)

    for r in (rec(0, 100, 2.0), rec(1, 50, 1.0), rec(0, 10, None, "hypothesizer")):
        records.append_jsonl(tmp_path / "results.jsonl", r)
    records.append_jsonl(tmp_path / "results.jsonl", EpisodeRecord(task="Proteomics", difficulty="easy", seed=0, agent="oracle"))
    report = load_report(tmp_path)
    react = next(c for c in report.costs if c.agent == "react" and c.label != "All")
    assert (react.episodes, react.steps, react.requests, react.prompt_tokens) == (2, 150, 150, 150_000)
    assert react.cost_usd == pytest.approx(3.0) and react.per_100_steps == pytest.approx(2.0)
    assert not any(c.agent == "oracle" for c in report.costs)  # no LLM, no cost row
    text = to_markdown(report)
    assert "## Cost (paper App. C.4 layout)" in text and "| 3.0000 | 2.0000 |" in text and "| ? | ? |" in text


def test_a_running_episode_reports_its_counts_to_the_live_folder(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(*[_wait()] * 3)
    board = LiveBoard()
    try:
        record, _ = run_episode("PickAndPlaceTest", "normal", 0, "react", max_steps=3, llm=_settings(scripted_llm))
        (written,) = [json.loads(p.read_text()) for p in board.folder.glob("*.json")]
    finally:
        board.close()
    assert written["final"] is True and written["steps"] == 3 and written["requests"] == 3
    assert record.usage is not None and written["tokens"] == record.usage.total_tokens
    assert written["cost_usd"] == pytest.approx(record.usage.cost_usd)


def test_a_killed_runner_s_live_folder_is_swept_by_the_next(tmp_path: Path) -> None:
    """A SIGKILLed runner cannot remove its live folder (hundreds were left in /tmp by the kill
    tests); the next runner's board removes those of dead pids and keeps live runners' ones."""
    import subprocess
    import sys

    from discoverylab.bench.live import LIVE_PREFIX, sweep_dead_boards

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    dead = tmp_path / f"{LIVE_PREFIX}{int(gone.stdout)}-abc"
    alive = tmp_path / f"{LIVE_PREFIX}{os.getpid()}-def"
    other = tmp_path / f"{LIVE_PREFIX}oldstyle"  # no pid in the name: not ours to judge
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "1.json").write_text("{}")
    assert sweep_dead_boards(tmp_path) == 1
    assert not dead.exists() and alive.exists() and other.exists()
