"""Results downloaded from the page: a player's finished games, by the ids the browser holds,
with no gold before a game's report is in and nothing of a sealed instance beyond its page."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from discoverylab.instances import make_instance
from discoverylab.ui.server import create_app

LOCAL = "http://127.0.0.1"
KEY = b"e" * 32


def _client(logs: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(logs, **kwargs), base_url=LOCAL)


def _lose_dialog(client: TestClient, **body: Any) -> dict[str, Any]:
    """A DialogTest game whose episode ended (a wrong option), its report not handed in yet."""
    game = client.post("/api/games", json={"task": "DialogTest", **body}).json()
    person = game["observation"]["taskProgress"][0]["description"].split("`")[1]
    for text in (f"goto {person.lower()}", f"talk {person}"):
        state = client.post(f"/api/games/{game['id']}/command", json={"text": text}).json()
    box = state["observation"]["dialog_box"]
    wanted = box["dialogIn"].split("`")[1]
    wrong = next(int(k) for k, v in box["dialogOptions"].items() if v not in (wanted, "Exit"))
    state = client.post(f"/api/games/{game['id']}/step", json={"chosen_dialog_option_int": wrong}).json()
    assert state["terminated"] and not state["finished"]
    return dict(state)


def _export(client: TestClient, ids: list[str], fmt: str = "json") -> Any:
    response = client.get("/api/results", params={"games": ",".join(ids), "format": fmt})
    assert response.status_code == 200, response.text
    assert "attachment" in response.headers["content-disposition"]
    return response.json() if fmt == "json" else list(csv.DictReader(io.StringIO(response.text)))


def test_a_finished_game_exports_and_one_awaiting_its_report_does_not(tmp_path: Path) -> None:
    """Before: no export at all (404). Now the page's game ids give their finished games as JSON
    (record, knowledge, scorecard) or CSV; a game awaiting its report is skipped, gold unsent."""
    client = _client(tmp_path)
    state = _lose_dialog(client, seed=2)
    early = client.get("/api/results", params={"games": state["id"]})
    assert early.status_code == 200, early.text
    assert early.json()["games"] == [] and early.json()["skipped"] == [{"game": state["id"], "reason": "not finished"}]
    assert "knowledgeQuestions" not in early.text and "goldFacts" not in early.text
    client.post(f"/api/games/{state['id']}/report", json={"report": "=HYPERLINK(1) it was the wrong option"})
    data = _export(client, [state["id"], "nosuchgame"])
    (game,) = data["games"]
    assert game["game"] == state["id"] and game["log"] == state["log"] and game["seed"] == 2
    assert game["status"] == "ok" and game["success"] is False and game["steps"] == state["step"]
    assert game["knowledge"]["report"].endswith("wrong option") and "knowledgeQuestions" in game["scorecard"]
    assert data["skipped"] == [{"game": "nosuchgame", "reason": "no such game"}]
    (row,) = _export(client, [state["id"]], "csv")
    assert row["task"] == "DialogTest" and row["seed"] == "2" and row["success"] == "False"
    assert row["report"].startswith("'=HYPERLINK")  # a spreadsheet shows it, never runs it


def test_attack_a_sealed_game_s_export_names_no_seed(tmp_path: Path) -> None:
    """A study game's export holds its instance's public part (index, commitment), never the seed,
    in the JSON or the CSV, as its page and its log name do."""
    client = _client(tmp_path, study_key=KEY)
    state = _lose_dialog(client, participant="p01")
    client.post(f"/api/games/{state['id']}/report", json={"report": "none"})
    seed = make_instance("DialogTest", "normal", "test", state["instance"]["index"], KEY).seed
    text = json.dumps(_export(client, [state["id"]]))
    (row,) = _export(client, [state["id"]], "csv")
    (game,) = json.loads(text)["games"]
    assert "seed" not in game and game["instance"] == state["instance"] and game["participant"] == "p01"
    assert str(seed) not in text and str(seed) not in json.dumps(row) and row["seed"] == ""
    assert row["commitment"] == state["instance"]["commitment"] and row["split"] == "test"


@pytest.mark.parametrize(("query", "status"), [({"games": ",".join(f"g{i}" for i in range(201))}, 422),
                                               ({"games": "x", "format": "xml"}, 422)])
def test_bad_export_requests_say_what_is_wrong(tmp_path: Path, query: dict[str, str], status: int) -> None:
    response = _client(tmp_path).get("/api/results", params=query)
    assert response.status_code == status and response.json()["detail"]


def test_the_page_downloads_its_finished_games_and_keeps_one_game_s_feed_marks(tmp_path: Path) -> None:
    """In the browser: "Download results" gives the games this browser played (a download with
    the finished game and its report). Feed read-marks of earlier games, which piled up in
    localStorage one key per game for good, are dropped when a game starts."""
    from ui_kit import NO_CHROMIUM, browser_page, chromium_available, live_server, start_game

    if not chromium_available():
        pytest.skip(NO_CHROMIUM)
    with live_server(tmp_path) as base, browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(base + "/play")
        page.evaluate("() => { for (let i = 0; i < 40; i++) localStorage.setItem(`feed.old${i}`, '[1,2]'); }")
        assert not page.is_visible("#export")  # no game played in this browser yet
        start_game(page, base, "DialogTest")
        gid = page.evaluate("() => game.id")
        page.focus("body")
        page.keyboard.press("w")
        page.wait_for_function("game.step === 1")
        page.keyboard.press("k")
        page.keyboard.type("I waited once.")
        page.keyboard.press("Control+Enter")
        page.wait_for_function("game.finished === true")
        with page.expect_download() as download:
            page.click("#export-json")
        data = json.loads(Path(download.value.path()).read_text())
        assert [g["game"] for g in data["games"]] == [gid] and data["games"][0]["knowledge"]["report"] == "I waited once."
        keys = page.evaluate("() => Object.keys(localStorage)")
        assert not [k for k in keys if k.startswith("feed.") and k != f"feed.{gid}"], keys
        assert not errors, errors
