"""What a human study needs from the UI server (issue #26): no lock-outs, the task's outcome
(never the last action's), times in the log, resume from the log, one scorecard view per step,
every ended game on the leaderboard, and typed commands that name objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from discoverylab.ui.leaderboard import leaderboard
from discoverylab.ui.server import create_app

LOCAL = "http://127.0.0.1"


def _client(logs: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(logs, **kwargs), base_url=LOCAL)


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json={"task": "DialogTest", "seed": 0, **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _cmd(client: TestClient, gid: str, text: str) -> dict[str, Any]:
    response = client.post(f"/api/games/{gid}/command", json={"text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _lines(logs: Path, state: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (logs / state["log"]).read_text().splitlines()]


def _person(game: dict[str, Any]) -> str:
    """The character the Dialog task names (it varies per level)."""
    return str(game["observation"]["taskProgress"][0]["description"].split("`")[1])


def _option(state: dict[str, Any], right: bool) -> int:
    """The number of the option the character asks for (or of a wrong one)."""
    box = state["observation"]["dialog_box"]
    wanted = box["dialogIn"].split("`")[1]
    return next(int(k) for k, v in box["dialogOptions"].items() if (v == wanted) == right and v != "Exit")


def _fail_dialog(client: TestClient) -> dict[str, Any]:
    """DialogTest lost: choose an option the character did not ask for."""
    game = _new(client)
    person = _person(game)
    _cmd(client, game["id"], f"goto {person.lower()}")
    state = _cmd(client, game["id"], f"talk {person}")
    wrong = _option(state, right=False)
    return dict(client.post(f"/api/games/{game['id']}/step", json={"chosen_dialog_option_int": wrong}).json())


def test_forty_new_games_with_max_games_4_never_lock_out(tmp_path: Path) -> None:
    """The page never closed games: with --max-games 1, the second New game was refused."""
    client = _client(tmp_path, max_games=4)
    previous = None
    for i in range(40):  # as the page does: close the previous game, start another
        if previous is not None and i % 2:
            assert client.delete(f"/api/games/{previous}").status_code == 200
        previous = _new(client, seed=i)["id"]  # every other one left open, as a closed tab leaves it
    assert len(client.app.state.games) <= 4  # type: ignore[attr-defined]


def test_outcome_is_the_tasks_result_not_the_last_actions(tmp_path: Path) -> None:
    """The old `success` was the last action's result: true on a lost game."""
    client = _client(tmp_path)
    game = _new(client)
    assert game["outcome"] is None and game["success"] is None
    lost = _fail_dialog(client)
    assert lost["terminated"] and lost["action_success"] is True  # choosing an option worked...
    assert lost["outcome"] == "failure" and lost["success"] is False  # ...and the task was lost
    done = client.post(f"/api/games/{lost['id']}/report", json={"report": ""}).json()
    assert done["finished"] and done["outcome"] == "failure"


def test_log_lines_carry_times_and_the_record_the_session_time(tmp_path: Path) -> None:
    client = _client(tmp_path)
    lost = _fail_dialog(client)
    client.post(f"/api/games/{lost['id']}/report", json={"report": "apple"})
    lines = _lines(tmp_path, lost)
    assert all(line["time"].endswith("Z") and line["elapsed_s"] >= 0 for line in lines)
    steps = [line["elapsed_s"] for line in lines if line["type"] == "step"]
    assert steps == sorted(steps)
    record = lines[-1]["record"]
    assert record["session_seconds"] >= steps[-1] and record["success"] is False


def test_a_game_ended_without_a_report_is_on_the_leaderboard(tmp_path: Path) -> None:
    """A lost (or won) game whose player never handed in a report was missing from the board."""
    client = _client(tmp_path)
    _fail_dialog(client)
    restarted = _client(tmp_path)  # the game is no longer live: no report will come
    cell = restarted.get("/api/leaderboard").json()["rows"][0]["cells"]["human"]
    assert cell["n"] == 1 and cell["completion"] == 0.0 and cell["knowledge"] == 0.0
    assert cell["minutes"] is not None


