"""The env server (`discoverylab env-serve`) end to end over real sockets on 127.0.0.1.

Named attacks (each must lose): a client reading the sealed seed from a reset/state/step answer,
a client reading the answer from the reward (the procedure reward is never served) or from the
scorecard before the episode ended, a killed client's session holding its slot for ever, a
flood of sessions or an oversized body taking the server down.
"""

from __future__ import annotations

import json
import resource
import threading
import time

import httpx
import pytest

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.agents.oracle import OracleAgent
from discoverylab.agents.react import ReActAgent
from discoverylab.env import GOLD_KEYS
from discoverylab.instances import make_instance
from discoverylab.server.client import EnvServerClient, EnvServerError
from discoverylab.server.session import MAX_ACTION_CHARS
from env_server_kit import running_env_server
from llm_scripted_server import ScriptedLLMServer
from rubric_judge import OracleReplay, oracle_actions

KEY = b"k" * 32
EPISODES = [("PickAndPlaceTest", "normal", 0), ("ArchaeologyDating", "easy", 0)]


@pytest.fixture(scope="module")
def server():
    with running_env_server(max_sessions=80, ttl_s=60, key=KEY) as (url, app):
        yield url, app


@pytest.mark.parametrize(("task", "difficulty", "seed"), EPISODES)
def test_llm_agent_playing_the_oracle_through_the_server_succeeds(server, task, difficulty, seed):
    """A ReAct agent whose model is the scripted server replaying the oracle's actions, stepping
    the world through the env server: the episode reaches success and the reward pays it once."""
    actions, discovery = oracle_actions(task, difficulty, seed)
    llm = ScriptedLLMServer().start()
    llm.responder = OracleReplay(actions, discovery)
    try:
        agent = ReActAgent(LLMSettings(base_url=llm.base_url, model="scripted-model", api_key="x"))
        with EnvServerClient(server[0]) as env:
            result = env.reset(task, difficulty, seed=seed, structured=True)
            assert result.structured is not None
            agent.reset(result.structured)
            rewards = []
            while not result.done:
                result = env.step(agent.act(result.structured))
                rewards.append(result.reward)
        assert result.scorecard is not None and result.scorecard["completedSuccessfully"]
        assert rewards[-1] == 1.0 and sum(rewards) == 1.0
        assert result.step == len(actions)
    finally:
        llm.stop()


def test_tiny_labs_protocol_plays_through_the_server(server):
    with EnvServerClient(server[0]) as env:
        first = env.reset("sequence/hidden-property", split="dev", index=0)
        assert "round" in first.observation.lower() and first.instance["split"] == "dev"
        result = first
        for _ in range(100):
            if result.done:
                break
            result = env.step("nonsense that the protocol must answer with its own error")
        assert result.done and result.scorecard is not None and 0.0 <= result.scorecard["score"] <= 1.0


def test_finished_lab_is_graded_once_not_on_every_state_call(server):
    """Grading a hidden-property answer runs the agent's program in the sandbox (seconds for one
    that loops): the end step grades once and `state()` after the end serves that grade again."""
    url, app = server
    answer = json.dumps({"hypotheses": [{"rank": 1, "description": "GC content",
                                         "python": "def f(s):\n    return (s.count('G') + s.count('C')) / len(s)"}]})
    with EnvServerClient(url) as env:
        result = env.reset("sequence/hidden-property", seed=0)
        protocol = app.state.pool.slots[env.session_id].session.env.protocol
        grade, runs = protocol.grade, []
        protocol.grade = lambda: runs.append(1) or grade()  # counts the grader's runs
        while not result.done:
            result = env.step(answer if "final" in result.observation.lower() else "SAMPLE 0.5")
        cards = [env.state()["scorecard"] for _ in range(3)]
    assert result.scorecard is not None and result.scorecard["parts"]["program_missing"] == 0
    assert len(runs) == 1 and all(card == result.scorecard for card in cards)


def test_lab_message_over_the_action_limit_is_refused_in_either_form(server):
    """A Tiny Labs message is at most MAX_ACTION_CHARS, as a bare string or as {"message": ...}."""
    with EnvServerClient(server[0]) as env:
        env.reset("sequence/hidden-property", seed=0)
        for action in ("A" * (MAX_ACTION_CHARS + 1), {"message": "A" * (MAX_ACTION_CHARS + 1)}):
            with pytest.raises(EnvServerError) as refused:
                env.step(action)
            assert refused.value.status == 400 and "at most" in str(refused.value)
        assert env.state()["step_count"] == 0  # refused messages use no round


