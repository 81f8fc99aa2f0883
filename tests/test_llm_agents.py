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
from discoverylab.world.lm_observation import lm_observation
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


def test_plan_execute_starts_a_fresh_executor_per_plan_step_and_ends_on_done(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(
        _reply(thought="Start by looking north.", next_step="Face north"),
        _reply(thought="Turning.", action="ROTATE_DIRECTION", arg1="north", arg2=None),
        _reply(thought="I face north now.", action="SUBMIT", arg1="Task completed!", arg2=None),
        _reply(thought="Next, wait.", next_step="Wait one step"),
        _reply(thought="Waiting.", action="WAIT", arg1=None, arg2=None),
        _reply(thought="Waiting more.", action="WAIT", arg1=None, arg2=None),
        _reply(thought="Nothing happens when I wait.", action="SUBMIT", arg1="Task failed!", arg2=None),
        _reply(thought="Nothing left to try.", next_step="Step 3: Done!"),
    )  # fmt: skip
    env, obs = _obs()
    agent = PlanExecuteAgent(_settings(scripted_llm))
    agent.reset(obs)
    actions = []
    while (action := agent.act(obs)) is not None:
        actions.append(action)
        _, _, _, _, info = env.step(action)
        obs = info["observation"]
    assert [a["action"] for a in actions] == ["ROTATE_DIRECTION", "WAIT", "WAIT"]  # SUBMIT and Done! take no step
    assert agent.executors == 2 and agent.stop_reason is not None and "Done!" in agent.stop_reason
    assert [(p["step"], p["status"]) for p in agent.plan] == [("Face north", "completed"), ("Wait one step", "failed")]
    prompts = [r["messages"][1]["content"] for r in scripted_llm.requests]
    assert "SUBMIT" in scripted_llm.requests[1]["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
    assert "Turning." in prompts[2]  # the first executor sees its own trajectory
    # The second executor starts fresh: none of the first step's trajectory, but the step with its result.
    assert "Turning." not in prompts[4] and "History of thoughts" not in prompts[4]
    assert "Step 1: Face north\n  -- Task completed! I face north now." in prompts[4]
    assert "Your current plan step: **Wait one step**" in prompts[4] and "Waiting." in prompts[5]
    assert "Step 1: Face north" in prompts[3] and "Task completed! I face north now." in prompts[3]  # the planner
    assert "Waiting more." in agent.knowledge_report() and "Start by looking north" not in agent.knowledge_report()


def test_plan_execute_hints_at_failure_after_a_fifth_of_the_budget_and_never_closes_a_step_itself(
    scripted_llm: ScriptedLLMServer,
) -> None:
    from discoverylab.agents.plan_execute import FAILURE_HINT

    scripted_llm.push_text(_reply(thought="t", next_step="Wait a lot"))
    scripted_llm.push_text(*[_reply(thought="w", action="WAIT", arg1=None, arg2=None)] * 6)
    env, obs = _obs()
    agent = PlanExecuteAgent(_settings(scripted_llm), step_budget=10)
    agent.reset(obs)
    for _ in range(6):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    hinted = [FAILURE_HINT in r["messages"][1]["content"] for r in scripted_llm.requests[1:]]
    assert hinted == [False, False, False, True, True, True]  # after more than 10 / 5 = 2 actions
    assert agent.plan[0]["status"] == "in progress" and agent.executors == 1


def test_plan_execute_cannot_submit_forever_without_acting(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.plan_execute import MAX_PLANS_PER_ACTION

    for _ in range(MAX_PLANS_PER_ACTION):
        scripted_llm.push_text(_reply(thought="p", next_step="Think"), _reply(thought="s", action="SUBMIT", arg1="Task completed!", arg2=None))
    scripted_llm.push_text(_reply(thought="p", next_step="Think"), _reply(thought="w", action="WAIT", arg1=None, arg2=None))
    _, obs = _obs()
    agent = PlanExecuteAgent(_settings(scripted_llm))
    agent.reset(obs)
    assert agent.act(obs) == {"action": "WAIT"}
    last_schema = scripted_llm.requests[-1]["response_format"]["json_schema"]["schema"]
    assert "SUBMIT" not in last_schema["properties"]["action"]["enum"]  # the last round must act


def test_plan_execute_done_ends_the_episode_record(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(_reply(thought="t", next_step="Wait"), _reply(thought="w", action="WAIT", arg1=None, arg2=None),
                           _reply(thought="done", action="SUBMIT", arg1="Task completed!", arg2=None),
                           _reply(thought="all done", next_step="Done!"))  # fmt: skip
    record, log = run_episode("PickAndPlaceTest", "normal", 0, "plan-execute", max_steps=20, llm=_settings(scripted_llm))
    assert record.status == "ok" and record.steps == 1 and record.llm is not None
    assert record.llm["stop_reason"].startswith("ended by the agent")


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
    seen = []
    for _ in range(3):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
        seen.append(obs)
    first_obs_after = seen[0]
    assert agent.memory[0] == {"measurement": "Waiting changes nothing at step 0.", "step": 0}
    hypotheses = [m for m in agent.memory if "hypothesis" in m]
    assert len(hypotheses) == 1 and hypotheses[0]["status"] == "confirmed"  # updated in place, not duplicated
    reflection = scripted_llm.requests[1]["messages"][1]["content"]
    assert "Result: I waited." in reflection and "Observation after the action:" in reflection
    assert lm_observation(first_obs_after) in reflection  # the full observation, not only the message
    assert "Waiting changes nothing" in scripted_llm.requests[2]["messages"][1]["content"]
    assert "confirmed" in agent.knowledge_report() and agent.requests == 5


def test_hypothesizer_vision_sends_the_previous_and_the_current_view(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(
        _reply(explanation="e", memory_note="", thought="", action="ROTATE_DIRECTION", arg1="north", arg2=None),
        _reply(measurements=[], hypotheses=[]),
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
    )  # fmt: skip
    env, obs = _obs()
    agent = make_agent("hypothesizer", "PickAndPlaceTest", llm=_settings(scripted_llm, vision=True))
    assert isinstance(agent, HypothesizerAgent) and agent.wants_image
    agent.reset(obs)
    for _ in range(2):
        agent.set_image(env.image(grid=True))
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    first, second = scripted_llm.requests[0]["messages"][1]["content"], scripted_llm.requests[2]["messages"][1]["content"]
    images = [[part["image_url"]["url"] for part in content if part["type"] == "image_url"] for content in (first, second)]
    assert len(images[0]) == 1 and len(images[1]) == 2  # the first step has no previous view
    assert all(url.startswith("data:image/png;base64,iVBOR") for url in images[0] + images[1])
    assert images[1][0] == images[0][0] and images[1][1] != images[0][0]  # previous view first, then the current one
    assert [part["type"] for part in second] == ["text", "image_url", "text", "image_url"]
    assert all(isinstance(r["messages"][1]["content"], str) for r in scripted_llm.requests[1:2])  # reflection: text


def test_vision_presets_turn_vision_on_and_paper_presets_keep_the_end_action_off() -> None:
    from discoverylab.bench.presets import PRESETS

    assert resolve("paper-easy-vision")["vision"] is True and resolve("paper-easy")["vision"] is False
    assert resolve("paper-easy-vision")["max_steps"] == 100
    assert all(resolve(name)["end_action"] is False for name in PRESETS)


def test_episode_record_holds_tokens_knowledge_and_judged_score(scripted_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    env, obs = _obs("Proteomics", "easy")
    questions = env.scenario.scorecard.critical_questions  # type: ignore[union-attr]
    assert questions
    scripted_llm.push_text(_reply(thought="The echojelly is the outlier.", action="WAIT", arg1=None, arg2=None))
    from discoverylab.scenarios.answer_forms import answer_gold

    gold = answer_gold(env)["outlier_species"]
    scripted_llm.push_text(_reply(outlier_species=gold))  # the answer sheet, after the episode
    scripted_llm.push_text(*[_reply(explanation="It names the outlier.", evaluation=1)] * len(questions))
    settings = _settings(scripted_llm)
    record, log = run_episode("Proteomics", "easy", 0, "react", max_steps=1, llm=settings, judge=settings)
    assert record.knowledge is not None and "echojelly" in record.knowledge
    assert record.llm is not None and record.llm["model"] == "gpt-4o" and "cost_usd" not in record.llm
    assert record.usage is not None and record.usage.prompt_tokens == 22 and record.usage.requests == 2
    assert record.usage.cost_usd == pytest.approx(cost_usd(22, 14, (2.5, 10.0)))  # one record holds tokens and cost
    sheet_prompt = scripted_llm.requests[1]["messages"][1]["content"]
    assert "echojelly is the outlier" in sheet_prompt and "- outlier_species (one of: " in sheet_prompt
    assert scripted_llm.requests[1]["response_format"]["json_schema"]["schema"]["required"] == ["outlier_species"]
    assert record.answers == {"outlier_species": gold} and record.answers_score == 1.0
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
    result = runner.invoke(app, ["bench", "--agent", "react", "--suite", "unit", "--difficulty", "normal", "--seeds", "0", "--workers", "1",
                                 "--max-steps", "2", "--base-url", scripted_llm.base_url, "--model", "gpt-4o",
                                 "--out", str(out), "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    recs = list(records.read_jsonl(out / "results.jsonl"))
    assert len(recs) == 10 and all(r["status"] == "ok" for r in recs), recs[0].get("error")
    assert all(r["usage"]["requests"] == 2 and r["steps"] == 2 and r["knowledge"].count("Hm.") == 2 for r in recs)
    result = runner.invoke(app, ["judge", str(out), "--base-url", scripted_llm.base_url, "--model", "judge"])
    assert result.exit_code == 0, result.output
    assert "n/a" in result.output  # unit tests ask no critical questions
    assert (out / "knowledge.jsonl").is_file()
    result = runner.invoke(app, ["judge", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "missing: no such folder" in result.output
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


def _hypothesizer_responder(consolidated: list[dict[str, Any]], size: int = 100) -> Any:
    """Replies by schema: WAIT actions, reflections adding two long measurements, and `consolidated`."""
    from llm_scripted_server import Scripted, chat_reply

    def answer(request: dict[str, Any]) -> Scripted:
        name = request["response_format"]["json_schema"]["name"]
        if name == "action":
            data: dict[str, Any] = {"explanation": "e", "memory_note": "", "thought": "", "action": "WAIT", "arg1": None, "arg2": None}
        elif name == "memory":
            data = {"measurements": [f"reading {len(request['messages'][1]['content'])} " + "x" * size, "another " + "y" * size],
                    "hypotheses": [{"hypothesis": "waiting changes nothing", "status": "pending", "evidence": "e"}]}
        else:
            data = {"memory": consolidated}
        return Scripted(body=chat_reply(json.dumps(data)))

    return answer


def test_hypothesizer_consolidates_the_whole_memory_every_10_actions_within_its_caps(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.hypothesizer import MEMORY_LIMIT, MEMORY_TOKENS

    scripted_llm.tokenizer = lambda text: list(range(len(text) // 2))  # a server tokenizer: 2 characters a token
    big = [{"kind": "measurement", "text": f"summary {i} " + "z" * 150, "status": "pending", "evidence": "", "step": str(i)}
           for i in range(MEMORY_LIMIT - 1)]  # fmt: skip
    big.append({"kind": "hypothesis", "text": "the flag is on the table", "status": "confirmed", "evidence": "read it", "step": "3-9"})
    scripted_llm.responder = _hypothesizer_responder(big)
    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    for _ in range(21):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    names = [r["response_format"]["json_schema"]["name"] for r in scripted_llm.requests]
    consolidations = [i for i, n in enumerate(names) if n == "consolidated_memory"]
    # Act, then reflect after each action; the memory is consolidated after the 10th and the 20th action.
    assert names[:3] == ["action", "memory", "action"]
    assert consolidations == [20, 41] and names[19] == "memory" and names[21] == "action"
    prompt = scripted_llm.requests[20]["messages"][1]["content"]
    assert f"at most {MEMORY_LIMIT} entries and {MEMORY_TOKENS} tokens" in prompt
    assert "The memory now has 21 entries" in prompt  # the whole memory: 10 reflections x 2 + 1 hypothesis
    assert prompt.count("another yyy") == 10  # every measurement so far, not only the older ones
    for record in agent.consolidations:
        assert record["used_reply"] and record["entries_after"] <= MEMORY_LIMIT and record["tokens_after"] <= MEMORY_TOKENS
    assert agent.consolidations[0]["entries_after"] < len(big)  # the reply alone was over the token cap: the oldest went
    assert agent.memory[0]["measurement"].startswith("summary") and any("hypothesis" in m for m in agent.memory)
    assert {"hypothesis": "the flag is on the table", "status": "confirmed", "supporting evidence": "read it",
            "step": "3-9"} in agent.memory  # fmt: skip
    assert agent.summary()["tokenizer"] == "server" and scripted_llm.tokenize_requests


def test_hypothesizer_keeps_the_newest_entries_when_consolidation_fails(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.hypothesizer import MEMORY_LIMIT

    scripted_llm.responder = _hypothesizer_responder([])  # an empty consolidation: unusable
    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    agent.memory = [{"measurement": f"reading {i}", "step": i} for i in range(MEMORY_LIMIT)]
    for _ in range(11):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    assert agent.consolidations[0]["used_reply"] is False
    assert len(agent.memory) <= MEMORY_LIMIT and agent.memory_size()[1] <= agent.memory_tokens
    assert agent.memory[-1]["measurement"].startswith("another")  # the newest kept
    assert any("hypothesis" in m for m in agent.memory)  # measurements go first, oldest first
    old = [m["measurement"] for m in agent.memory if m.get("measurement", "").startswith("reading ") and len(m["measurement"]) < 12]
    assert len(old) < MEMORY_LIMIT and old == [f"reading {i}" for i in range(MEMORY_LIMIT - len(old), MEMORY_LIMIT)]  # oldest went


def test_history_is_cut_in_jumps_so_prompts_share_their_beginning() -> None:
    entries = [f"entry {i} " + "x" * 36 for i in range(12)]  # 12 tokens each
    start, shown = 0, []
    for n in range(1, 13):
        history, start = trim_in_chunks(entries[:n], 50, start, lambda e: len(e) // 4)
        shown.append((start, history))
    starts = [s for s, _ in shown]
    assert starts == sorted(starts) and len(set(starts)) < 6  # the cut only moves forward, in jumps
    for (s0, h0), (s1, h1) in zip(shown, shown[1:], strict=False):
        if s0 == s1:  # no jump: the earlier history is a prefix of the later one
            assert h1[: len(h0)] == h0
    for start, history in shown:
        assert sum(len(e) // 4 + 1 for e in history if e != "[TRIMMED HISTORY]") <= 50
        assert (history[0] == "[TRIMMED HISTORY]") == (start > 0)
    quarter = lambda e: len(e) // 4  # noqa: E731
    assert trim_in_chunks(["y" * 160], 50, 0, quarter) == (["y" * 160], 0)  # 41 tokens: over half, still kept
    assert trim_in_chunks(["a" * 40, "y" * 160], 50, 0, quarter) == (["[TRIMMED HISTORY]", "y" * 160], 1)


def test_hypothesizer_consolidates_early_when_its_memory_outgrows_twice_the_token_cap(scripted_llm: ScriptedLLMServer) -> None:
    from discoverylab.agents.hypothesizer import EARLY_FACTOR

    small = [{"kind": "measurement", "text": "short", "status": "pending", "evidence": "", "step": "0"}]
    scripted_llm.responder = _hypothesizer_responder(small, size=300)
    env, obs = _obs()
    agent = HypothesizerAgent(_settings(scripted_llm))
    agent.reset(obs)
    agent.memory_tokens = 250  # each reflection adds ~600 characters: over 2 x 250 tokens within two actions
    for _ in range(4):
        _, _, _, _, info = env.step(agent.act(obs))
        obs = info["observation"]
    first = agent.consolidations[0]
    assert first["step"] < 9 and first["tokens_before"] > EARLY_FACTOR * 250 and first["tokens_after"] <= 250
    assert agent.memory_size()[1] <= EARLY_FACTOR * agent.memory_tokens


def test_planner_done_marker_forms() -> None:
    from discoverylab.agents.plan_execute import is_done

    assert all(is_done(t) for t in ("Done!", "Step 4: Done!", "done.", "Done"))
    assert not any(is_done(t) for t in ("Go to the door", "Done with the key, now open the door"))


def test_hypothesizer_reflects_on_its_last_action_when_the_episode_ends(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.push_text(
        _reply(explanation="e", memory_note="", thought="", action="WAIT", arg1=None, arg2=None),
        _reply(measurements=["The last wait showed nothing new."], hypotheses=[]),
    )  # fmt: skip
    record, _ = run_episode("PickAndPlaceTest", "normal", 0, "hypothesizer", max_steps=1, llm=_settings(scripted_llm))
    assert record.steps == 1 and len(scripted_llm.requests) == 2  # 2N calls for N actions, as the paper counts
    assert record.knowledge is not None and "The last wait showed nothing new." in record.knowledge