def test_attack_refreshing_the_scorecard_counts_one_view_per_step(tmp_path: Path) -> None:
    """One click counted 12 views: the page re-fetched the card after every step."""
    client = _client(tmp_path)
    game = _new(client)
    for _ in range(12):
        client.get(f"/api/games/{game['id']}/scorecard")
    client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
    for _ in range(3):
        client.get(f"/api/games/{game['id']}/scorecard")
    done = client.post(f"/api/games/{game['id']}/report", json={"report": ""}).json()
    assert done["knowledge"]["scorecard_views"] == 2


def test_resume_after_a_server_restart_from_the_log(tmp_path: Path) -> None:
    client = _client(tmp_path)
    game = _new(client)
    person = _person(game)
    _cmd(client, game["id"], f"goto {person.lower()}")
    before = _cmd(client, game["id"], f"talk {person.lower()}")
    client.get(f"/api/games/{game['id']}/scorecard")
    restarted = _client(tmp_path)
    again = restarted.get(f"/api/games/{game['id']}").json()
    assert again["step"] == 2 and again["observation"] == before["observation"] and again["log"] == before["log"]
    uid = before["entry"]["label"].split("[")[1].rstrip("]")
    assert [h["label"] for h in restarted.get(f"/api/games/{game['id']}/history").json()["history"]][1:] == [
        f"TELEPORT_TO_OBJECT {person} [{uid}]", f"TALK {person} [{uid}]"]  # fmt: skip
    won = restarted.post(f"/api/games/{game['id']}/step", json={"chosen_dialog_option_int": _option(before, right=True)}).json()
    assert won["step"] == 3 and won["action_success"]
    done = restarted.post(f"/api/games/{game['id']}/report", json={"report": "apple"}).json()
    assert done["knowledge"]["scorecard_views"] == 1  # the view before the restart is kept
    kinds = [line["type"] for line in _lines(tmp_path, game)]
    assert kinds.count("start") == 1 and kinds.count("step") == 3  # one log, continued


def test_resume_after_a_crash_mid_line_cuts_the_torn_line(tmp_path: Path) -> None:
    """A server killed while writing a step left a torn last line; the resumed game appended
    its next step onto that fragment, so that step was lost in a garbage line (the next resume
    went back a step and the replay page refused the log: "line 3 is not JSON")."""
    client = _client(tmp_path)
    game = _new(client)
    for _ in range(2):
        client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})
    log = tmp_path / game["log"]
    log.write_bytes(log.read_bytes()[:-10])  # the crash: step 2's line half written
    restarted = _client(tmp_path)
    assert restarted.get(f"/api/games/{game['id']}").json()["step"] == 1  # step 2 never made it to disk
    assert restarted.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CCW"}).json()["step"] == 2
    assert [x["type"] for x in _lines(tmp_path, game)] == ["start", "step", "step"]  # every line whole
    assert _client(tmp_path).get(f"/api/games/{game['id']}").json()["step"] == 2
    assert restarted.get("/api/replay", params={"log": game["log"]}).json()["diverged_at"] is None


def test_a_study_game_resumes_only_with_the_key_it_was_started_with(tmp_path: Path) -> None:
    """A study server restarted with another key (or none) rebuilt the sealed index from that
    key: another world, in which the participant played on, appending to their log."""
    key = b"0123456789abcdef-the-study-key-0123"
    client = _client(tmp_path, study_key=key)
    game = client.post("/api/games", json={"task": "DialogTest"}).json()
    state = client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"}).json()
    before = (tmp_path / game["log"]).read_bytes()
    for other, needle in ((b"fedcba9876543210-another-key-98765", "another evaluation key"), (None, "study server")):
        response = _client(tmp_path, study_key=other).get(f"/api/games/{game['id']}")
        assert response.status_code == 409 and needle in response.json()["detail"], response.text
    assert (tmp_path / game["log"]).read_bytes() == before
    again = _client(tmp_path, study_key=key).get(f"/api/games/{game['id']}").json()
    assert again["step"] == 1 and again["observation"] == state["observation"]


def test_attack_the_resume_token_in_a_log_does_not_drive_the_game(tmp_path: Path) -> None:
    """Logs are readable by anyone (replay page); they hold a hash of the game id, not the id."""
    client = _client(tmp_path)
    game = _new(client)
    token = _lines(tmp_path, game)[0]["resume"]
    assert token != game["id"] and game["id"] not in (tmp_path / game["log"]).read_text()
    for gid in (token, game["log"], game["log"].removesuffix(".jsonl")):
        assert _client(tmp_path).get(f"/api/games/{gid}").status_code == 404


