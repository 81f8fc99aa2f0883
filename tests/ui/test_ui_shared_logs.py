"""Two UI servers (or a server and a runner) on one logs folder: each sees the other's games."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from discoverylab.ui.server import create_app

LOCAL = "http://127.0.0.1"
KEY = b"k" * 32


def _client(logs: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(logs, **kwargs), base_url=LOCAL)


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json={"task": "DialogTest", **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _wait(client: TestClient, gid: str) -> None:
    response = client.post(f"/api/games/{gid}/step", json={"action": "WAIT"})
    assert response.status_code == 200, response.text


def test_study_servers_on_one_folder_never_assign_the_same_instance(tmp_path: Path) -> None:
    """Before: a study server read the folder's instances once, at its first game, so a second
    server's (or a restarted one's) test#0 game was unseen and its next participant got test#0
    again: one instance, two participants, the second after the first one's gold was in the
    folder. Now each new game looks at the folder again (a listing, one line per new log)."""
    a, b = _client(tmp_path, study_key=KEY), _client(tmp_path, study_key=KEY)
    first = _new(a)  # A has read the folder now
    _wait(a, first["id"])
    second = _new(b)
    _wait(b, second["id"])
    third = _new(a)
    indices = [g["instance"]["index"] for g in (first, second, third)]
    assert indices == [0, 1, 2], indices


def test_a_server_sees_public_games_and_resumes_games_logged_after_it_started(tmp_path: Path) -> None:
    """A game another server logged after this one read the folder marks this server's game on
    the same seed as a replay, and its page (the same id) resumes here."""
    a, b = _client(tmp_path), _client(tmp_path)
    _new(a, seed=1)  # A reads the folder (empty but for this game)
    other = _new(b, seed=3)
    _wait(b, other["id"])
    mine = _new(a, seed=3)
    assert mine["replay_of"] == other["log"]
    resumed = a.get(f"/api/games/{other['id']}")
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["step"] == 1


def test_a_log_removed_from_the_folder_is_forgotten(tmp_path: Path) -> None:
    """A log deleted by hand (or by another server's sweep) no longer marks new games as replays."""
    a, b = _client(tmp_path), _client(tmp_path)
    other = _new(b, seed=4)
    _wait(b, other["id"])
    assert _new(a, seed=4)["replay_of"] == other["log"]
    (tmp_path / other["log"]).unlink()
    assert _new(a, seed=5)["replay_of"] is None
    assert _new(a, seed=4)["replay_of"] != other["log"]


def test_an_unchanged_folder_is_not_walked_again(tmp_path: Path, monkeypatch) -> None:
    """Unknown game ids (anyone can send them) cost a stat of each folder, not a walk reading
    logs, while no folder changed; a log written since (a folder's mtime moved) is still seen."""
    import os

    from discoverylab.ui import manager

    walks = []
    real = manager.log_files
    monkeypatch.setattr(manager, "log_files", lambda root: walks.append(1) or real(root))
    a, b = _client(tmp_path), _client(tmp_path)
    os.utime(tmp_path, (1_000_000, 1_000_000))  # an old folder: the coarse-clock margin is past
    assert a.get("/api/games/nosuchgame").status_code == 404
    before = len(walks)
    for _ in range(3):
        assert a.get("/api/games/nosuchgame").status_code == 404
    assert len(walks) == before
    other = _new(b, seed=6)
    _wait(b, other["id"])
    os.utime(tmp_path, (1_000_100, 1_000_100))
    before = len(walks)
    assert a.get(f"/api/games/{other['id']}").status_code == 200
    assert len(walks) == before + 1


def test_a_log_whose_start_line_comes_late_is_seen_and_junk_is_not_reread(tmp_path: Path, monkeypatch) -> None:
    """A log created empty (another server between its open and its first write) is read again
    until its start line is there; an old file that is no log is skipped for good."""
    import json
    import os

    from discoverylab.ui import manager

    a, b = _client(tmp_path), _client(tmp_path)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    os.utime(junk, (1_000_000, 1_000_000))
    other = _new(b, seed=7)
    _wait(b, other["id"])
    lines = (tmp_path / other["log"]).read_text()
    late = tmp_path / "DialogTest-normal-s7-human-late.jsonl"
    late.write_text("")
    assert _new(a, seed=8)["replay_of"] is None  # A lists the folder: `late` is empty yet
    late.write_text(lines.replace(other["log"], late.name).replace(json.loads(lines.splitlines()[0])["resume"], "r" * 32))
    reads = []
    real = manager.first_line
    monkeypatch.setattr(manager, "first_line", lambda path: reads.append(path.name) or real(path))
    _new(a, seed=9)
    assert late.name in reads and junk.name not in reads


ROUNDS = 12
CLAIMER = """
import json, sys, time
from pathlib import Path
from discoverylab.ui.manager import GameManager
logs, go, rounds = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
games = GameManager(logs, max_games=64, max_games_per_client=64, study_key=b"k" * 32)
out = [games.create("Proteomics", "normal").instance.index]  # warm: the first reset imports the world
Path(sys.argv[4]).touch()
while not go.exists():
    time.sleep(0.001)
for _ in range(rounds):
    out.append(games.create("Proteomics", "normal").instance.index)
print(json.dumps(out))
"""


def test_two_study_processes_started_at_once_never_take_the_same_index(tmp_path: Path) -> None:
    """Session 21's note: two study servers on one logs folder that start games in the same
    instant both read the folder, both saw index N free and both played test#N (two
    participants, one instance). Each index is now claimed with an O_EXCL file before its game
    starts: of two processes, exactly one gets it. Two real processes, released together."""
    import json
    import subprocess
    import sys
    import time

    go = tmp_path / "go"
    logs = tmp_path / "logs"
    ready = [tmp_path / f"ready{i}" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", CLAIMER, str(logs), str(go), str(ROUNDS), str(r)], stdout=subprocess.PIPE,
                              text=True) for r in ready]  # fmt: skip
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:  # both have imported and warmed up
        time.sleep(0.01)
    go.touch()
    indices = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        indices += json.loads(out)
    taken = sorted(i for i in set(indices) if indices.count(i) > 1)
    assert not taken, f"indices taken by both processes: {taken}"
    assert len(indices) == 2 * (ROUNDS + 1)


def test_an_index_that_cannot_be_claimed_is_a_clear_503(tmp_path: Path) -> None:
    """The claims folder unusable (here a file in its place): the study game is refused with
    what went wrong, not a traceback, and no log is left behind."""
    (tmp_path / ".claims").write_text("not a folder")
    response = _client(tmp_path, study_key=KEY).post("/api/games", json={"task": "DialogTest"})
    assert response.status_code == 503 and "could not claim a test instance" in response.json()["detail"]
    assert list(tmp_path.glob("*.jsonl")) == []
    assert _new(_client(tmp_path), seed=1)["instance"]["split"] == "seed"  # public games need no claim
