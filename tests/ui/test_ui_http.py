"""The UI server's refusals: every bad request is a 4xx with a clear message, and no request
reaches a file outside the static folder or the logs folder (plain, encoded or symlinked)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from discoverylab.ui.server import MAX_BODY_BYTES, create_app


@pytest.fixture()
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "secret.jsonl").write_text('{"type":"start","task":"DialogTest","difficulty":"normal","seed":0}\n')
    logs = tmp_path / "logs"
    logs.mkdir()
    return TestClient(create_app(logs, max_games=3, max_log_bytes=60_000), base_url="http://127.0.0.1")


def _new(client: TestClient, **body: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/api/games", json={"task": "DialogTest", "seed": 0, **body})
    assert response.status_code == 200, response.text
    return response.json()


def _detail(response) -> str:  # type: ignore[no-untyped-def]
    return str(response.json()["detail"])


def test_unknown_game_is_404(client: TestClient) -> None:
    for method, url in (("GET", "/api/games/nope"), ("POST", "/api/games/nope/step"), ("GET", "/api/games/nope/view.png"),
                        ("GET", "/api/games/nope/scorecard"), ("DELETE", "/api/games/nope")):  # fmt: skip
        response = client.request(method, url, json={"action": "WAIT"} if method == "POST" else None)
        assert response.status_code == 404, url
        assert "No game with id" in _detail(response)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"action": "FLY"}, "Unknown action 'FLY'"),
        ({}, "either 'action'"),
        ({"action": "WAIT", "chosen_dialog_option_int": 1}, "either 'action'"),
        ({"action": "PICKUP", "arg1": "x" * 201}, "at most 200"),
        ({"action": "PICKUP", "arg1": 2**40}, "32 bits"),
        ({"action": "WAIT", "extra": 1}, "extra"),
        ({"chosen_dialog_option_int": -1}, "greater than or equal"),
        ({"action": ["WAIT"]}, "action"),
    ],
)
def test_bad_actions_are_422_with_a_reason(client: TestClient, body: dict, needle: str) -> None:  # type: ignore[type-arg]
    game = _new(client)
    response = client.post(f"/api/games/{game['id']}/step", json=body)
    assert response.status_code == 422
    assert needle.lower() in _detail(response).lower()
    assert client.get(f"/api/games/{game['id']}").json()["step"] == 0  # nothing was played


def test_an_action_the_world_rejects_is_a_played_step_not_an_http_error(client: TestClient) -> None:
    game = _new(client)
    response = client.post(f"/api/games/{game['id']}/step", json={"action": "PICKUP", "arg1": 999999})
    assert response.status_code == 200
    assert response.json()["action_success"] is False and response.json()["step"] == 1
    assert response.json()["success"] is None  # the task is not over: no outcome yet


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"task": "NoSuchTask"}, 400, "nosuchtask"),
        ({"difficulty": "impossible"}, 400, "impossible"),
        ({"seed": -1}, 422, "seed"),
        ({"seed": 2**31}, 422, "seed"),
        ({"seed": "abc"}, 422, "seed"),
        ({"seed": True}, 422, "seed"),  # was seed 1
        ({"seed": "7"}, 422, "seed"),  # was seed 7
        ({"task": ""}, 422, "task"),
        ({"colour": "red"}, 422, "colour"),
    ],
)
def test_bad_new_game_requests(client: TestClient, body: dict, status: int, needle: str) -> None:  # type: ignore[type-arg]
    response = client.post("/api/games", json={"task": "DialogTest", **body})
    assert response.status_code == status, response.text
    assert needle in _detail(response).lower()


def test_game_limit_is_429_only_while_every_slot_is_in_active_use(tmp_path: Path) -> None:
    app = create_app(tmp_path, max_games=3, max_games_per_client=3)
    others = [TestClient(app, base_url="http://127.0.0.1", client=(f"10.0.0.{i}", 1)) for i in range(3)]
    games = [_new(c) for c in others]
    response = _client_of(app, "10.0.0.9").post("/api/games", json={"task": "DialogTest"})
    assert response.status_code == 429 and "active use" in _detail(response)
    assert others[0].delete(f"/api/games/{games[0]['id']}").status_code == 200
    _new(_client_of(app, "10.0.0.9"))


def _client_of(app: object, ip: str) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", client=(ip, 1))  # type: ignore[arg-type]


def test_log_size_limit_stops_a_game_with_413(client: TestClient) -> None:
    game = _new(client)  # the start line alone is ~25 KB, a step ~7 KB; the limit is 60 KB
    codes = [client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"}).status_code for _ in range(12)]
    assert codes[0] == 200 and 413 in codes
    assert set(codes[codes.index(413):]) == {413}
    response = client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
    assert response.status_code == 413 and "limit" in _detail(response)


def test_finished_game_refuses_steps_and_a_second_report(client: TestClient) -> None:
    game = _new(client)
    assert client.post(f"/api/games/{game['id']}/report", json={"report": "done"}).status_code == 200
    assert client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"}).status_code == 409
    assert client.post(f"/api/games/{game['id']}/report", json={"report": "again"}).status_code == 409
    too_long = client.post(f"/api/games/{_new(client)['id']}/report", json={"report": "x" * 20_001})
    assert too_long.status_code == 422


def test_huge_bodies_are_refused_before_parsing(client: TestClient) -> None:
    response = client.post("/api/games", content=b"{" + b" " * MAX_BODY_BYTES + b"}",
                           headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 413


def test_malformed_json_is_422(client: TestClient) -> None:
    response = client.post("/api/games", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422


@pytest.mark.parametrize(
    "url",
    [
        "/static/../../../etc/passwd",
        "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%2f..%2f..%2fetc%2fpasswd",
        "/static/%2e%2e%2fserver.py",
        "/static/..%5cserver.py",
        "/static/%2fetc%2fpasswd",
        "/static//etc/passwd",
        "/static/.hidden",
        "/static/style.css%00.png",
        "/static/",
        "/static/nope.js",
    ],
)
def test_static_traversal_is_404(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 404, url
    assert "root:" not in response.text and "def " not in response.text


def test_static_files_are_served_with_safety_headers(client: TestClient) -> None:
    response = client.get("/static/app.js")
    assert response.status_code == 200 and "textContent" in response.text
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert client.get("/").status_code == 200 and client.get("/leaderboard").status_code == 200


@pytest.mark.parametrize(
    "log",
    ["../secret.jsonl", "%2e%2e/secret.jsonl", "..%2fsecret.jsonl", "/etc/passwd", "logs/../../secret.jsonl",
     "..\\secret.jsonl", "secret.jsonl\x00", ".", "a//b.jsonl", "missing.jsonl"],  # fmt: skip
)
def test_replay_log_traversal_is_404(client: TestClient, log: str) -> None:
    for url in ("/api/replay", "/api/replay/frame.png", "/api/replay/scorecard"):
        response = client.get(url, params={"log": log})
        assert response.status_code == 404, (url, log, response.text)
        assert "No such file" in _detail(response)


def test_symlinks_out_of_the_logs_folder_are_neither_listed_nor_served(client: TestClient, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    os.symlink(tmp_path / "secret.jsonl", logs / "link.jsonl")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.jsonl").write_text((tmp_path / "secret.jsonl").read_text())
    os.symlink(outside, logs / "linkdir")
    assert client.get("/api/logs").json() == []
    for log in ("link.jsonl", "linkdir/other.jsonl", "linkdir%2fother.jsonl"):
        assert client.get("/api/replay", params={"log": log}).status_code == 404, log


def test_bad_logs_and_steps_are_clear_4xx(client: TestClient, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "garbage.jsonl").write_text("hello\n")
    (logs / "notes.txt").write_text("x")
    (logs / "other-task.jsonl").write_text('{"type":"start","task":"NoSuchTask","difficulty":"normal","seed":0}\n')
    response = client.get("/api/replay", params={"log": "garbage.jsonl"})
    assert response.status_code == 422 and "not JSON" in _detail(response)
    assert client.get("/api/replay", params={"log": "notes.txt"}).status_code == 404
    response = client.get("/api/replay", params={"log": "other-task.jsonl"})
    assert response.status_code == 422 and "nosuchtask" in _detail(response).lower()
    (logs / "ok.jsonl").write_text((tmp_path / "secret.jsonl").read_text())
    assert client.get("/api/replay", params={"log": "ok.jsonl"}).json()["frames"] == 1
    response = client.get("/api/replay/frame.png", params={"log": "ok.jsonl", "step": 5})
    assert response.status_code == 400 and "0..0" in _detail(response)
    assert client.get("/api/replay/frame.png", params={"log": "ok.jsonl", "step": -1}).status_code == 422
    assert client.get("/api/replay/frame.png", params={"log": "ok.jsonl", "step": "x"}).status_code == 422


def test_non_local_host_warns(tmp_path: Path) -> None:
    from discoverylab.hostnames import is_loopback as _is_local  # what `serve` judges its --host by

    assert _is_local("127.0.0.1") and _is_local("localhost") and _is_local("::1") and _is_local("127.0.0.2")
    assert not _is_local("0.0.0.0") and not _is_local("192.168.1.5") and not _is_local("example.org")


def test_every_listed_log_replays_whatever_its_plain_name(client: TestClient, tmp_path: Path) -> None:
    """The log list showed 'my run (1).jsonl' (a browser's download name) but replaying it was a
    404: the name check allowed only [A-Za-z0-9_.-], stricter than the rule it states (plain name
    parts). `discoverylab replay 'my run (1).jsonl'` printed a URL to a page that said "No such file"."""
    logs = tmp_path / "logs"
    for name in ("my run (1).jsonl", "über+log.jsonl"):
        (logs / name).write_text((tmp_path / "secret.jsonl").read_text())
    listed = [entry["name"] for entry in client.get("/api/logs").json()]
    assert sorted(listed) == ["my run (1).jsonl", "über+log.jsonl"]
    for name in listed:
        assert client.get("/api/replay", params={"log": name}).json()["frames"] == 1, name
        assert client.get("/api/replay/frame.png", params={"log": name}).status_code == 200
    assert client.get("/api/replay", params={"log": "my run (1).jsonl\n"}).status_code == 404