def test_refused_reset_leaves_the_running_episode_playable(server):
    """A reset the server refuses (a misspelt task, a bad split) keeps the episode in play: its
    state and its next step go on from where they were, instead of 'Call reset before step'."""
    with EnvServerClient(server[0]) as env:
        env.reset("sequence/hidden-property", seed=3)
        env.step("SAMPLE 0.5")
        for bad in ({"task": "sequence/hiden-property", "seed": 3}, {"task": "PickAndPlaceTest", "split": "nope", "index": 0}):
            with pytest.raises(EnvServerError) as refused:
                env.reset(**bad)
            assert refused.value.status == 400
        assert env.state()["task"] == "sequence/hidden-property" and env.state()["step_count"] == 1
        assert env.step("SAMPLE 0.5").step == 2


def test_attack_sealed_seed_never_reaches_the_client(server):
    """Reset, steps and state of a sealed instance carry its index and commitment, never its seed."""
    inst = make_instance("PickAndPlaceTest", "normal", "test", 3, KEY)
    with EnvServerClient(server[0]) as env:
        texts = [env.reset("PickAndPlaceTest", split="test", index=3, structured=True).model_dump_json()]
        texts.append(env.step({"action": "MOVE_FORWARD"}).model_dump_json())
        texts.append(json.dumps(env.state()))
    public = json.loads(texts[0])["instance"]
    assert public == {"split": "test", "index": 3, "commitment": inst.commitment}
    assert all(str(inst.seed) not in text for text in texts)


def test_attack_reward_and_scorecard_reveal_nothing_before_the_end(server):
    """Every step before success pays 0 (no procedure reward); no gold until the episode ended."""
    task, difficulty, seed = EPISODES[1]
    with EnvServerClient(server[0]) as env:
        result = env.reset(task, difficulty, seed=seed, structured=True)
        agent = OracleAgent(task)
        agent.reset(result.structured)
        while not result.done:
            state = env.state()
            assert "scorecard" not in state and result.scorecard is None
            assert not any(key in json.dumps(result.model_dump()) for key in GOLD_KEYS)
            result = env.step(agent.act(result.structured))
            assert result.reward == (1.0 if result.done else 0.0)
        assert not any(key in result.scorecard for key in GOLD_KEYS)  # the gold waits for the answer sheet
        env.hand_in({})
        assert all(key in env.state()["scorecard"] for key in GOLD_KEYS)  # the sheet is in: the end reveals


def test_bad_requests_get_4xx_with_a_clear_message(server):
    url = server[0]
    with httpx.Client(base_url=url) as http:
        sid = http.post("/sessions").json()["session_id"]
        bad_json = http.post(f"/sessions/{sid}/reset", content=b"{not json", headers={"content-type": "application/json"})
        assert bad_json.status_code == 422 and "JSON decode error" in bad_json.json()["detail"]
        assert "body (not JSON at character 1)" in bad_json.json()["detail"]  # not "1: ...", as if a field
        missing = http.post(f"/sessions/{sid}/reset", json={"difficulty": "normal"})
        assert missing.status_code == 422 and "task: Field required" in missing.json()["detail"]
        extra = http.post(f"/sessions/{sid}/reset", json={"task": "PickAndPlaceTest", "seed": 0, "reward": "procedure"})
        assert extra.status_code == 422 and "reward" in extra.json()["detail"]
        early = http.post(f"/sessions/{sid}/step", json={"action": {"action": "WAIT"}})
        assert early.status_code == 400 and "reset" in early.json()["detail"]
        unknown = http.post(f"/sessions/{sid}/reset", json={"task": "NoSuchTask", "seed": 0})
        assert unknown.status_code == 400 and "Unknown task" in unknown.json()["detail"]
        both = http.post(f"/sessions/{sid}/reset", json={"task": "PickAndPlaceTest", "seed": 0, "split": "dev", "index": 0})
        assert both.status_code == 400 and "not both" in both.json()["detail"]
        huge = http.post(f"/sessions/{sid}/step", content=b"x" * 200_000, headers={"content-type": "application/json"})
        assert huge.status_code == 413 and "limit" in huge.json()["detail"]
        chunked = http.post(f"/sessions/{sid}/step", content=iter([b"x" * 40_000] * 5),
                            headers={"content-type": "application/json"})  # no length: streamed in chunks
        assert chunked.status_code == 413 and "limit" in chunked.json()["detail"]
        gone = http.post("/sessions/nope/step", json={"action": "{}"})
        assert gone.status_code == 404 and "POST /sessions" in gone.json()["detail"]
        assert http.delete(f"/sessions/{sid}").status_code == 200
    with running_env_server(max_sessions=1, ttl_s=60) as (small, _):
        with EnvServerClient(small) as first:
            first.open()
            with pytest.raises(EnvServerError) as full:
                EnvServerClient(small).open()
            assert full.value.status == 429 and "maximum of 1" in str(full.value)
        with EnvServerClient(small) as env:
            with pytest.raises(EnvServerError) as sealed:
                env.reset("PickAndPlaceTest", split="test", index=0)
            assert sealed.value.status == 400 and "holds no evaluation key" in str(sealed.value)


