"""A UI server that may face a network (issue #23 item 7). Each attack is a named test that
failed on the old server and that the attack now loses."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from ui_kit import oracle_log

from discoverylab.cli import app as cli_app
from discoverylab.ui.server import MAX_BODY_BYTES, create_app

LOCAL = "http://127.0.0.1"


def _client(app: Any, ip: str = "10.1.1.1", base: str = LOCAL) -> TestClient:
    return TestClient(app, base_url=base, client=(ip, 1))


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json={"task": "DialogTest", "seed": 0, **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_attack_chunked_body_past_the_limit_is_cut_off(tmp_path: Path) -> None:
    """A chunked body has no Content-Length: the old check read it whole (300 MB -> 1 GB)."""
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        for _ in range(40):  # 40 x 64 KB = 2.6 MB
            sent += 65_536
            yield b" " * 65_536

    response = _client(create_app(tmp_path)).post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and str(MAX_BODY_BYTES) in response.json()["detail"]
    small = _client(create_app(tmp_path)).post("/api/games", content=iter([b'{"task": "DialogTest"}']),
                                               headers={"Content-Type": "application/json"})  # fmt: skip
    assert small.status_code == 200  # a chunked body under the limit is fine


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", "[::2]:80"])
def test_attack_dns_rebinding_foreign_host_header_is_refused(tmp_path: Path, host: str) -> None:
    client = _client(create_app(tmp_path))
    for method, url in (("GET", "/"), ("GET", "/api/logs"), ("POST", "/api/games")):
        response = client.request(method, url, headers={"Host": host}, json={"task": "DialogTest"})
        assert response.status_code == 421, (method, url)
        assert "--allowed-host" in response.json()["detail"]


def test_local_and_allowed_host_names_are_answered(tmp_path: Path) -> None:
    app = create_app(tmp_path, allowed_hosts=("lab.example.org",))
    for host in ("127.0.0.1:8765", "localhost", "[::1]:8765", "LAB.example.org:443"):
        assert _client(app).get("/api/config", headers={"Host": host}).status_code == 200, host


def test_serve_passes_allowed_hosts_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served: dict[str, Any] = {}
    monkeypatch.setattr("discoverylab.serving.serve_until_signal",
                        lambda app, host, port, **kw: served.update(app=app, host=host, port=port, **kw))
    result = CliRunner().invoke(cli_app, ["serve", "--logs", str(tmp_path), "--allowed-host", "lab.example.org"])
    assert result.exit_code == 0, result.output
    assert _client(served["app"]).get("/", headers={"Host": "lab.example.org"}).status_code == 200
    assert _client(served["app"]).get("/", headers={"Host": "evil.example"}).status_code == 421


def test_attack_one_client_cannot_hold_every_slot(tmp_path: Path) -> None:
    """The old server let one client start --max-games games and lock everyone out for an hour."""
    app = create_app(tmp_path, max_games=8)  # 2 per client by default
    hog = _client(app, "10.6.6.6")
    ids = []
    for _ in range(20):
        ids.append(_new(hog)["id"])
        hog.post(f"/api/games/{ids[-1]}/step", json={"action": "WAIT"})
    assert len(app.state.games) == 2  # the hog's older games were unloaded, not kept
    others = [_new(_client(app, f"10.0.0.{i}")) for i in range(6)]
    assert len(others) == 6 and len(app.state.games) == 8
    again = hog.get(f"/api/games/{ids[0]}")  # an unloaded played game is picked up again
    assert again.status_code == 200 and again.json()["step"] == 1


def test_attack_create_delete_cycles_leave_no_logs(tmp_path: Path) -> None:
    """340 create/delete cycles left 336 log files; a game closed before its first action leaves none."""
    client = _client(create_app(tmp_path, max_games=2))
    for _ in range(30):
        game = _new(client)
        assert client.delete(f"/api/games/{game['id']}").status_code == 200
    assert list(tmp_path.glob("*.jsonl")) == []
    for _ in range(30):  # New game pressed without closing the last one: unloaded unplayed games go too
        _new(client)
    assert len(list(tmp_path.glob("*.jsonl"))) == 1  # the one still loaded (1 per client)
    client.delete(f"/api/games/{_new(client)['id']}")
    played = _new(client)
    client.post(f"/api/games/{played['id']}/step", json={"action": "WAIT"})
    client.delete(f"/api/games/{played['id']}")
    (log,) = tmp_path.glob("*.jsonl")  # a played game is kept, as abandoned
    end = json.loads(log.read_text().splitlines()[-1])
    assert end["type"] == "end" and end["record"]["status"] == "abandoned"


def test_unplayed_logs_left_by_closed_tabs_are_swept_after_the_idle_time(tmp_path: Path) -> None:
    client = _client(create_app(tmp_path))
    for seed in range(3):
        _new(client, seed=seed)
    assert len(list(tmp_path.glob("*.jsonl"))) == 3
    for path in tmp_path.glob("*.jsonl"):
        os.utime(path, (1, 1))  # idle for decades
    create_app(tmp_path)  # a restarted server sweeps them
    assert list(tmp_path.glob("*.jsonl")) == []


def test_a_swept_log_is_no_earlier_game_of_its_seed(tmp_path: Path) -> None:
    """A running server swept a never-played log (a crashed server's), but still marked the next
    game on that seed `replay_of` the deleted log: a clean game listed as a replay of nothing."""
    left = _new(_client(create_app(tmp_path)), seed=3)  # the old server's, never played
    app = create_app(tmp_path)  # restarted: the log is recent, so it stays for now
    client = _client(app)
    _new(client, seed=9)  # the server learns the folder's seeds
    os.utime(tmp_path / left["log"], (1, 1))
    assert app.state.games.sweep_unplayed() == 1
    again = _new(client, seed=3)
    assert again["replay_of"] is None


def test_the_sweep_keeps_the_log_of_a_game_still_loaded(tmp_path: Path) -> None:
    """A page left open on an unplayed game for over an hour (its log untouched) lost its log to
    the sweep while the game was loaded: its first move then wrote a log with no start line."""
    app = create_app(tmp_path)
    client = _client(app)
    game = _new(client, seed=2)
    os.utime(tmp_path / game["log"], (1, 1))
    assert app.state.games.sweep_unplayed() == 0
    client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
    assert json.loads((tmp_path / game["log"]).read_text().splitlines()[0])["type"] == "start"


def test_the_replay_command_deletes_nothing_in_its_logs_folder(tmp_path: Path) -> None:
    """`discoverylab replay LOG` built the game manager, which swept its folder's unplayed human
    logs: a command that reads one log removed other files beside it."""
    client = _client(create_app(tmp_path))
    unplayed = tmp_path / _new(client, seed=0)["log"]
    os.utime(unplayed, (1, 1))
    oracle = oracle_log(tmp_path, "DialogTest")
    create_app(tmp_path, only_log=oracle.name)
    assert unplayed.is_file()


def _odd_folder(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    good = oracle_log(logs, "DialogTest")
    (logs / "folder.jsonl").mkdir()
    (logs / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    lines = good.read_text().splitlines()
    for name, score in (("null-score.jsonl", None), ("nan-score.jsonl", float("nan")), ("inf.jsonl", float("inf"))):
        end = json.loads(lines[-1])
        end["record"]["procedure_score"] = score
        (logs / name).write_text("\n".join([*lines[:-1], json.dumps(end)]) + "\n")
    knowledge = json.loads(lines[-1])
    knowledge["knowledge"] = {"graded": True, "score": float("nan"), "report": "x"}
    (logs / "nan-knowledge.jsonl").write_text("\n".join([*lines[:-1], json.dumps(knowledge)]) + "\n")
    return logs


def test_attack_odd_files_in_the_logs_folder_do_not_break_the_leaderboard(tmp_path: Path) -> None:
    """A null score, a folder or dangling link named *.jsonl gave 500; a NaN score broke the page."""
    client = _client(create_app(_odd_folder(tmp_path)))
    response = client.get("/api/leaderboard")
    assert response.status_code == 200
    board = json.loads(response.text, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))
    (row,) = board["rows"]
    assert row["cells"]["oracle"]["n"] == 2  # the good log and the NaN-knowledge one (its knowledge dropped)
    names = {entry["name"] for entry in client.get("/api/logs").json()}
    assert not names & {"folder.jsonl", "dangling.jsonl"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_attack_fifo_in_the_logs_folder_blocks_no_request(tmp_path: Path) -> None:
    """Opening a FIFO blocks until a writer comes: the old listing and leaderboard hung on it."""
    logs = tmp_path / "logs"
    oracle_log(logs, "DialogTest")
    os.mkfifo(logs / "pipe.jsonl")
    client = _client(create_app(logs))
    answers: dict[str, int] = {}

    def ask() -> None:
        for url in ("/api/leaderboard", "/api/logs", "/api/replay?log=pipe.jsonl"):
            answers[url] = client.get(url).status_code

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # unblock the stuck reader so the test process can end
        with open(logs / "pipe.jsonl", "w"):
            pass
        pytest.fail(f"a request blocked on the FIFO (answered so far: {answers})")
    assert answers == {"/api/leaderboard": 200, "/api/logs": 200, "/api/replay?log=pipe.jsonl": 404}


def test_attack_replay_command_serves_only_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`discoverylab replay LOG` served every .jsonl in the log's parent tree (and played games)."""
    logs = tmp_path / "runs"
    mine = oracle_log(logs / "a", "DialogTest")
    other = oracle_log(logs / "b", "DialogTest", seed=1)
    (mine.parent / "sibling.jsonl").write_text(other.read_text())
    served: dict[str, Any] = {}
    monkeypatch.setattr("discoverylab.serving.serve_until_signal",
                        lambda app, host, port, **kw: served.update(app=app, host=host, port=port, **kw))
    result = CliRunner().invoke(cli_app, ["replay", str(mine)])
    assert result.exit_code == 0, result.output
    client = _client(served["app"])
    assert [entry["name"] for entry in client.get("/api/logs").json()] == [mine.name]
    assert client.get("/api/replay", params={"log": mine.name}).status_code == 200
    assert client.get("/api/replay", params={"log": "sibling.jsonl"}).status_code == 404
    assert client.get("/api/leaderboard").json()["rows"] == []
    assert client.post("/api/games", json={"task": "DialogTest"}).status_code == 404


def test_a_step_whose_log_line_cannot_be_written_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk (or a logs folder gone) while a step was logged: the env had moved on, the
    log had not, the page got a 500 and kept playing a game whose log missed that action (its
    resume and replay then differ from what was played). Now: a clear 503, the step is not
    taken (the game is rebuilt from its log) and a torn line is cut off."""
    from discoverylab.ui import games as games_module

    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1", raise_server_exceptions=False)
    game = client.post("/api/games", json={"task": "DialogTest", "seed": 0}).json()
    assert client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"}).status_code == 200
    real_fsync = os.fsync

    def disk_full(fd: int) -> None:  # the line got only partly to disk
        os.ftruncate(fd, os.fstat(fd).st_size - 10)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(games_module.os, "fsync", disk_full)
    failed = client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})
    assert failed.status_code == 503 and "No space left" in failed.json()["detail"]
    monkeypatch.setattr(games_module.os, "fsync", real_fsync)
    state = client.get(f"/api/games/{game['id']}").json()
    assert state["step"] == 1  # the step that was not logged was not taken
    state = client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CCW"}).json()
    lines = [json.loads(line) for line in (tmp_path / game["log"]).read_text().splitlines()]  # every line whole
    assert [x["action"]["action"] for x in lines if x["type"] == "step"] == ["ROTATE_CW", "ROTATE_CCW"]
    assert state["step"] == 2 and client.get("/api/replay", params={"log": game["log"]}).json()["diverged_at"] is None
