"""verifiers end to end (`make test-verifiers`, in its own venv: verifiers pins openai < 3): `load_environment()` rolled out by verifiers itself (its `null` chat
harness in a subprocess runtime, which `uv` prepares) against the scripted OpenAI-compatible
server on 127.0.0.1 replaying the oracle's actions as ReAct replies."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

vf = pytest.importorskip("verifiers.v1", reason="the verifiers package (verifiers extra) is not installed")

from discoverylab.integrations.verifiers_env import load_environment, parse_reply, replies_json  # noqa: E402
from env_server_kit import oracle_episode  # noqa: E402
from llm_scripted_server import Scripted, ScriptedLLMServer, chat_reply  # noqa: E402

UV = shutil.which("uv") or (str(Path(sys.executable).parent / "uv") if (Path(sys.executable).parent / "uv").exists() else None)
needs_uv = pytest.mark.skipif(UV is None, reason="verifiers' subprocess runtime needs uv (pip install uv)")


def _rollout(task: str, difficulty: str, index: int, replies: list[str], monkeypatch,
             max_steps: int | None = None) -> tuple[dict, list[dict]]:
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.configs.client import EvalClientConfig

    monkeypatch.setenv("PATH", f"{Path(UV).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SCRIPTED_API_KEY", "x")
    queue = list(replies)
    llm = ScriptedLLMServer().start()
    llm.responder = lambda request: Scripted(body=chat_reply(queue.pop(0)))
    env = load_environment(task_name=task, difficulty=difficulty, split="dev", indices=str(index), max_steps=max_steps,
                           player={"harness": {"id": "null"}, "runtime": {"type": "subprocess"}})  # fmt: skip
    item = list(env.taskset)[0]

    async def go() -> dict:
        ctx = ModelContext(client=EvalClientConfig(base_url=llm.base_url, api_key_var="SCRIPTED_API_KEY"), model="scripted-model")
        async with env.serving():
            episode = await env.run_episode(item, ctx)
        return json.loads(episode.model_dump_json())

    try:
        data = asyncio.run(go())
    finally:
        llm.stop()
    return data, llm.requests


@needs_uv
@pytest.mark.slow  # verifiers launches its chat program once per turn: ~2-5 s a turn on 2 cores (`make test-verifiers` runs it)
@pytest.mark.parametrize(("task", "difficulty"), [("PickAndPlaceTest", "normal"), ("ArchaeologyDating", "easy")])
def test_verifiers_rollout_reaches_success(task, difficulty, monkeypatch):
    actions, _, answers = oracle_episode(task, difficulty, 5)  # dev instance 0 = seed 5
    replies = [replies_json(a, "Following the plan.") for a in actions] + ([json.dumps(answers)] if answers else [])
    data, requests = _rollout(task, difficulty, 0, replies, monkeypatch)
    trace = data["traces"][0]
    assert data["ok"] and trace["rewards"]["success"]["score"] == 1.0
    assert trace["info"]["discoverylab"]["steps"] == len(actions)
    if answers:
        assert trace["rewards"]["answers"]["score"] == 1.0
    assert "procedure" not in trace["rewards"]  # reported in info only: it reveals the answer
    assert len(requests) == len(replies)


async def steps_played(trace) -> float:
    """A researcher's own reward, plugged through verifiers' config: reads the episode's end."""
    return float(trace.info["discoverylab"]["steps"])


