"""The human study on sealed instances (the paper's Table 6 study on our sealed test split):
gold leaves the system only after an episode ends and only to the evaluator.

The attack: a participant wins a sealed game, another (or the same one, later) loses the same
instance, and each reads everything the UI lets them read: the step that ends the episode, the
scorecard, the report's answer, the game's state afterwards, the results download, the
leaderboard, the log list and the replay routes. Before, the win said "success" and the loss
"failure", and the hand-in answered with the knowledge grade and the sheet's gold (which
`test#N` plays the same on every server with the key). Now both read byte-identical responses,
save for the game's own id, log name and clock; the evaluator reads the outcome from the logs
folder (`discoverylab report`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from discoverylab.bench.episode import run_episode
from discoverylab.instances import make_instance
from discoverylab.ui.server import create_app
from discoverylab.ui.study_report import human_games

KEY = b"0123456789abcdef-sealed-study-test-key"
TASK, DIFFICULTY = "Proteomics", "easy"
REPORT = "The spheroid's proteins sit apart from the other two species'."
WORLD_VIEW = ("seen", "positions")  # where the player stands: what they did, not how it went


def _client(logs: Path) -> TestClient:
    return TestClient(create_app(logs, study_key=KEY), base_url="http://127.0.0.1")


def oracle_actions(index: int) -> list[dict[str, Any]]:
    record, log = run_episode(TASK, DIFFICULTY, make_instance(TASK, DIFFICULTY, "test", index, KEY), "oracle")
    assert record.success
    return [e["action"] for e in log if e.get("type") == "step"]


def finishing_actions(game: dict[str, Any], win: bool) -> list[dict[str, Any]]:
    """The oracle's actions on the game's instance; for a loss the flag goes beside another statue."""
    actions = oracle_actions(game["instance"]["index"])
    if win:
        return actions
    wrong = next(p for p in game["observation"]["teleportLocations"] if p.startswith("Statue") and p != actions[-2]["arg1"])
    return [*actions[:-2], {"action": "TELEPORT_TO_LOCATION", "arg1": wrong}, actions[-1]]


def _sheet(client: TestClient, gid: str) -> dict[str, Any]:
    """The same filled sheet for both games: the first choice of every choice field."""
    form = client.get(f"/api/games/{gid}/answer_form").json()["form"]
    assert form is not None
    return {f["name"]: f["schema"]["enum"][0] for f in form["fields"] if f["schema"].get("enum")}


def _normal(text: str, names: dict[str, str]) -> str:
    """The response with the game's own names and clock replaced: what may differ between games."""
    for real, placeholder in names.items():
        text = text.replace(real, placeholder)
    text = re.sub(r'"(elapsed_s|session_seconds)": ?[0-9.e-]+', r'"\1": 0', text)
    return re.sub(r",[0-9]+\.[0-9]+,", ",0,", text)  # the CSV's session_seconds


def _state_text(state: dict[str, Any]) -> str:
    out = {k: v for k, v in state.items() if k not in WORLD_VIEW}
    out["observation"] = {"taskProgress": state["observation"]["taskProgress"]}
    return json.dumps(out, sort_keys=True)


def play_sealed(logs: Path, win: bool) -> tuple[dict[str, str], dict[str, Any]]:
    """Play test#0 to a win or a loss on a study server of its own: every response the
    participant can read from the episode's end on (route -> text, normalised), and the state
    the hand-in answered with."""
    client = _client(logs)
    game = client.post("/api/games", json={"task": TASK, "difficulty": DIFFICULTY, "participant": "p01"}).json()
    assert game["instance"]["index"] == 0
    for action in finishing_actions(game, win):
        response = client.post(f"/api/games/{game['id']}/step", json=action)
        assert response.status_code == 200, response.text
    ended = response.json()
    assert ended["terminated"] and not ended["finished"]
    gid = game["id"]
    seen = {"last step": _state_text(ended), "scorecard before the report": client.get(f"/api/games/{gid}/scorecard").text}
    handed = client.post(f"/api/games/{gid}/report", json={"report": REPORT, "answers": _sheet(client, gid)})
    assert handed.status_code == 200, handed.text
    seen["hand-in"] = _state_text(handed.json())
    seen["state"] = _state_text(client.get(f"/api/games/{gid}").json())
    seen["scorecard"] = client.get(f"/api/games/{gid}/scorecard").text
    seen["answer form"] = client.get(f"/api/games/{gid}/answer_form").text  # not /history: it lists the
    # player's own actions (which statue they went to), as the world view does
    for fmt in ("json", "csv"):
        seen[f"results {fmt}"] = client.get("/api/results", params={"games": gid, "format": fmt}).text
    seen["leaderboard"] = client.get("/api/leaderboard").text
    seen["logs"] = client.get("/api/logs").text
    for route in ("/api/replay", "/api/replay/scorecard", "/api/replay/frame.png"):
        response = client.get(route, params={"log": game["log"], "step": 11})
        seen[route] = f"{response.status_code} {response.text}"
    names = {gid: "GAME", game["log"]: "LOG"}
    return {route: _normal(text, names) for route, text in seen.items()}, handed.json()


