"""LLM agents (ReAct, Plan+Execute, Hypothesizer) against the scripted HTTP server: prompts,
context-dependent schemas, invalid replies, accounting, cost ceiling, knowledge and judging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from discoverylab.agents import make_agent
from discoverylab.agents.hypothesizer import HypothesizerAgent
from discoverylab.agents.llm_common import LLMSettings, action_schema, trim_in_chunks
from discoverylab.agents.plan_execute import PlanExecuteAgent
from discoverylab.agents.pricing import PriceError, cost_usd, load_prices, price_of
from discoverylab.agents.react import ReActAgent
from discoverylab.bench import records
from discoverylab.bench.episode import run_episode
from discoverylab.bench.judging import judge_run, make_judge
from discoverylab.bench.presets import resolve
from discoverylab.env import DiscoveryWorldEnv
from llm_scripted_server import ScriptedLLMServer


def _settings(server: ScriptedLLMServer, **kw: Any) -> LLMSettings:
    return LLMSettings(model="gpt-4o", base_url=server.base_url, **kw)


def _reply(**data: Any) -> str:
    return json.dumps(data)


def _obs(task: str = "PickAndPlaceTest", difficulty: str = "normal") -> tuple[DiscoveryWorldEnv, dict[str, Any]]:
    env = DiscoveryWorldEnv(task, difficulty)
    _, info = env.reset(seed=0)
    return env, info["observation"]


def test_react_sends_instructions_once_and_the_compact_observation(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(_reply(thought="The door is north; turn there.", action="ROTATE_DIRECTION", arg1="north", arg2=None))
    env, obs = _obs()
    agent = ReActAgent(_settings(scripted_llm))
    agent.reset(obs)
    action = agent.act(obs)
    assert action == {"action": "ROTATE_DIRECTION", "arg1": "north"}
    _, _, _, _, info = env.step(action)
    assert info["success"] and info["observation"]["agentLocation"]["faceDirection"] == "north"
    sent = scripted_llm.requests[0]
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "MOVE_DIRECTION(arg1: direction)" in system and "Teleport locations:" in system
    assert "availableActions" not in user and "MOVE_DIRECTION(" not in user  # the list is sent once, not per step
    assert obs["taskProgress"][0]["description"] in user and "nearby:" in user
    schema = sent["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"])[0] == "thought" and "ROTATE_DIRECTION" in schema["properties"]["action"]["enum"]
    assert agent.prompt_tokens == 11 and agent.completion_tokens == 7 and agent.requests == 1
    assert "The door is north" in agent.knowledge_report()


def test_trajectory_carries_results_and_is_trimmed_to_the_budget(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(*[_reply(thought=f"note {i} " + "x" * 200, action="WAIT", arg1=None, arg2=None) for i in range(6)])
    env, obs = _obs()
    agent = ReActAgent(_settings(scripted_llm, history_tokens=150))
    agent.reset(obs)
    for _ in range(6):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    last_prompt = scripted_llm.requests[-1]["messages"][1]["content"]
    assert "[TRIMMED HISTORY]" in last_prompt and "note 4" in last_prompt and "note 0" not in last_prompt
    assert "Observation: I waited." in last_prompt
    assert trim_in_chunks(["a" * 40, "b" * 40], 100, 0) == (["a" * 40, "b" * 40], 0)
    assert trim_in_chunks(["a" * 400, "b" * 40], 20, 0) == (["[TRIMMED HISTORY]", "b" * 40], 1)


def test_an_unparseable_reply_is_an_invalid_action_not_a_crash(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text("I think I will go north", "still not json")
    env, obs = _obs()
    agent = ReActAgent(_settings(scripted_llm))
    agent.reset(obs)
    action = agent.act(obs)
    _, _, _, _, info = env.step(action)
    assert info["success"] is False and "Could not parse the action as JSON" in info["observation"]["lastActionMessage"]
    assert agent.invalid_replies == 1 and agent.last_note is not None and agent.last_note["error"]
    assert agent.requests == 1 and agent.prompt_tokens == 22  # both rejected attempts are paid for


def test_in_a_dialog_the_schema_offers_the_dialog_choices() -> None:
    obs = {"dialog_box": {"is_in_dialog": True, "dialogIn": "Hi", "dialogOptions": {"1": "a", "2": "b"}}}
    schema = action_schema(obs, 50)
    assert schema["properties"]["chosen_dialog_option_int"]["enum"] == [1, 2]
    assert "action" not in schema["properties"]


def test_plan_execute_plans_one_step_executes_and_replans(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(
        _reply(thought="Start by looking north.", next_step="Face north"),
        _reply(thought="Turning.", action="ROTATE_DIRECTION", arg1="north", arg2=None, step_status="completed"),
        _reply(thought="Next, wait.", next_step="Wait one step"),
        _reply(thought="Waiting.", action="WAIT", arg1=None, arg2=None, step_status="in progress"),
    )
    env, obs = _obs()
    agent = PlanExecuteAgent(_settings(scripted_llm))
    agent.reset(obs)
    for _ in range(2):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    assert [p["step"] for p in agent.plan] == ["Face north", "Wait one step"]
    assert agent.plan[0]["status"] == "completed"
    planner_prompt = scripted_llm.requests[2]["messages"][1]["content"]
    assert "Step 1: Face north" in planner_prompt and "completed: Turning." in planner_prompt
    assert "Current plan step: Wait one step" in scripted_llm.requests[3]["messages"][1]["content"]
    assert "Face north" in agent.knowledge_report() and "Waiting." in agent.knowledge_report()


def test_hypothesizer_updates_its_memory_after_every_action(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(
        _reply(explanation="Check the table.", memory_note="look", thought="hm", action="WAIT", arg1=None, arg2=None),
        _reply(measurements=["Waiting changes nothing at step 0."],
               hypotheses=[{"hypothesis": "The flag is on the table", "status": "pending", "evidence": "seen nearby"}]),
        _reply(explanation="Again.", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
        _reply(measurements=[], hypotheses=[{"hypothesis": "the flag is on the table", "status": "confirmed", "evidence": "read it"}]),
        _reply(explanation="x", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
    )  # fmt: skip
    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    for _ in range(3):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    assert agent.memory[0] == {"measurement": "Waiting changes nothing at step 0.", "step": 0}
    hypotheses = [m for m in agent.memory if "hypothesis" in m]
    assert len(hypotheses) == 1 and hypotheses[0]["status"] == "confirmed"  # updated in place, not duplicated
    assert "Result: I waited." in scripted_llm.requests[1]["messages"][1]["content"]
    assert "Waiting changes nothing" in scripted_llm.requests[2]["messages"][1]["content"]
    assert "confirmed" in agent.knowledge_report() and agent.requests == 5


def test_hypothesizer_can_send_the_rendered_view(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(_reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None))
    env, obs = _obs()
    agent = make_agent("hypothesizer", "PickAndPlaceTest", llm=_settings(scripted_llm, vision=True))
    assert isinstance(agent, HypothesizerAgent) and agent.wants_image
    agent.reset(obs)
    agent.set_image(env.image())
    agent.act(obs)
    content = scripted_llm.requests[0]["messages"][1]["content"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")


def test_episode_record_holds_tokens_knowledge_and_judged_score(scripted_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    env, obs = _obs("Proteomics", "easy")
    questions = env.scenario.scorecard.critical_questions  # type: ignore[union-attr]
    assert questions
    scripted_llm.push_text(_reply(thought="The echojelly is the outlier.", action="WAIT", arg1=None, arg2=None))
    scripted_llm.push_text(_reply(outlier_species="vortisquid"))  # the answer sheet, after the episode
    scripted_llm.push_text(*[_reply(explanation="It names the outlier.", evaluation=1)] * len(questions))
    settings = _settings(scripted_llm)
    record, log = run_episode("Proteomics", "easy", 0, "react", max_steps=1, llm=settings, judge=settings)
    assert record.knowledge is not None and "echojelly" in record.knowledge
    assert record.llm is not None and record.llm["prompt_tokens"] == 22 and record.llm["model"] == "gpt-4o"
    assert record.llm["cost_usd"] == pytest.approx(cost_usd(22, 14, (2.5, 10.0)))
    sheet_prompt = scripted_llm.requests[1]["messages"][1]["content"]
    assert "echojelly is the outlier" in sheet_prompt and "- outlier_species (one of: " in sheet_prompt
    assert scripted_llm.requests[1]["response_format"]["json_schema"]["schema"]["required"] == ["outlier_species"]
    assert record.answers == {"outlier_species": "vortisquid"} and record.answers_score == 1.0
    assert record.knowledge_score == 1.0 and len(record.knowledge_verdicts) == len(questions)
    assert record.knowledge_verdicts[0]["criticalQuestion"] == questions[0]
    assert log[1]["agent"]["thought"] == "The echojelly is the outlier."
    # Offline re-grading of the saved run with another judge reply.
    records.append_jsonl(tmp_path / "results.jsonl", record)
    scripted_llm.push_text(*[_reply(explanation="Not stated.", evaluation=0)] * len(questions))
    rows = judge_run(tmp_path, make_judge(settings), "gpt-4o").rows
    assert rows[0]["knowledge_score"] == 0.0 and (tmp_path / "knowledge.jsonl").is_file()


def test_cost_ceiling_ends_the_episode_early(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(*[_reply(thought="t", action="WAIT", arg1=None, arg2=None)] * 3)
    record, _ = run_episode("PickAndPlaceTest", "normal", 0, "react", max_steps=10, llm=_settings(scripted_llm, max_cost=1e-9))
    assert record.steps == 1 and record.llm is not None and record.llm["stop_reason"].startswith("max_cost")


def test_prices_and_presets(tmp_path: Path) -> None:
    assert price_of("gpt-4o-2024-08-06") == (2.5, 10.0) and price_of("gpt-4o-2024-05-13") == (5.0, 15.0)
    assert price_of("my-local-model") is None and price_of("anything", local=True) == (0.0, 0.0)
    prices = tmp_path / "prices.json"
    prices.write_text('{"my-local-model": [1, 2]}')
    assert price_of("my-local-model", load_prices(prices)) == (1.0, 2.0)
    prices.write_text("[1]")
    with pytest.raises(PriceError):
        load_prices(prices)
    assert resolve("paper-easy", suite=None, max_steps=None)["max_steps"] == 100
    assert resolve("paper-normal", max_steps=20)["max_steps"] == 20 and resolve("paper-normal")["max_cost"] == 125.0
    with pytest.raises(ValueError, match="Valid presets"):
        resolve("nope")


def test_make_agent_knows_the_llm_agents() -> None:
    for name, cls in (("react", ReActAgent), ("plan-execute", PlanExecuteAgent), ("hypothesizer", HypothesizerAgent)):
        agent = make_agent(name, "PickAndPlaceTest", seed=3, llm=LLMSettings(base_url="http://127.0.0.1:9/v1"))
        assert isinstance(agent, cls) and agent.settings.seed == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="react, plan-execute, hypothesizer"):
        make_agent("gpt", "PickAndPlaceTest")


def test_cli_bench_with_a_hosted_style_endpoint_then_judge(scripted_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from discoverylab.cli import app

    runner = CliRunner()
    scripted_llm.push_text(*[_reply(thought="Hm.", action="WAIT", arg1=None, arg2=None)] * 20)
    out = tmp_path / "run"
    result = runner.invoke(app, ["bench", "--agent", "react", "--suite", "unit", "--seeds", "0", "--workers", "1",
                                 "--max-steps", "2", "--base-url", scripted_llm.base_url, "--model", "gpt-4o",
                                 "--out", str(out), "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    recs = list(records.read_jsonl(out / "results.jsonl"))
    assert len(recs) == 10 and all(r["status"] == "ok" for r in recs), recs[0].get("error")
    assert all(r["llm"]["requests"] == 2 and r["steps"] == 2 and r["knowledge"].count("Hm.") == 2 for r in recs)
    result = runner.invoke(app, ["judge", str(out), "--base-url", scripted_llm.base_url, "--model", "judge"])
    assert result.exit_code == 0, result.output
    assert "n/a" in result.output  # unit tests ask no critical questions
    assert (out / "knowledge.jsonl").is_file()
    result = runner.invoke(app, ["judge", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no results.jsonl" in result.output
    result = runner.invoke(app, ["bench", "--agent", "react", "--max-cost", "1", "--base-url", scripted_llm.base_url])
    assert result.exit_code == 2 and "--max-cost needs the price" in result.output


def test_env_lm_text_format_sends_instructions_once_and_dialog_choices_in_dialogs() -> None:
    env = DiscoveryWorldEnv("DialogTest", text_format="lm")
    first, _ = env.reset(seed=0)
    assert first.startswith("Send one action per step") and "Actions:" in first and "Task: " in first
    assert env.observation_space.contains(first)
    second, _, _, _, info = env.step({"action": "WAIT"})
    assert "Actions:" not in second and "last action: I waited." in second and env.observation_space.contains(second)
    assert len(second) < 0.6 * len(json.dumps(info["observation"], separators=(",", ":")))
    with pytest.raises(ValueError, match="text_format"):
        DiscoveryWorldEnv("DialogTest", text_format="yaml")


def test_lm_observation_in_a_dialog_lists_the_choices() -> None:
    from discoverylab.world.lm_observation import lm_observation

    _, obs = _obs()
    obs = {**obs, "dialog_box": {"is_in_dialog": True, "dialogIn": "Hello there", "dialogOptions": {"1": "Hi", "2": "Bye"}}}
    text = lm_observation(obs)
    assert "DIALOG: Hello there" in text and " 1: Hi" in text and " 2: Bye" in text and "chosen_dialog_option_int" in text
    assert "MOVE_DIRECTION" not in lm_observation(obs, actions="every")  # in a dialog only the choices count
    plain = lm_observation(_obs()[1], actions="every")
    assert "MOVE_DIRECTION(arg1: direction)" in plain


def test_servers_without_schema_support_get_the_schema_in_the_prompt(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text("```json\n" + _reply(thought="t", action="WAIT", arg1=None, arg2=None) + "\n```")
    _, obs = _obs()
    agent = ReActAgent(_settings(scripted_llm, json_mode="prompt"))
    agent.reset(obs)
    assert agent.act(obs) == {"action": "WAIT"}
    sent = scripted_llm.requests[0]
    assert "response_format" not in sent and "JSON Schema" in sent["messages"][0]["content"]


def test_hypothesizer_summarises_older_measurements_past_the_limit(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.hypothesizer import KEEP_RECENT, MEMORY_LIMIT

    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    agent.memory = [{"measurement": f"reading {i}", "step": i} for i in range(MEMORY_LIMIT - 1)]
    agent.memory.insert(5, {"hypothesis": "h", "status": "pending", "supporting evidence": "e", "step": 5})
    scripted_llm.push_text(
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
        _reply(measurements=["new a", "new b"], hypotheses=[]),
        _reply(summary=["readings 0-30 rose by one per step", "reading 4 was the lowest"]),
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
    )  # fmt: skip
    for _ in range(2):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    summary_prompt = scripted_llm.requests[2]["messages"][1]["content"]
    assert "step 0: reading 0" in summary_prompt and "reading 30" in summary_prompt and "reading 31" not in summary_prompt
    measurements = [m["measurement"] for m in agent.memory if "measurement" in m]
    assert measurements[:2] == ["readings 0-30 rose by one per step", "reading 4 was the lowest"]
    assert len(measurements) == 2 + KEEP_RECENT and measurements[-2:] == ["new a", "new b"]
    assert agent.memory[0]["step"] == "summary of steps 0-30"
    assert any("hypothesis" in m for m in agent.memory)  # hypotheses are never summarised away
    assert [n.kind for n in agent.notes] == ["act", "reflect", "summarise", "act"]


def test_hypothesizer_keeps_the_newest_entries_when_the_summary_fails(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.hypothesizer import MEMORY_LIMIT

    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    agent.memory = [{"measurement": f"reading {i}", "step": i} for i in range(MEMORY_LIMIT)]
    scripted_llm.push_text(
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
        _reply(measurements=["new a"], hypotheses=[]),
        _reply(summary=[]),
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
    )  # fmt: skip
    for _ in range(2):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    assert len(agent.memory) == MEMORY_LIMIT and agent.memory[-1]["measurement"] == "new a"
    assert agent.memory[0]["measurement"] == "reading 1"


def test_history_is_cut_in_jumps_so_prompts_share_their_beginning() -> None:
    entries = [f"entry {i} " + "x" * 36 for i in range(12)]  # 12 tokens each
    start, shown = 0, []
    for n in range(1, 13):
        history, start = trim_in_chunks(entries[:n], 50, start)
        shown.append((start, history))
    starts = [s for s, _ in shown]
    assert starts == sorted(starts) and len(set(starts)) < 6  # the cut only moves forward, in jumps
    for (s0, h0), (s1, h1) in zip(shown, shown[1:], strict=False):
        if s0 == s1:  # no jump: the earlier history is a prefix of the later one
            assert h1[: len(h0)] == h0
    for start, history in shown:
        assert sum(len(e) // 4 + 1 for e in history if e != "[TRIMMED HISTORY]") <= 50
        assert (history[0] == "[TRIMMED HISTORY]") == (start > 0)
    assert trim_in_chunks(["y" * 160], 50, 0) == (["y" * 160], 0)  # 41 tokens: over half, still kept
    assert trim_in_chunks(["a" * 40, "y" * 160], 50, 0) == (["[TRIMMED HISTORY]", "y" * 160], 1)