@needs_uv
@pytest.mark.slow  # two rollouts of two turns each, one chat program per turn (~15 s on 2 busy cores)
def test_plugged_rewards_see_the_episode_and_reweight_ours_across_concurrent_rollouts(monkeypatch):
    """What a researcher does next: plug a reward of their own (`--env.taskset.task.rewards.NAME.fn`)
    that reads the episode's end, re-weight ours (`...rewards.success.weight`), and run several
    rollouts at once. Before, the rewards and `trace.info["discoverylab"]` were recorded after the
    interaction closed, i.e. after verifiers had scored the trace: the plugged reward found no
    episode (KeyError) and re-weighting `success` was refused (no @vf.reward method of that name)."""
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.configs.client import EvalClientConfig

    monkeypatch.setenv("PATH", f"{Path(UV).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SCRIPTED_API_KEY", "x")
    llm = ScriptedLLMServer().start()
    llm.responder = lambda request: Scripted(body=chat_reply(replies_json({"action": "WAIT"}, "Waiting.")))
    env = load_environment(task_name="PickAndPlaceTest", difficulty="normal", split="dev", indices="0-1", max_steps=2,
                           task={"rewards": {"steps_played": {"fn": "test_verifiers_integration:steps_played", "weight": 0.0},
                                             "success": {"weight": 0.5}}},
                           player={"harness": {"id": "null"}, "runtime": {"type": "subprocess"}})  # fmt: skip
    items = list(env.taskset)

    async def go() -> list[dict]:
        ctx = ModelContext(client=EvalClientConfig(base_url=llm.base_url, api_key_var="SCRIPTED_API_KEY"), model="scripted-model")
        async with env.serving():
            episodes = await asyncio.gather(*(env.run_episode(item, ctx) for item in items))
        return [json.loads(episode.model_dump_json()) for episode in episodes]

    try:
        episodes = asyncio.run(go())
    finally:
        llm.stop()
    traces = [episode["traces"][0] for episode in episodes]
    assert all(episode["ok"] for episode in episodes), [(e["errors"], t["errors"]) for e, t in zip(episodes, traces, strict=True)]
    for trace in traces:
        assert trace["rewards"]["steps_played"] == {"score": 2.0, "weight": 0.0}
        assert trace["rewards"]["success"] == {"score": 0.0, "weight": 0.5}
        assert set(trace["rewards"]) == {"steps_played", "success"}  # a unit test has no sheet, is no lab
    assert sorted(t["info"]["discoverylab"]["instance"]["index"] for t in traces) == [0, 1]
    assert len(llm.requests) == 4


@needs_uv
@pytest.mark.slow  # one rollout of one turn (a chat program launch: ~5 s on 2 busy cores)
def test_a_slow_step_does_not_stall_the_event_loop_of_concurrent_rollouts(monkeypatch):
    """verifiers runs many rollouts on one event loop, beside its interception server, which carries
    their model requests. A step that takes a while (grading a lab's looping program takes seconds)
    used to run on that loop: every other rollout and the interception stood still meanwhile."""
    import time

    from verifiers.v1.clients import ModelContext
    from verifiers.v1.configs.client import EvalClientConfig

    from discoverylab.server.session import EpisodeSession

    monkeypatch.setenv("PATH", f"{Path(UV).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SCRIPTED_API_KEY", "x")
    step = EpisodeSession.step
    monkeypatch.setattr(EpisodeSession, "step", lambda self, action: time.sleep(1.5) or step(self, action))
    llm = ScriptedLLMServer().start()
    llm.responder = lambda request: Scripted(body=chat_reply(replies_json({"action": "WAIT"})))
    env = load_environment(task_name="PickAndPlaceTest", difficulty="normal", split="dev", indices="0", max_steps=1,
                           player={"harness": {"id": "null"}, "runtime": {"type": "subprocess"}})  # fmt: skip
    item = list(env.taskset)[0]
    gaps: list[float] = []

    async def ticker(done: asyncio.Event) -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.02)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    async def go() -> dict:
        ctx = ModelContext(client=EvalClientConfig(base_url=llm.base_url, api_key_var="SCRIPTED_API_KEY"), model="scripted-model")
        done = asyncio.Event()
        async with env.serving():
            watch = asyncio.create_task(ticker(done))
            try:
                episode = await env.run_episode(item, ctx)
            finally:
                done.set()
                await watch
        return json.loads(episode.model_dump_json())

    try:
        data = asyncio.run(go())
    finally:
        llm.stop()
    assert data["ok"] and data["traces"][0]["info"]["discoverylab"]["steps"] == 1
    assert max(gaps) < 1.0, f"the event loop stood still {max(gaps):.2f} s"


def test_reply_parsing_follows_react():
    assert parse_reply('{"thought": "x", "action": "PICKUP", "arg1": 12, "arg2": null}') == {"action": "PICKUP", "arg1": 12}
    assert parse_reply('sure! {"chosen_dialog_option_int": 2}') == {"chosen_dialog_option_int": 2}
    assert parse_reply("no json here") == "no json here"


def test_rows_are_task_difficulty_instance():
    env = load_environment(suite="discovery", difficulty="easy", split="train", indices="0-1")
    names = [t.data.name for t in env.taskset]
    assert len(names) == 16 and names[0].endswith("/easy/train#0") and names[1].endswith("/easy/train#1")
    assert all("seed" not in t.data.info for t in env.taskset)


def test_a_lab_with_a_difficulty_is_refused_not_played_without_it():
    """Tiny Labs have no difficulty levels: env-serve refuses a lab reset naming one, while
    `load_environment(task_name=<protocol>, difficulty="easy")` used to build the rows anyway."""
    with pytest.raises(ValueError, match="no difficulty levels"):
        list(load_environment(task_name="sequence/hidden-property", difficulty="easy", split="dev", indices="0").taskset)
    assert [t.data.info["difficulty"] for t in load_environment(task_name="sequence/hidden-property", split="dev", indices="0").taskset] == [""]


