"""Inspect AI end to end: `discoverylab/<task>` tasks evaluated by Inspect against the scripted
OpenAI-compatible server on 127.0.0.1, which plays the oracle's actions as `act` tool calls."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the inspect-ai package (dev extra) is not installed")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import get_model  # noqa: E402

from discoverylab.integrations import common, inspect_tasks  # noqa: E402
from env_server_kit import ToolOracleReplay, oracle_episode  # noqa: E402
from llm_scripted_server import ScriptedLLMServer  # noqa: E402


def _run(task_obj, llm, tmp_path):
    model = get_model("openai-api/scripted/scripted-model", base_url=llm.base_url, api_key="x")
    logs = inspect_eval(task_obj, model=model, log_dir=str(tmp_path), display="none",
                        model_roles={"grader": model})  # fmt: skip
    assert logs[0].status == "success", logs[0].error
    return logs[0]


@pytest.mark.parametrize(("name", "task", "difficulty", "index"),
                         [("pick_and_place_test", "PickAndPlaceTest", "normal", 0), ("archaeology_dating", "ArchaeologyDating", "easy", 0)])
def test_inspect_plays_an_episode_to_success(tmp_path, name, task, difficulty, index):
    actions, discovery, answers = oracle_episode(task, difficulty, 5 + index)  # dev split: seeds 5..
    replay = ToolOracleReplay(actions, discovery, answers)
    llm = ScriptedLLMServer().start()
    llm.responder = replay
    try:
        factory = getattr(inspect_tasks, name)
        log = _run(factory(split="dev", indices=str(index), difficulty=difficulty), llm, tmp_path)
    finally:
        llm.stop()
    sample = log.samples[0]
    assert sample.id == f"{task}/{difficulty}/dev#{index}"
    values = sample.scores["episode_scorer"].value
    assert values["success"] == 1.0 and values["completed"] == 1.0
    if answers:
        assert values["answers"] == 1.0 and replay.sheet_requests == 1
        judged = sample.scores["knowledge_judge"]
        assert judged.metadata["judged"] and judged.value == 1.0 and replay.judge_requests >= 1
    assert not replay.actions  # every oracle action was played through the act tool


def test_attack_sealed_seed_never_reaches_the_model_or_the_log(tmp_path, monkeypatch):
    """A sealed instance: the model sees observations only; the log names index and commitment."""
    from discoverylab.instances import make_instance

    key = "s" * 32
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", key)
    inst = make_instance("PickAndPlaceTest", "normal", "test", 1, key.encode())
    llm = ScriptedLLMServer().start()
    llm.responder = ToolOracleReplay([{"action": "WAIT"}] * 3, "nothing", {})
    try:
        log = _run(inspect_tasks.pick_and_place_test(split="test", indices="1", judge=False), llm, tmp_path)
    finally:
        llm.stop()
    text = log.model_dump_json()
    assert inst.commitment in text and str(inst.seed) not in text
    assert all(str(inst.seed) not in str(r) for r in llm.requests)
    assert log.samples[0].scores["episode_scorer"].value["success"] == 0.0


def test_entry_point_registers_the_tasks():
    """pyproject.toml's inspect_ai entry point names the module that registers `discoverylab/...`."""
    data = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    target = data["project"]["entry-points"]["inspect_ai"]["discoverylab"]
    assert target == "discoverylab.integrations.inspect_tasks"
    from inspect_ai._util.registry import registry_info

    # "discoverylab/<name>" once the package is installed (the command test below runs it so)
    assert registry_info(inspect_tasks.archaeology_dating).name.endswith("archaeology_dating")
    assert registry_info(inspect_tasks.discoverylab).name.endswith("discoverylab")


def test_inspect_eval_command_runs_a_registered_task(tmp_path):
    """`inspect eval discoverylab/pick_and_place_test` as a user types it, against the scripted
    server. The package's metadata as an editable install declares it (entry point and
    direct_url.json, as `pip install -e .` writes them) and comes first on the path, so the
    command sees this checkout's code whatever the venv has installed."""
    import os
    import subprocess
    import sys

    actions, discovery, answers = oracle_episode("PickAndPlaceTest", "normal", 5)
    llm = ScriptedLLMServer().start()
    llm.responder = ToolOracleReplay(actions, discovery, answers)
    root = Path(__file__).parents[1]
    meta = tmp_path / "site" / "discoverylab-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: discoverylab\nVersion: 0.1.0\n")
    (meta / "entry_points.txt").write_text("[inspect_ai]\ndiscoverylab = discoverylab.integrations.inspect_tasks\n")
    (meta / "direct_url.json").write_text(json.dumps({"dir_info": {"editable": True}, "url": root.as_uri()}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(meta.parent), str(root / "src")]),
           "SCRIPTED_BASE_URL": llm.base_url, "SCRIPTED_API_KEY": "x"}  # fmt: skip
    try:
        done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "discoverylab/pick_and_place_test",
                               "--model", "openai-api/scripted/scripted-model", "-T", "split=dev", "--log-dir",
                               str(tmp_path / "logs"), "--display", "plain"],
                              env=env, capture_output=True, text=True, timeout=240)  # fmt: skip
    finally:
        llm.stop()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert log.status == "success" and log.samples[0].scores["episode_scorer"].value["success"] == 1.0


