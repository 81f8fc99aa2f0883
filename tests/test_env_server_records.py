"""`env-serve --out DIR`: the evaluator's own records of the episodes its server plays.

Before, the server kept none: an evaluator serving the sealed test split to a submitter's remote
agent saw scores only through the client, i.e. the submitter's own numbers. Now every episode
that ends lands in DIR as the runner writes it, and `report` / `audit` read it.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from discoverylab.agents.oracle import OracleAgent
from discoverylab.bench.report import load_report
from discoverylab.bench.rundir import RunConfigMismatch, RunLocked
from discoverylab.cli.main import app as cli_app
from discoverylab.server.app import create_app
from discoverylab.server.client import EnvServerClient, EnvServerError
from env_server_kit import oracle_episode, running_env_server
from llm_scripted_server import ScriptedLLMServer
from rubric_judge import rubric_judge
from stop_kit import start_server

KEY = b"k" * 32
SHEET_TASK = ("ArchaeologyDating", "easy", 0)  # a discovery task with an answer sheet


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _play_unit(env: EnvServerClient, **reset: Any) -> Any:
    """PickAndPlaceTest played by the oracle over the server to its end."""
    result = env.reset("PickAndPlaceTest", "normal", structured=True, **reset)
    agent = OracleAgent("PickAndPlaceTest")
    agent.reset(result.structured)
    while not result.done:
        result = env.step(agent.act(result.structured))
    return result


def _play_sheet_task(env: EnvServerClient) -> tuple[Any, dict[str, Any]]:
    task, difficulty, seed = SHEET_TASK
    actions, _, answers = oracle_episode(task, difficulty, seed)
    result = env.reset(task, difficulty, seed=seed, agent="oracle-remote")
    for action in actions:
        result = env.step(action)
    assert result.done
    return result, answers


def _key_file(tmp_path: Path) -> Path:
    path = tmp_path / "eval.key"
    path.write_bytes(KEY)
    return path


def test_played_public_sealed_and_lab_episodes_land_as_records_report_and_audit_read(tmp_path):
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            public = _play_unit(env, seed=0, agent="my-agent")
            sealed = _play_unit(env, split="test", index=3)
            lab = env.reset("sequence/hidden-property", seed=0)
            while not lab.done:
                lab = env.step("nonsense the protocol answers with its own error")
    rows = _lines(out / "results.jsonl")
    assert [(r["agent"], r["split"], r["index"]) for r in rows] == [("my-agent", "seed", 0), ("remote", "test", 3)]
    assert all(r["status"] == "ok" and r["success"] and r["steps"] > 0 for r in rows)
    assert rows[0]["steps"] == public.step and rows[1]["steps"] == sealed.step
    assert rows[1]["seed"] is None and "seed" not in json.dumps(sealed.instance)  # the seed stays the server's
    run = json.loads((out / "run.json").read_text())
    assert run["runner"] == "env-serve" and run["config"]["eval_key_id"] and rows[0]["config_hash"] == run["config_hash"]
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert logs == ["PickAndPlaceTest-normal-s0-my-agent.jsonl", "PickAndPlaceTest-normal-test3-remote.jsonl"]
    log = _lines(out / "logs" / logs[1])
    assert [e["type"] for e in log[:2]] == ["start", "step"] and log[-1]["type"] == "end" and len(log) == sealed.step + 2
    labs = _lines(out / "labs" / "results.jsonl")
    assert [(r["protocol"], r["agent"], r["turns"]) for r in labs] == [("sequence/hidden-property", "remote", lab.step)]
    assert labs[0]["score"] == lab.scorecard["score"]
    report = load_report(out)
    assert report.agents == ["my-agent", "remote"] and not report.bad_lines
    key = str(_key_file(tmp_path))
    audited = CliRunner().invoke(cli_app, ["audit", str(out), "--eval-key-file", key])
    assert audited.exit_code == 0 and "2 of 2 records verified" in audited.output
    audited_labs = CliRunner().invoke(cli_app, ["audit", str(out / "labs"), "--eval-key-file", key])
    assert audited_labs.exit_code == 0 and "1 of 1 records verified" in audited_labs.output
    printed = CliRunner().invoke(cli_app, ["report", str(out), "--markdown"])
    assert printed.exit_code == 0 and "test (sealed): 1 episodes" in printed.output and "2 ok" in printed.output


def test_sheet_handed_in_later_completes_the_record(tmp_path):
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            result, answers = _play_sheet_task(env)
            pending = _lines(out / "results.jsonl")
            assert len(pending) == 1 and pending[0]["answers_score"] is None  # written at the end, sheet pending
            assert "not handed in yet" in json.dumps(pending[0]["answers_grade"])
            assert load_report(out).tables[0].rows[0].cells["oracle-remote"].answers == 0.0  # until it comes
            grade = env.hand_in(answers)
            done = _lines(out / "results.jsonl")
    assert len(done) == 2 and done[-1]["answers_score"] == grade["score"] == 1.0
    assert done[-1]["answers"] == answers and done[-1]["error"] is None
    assert result.scorecard is not None and "gold" not in json.dumps(result.scorecard).lower()
    assert load_report(out).tables[0].rows[0].cells["oracle-remote"].answers == 1.0  # the last line counts


def test_knowledge_handed_in_with_the_sheet_is_judged_from_the_served_folder(tmp_path, scripted_llm: ScriptedLLMServer):
    """A remote agent's knowledge report comes with its sheet; `discoverylab judge DIR` grades it
    from the server's records as from a runner's (the rubric judge: the oracle's report is right)."""
    out = tmp_path / "served"
    task, difficulty, seed = SHEET_TASK
    _, knowledge, _ = oracle_episode(task, difficulty, seed)
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            _, answers = _play_sheet_task(env)
            env.hand_in(answers, knowledge=knowledge)
    assert _lines(out / "results.jsonl")[-1]["knowledge"] == knowledge
    scripted_llm.responder = rubric_judge
    judged = CliRunner().invoke(cli_app, ["judge", str(out), "--base-url", scripted_llm.base_url, "--model", "j"])
    assert judged.exit_code == 0, judged.output
    assert [row["knowledge_score"] for row in _lines(out / "knowledge.jsonl")] == [1.0]


def test_session_expired_or_deleted_before_its_sheet_or_end_is_recorded_truthfully(tmp_path):
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out, ttl_s=0.5) as (url, app):
        with EnvServerClient(url) as env:
            _play_sheet_task(env)
            deadline = time.monotonic() + 10
            while app.state.pool.slots and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not app.state.pool.slots, "the idle session should have expired"
        with EnvServerClient(url) as other:
            other.reset("PickAndPlaceTest", "normal", seed=1)
            other.step({"action": "MOVE_FORWARD"})
        # the client's `with` ended: DELETE /sessions/ID, one step into the episode
    rows = _lines(out / "results.jsonl")
    expired, abandoned = rows[-2], rows[-1]
    assert expired["answers_score"] is None and "not handed in: the session expired" in expired["error"]
    assert abandoned["steps"] == 1 and not abandoned["completed"] and "abandoned: the client closed" in abandoned["error"]
    assert load_report(out).tables[-1].rows[0].cells["remote"].episodes == 1


