"""Side channels of the browser UI (issue #20): each attack is a named test that the attack loses.

- Mid-game scorecard: task progress only; no procedural item (they name the key instrument or
  the picked object), no score per item, no gold until the game has ended.
- Peek-delete-replay: end a game at step 0 with an empty report to read its gold, delete it,
  start the same instance again and win. The leaderboard keeps the first (failed) game as the
  human entry and lists the replay apart; deleting erases nothing.
- Study mode: the server assigns sealed test instances; a player cannot choose a seed, and a
  new game is never the instance whose gold the last one showed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from discoverylab.bench.episode import run_episode
from discoverylab.ui.leaderboard import REPLAY, leaderboard
from discoverylab.ui.server import create_app

KEY = b"0123456789abcdef-side-channels-test-key"
PEEK_TASKS = [("LostInTranslation", "easy", 3), ("SpaceSick", "easy", 2), ("Proteomics", "normal", 1)]


def _new(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _gold_strings(card: dict[str, Any]) -> list[str]:
    """What a player must not read mid-game: item names, hypotheses, gold facts."""
    out = [str(item["name"]) for item in card["scoreCard"]]
    out += [str(h) for h in card.get("criticalHypotheses", [])]
    out += [str(f) for q in card.get("knowledgeQuestions", []) for f in q.get("goldFacts", [])]
    return [s for s in out if len(s) > 3]


@pytest.mark.parametrize(("task", "difficulty", "seed"), PEEK_TASKS)
def test_mid_game_scorecard_shows_task_progress_only(tmp_path: Path, task: str, difficulty: str, seed: int) -> None:
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    game = _new(client, task=task, difficulty=difficulty, seed=seed)
    for _ in range(3):
        client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})
    mid = client.get(f"/api/games/{game['id']}/scorecard").json()
    assert set(mid) == {"taskName", "taskDescription", "completed", "completedSuccessfully"}
    state = client.get(f"/api/games/{game['id']}").json()
    summary = client.get("/api/replay", params={"log": state["log"]}).json()  # the game's own log, in progress
    assert all("score" not in entry for entry in summary["timeline"])
    client.post(f"/api/games/{game['id']}/report", json={"report": ""})
    full = client.get(f"/api/games/{game['id']}/scorecard").json()  # the game has ended: all of it
    gold = _gold_strings(full)
    assert gold and full["scoreCard"]
    seen_mid = json.dumps([mid, summary["timeline"]])
    assert not [g for g in gold if g in seen_mid], "the mid-game scorecard names procedural items or gold"


def _oracle_actions(task: str, difficulty: str, seed: int) -> list[dict[str, Any]]:
    record, log = run_episode(task, difficulty, seed, "oracle")
    assert record.success, f"the oracle does not solve {task} {difficulty} seed {seed}"
    return [line["action"] for line in log if line.get("type") == "step"]


@pytest.mark.parametrize(("task", "difficulty", "seed"), PEEK_TASKS[:2])
def test_peek_delete_replay_attack_gets_no_clean_score(tmp_path: Path, task: str, difficulty: str, seed: int) -> None:
    """The attack: report nothing at step 0 (the game ends and shows its gold), delete the game,
    start the same instance and win it with what the gold said (here: the oracle's actions)."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    peek = _new(client, task=task, difficulty=difficulty, seed=seed)
    ended = client.post(f"/api/games/{peek['id']}/report", json={"report": ""}).json()
    assert ended["finished"] and client.post(f"/api/games/{peek['id']}/step", json={"action": "WAIT"}).status_code == 409
    gold = client.get(f"/api/games/{peek['id']}/scorecard").json()
    assert gold["criticalHypotheses"] or gold["knowledgeQuestions"]  # read after the end: allowed
    assert client.delete(f"/api/games/{peek['id']}").status_code == 200
    assert (tmp_path / peek["log"]).is_file(), "deleting a game erased its log"

    again = _new(client, task=task, difficulty=difficulty, seed=seed)
    assert again["replay_of"] == peek["log"]
    for action in _oracle_actions(task, difficulty, seed):
        state = client.post(f"/api/games/{again['id']}/step", json=action).json()
    assert state["terminated"] and state["success"]
    client.post(f"/api/games/{again['id']}/report", json={"report": " ".join(gold["criticalHypotheses"])})

    (row,) = leaderboard(tmp_path)["rows"]
    assert row["cells"]["human"]["n"] == 1 and row["cells"]["human"]["completion"] == 0.0
    assert row["cells"]["human"]["procedure"] < 1.0
    assert row["cells"][REPLAY]["completion"] == 1.0  # the win is listed, as a replay
    board = client.get("/api/leaderboard").json()
    assert board["agents"][:2] == ["human", REPLAY]


def test_reading_an_agents_log_of_the_seed_first_gives_no_clean_score(tmp_path: Path) -> None:
    """The attack: open the oracle's finished log of a public seed on the replay page (its full
    scorecard), then play that seed. The game is marked as a replay of that log."""
    record, log = run_episode("DialogTest", "normal", 5, "oracle")
    (tmp_path / "DialogTest-normal-s5-oracle.jsonl").write_text("".join(json.dumps(x) + "\n" for x in log))
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    card = client.get("/api/replay/scorecard", params={"log": "DialogTest-normal-s5-oracle.jsonl", "step": 0}).json()
    assert card["scoreCard"]  # a finished log's card is public on the replay page
    game = _new(client, task="DialogTest", seed=5)
    assert game["replay_of"] == "DialogTest-normal-s5-oracle.jsonl"
    assert _new(client, task="DialogTest", seed=6)["replay_of"] is None


def test_closing_a_game_records_it_as_abandoned_and_failed(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    game = _new(client, task="DialogTest", seed=0)
    client.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})
    assert client.get("/api/leaderboard").json()["rows"] == []  # in progress: not yet on the board
    assert client.delete(f"/api/games/{game['id']}").status_code == 200
    end = json.loads((tmp_path / game["log"]).read_text().splitlines()[-1])
    assert end["type"] == "end" and end["record"]["status"] == "abandoned" and not end["record"]["success"]
    cell = client.get("/api/leaderboard").json()["rows"][0]["cells"]["human"]
    assert cell["n"] == 1 and cell["completion"] == 0.0 and cell["knowledge"] == 0.0