def test_attack_killed_client_session_expires():
    """A client that vanishes without closing: its session expires and its slot is free again."""
    with running_env_server(max_sessions=1, ttl_s=0.4) as (url, app):
        dead = EnvServerClient(url)
        dead.reset("PickAndPlaceTest", seed=0)
        sid = dead.session_id
        dead.http.close()  # killed: no DELETE
        deadline = time.monotonic() + 10
        while app.state.pool.slots and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not app.state.pool.slots and app.state.pool.expired == 1
        with httpx.Client(base_url=url) as http:
            assert http.post(f"/sessions/{sid}/step", json={"action": {"action": "WAIT"}}).status_code == 404
        with EnvServerClient(url) as env:  # the one slot is free again
            assert env.reset("PickAndPlaceTest", seed=0).step == 0


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_64_concurrent_sessions_step_without_errors_and_bounded_memory(server):
    """64 clients at once, each its own session and world, 8 steps each; twice: the second round
    raises the peak memory by little (sessions are freed, nothing accumulates)."""
    url, app = server

    def play(n: int, errors: list[str]) -> None:
        try:
            with EnvServerClient(url) as env:
                result = env.reset("PickAndPlaceTest", seed=n % 7)
                for _ in range(8):
                    result = env.step({"action": "ROTATE_DIRECTION", "arg1": "north"} if n % 2 else {"action": "WAIT"})
                assert result.step == 8
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(f"{type(exc).__name__}: {exc}")

    peaks = []
    for _ in range(2):
        errors: list[str] = []
        threads = [threading.Thread(target=play, args=(n, errors)) for n in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert errors == []
        assert not app.state.pool.slots
        peaks.append(_rss_mb())
    assert peaks[1] - peaks[0] < 60, peaks


def test_openenv_generic_client_connects_without_glue(server):
    """OpenEnv's own client (the `openenv-core` package) plays an episode over /ws."""
    openenv = pytest.importorskip("openenv.core", reason="the openenv-core package (dev extra) is not installed")
    task, difficulty, seed = EPISODES[0]
    with openenv.GenericEnvClient(base_url=server[0]).sync() as env:
        result = env.reset(task=task, difficulty=difficulty, seed=seed, structured=True)
        agent = OracleAgent(task)
        agent.reset(result.observation["structured"])
        while not result.done:
            result = env.step(agent.act(result.observation["structured"]))
        assert result.reward == 1.0 and result.observation["scorecard"]["completedSuccessfully"]
        assert env.state()["done"] is True


def test_openenv_socket_answers_a_malformed_reset_or_binary_frame_with_an_error_and_stays_open(server):
    """A reset whose data is not an object, or a binary frame, gets an error message (a binary frame
    holding a message is read as its UTF-8 text); the socket and its session go on."""
    websockets = pytest.importorskip("websockets.sync.client", reason="the websockets package is not installed")
    ws_url = server[0].replace("http://", "ws://") + "/ws"
    with websockets.connect(ws_url) as ws:
        for data in ("abc", [1, 2], 7):
            ws.send(json.dumps({"type": "reset", "data": data}))
            answer = json.loads(ws.recv(timeout=30))
            assert answer["type"] == "error" and answer["data"]["code"] == "VALIDATION_ERROR", answer
        ws.send(b"\xff not JSON")  # a binary frame: an error message, not a dropped socket
        assert json.loads(ws.recv(timeout=30))["data"]["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "reset", "data": {"task": "sequence/hidden-property", "seed": 0}}).encode())
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"


def test_openenv_socket_message_over_the_body_limit_is_refused_as_http_s_413(server):
    """--max-body bounds a WebSocket message as it does an HTTP body (uvicorn alone would take 16
    MB): a bigger message is answered MESSAGE_TOO_LARGE before it is parsed; the socket goes on."""
    from discoverylab.server.app import DEFAULT_MAX_BODY

    websockets = pytest.importorskip("websockets.sync.client", reason="the websockets package is not installed")
    ws_url = server[0].replace("http://", "ws://") + "/ws"
    with websockets.connect(ws_url, max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task": "sequence/hidden-property", "seed": 0}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        for big in ("x" * (DEFAULT_MAX_BODY + 1), "é" * (DEFAULT_MAX_BODY // 2 + 1)):  # bytes count, not characters
            ws.send(json.dumps({"type": "step", "data": {"message": big}}))
            answer = json.loads(ws.recv(timeout=30))
            assert answer["type"] == "error" and answer["data"]["code"] == "MESSAGE_TOO_LARGE", answer["data"]
        ws.send(json.dumps({"type": "state"}))
        assert json.loads(ws.recv(timeout=30))["data"]["step_count"] == 0


def test_attack_answer_sheet_is_graded_once_after_the_end(server):
    """The answer sheet: refused before the end, graded once, a second hand-in (probing the gold
    field by field) refused; the oracle's sheet scores 1."""
    from discoverylab.scenarios.answer_forms import answer_form, oracle_answers

    task, difficulty, seed = EPISODES[1]
    with EnvServerClient(server[0]) as env:
        result = env.reset(task, difficulty, seed=seed, structured=True)
        sheet = env.answer_sheet()
        assert sheet is not None and sheet["fields"] and "json_schema" in sheet
        with pytest.raises(EnvServerError, match="after the episode ends"):
            env.hand_in({})
        agent = OracleAgent(task)
        agent.reset(result.structured)
        while not result.done:
            result = env.step(agent.act(result.structured))
        agent.conclude(result.structured)
        from discoverylab.env import DiscoveryWorldEnv

        local = DiscoveryWorldEnv(task, difficulty)
        local.reset(seed=seed)
        answers = oracle_answers(task, answer_form(local), agent.knowledge_report.facts)
        assert env.hand_in(answers)["score"] == 1.0
        with pytest.raises(EnvServerError, match="already handed in"):
            env.hand_in(answers)


def test_server_observations_are_the_envs_byte_for_byte(server):
    """Same instance + actions: the server's texts are exactly the Gymnasium env's (one core)."""
    from discoverylab.env import DiscoveryWorldEnv

    task, difficulty, seed = EPISODES[1]
    actions, _ = oracle_actions(task, difficulty, seed)
    local = DiscoveryWorldEnv(task, difficulty, text_format="lm")
    texts = [local.reset(seed=seed)[0]]
    texts += [local.step(a)[0] for a in actions]
    with EnvServerClient(server[0]) as env:
        remote = [env.reset(task, difficulty, seed=seed).observation]
        remote += [env.step(a).observation for a in actions]
    assert remote == texts


def test_env_serve_command_refuses_a_bad_key_file(tmp_path):
    from typer.testing import CliRunner

    from discoverylab.cli import app

    short = tmp_path / "key"
    short.write_text("short")
    for path in (tmp_path / "missing", short):
        result = CliRunner().invoke(app, ["env-serve", "--eval-key-file", str(path)])
        assert result.exit_code == 2 and "key" in result.output


def test_openenv_schema_route_describes_the_step_data(server):
    with httpx.Client(base_url=server[0]) as http:
        schema = http.get("/schema").json()
    kinds = [set(option["required"]) for option in schema["action"]["anyOf"]]
    assert kinds == [{"action"}, {"chosen_dialog_option_int"}, {"message"}, {"answers"},  # answers: the sheet
                     {"type"}, {"type", "tool_name"}]  # OpenEnv's MCPToolClient: list_tools, call_tool  # fmt: skip
    assert "observation" in schema["observation"]["properties"] and "task" in schema["reset"]["properties"]


def test_attack_sealed_instance_cannot_be_replayed_for_its_gold(server):
    """Play test#7 to its end (the end reveals the gold), then reset it again to copy the gold or
    probe the answer sheet a second time: refused (409), in this session and in any other."""
    task, difficulty, _ = EPISODES[1]
    with EnvServerClient(server[0]) as env:
        env.reset(task, difficulty, split="test", index=7)
        with pytest.raises(EnvServerError) as again:
            env.reset(task, difficulty, split="test", index=7)
        assert again.value.status == 409 and "plays once" in str(again.value)
    with EnvServerClient(server[0]) as other:
        with pytest.raises(EnvServerError) as elsewhere:
            other.reset(task, difficulty, split="test", index=7)
        assert elsewhere.value.status == 409
        assert other.reset(task, difficulty, split="test", index=8).instance["index"] == 8  # other instances play
        other.reset("sequence/hidden-property", split="test", index=7, difficulty="")  # a lab: no difficulty
        with pytest.raises(EnvServerError, match=r"409: sequence/hidden-property test#7 was already played"):
            other.reset("sequence/hidden-property", split="test", index=7, difficulty="")


def test_requests_piling_on_a_busy_session_get_429_and_stall_no_other_client(server):
    """Attack: 45 requests at once to one session whose work takes a while (grading a looping
    program takes seconds). Session work runs in the server's shared pool of 40 threads: queued
    on the session's lock they would hold every thread, and /health and another client's
    POST /sessions would wait for them. Past MAX_QUEUED waiting, the session answers 429 at once."""
    from discoverylab.server.app import MAX_QUEUED

    url, app = server
    with EnvServerClient(url) as env:
        env.reset("PickAndPlaceTest", "normal", seed=0)
        session = app.state.pool.slots[env.session_id].session
        release, entered = threading.Event(), threading.Event()
        state = session.state

        def slow_state() -> dict:
            entered.set()
            release.wait(30)
            return state()

        session.state = slow_state
        codes: list[int] = []

        def get_state() -> None:
            codes.append(httpx.get(f"{url}/sessions/{env.session_id}/state", timeout=60).status_code)

        threads = [threading.Thread(target=get_state) for _ in range(45)]
        try:
            for thread in threads:
                thread.start()
            assert entered.wait(10)
            deadline = time.monotonic() + 20
            while len(codes) < 45 - (MAX_QUEUED + 1) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert codes.count(429) == 45 - (MAX_QUEUED + 1), codes  # refused at once, the rest wait
            assert httpx.get(f"{url}/health", timeout=5).status_code == 200  # others go on meanwhile
            other = httpx.post(f"{url}/sessions", timeout=5)
            assert other.status_code == 201
            httpx.delete(f"{url}/sessions/{other.json()['session_id']}", timeout=5)
            busy = httpx.get(f"{url}/sessions/{env.session_id}/state", timeout=5)
            assert busy.status_code == 429 and "busy" in busy.json()["detail"]
        finally:
            release.set()
            for thread in threads:
                thread.join(60)
        assert sorted(codes) == [200] * (MAX_QUEUED + 1) + [429] * (45 - MAX_QUEUED - 1)
        assert env.state()["step_count"] == 0  # the session serves again once it is free


@pytest.mark.parametrize(("options", "named"), [({"max_steps": 2}, "max_steps"), ({"difficulty": "hard"}, "difficulty='hard'"),
                                                ({"structured": True}, "structured"), ({"text_format": "json"}, "text_format")])
def test_a_lab_reset_with_discoveryworld_options_is_refused_not_played_without_them(server, options, named):
    """A Tiny Lab has no difficulty, step limit, structured observation or text format of
    DiscoveryWorld's: a reset asking for one is a 400 naming it (it used to play the protocol's
    defaults), and a plain lab reset still plays."""
    with EnvServerClient(server[0]) as env:
        kwargs = {"difficulty": "normal", **options}
        with pytest.raises(EnvServerError, match=f"Tiny Labs protocol.*{named}") as refused:
            env.reset("sequence/hidden-property", seed=0, **kwargs)
        assert refused.value.status == 400
        assert "round" in env.reset("sequence/hidden-property", seed=0).observation.lower()