def test_attack_a_sealed_win_and_loss_read_the_same_bytes(tmp_path: Path) -> None:
    won, won_state = play_sealed(tmp_path / "a", win=True)
    lost, _ = play_sealed(tmp_path / "b", win=False)
    assert [route for route in won if won[route] != lost[route]] == [], "responses that tell a win from a loss"
    assert won_state["outcome"] == "ended" and won_state["success"] is None and won_state["answers"] is None
    receipt = won_state["knowledge"]
    assert receipt["received"] and receipt["recorded"] and receipt["report"] == REPORT
    assert receipt["fields_submitted"] and "score" not in receipt and "verdicts" not in receipt
    for text in won.values():
        assert "completedSuccessfully" not in text and "goldFacts" not in text and '"gold"' not in text
        assert "criticalHypotheses" not in text and '"procedure_score"' not in text and '"scoreCard"' not in text


def test_the_evaluator_reads_the_outcome_from_the_logs_folder(tmp_path: Path) -> None:
    """What the participant never sees is on record for the evaluator: `report` (Table 6 and the
    per-game rows) reads the win and the loss, and the log keeps the sheet's grade with its gold."""
    play_sealed(tmp_path, win=True)
    _client(tmp_path).post("/api/games", json={"task": TASK, "difficulty": DIFFICULTY})  # a second game: test#1
    (game,) = human_games(tmp_path)
    assert game["completion"] == 1.0 and game["instance"] == "test#0"
    end = json.loads(next(tmp_path.glob("*-test0-*.jsonl")).read_text().splitlines()[-1])
    assert end["record"]["success"] is True and "gold" in json.dumps(end["record"]["answers_grade"])
    assert end["knowledge"]["report"] == REPORT


def test_a_public_game_still_shows_its_outcome_and_grade(tmp_path: Path) -> None:
    """Practice on public seeds keeps today's page: success, the graded sheet, the full card."""
    client = TestClient(create_app(tmp_path), base_url="http://127.0.0.1")
    game = client.post("/api/games", json={"task": "DialogTest", "seed": 2}).json()
    record, log = run_episode("DialogTest", "normal", 2, "oracle")
    for action in (e["action"] for e in log if e.get("type") == "step"):
        state = client.post(f"/api/games/{game['id']}/step", json=action).json()
    assert state["outcome"] == "success" and state["observation"]["taskProgress"][0]["completedSuccessfully"]
    done = client.post(f"/api/games/{game['id']}/report", json={"report": "x"}).json()
    assert done["knowledge"]["report"] == "x" and "received" not in done["knowledge"]
    assert client.get(f"/api/games/{game['id']}/scorecard").json()["scoreCard"]
    assert client.get("/api/leaderboard").json()["rows"][0]["cells"]["human"]["completion"] == 1.0


def _page_after_the_end(page: Any, base: str, win: bool) -> dict[str, str]:
    """Play test#0 in the browser to a win or a loss, hand in, and read what the pages show:
    the banner, the receipt, the scorecard, the leaderboard, the replay page's log list and what
    opening the log says (normalised for the game's own log name)."""
    page.goto(base + "/play")
    page.wait_for_function("document.getElementById('task').options.length > 0 && study === true")
    page.select_option("#task", TASK)
    page.select_option("#difficulty", DIFFICULTY)
    page.fill("#participant", "p01")
    page.click("#new-game")
    page.wait_for_function("game !== null")
    game = page.evaluate("() => game")
    for action in finishing_actions(game, win):
        before = page.evaluate("() => game.step")
        page.evaluate("(a) => act(a)", action)
        page.wait_for_function(f"game.step === {before + 1}")
    page.wait_for_selector("#banner[data-outcome='ended']")
    seen = {"banner before the report": page.inner_text("#banner")}
    page.click("#show-scorecard")
    page.wait_for_selector("#scorecard tr")
    seen["scorecard before the report"] = page.inner_text("#scorecard")
    page.fill("#report", REPORT)
    for select in page.locator("#answer-fields select").all():
        select.select_option(index=1)
    page.click("#submit-report")
    page.wait_for_function("game.finished === true")
    page.click("#show-scorecard")
    page.wait_for_function("document.getElementById('scorecard').innerText.includes('evaluator')")
    seen.update(banner=page.inner_text("#banner"), receipt=page.inner_text("#report-result"),
                scorecard=page.inner_text("#scorecard"), task=page.inner_text("#task-text"))  # fmt: skip
    page.goto(base + "/leaderboard")
    page.wait_for_selector("#board-sealed:not([hidden])")
    seen["leaderboard"] = page.inner_text("#leaderboard")
    page.goto(f"{base}/replay?log={game['log']}")
    page.wait_for_function("document.getElementById('status').textContent.includes('sealed')")
    seen["replay"] = page.inner_text("#log-select") + page.inner_text("#status")
    return {k: v.replace(game["log"], "LOG") for k, v in seen.items()}