def test_sigterm_keeps_finished_episodes_and_drops_only_the_one_in_play(tmp_path):
    out = tmp_path / "served"
    server, url = start_server(["env-serve", "--out", str(out)], "/health", {"DISCOVERYLAB_EVAL_KEY": KEY.decode()})
    try:
        finished, sheet, playing = EnvServerClient(url), EnvServerClient(url), EnvServerClient(url)
        _play_unit(finished, split="test", index=1)
        _play_sheet_task(sheet)
        playing.reset("PickAndPlaceTest", "normal", seed=5)
        playing.step({"action": "MOVE_FORWARD"})
        server.send_signal(signal.SIGTERM)
        assert server.wait(30) == 143  # as `run` and `bench` end on SIGTERM (test_env_server_stop.py)
    finally:
        if server.poll() is None:
            server.kill()
    rows = _lines(out / "results.jsonl")
    assert [(r["task"], r["index"]) for r in rows] == [("PickAndPlaceTest", 1), ("ArchaeologyDating", 0), ("ArchaeologyDating", 0)]
    assert "not handed in: the server stopped" in rows[-1]["error"]  # the pending sheet said, not lost
    with running_env_server(key=KEY, out=out):  # the lock went with the server
        pass


def test_a_server_restarted_on_dir_refuses_the_sealed_instances_it_recorded(tmp_path):
    """Before, a restarted server forgot which test#N were played: a replay (its gold seen at the
    first end) would put a second record of the instance in DIR, the one `report` counts."""
    out = tmp_path / "served"
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            _play_unit(env, split="test", index=2)
            env.reset("sequence/hidden-property", split="test", index=2, difficulty="")
        # the lab is abandoned (recorded) when the client's session closes
    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            for task, difficulty in (("PickAndPlaceTest", "normal"), ("sequence/hidden-property", "")):
                with pytest.raises(EnvServerError) as again:
                    env.reset(task, difficulty, split="test", index=2)
                assert again.value.status == 409 and "already played" in str(again.value)
            assert env.reset("PickAndPlaceTest", "normal", split="test", index=3).instance["index"] == 3
    assert len(_lines(out / "results.jsonl")) == 2 and len(_lines(out / "labs" / "results.jsonl")) == 1