def test_a_game_a_crashed_server_left_without_an_end_counts_as_abandoned(tmp_path: Path) -> None:
    first = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    game = _new(first, task="DialogTest", seed=4)
    first.post(f"/api/games/{game['id']}/step", json={"action": "ROTATE_CW"})  # played: one move
    assert leaderboard(tmp_path, first.app.state.games.live_logs())["rows"] == []  # type: ignore[attr-defined]
    second = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")  # a restarted server: the game is not live there
    cell = second.get("/api/leaderboard").json()["rows"][0]["cells"]["human"]
    minutes = cell.pop("minutes")  # played until its last step
    assert cell == {"n": 1, "procedure": 0.0, "completion": 0.0, "knowledge": 0.0, "graded": 1, "answers": None}
    assert minutes is not None and 0.0 <= minutes < 1.0
    assert _new(second, task="DialogTest", seed=4)["replay_of"] == game["log"]  # known across restarts


def test_study_mode_assigns_sealed_instances_and_refuses_seeds(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path, study_key=KEY), base_url="http://127.0.0.1")
    assert client.get("/api/config").json() == {"study": True, "replay_only": None}
    refused = client.post("/api/games", json={"task": "DialogTest", "seed": 3})
    assert refused.status_code == 400 and "seeds cannot be chosen" in refused.json()["detail"]
    first = _new(client, task="DialogTest")
    assert first["seed"] is None and first["instance"]["split"] == "test" and "seed" not in first["instance"]
    client.post(f"/api/games/{first['id']}/report", json={"report": ""})  # peek at its gold...
    client.delete(f"/api/games/{first['id']}")
    second = _new(client, task="DialogTest")  # ...and the next game is another instance
    assert second["instance"]["index"] == first["instance"]["index"] + 1
    assert second["instance"]["commitment"] != first["instance"]["commitment"] and second["replay_of"] is None
    text = (tmp_path / first["log"]).read_text()
    start = json.loads(text.splitlines()[0])
    assert "seed" not in start and start["instance"] == first["instance"]
    assert first["log"].startswith(f"DialogTest-normal-test{first['instance']['index']}-human-")  # no seed in the name
    response = client.get("/api/replay", params={"log": first["log"]})
    assert response.status_code == 422 and "sealed" in response.json()["detail"]
    restarted = TestClient(create_app(tmp_path, study_key=KEY), base_url="http://127.0.0.1")  # indices carry on from the logs
    assert _new(restarted, task="DialogTest")["instance"]["index"] == second["instance"]["index"] + 1