def test_commands_name_objects_and_a_bad_command_costs_no_step(tmp_path: Path) -> None:
    client = _client(tmp_path)
    game = _new(client)
    for text, needle in (("fly to the moon", "unknown command"), ("take unicorn", "no object"), ("tp nowhere", "teleport"),
                         ("use sign", "two objects")):  # fmt: skip
        response = client.post(f"/api/games/{game['id']}/command", json={"text": text})
        assert response.status_code == 422 and needle in response.json()["detail"].lower(), text
    assert client.get(f"/api/games/{game['id']}").json()["step"] == 0
    state = _cmd(client, game["id"], "read SIGN")
    assert state["step"] == 1 and state["entry"]["label"].startswith("READ sign [")


def test_a_finished_game_resumes_finished(tmp_path: Path) -> None:
    client = _client(tmp_path)
    lost = _fail_dialog(client)
    client.post(f"/api/games/{lost['id']}/report", json={"report": "x"})
    again = _client(tmp_path).get(f"/api/games/{lost['id']}").json()
    assert again["finished"] and again["outcome"] == "failure" and again["knowledge"]["report"] == "x"
    assert leaderboard(tmp_path)["rows"][0]["cells"]["human"]["n"] == 1


def test_the_feed_and_the_history_keep_what_the_observation_drops(tmp_path: Path) -> None:
    """The DiscoveryFeed box emptied after a few steps and no message was kept."""
    client = _client(tmp_path)
    game = _new(client)
    for _ in range(6):
        state = client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"}).json()
    assert state["observation"]["discoveryFeed"]["posts"] == []  # the observation's box: recent posts only
    assert [p["postID"] for p in state["feed"]] == [1]
    history = client.get(f"/api/games/{game['id']}/history").json()["history"]
    assert [h["step"] for h in history] == list(range(7)) and all(h["message"] for h in history[1:])


def test_closing_a_game_awaiting_its_report_must_say_so(tmp_path: Path) -> None:
    """New game after the episode ended, before the report: the DELETE the page sends wrote the
    game's end line at once (knowledge 0), so the report the player was writing was dropped.
    A game awaiting its report is now closed only when the request says `without_report`."""
    client = _client(tmp_path)
    lost = _fail_dialog(client)
    refused = client.delete(f"/api/games/{lost['id']}")
    assert refused.status_code == 409 and "knowledge report" in refused.json()["detail"]
    assert _lines(tmp_path, lost)[-1]["knowledge"]["pending"]  # nothing written: the report can still come
    done = client.post(f"/api/games/{lost['id']}/report", json={"report": "the option Gail asked for"}).json()
    assert done["knowledge"]["report"] == "the option Gail asked for"
    again = _fail_dialog(client)
    assert client.delete(f"/api/games/{again['id']}", params={"without_report": "true"}).status_code == 200
    end = _lines(tmp_path, again)[-1]
    assert end["knowledge"]["no_report"] and end["record"]["status"] == "ok"
    playing = _new(client, seed=3)
    _cmd(client, playing["id"], "wait")
    assert client.delete(f"/api/games/{playing['id']}").status_code == 200  # mid-episode: abandoned, as before


def test_a_game_whose_log_is_full_can_still_be_handed_in(tmp_path: Path) -> None:
    """`--max-log-mb` below what a long game writes stopped it mid-game with "start a new game":
    a player who did so lost the game (abandoned). The refusal now says that the steps are kept
    and the report ends the game, and the report is taken."""
    client = _client(tmp_path, max_log_bytes=40_000)
    game = _new(client)
    response = None
    for _ in range(20):
        response = client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
        if response.status_code != 200:
            break
    assert response is not None and response.status_code == 413
    assert "hand in your knowledge report" in response.json()["detail"] and "start a new game" not in response.json()["detail"]
    done = client.post(f"/api/games/{game['id']}/report", json={"report": "ran out of log"}).json()
    assert done["finished"] and done["knowledge"]["report"] == "ran out of log" and done["step"] > 0