def test_two_servers_on_one_dir_the_second_is_refused_at_start(tmp_path):
    out = tmp_path / "served"
    first = create_app(key=KEY, out=out)
    try:
        with pytest.raises(RunLocked, match="another runner"):
            create_app(key=KEY, out=out)
        result = CliRunner().invoke(cli_app, ["env-serve", "--port", "0", "--out", str(out)],
                                    env={"DISCOVERYLAB_EVAL_KEY": KEY.decode()})  # fmt: skip
        assert result.exit_code == 2 and "another runner" in result.output
    finally:
        first.state.records.close()
    with pytest.raises(RunConfigMismatch, match="another evaluation key"):  # its test#N would be other worlds
        create_app(key=b"o" * 32, out=out)


def test_unusable_dir_is_a_clear_error_at_start(tmp_path):
    taken = tmp_path / "a-file"
    taken.write_text("x")
    result = CliRunner().invoke(cli_app, ["env-serve", "--port", "0", "--out", str(taken)])
    assert result.exit_code == 2 and "is a file, not a directory" in result.output
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "run.json").write_text(json.dumps({"runner": "discoveryworld", "config": {}, "config_hash": "x"}))
    result = CliRunner().invoke(cli_app, ["env-serve", "--port", "0", "--out", str(tmp_path / "bench")])
    assert result.exit_code == 2 and "use another --out" in result.output


def test_full_disk_at_the_end_is_a_truthful_507_and_the_record_comes_once_there_is_room(tmp_path, monkeypatch):
    from discoverylab.bench import records

    out = tmp_path / "served"
    real = records.append_jsonl

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out / "results.jsonl"))

    with running_env_server(key=KEY, out=out) as (url, _):
        with EnvServerClient(url) as env:
            monkeypatch.setattr(records, "append_jsonl", full)
            with pytest.raises(EnvServerError) as refused:
                _play_unit(env, seed=2)
            assert refused.value.status == 507 and "ENOSPC" in str(refused.value)
            assert env.state()["done"] and env.state()["scorecard"]["completedSuccessfully"]  # the end stands
            assert httpx.get(f"{url}/health").json()["status"] == "healthy"  # the server goes on
            monkeypatch.setattr(records, "append_jsonl", real)  # room again
        # the session closed: its record, refused before, is written now
    rows = _lines(out / "results.jsonl")
    assert len(rows) == 1 and rows[0]["success"] and rows[0]["seed"] == 2


def test_server_stopping_drops_a_websocket_episode_in_play_as_it_does_an_http_one(tmp_path):
    """On shutdown uvicorn closes each WebSocket (code 1012) before the app's own shutdown: an
    episode in play there is the server's doing, not the agent's walking away (never `abandoned`)."""
    from websockets.sync.client import connect

    out = tmp_path / "served"
    with ExitStack() as sockets:  # closed after the server: the server goes first
        with running_env_server(key=KEY, out=out) as (url, _):
            ws = sockets.enter_context(connect(url.replace("http://", "ws://") + "/ws"))
            ws.send(json.dumps({"type": "reset", "data": {"task": "PickAndPlaceTest", "seed": 4}}))
            assert json.loads(ws.recv())["type"] == "observation"
            ws.send(json.dumps({"type": "step", "data": {"action": "MOVE_FORWARD"}}))
            assert json.loads(ws.recv())["type"] == "observation"
    assert _lines(out / "results.jsonl") == []
    with running_env_server(key=KEY, out=out) as (url, _):  # a client closing its socket walks away
        with connect(url.replace("http://", "ws://") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {"task": "PickAndPlaceTest", "seed": 4}}))
            ws.recv()
        deadline = time.monotonic() + 10
        while not _lines(out / "results.jsonl") and time.monotonic() < deadline:
            time.sleep(0.05)
    [row] = _lines(out / "results.jsonl")
    assert "abandoned: the WebSocket closed" in row["error"]