def test_a_task_named_with_task_says_task_name():
    """Inspect's tasks take `task=`; here `task` is verifiers' per-task config, and
    `load_environment(task="PickAndPlaceTest")` used to fail with pydantic's "Input should be a
    valid dictionary or instance of TaskConfig". The error now names the option to use."""
    with pytest.raises(ValueError, match="task_name="):
        load_environment(task="PickAndPlaceTest", split="dev", indices="0")


def _count_builds(monkeypatch, task: str) -> list[int]:
    """Counts world builds of `task` (its scenario's `build`, which every reset runs once)."""
    from discoverylab.scenarios.registry import get_task

    scenario = get_task(task)
    builds: list[int] = []
    build = scenario.build
    monkeypatch.setattr(scenario, "build", lambda self: builds.append(1) or build(self))
    return builds


def test_listing_the_rows_builds_no_world(monkeypatch):
    """`load()` used to build each row's world (to take its first observation as the prompt) and
    `run()` built it again: two builds per row. The rows now carry no prompt; the episode opens
    the conversation with its first observation, from the one world it builds."""
    builds = _count_builds(monkeypatch, "PickAndPlaceTest")
    tasks = list(load_environment(task_name="PickAndPlaceTest", difficulty="normal", split="dev", indices="0-2").taskset)
    assert len(tasks) == 3 and all(t.data.prompt is None for t in tasks) and builds == []


@needs_uv
@pytest.mark.slow  # one rollout of one turn (a chat program launch: ~5 s on 2 busy cores)
def test_a_rollout_builds_its_world_once_and_opens_with_its_first_observation(monkeypatch):
    from discoverylab.integrations import common

    builds = _count_builds(monkeypatch, "PickAndPlaceTest")
    row = {"task": "PickAndPlaceTest", "difficulty": "normal", "split": "dev", "index": 0}
    session, first = common.start(row, 1)
    session.close()
    builds.clear()
    data, requests = _rollout("PickAndPlaceTest", "normal", 0, [replies_json({"action": "WAIT"})], monkeypatch,
                              max_steps=1)
    assert data["ok"] and data["traces"][0]["info"]["discoverylab"]["steps"] == 1
    assert builds == [1], f"{len(builds)} world builds for one rollout"
    messages = requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"] and messages[1]["content"] == first


def _vf_validate(tmp_path: Path, *options: str) -> list[dict]:
    """`vf-validate` (verifiers' gold + untouched-task checks, no model) on our taskset; its rows."""
    import subprocess

    exe = Path(sys.executable).parent / "vf-validate"
    if not exe.exists():
        pytest.skip("verifiers' vf-validate is not installed beside this Python")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(exe), "discoverylab-verifiers", "--rich", "False", "--runtime.type", "subprocess",
                           "-o", str(tmp_path), *options], capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (results,) = tmp_path.glob("*/results.jsonl")
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_vf_validate_finds_our_tasks_valid(tmp_path):
    """`vf-validate` called every task an error: scoring the untouched task (no agent ran) raised
    "the trace holds no discoverylab episode end", and there was no gold check. An unplayed
    episode now scores 0 on every reward (valid: it does not pass untouched) and the gold check
    is our oracle playing the row's instance (valid: it solves it, answer sheet included)."""
    rows = _vf_validate(tmp_path, "--taskset.task-name", "ArchaeologyDating", "--taskset.difficulty", "easy",
                        "--taskset.indices", "0-1")  # fmt: skip
    assert [r["name"] for r in rows] != [] and all(r["valid"] for r in rows), rows
    assert all(r["gold"]["valid"] is True for r in rows)
    assert all(r["noop"]["rewards"] == {"success": 0.0, "answers": 0.0} for r in rows)  # the sheet not handed in
    lab = _vf_validate(tmp_path / "lab", "--taskset.task-name", "sequence/hidden-property", "--taskset.indices", "0")
    assert lab[0]["noop"]["rewards"] == {"grade": 0.0} and lab[0]["gold"]["reason"] == "unchecked"  # no model-free check


def test_the_gold_check_fails_where_the_oracle_cannot_solve_the_instance():
    """The gold check can fail: with two steps no oracle completes Pick and Place."""
    from discoverylab.integrations.verifiers_env import oracle_solves

    row = {"task": "PickAndPlaceTest", "difficulty": "normal", "split": "dev", "index": 0}
    assert oracle_solves(row) is True
    assert oracle_solves({**row, "max_steps": 2}) is False