def test_open_mode_config_and_default_seed(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    assert client.get("/api/config").json() == {"study": False, "replay_only": None}
    game = _new(client, task="DialogTest")
    assert game["seed"] == 0 and game["instance"]["split"] == "seed" and game["replay_of"] is None


def test_replay_of_a_game_awaiting_its_report_shows_no_gold(tmp_path: Path) -> None:
    """The attack: lose (or win) the episode, open the game's own log on the replay page while the
    report and answer sheet are still to come, and read the full card there. The pending `end`
    line made the replay count the game as ended and show every item and score."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    game = _new(client, task="DialogTest", seed=0)
    person = game["observation"]["taskProgress"][0]["description"].split("`")[1]
    client.post(f"/api/games/{game['id']}/command", json={"text": f"goto {person.lower()}"})
    state = client.post(f"/api/games/{game['id']}/command", json={"text": f"talk {person}"}).json()
    box = state["observation"]["dialog_box"]
    wanted = box["dialogIn"].split("`")[1]
    wrong = next(int(k) for k, v in box["dialogOptions"].items() if v != wanted and v != "Exit")
    state = client.post(f"/api/games/{game['id']}/step", json={"chosen_dialog_option_int": wrong}).json()
    assert state["outcome"] == "failure" and not state["finished"]  # the episode is over, the report is not in
    last = 3  # goto, talk, the wrong option
    summary = client.get("/api/replay", params={"log": state["log"]}).json()
    card = client.get("/api/replay/scorecard", params={"log": state["log"], "step": last}).json()
    assert not summary["ended"] and all("score" not in entry for entry in summary["timeline"])
    assert set(card) == {"taskName", "taskDescription", "completed", "completedSuccessfully"}
    client.post(f"/api/games/{game['id']}/report", json={"report": "done"})
    assert client.get("/api/replay", params={"log": state["log"]}).json()["ended"]  # now it has ended: all of it
    assert client.get("/api/replay/scorecard", params={"log": state["log"], "step": last}).json()["scoreCard"]


def test_a_game_never_played_is_no_abandoned_game_in_the_figures(tmp_path: Path) -> None:
    """New game pressed, then the tab closed (or the server restarted) before any move: the log
    holds the start line only until the hourly sweep. It counted as an abandoned, failed game in
    the leaderboard and the study report; it showed nothing but the start, so it is no game."""
    from discoverylab.ui.study_report import human_games

    first = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    _new(first, task="DialogTest", seed=4)  # never played, never closed
    _new(first, task="DialogTest", seed=5)  # looked at the scorecard, never moved
    looked = _new(first, task="DialogTest", seed=6)
    first.get(f"/api/games/{looked['id']}/scorecard")
    played = _new(first, task="DialogTest", seed=7)
    first.post(f"/api/games/{played['id']}/step", json={"action": "ROTATE_CW"})
    second = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")  # restarted: none is live
    cell = second.get("/api/leaderboard").json()["rows"][0]["cells"]["human"]
    assert cell["n"] == 1 and cell["completion"] == 0.0  # only the game with a move, abandoned
    assert [g["log"] for g in human_games(tmp_path)] == [played["log"]]


def _win_dialog(client: TestClient, game: dict[str, Any]) -> dict[str, Any]:
    """DialogTest won with the oracle's actions (seed 2)."""
    for action in _oracle_actions("DialogTest", "normal", 2):
        state = client.post(f"/api/games/{game['id']}/step", json=action).json()
    return dict(state)


def test_peeking_in_a_second_game_while_the_first_is_open_gets_no_clean_win(tmp_path: Path) -> None:
    """The attack: start game A on a public seed, start game B on the same seed, end B at step 0
    to read its gold, then win A. A was started first (not a replay), so its win counted as a
    clean `human` 1.0. A game that was open while another game of its instance showed its gold
    now says so (`gold_seen`) and is listed with the replays."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    first = _new(client, task="DialogTest", seed=2)
    peek = _new(client, task="DialogTest", seed=2)
    assert peek["replay_of"] == first["log"] and first["replay_of"] is None
    assert client.post(f"/api/games/{peek['id']}/report", json={"report": ""}).json()["finished"]
    assert client.get(f"/api/games/{peek['id']}/scorecard").json()["scoreCard"]  # the gold, read
    won = _win_dialog(client, first)
    assert won["success"] and not won["finished"]
    done = client.post(f"/api/games/{first['id']}/report", json={"report": "the option asked for"}).json()
    assert done["gold_seen"] == peek["log"]
    end = json.loads((tmp_path / first["log"]).read_text().splitlines()[-1])
    assert end["record"]["gold_seen"] == peek["log"] and end["record"]["replay_of"] is None
    (row,) = leaderboard(tmp_path)["rows"]
    assert "human" not in row["cells"] and row["cells"][REPLAY]["n"] == 2
    assert row["cells"][REPLAY]["completion"] == 0.5
    resumed = TestClient(create_app(tmp_path), base_url="http://127.0.0.1").get(f"/api/games/{first['id']}").json()
    assert resumed["gold_seen"] == peek["log"]  # a resumed game says so too


def test_a_game_open_beside_an_unfinished_one_stays_clean(tmp_path: Path) -> None:
    """Two games on one seed, neither showing its gold while the other is open: the first to
    finish is a clean `human` game (the other one is a replay of it, as before)."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    first = _new(client, task="DialogTest", seed=2)
    other = _new(client, task="DialogTest", seed=2)
    client.post(f"/api/games/{other['id']}/step", json={"action": "WAIT"})
    _win_dialog(client, first)
    done = client.post(f"/api/games/{first['id']}/report", json={"report": "x"}).json()
    assert done["gold_seen"] is None
    cells = leaderboard(tmp_path, client.app.state.games.live_logs())["rows"][0]["cells"]  # type: ignore[attr-defined]
    assert cells["human"]["n"] == 1 and cells["human"]["completion"] == 1.0