def _pending_sheets(out: Path, n: int) -> tuple[Any, Any]:
    """A server's pool on `out` holding `n` ended episodes of a task with an answer sheet, each still
    waiting for its sheet (their pending records already on disk)."""
    from discoverylab.server.app import SessionPool
    from discoverylab.server.records import ServerRecords
    from discoverylab.server.session import ResetRequest

    store = ServerRecords(out, None)
    pool = SessionPool(max_sessions=n, key=KEY, records=store)
    task, difficulty, _ = SHEET_TASK
    for seed in range(n):
        pool.run(pool.create(), lambda s, seed=seed: (s.reset(ResetRequest(task=task, difficulty=difficulty, seed=seed)),
                                                      s.finish()))  # fmt: skip
    return pool, store


def _counting_syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each fsync of a file, and each sync of a whole filesystem, from now on."""
    from discoverylab.bench import records

    syncs: list[str] = []
    fsync, sync_filesystem = os.fsync, getattr(records, "sync_filesystem", None)
    monkeypatch.setattr(os, "fsync", lambda fd: syncs.append("fsync") or fsync(fd))
    monkeypatch.setattr(records, "sync_filesystem", lambda *a: syncs.append("syncfs") or sync_filesystem(*a),
                        raising=False)  # fmt: skip
    return syncs


def test_the_stop_makes_many_pending_sheets_durable_with_a_bounded_number_of_syncs(tmp_path, monkeypatch):
    """A stop with N episodes waiting for their sheets wrote each one's record with two fsyncs (its
    log, its line): 2N disk commits, which on a slow disk overran the stop's grace. The stop now
    syncs the filesystem twice whatever N, and returns with every record whole on disk."""
    n, out = 24, tmp_path / "served"
    pool, store = _pending_sheets(out, n)
    syncs = _counting_syncs(monkeypatch)
    pool.close_all()
    assert len(syncs) <= 2, f"{len(syncs)} syncs for {n} pending sheets: {syncs[:4]}..."
    monkeypatch.undo()
    store.close()
    rows = _lines(out / "results.jsonl")
    assert len(rows) == 2 * n and store.failed == 0
    last = {row["seed"]: row for row in rows}
    assert sorted(last) == list(range(n))
    assert all(row["error"] == "not handed in: the server stopped" for row in last.values())
    logs = sorted((out / "logs").iterdir())
    assert len(logs) == n and all(p.suffix == ".jsonl" for p in logs)  # no temp file left
    for path in logs:
        end = _lines(path)[-1]
        assert end["type"] == "end" and end["record"]["error"] == "not handed in: the server stopped"


def test_a_disk_that_fails_at_the_stop_is_said_and_the_stop_goes_on(tmp_path, monkeypatch, caplog):
    """The stop's records refused by the disk: said in one line with how many, counted as failed;
    the stop returns and the records written at each episode's end stand (nothing torn)."""
    from discoverylab.bench import records

    n, out = 3, tmp_path / "served"
    pool, store = _pending_sheets(out, n)
    before = (out / "results.jsonl").read_bytes()

    def full(*_: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out))

    monkeypatch.setattr(records, "sync_filesystem", full)
    pool.close_all()
    store.close()
    assert store.failed == n
    assert f"{n} record(s) of the server's stop could not be written" in caplog.text and "ENOSPC" in caplog.text
    assert "Traceback" not in caplog.text
    assert (out / "results.jsonl").read_bytes() == before  # the pending records, whole
    assert not [p for p in (out / "logs").iterdir() if p.suffix != ".jsonl"]