def _run_tiny_lab(responder, tmp_path):
    """Inspect's log of `tiny_lab` on hidden-property dev#0, the model a scripted server answering with `responder`."""
    llm = ScriptedLLMServer().start()
    llm.responder = responder
    try:
        return _run(inspect_tasks.tiny_lab(protocol="sequence/hidden-property", split="dev", indices="0"), llm, tmp_path)
    finally:
        llm.stop()


def test_tiny_lab_task_plays_a_protocol_to_its_end(tmp_path):
    """A Tiny Labs protocol through the `say` tool: the lab answers every message, the episode ends
    at the protocol's turn limit, and the protocol's grade is the score."""
    from env_server_kit import tool_call_reply
    from llm_scripted_server import Scripted

    calls = []

    def responder(request):
        calls.append(request)
        last = str(request["messages"][-1].get("content") or "")
        if "episode has ended" in last:
            return Scripted(body=tool_call_reply("submit", {"answer": "no idea"}, len(calls)))
        return Scripted(body=tool_call_reply("say", {"message": "I do not know the format."}, len(calls)))

    log = _run_tiny_lab(responder, tmp_path)
    score = log.samples[0].scores["episode_scorer"]
    assert score.value["completed"] == 1.0 and score.value["success"] == 0.0 and score.metadata["steps"] >= 1


def test_tiny_lab_message_the_lab_refuses_is_an_error_the_model_reads(tmp_path):
    """A `say` message the session refuses (over the action limit) comes back to the model as an
    error text, as the `act` tool's refusals do; the sample goes on to the protocol's end."""
    from discoverylab.server.session import MAX_ACTION_CHARS
    from env_server_kit import tool_call_reply
    from llm_scripted_server import Scripted

    calls, tool_texts = [], []

    def responder(request):
        calls.append(request)
        last = request["messages"][-1]
        if last.get("role") == "tool":
            tool_texts.append(str(last.get("content") or ""))
        if "episode has ended" in str(last.get("content") or ""):
            return Scripted(body=tool_call_reply("submit", {"answer": "no idea"}, len(calls)))
        message = "A" * (MAX_ACTION_CHARS + 1) if len(calls) == 1 else "SAMPLE 0.5"
        return Scripted(body=tool_call_reply("say", {"message": message}, len(calls)))

    log = _run_tiny_lab(responder, tmp_path)
    assert tool_texts[0].startswith("Error:") and "at most" in tool_texts[0]
    assert log.samples[0].scores["episode_scorer"].value["completed"] == 1.0


def test_tiny_lab_with_an_unknown_protocol_names_the_protocols():
    """A misspelt protocol (or a DiscoveryWorld task) is refused with the list of protocols, not of tasks."""
    for name in ("sequence/hiden-property", "ArchaeologyDating"):
        with pytest.raises(ValueError, match="sequence/hidden-property") as refused:
            inspect_tasks.tiny_lab(protocol=name)
        assert "Unknown Tiny Labs protocol" in str(refused.value)
    # the shared rows (verifiers' `task_name` too): a typo's error names both kinds of task
    with pytest.raises(ValueError, match="Valid tasks: .*ArchaeologyDating.*Tiny Labs protocols: .*sequence/hidden-property"):
        common.rows("sequence/hiden-property")


def test_a_lab_s_reward_is_its_grade_as_env_serve_pays_it():
    """Every integration pays what the env pays (integrations.md): for a Tiny Lab the protocol's
    grade in 0..1 (env-serve and the Gym env sum to it), not "success" (a perfect grade), which
    a near-perfect heuristic misses; a lab has no procedure score."""
    from discoverylab.labs.agents import make_agent
    from discoverylab.server.session import LAB_DIFFICULTY

    session, message = common.start({"task": "sequence/hidden-property", "difficulty": LAB_DIFFICULTY, "split": "dev", "index": 8})  # a partial grade (0.88) for the heuristic
    agent = make_agent("sequence/hidden-property", "heuristic", session.env.protocol)
    agent.reset(session.instance.seed)
    paid = 0.0
    while not session.done:
        step = session.step(agent.act(message))
        paid, message = paid + step.reward, step.observation
    res = common.results(session, "", None)
    assert 0.5 < res["reward"] < 1.0 and res["reward"] == pytest.approx(paid) == pytest.approx(res["scorecard"]["score"])
    assert res["success"] is False and res["procedure"] == 0.0