def test_attack_a_sealed_win_and_loss_look_the_same_in_the_browser(tmp_path: Path) -> None:
    """The same attack in Debian's chromium: the pages a participant sees once a sealed game has
    ended (and once it is handed in) read the same for a win and a loss, and name no score."""
    from ui_kit import NO_CHROMIUM, browser_page, chromium_available, live_server

    if not chromium_available():
        pytest.skip(NO_CHROMIUM)
    shown = []
    with browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for win, folder in ((True, "a"), (False, "b")):
            with live_server(tmp_path / folder, study_key=KEY) as base:
                shown.append(_page_after_the_end(page, base, win))
        assert not errors, errors
    won, lost = shown
    assert [k for k in won if won[k] != lost[k]] == [], "pages that tell a win from a loss"
    assert won["banner"].startswith("The episode has ended") and "recorded" in won["receipt"]
    assert REPORT in won["receipt"] and "Not shown: 1 game(s) on sealed test instances" in won["leaderboard"]
    for name, text in won.items():
        words = re.findall(r"\b(Success|Failure|failed|knowledge score|right|wrong|gold:|answer sheet 0|answer sheet 1)\b", text)
        assert not words and "(completed)" not in text, f"{name}: {words}"


def test_a_sealed_game_closed_without_a_report_gets_a_receipt_too(tmp_path: Path) -> None:
    """Closed mid-game (abandoned), a sealed game's page and export say it was recorded without a
    report; its log keeps the abandoned record for the evaluator."""
    client = _client(tmp_path)
    game = client.post("/api/games", json={"task": "DialogTest"}).json()
    client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
    assert client.delete(f"/api/games/{game['id']}").status_code == 200
    state = client.get(f"/api/games/{game['id']}").json()
    assert state["finished"] and state["outcome"] == "ended" and state["success"] is None and state["answers"] is None
    assert state["knowledge"] == {"received": False, "recorded": True, "report": "", "answers": {},
                                  "fields_submitted": [], "graded": state["knowledge"]["graded"]}  # fmt: skip
    (row,) = client.get("/api/results", params={"games": game["id"]}).json()["games"]
    assert row["status"] == "abandoned" and row["knowledge"] == state["knowledge"] and "success" not in row
    end = json.loads((tmp_path / game["log"]).read_text().splitlines()[-1])
    assert end["record"]["status"] == "abandoned" and end["record"]["success"] is False


def test_a_sealed_report_is_not_sent_to_the_server_s_judge(tmp_path: Path) -> None:
    """The judge's prompts hold the instance's gold facts. `serve --study` graded a sealed report
    at once with the endpoint of $DISCOVERYLAB_LLM_BASE_URL, the judge that `discoverylab judge`
    refuses for sealed games unless it is named (running.md). The report is now stored ungraded,
    for `discoverylab judge LOGS --model M --base-url U`; a public game's is still graded live."""
    calls: list[str] = []

    class Recorder:
        def evaluate(self, question: str, evidence: Any) -> Any:
            calls.append(question)
            return type("Verdict", (), {"evaluation": 1, "explanation": "x"})()

    client = TestClient(create_app(tmp_path, study_key=KEY, judge_factory=Recorder), base_url="http://127.0.0.1")
    game = client.post("/api/games", json={"task": TASK, "difficulty": DIFFICULTY}).json()
    client.post(f"/api/games/{game['id']}/step", json={"action": "WAIT"})
    assert client.post(f"/api/games/{game['id']}/report", json={"report": REPORT}).status_code == 200
    end = json.loads((tmp_path / game["log"]).read_text().splitlines()[-1])
    assert calls == [] and end["knowledge"]["graded"] is False and end["knowledge"]["report"] == REPORT
    public = TestClient(create_app(tmp_path / "p", judge_factory=Recorder), base_url="http://127.0.0.1")
    other = public.post("/api/games", json={"task": TASK, "difficulty": DIFFICULTY, "seed": 0}).json()
    assert public.post(f"/api/games/{other['id']}/report", json={"report": REPORT}).json()["knowledge"]["graded"]
    assert calls