def test_sealed_split_without_a_key_is_refused_before_any_sample(monkeypatch):
    """Before: the task loaded, the model was set up, and each sample died in the solver with a
    traceback saying "set DISCOVERYLAB_EVAL_KEY or pass --eval-key-file FILE" (Inspect has no such
    option) while `inspect eval` exited 0. Now the task itself is refused, as a bad protocol is."""
    monkeypatch.delenv("DISCOVERYLAB_EVAL_KEY", raising=False)
    with pytest.raises(ValueError, match=r"sealed.*\$DISCOVERYLAB_EVAL_KEY") as refused:
        inspect_tasks.proteomics(split="test", indices="0")
    assert "--eval-key-file" not in str(refused.value)
    with pytest.raises(ValueError, match="sealed"):
        inspect_tasks.tiny_lab(split="test")
    with pytest.raises(ValueError, match="sealed"):
        common.rows("ArchaeologyDating", split="test")  # verifiers' rows too
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", "short")
    with pytest.raises(ValueError, match="too short"):
        inspect_tasks.proteomics(split="test", indices="0")
    with pytest.raises(ValueError, match="0..4"):  # a public split's range, also before any sample
        inspect_tasks.proteomics(split="paper", indices="3-7")


def test_attack_sealed_gold_never_goes_to_the_evaluated_model_as_judge(tmp_path, monkeypatch):
    """The knowledge judge, with no grader role and no judge_model, was the evaluated model: each
    sealed instance's gold facts went to its endpoint (the submitter's, it may be), which could
    collect the test set's answers and grade its own reports. A sealed sample is now left unjudged
    (saying why) unless a grader is named; public samples still fall back to the evaluated model."""
    from discoverylab.instances import make_instance

    key = "s" * 32
    monkeypatch.setenv("DISCOVERYLAB_EVAL_KEY", key)
    inst = make_instance("ArchaeologyDating", "easy", "test", 2, key.encode())
    gold = " ".join(f for q in _gold_questions(inst) for f in q)
    llm = ScriptedLLMServer().start()
    replay = ToolOracleReplay([{"action": "WAIT"}] * 2, "the oldest artifact is 5000 years old", {})
    llm.responder = replay
    try:
        model = get_model("openai-api/scripted/scripted-model", base_url=llm.base_url, api_key="x")
        task_obj = inspect_tasks.archaeology_dating(split="test", indices="2", difficulty="easy", max_steps=2)
        log = inspect_eval(task_obj, model=model, log_dir=str(tmp_path), display="none")[0]
    finally:
        llm.stop()
    assert log.status == "success", log.error
    judged = log.samples[0].scores["knowledge_judge"]
    assert judged.metadata["judged"] is False and "grader" in judged.metadata["reason"]
    assert replay.judge_requests == 0
    assert not any(fact in json.dumps(r) for r in llm.requests for fact in gold.split(". ") if len(fact) > 20)


def _gold_questions(inst) -> list[list[str]]:
    from discoverylab.env import DiscoveryWorldEnv

    env = DiscoveryWorldEnv(inst.task, inst.difficulty)
    env.reset(options={"instance": inst})
    return [q["goldFacts"] for q in env.scorecard(reveal=True)["knowledgeQuestions"]]


def test_a_model_that_never_submits_stops_soon_after_the_episode_ended(tmp_path):
    """A model that keeps calling `act` (SmolLM2 does, or answers in prose) after the episode ended
    was asked again until the conversation held 400 messages: ~200 paid calls per sample that could
    change nothing. The loop now ends a few turns after the end, the report empty."""
    from env_server_kit import tool_call_reply
    from llm_scripted_server import Scripted, chat_reply

    def responder(request):
        last = str(request["messages"][-1].get("content") or "")
        if "Fill in the answer sheet" in last:
            return Scripted(body=chat_reply("{}"))
        return Scripted(body=tool_call_reply("act", {"action": "WAIT"}, len(llm.requests)))

    llm = ScriptedLLMServer().start()
    llm.responder = responder
    try:
        log = _run(inspect_tasks.pick_and_place_test(split="dev", indices="0", max_steps=2, judge=False), llm, tmp_path)
    finally:
        llm.stop()
    values = log.samples[0].scores["episode_scorer"].value
    assert values["completed"] == 0.0 and log.samples[0].scores["episode_scorer"].metadata["steps"] == 2
    assert len(llm.requests) <= 2 + inspect_tasks.TURNS_AFTER_END + 1, len(llm.requests)
