"""The browser UI end to end in headless Debian chromium: play a unit test with the keyboard and
the mouse, hand in a report, replay the game's log and step through it, and take a docs screenshot."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from ui_kit import NO_CHROMIUM, browser_page, chromium_available, live_server, start_game, theme_screenshots

pytestmark = [
    pytest.mark.skipif(not chromium_available(), reason=NO_CHROMIUM),
    pytest.mark.timeout(120),
]


def _state(page) -> dict:  # type: ignore[no-untyped-def]
    return page.evaluate("() => game")


def _press(page, key: str) -> dict:  # type: ignore[no-untyped-def]
    before = _state(page)["step"]
    page.keyboard.press(key)
    page.wait_for_function(f"game.step === {before + 1}")
    return _state(page)


def _pick_and_place_seed() -> int:
    """A level whose target the page lists (it hides ground-like names such as "grass")."""
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.ui.games import GROUND

    for seed in range(1, 30):
        env = DiscoveryWorldEnv("PickAndPlaceTest")
        env.reset(seed=seed)
        if not GROUND.match(env.scenario.target.name):  # type: ignore[union-attr]
            return seed
    raise AssertionError("no level with a listed target")


def test_play_pick_and_place_then_replay_it(tmp_path: Path) -> None:
    with live_server(tmp_path) as base, browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        start_game(page, base, "PickAndPlaceTest", seed=_pick_and_place_seed())
        message = page.inner_text("#last-message")
        info = page.inner_text("#game-info")

        # Arrows: turn until a free tile lies ahead, then walk onto it.
        loc = _press(page, "ArrowRight")["observation"]["agentLocation"]
        assert "rotate" in page.inner_text("#last-message").lower()
        for _ in range(4):
            if loc["faceDirection"] in loc["directions_you_can_move"]:
                break
            loc = _press(page, "ArrowRight")["observation"]["agentLocation"]
        assert page.inner_text("#last-message") != message
        start = (loc["x"], loc["y"])
        loc = _press(page, "ArrowUp")["observation"]["agentLocation"]
        assert (loc["x"], loc["y"]) != start
        assert page.inner_text("#game-info") != info and f"at ({loc['x']}, {loc['y']})" in page.inner_text("#game-info")
        loc = _press(page, "ArrowDown")["observation"]["agentLocation"]  # back: the start sees the whole villa
        assert (loc["x"], loc["y"]) == start

        # The task names the object and the container.
        item, container = re.findall(r"`([^`]+)`", page.inner_text("#task-text"))
        page.click(f"#nearby li[data-name='{item}']")
        _press(page, "g")  # teleport beside it
        page.click(f"#accessible li[data-name='{item}']")
        state = _press(page, " ")  # take
        assert item in [o["name"] for o in state["observation"]["inventoryObjects"]]
        assert page.locator(f"#inventory li[data-name='{item}']").count() == 1
        page.reload()  # the page picks its game up again
        page.wait_for_selector(f"#inventory li[data-name='{item}']")
        assert _state(page)["step"] == state["step"]

        page.click(f"#nearby li[data-name='{container}'], #accessible li[data-name='{container}']")
        _press(page, "g")
        page.click(f"#inventory li[data-name='{item}']")
        page.click(f"#accessible li[data-name='{container}']", modifiers=["Shift"])
        assert item in page.inner_text("#arg1") and container in page.inner_text("#arg2")
        state = _press(page, "p")  # put it in
        assert state["terminated"], state["observation"]["lastActionMessage"]
        page.wait_for_selector("#banner[data-outcome='success']")
        assert page.inner_text("#banner").startswith("Success")

        page.click("#show-scorecard")  # before the report: task progress only, no items or score
        page.wait_for_selector("#scorecard tr")
        assert "completed" in page.inner_text("#scorecard") and "2/2" not in page.inner_text("#scorecard")

        page.keyboard.press("?")  # help toggles; no step is taken
        assert page.is_visible("#help") and _state(page)["step"] == state["step"]

        page.fill("#report", "The object goes in the container.")
        page.click("#submit-report")
        page.wait_for_function("game.finished === true")
        assert "not graded" in page.inner_text("#report-result")
        page.click("#show-scorecard")  # the game has ended: the whole card
        page.wait_for_function("document.getElementById('scorecard').innerText.includes('2/2')")
        steps = _state(page)["step"]

        # Replay the game's own log.
        log_name = _state(page)["log"]
        lines = [json.loads(x) for x in (tmp_path / log_name).read_text().splitlines()]
        kinds = [x["type"] for x in lines if x["type"] != "scorecard_view"]
        assert kinds == ["start"] + ["step"] * steps + ["end", "end"]  # the outcome at once, then the report
        assert all("time" in x and "elapsed_s" in x for x in lines)
        page.goto(f"{base}/replay?log={log_name}")
        page.wait_for_function(f"rp !== null && rp.frames === {steps + 1}")
        assert "human on PickAndPlaceTest" in page.inner_text("#rp-info")
        assert page.inner_text("#rp-action") == "(start)"
        page.click("#rp-next")
        assert page.inner_text("#rp-action").startswith("ROTATE_CW") or page.inner_text("#rp-action") == "MOVE_FORWARD"
        page.keyboard.press("ArrowRight")
        assert page.inner_text("#rp-step").startswith("step 2 /")
        page.fill("#rp-slider", str(steps))
        page.dispatch_event("#rp-slider", "input")
        assert page.inner_text("#rp-action").startswith("PUT")
        assert "score 1.00" in page.inner_text("#rp-step")
        page.wait_for_function("document.getElementById('rp-view').complete && document.getElementById('rp-view').naturalWidth === 768")
        page.click("#rp-show-scorecard")
        page.wait_for_selector("#rp-scorecard tr")
        assert "2/2" in page.inner_text("#rp-scorecard")

        page.goto(f"{base}/leaderboard")
        page.wait_for_selector("#board td")
        assert "PickAndPlaceTest" in page.inner_text("#board") and "human" in page.inner_text("#board")

        # The docs' screenshots come from `ui_kit.theme_screenshots`: check it makes real pictures.
        (shot,) = theme_screenshots(page, base, tmp_path / "shots", [("tutorial", "Tutorial", "normal")])
        with Image.open(shot) as image:
            assert image.size == (1280, 900)
            assert len(image.convert("RGB").getcolors(1 << 20) or []) > 50  # the view, not a blank page
        assert not errors, errors


def test_study_mode_page_has_no_seed_and_shows_the_instance(tmp_path: Path) -> None:
    with live_server(tmp_path, study_key=b"0123456789abcdef-browser-study") as base, browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(base + "/play")
        page.wait_for_function("document.getElementById('task').options.length > 0")
        assert not page.is_visible("#seed")
        page.select_option("#task", "DialogTest")
        page.fill("#participant", "p07")
        page.click("#new-game")
        page.wait_for_function("game !== null && game.task === 'DialogTest'")
        assert "instance test#0" in page.inner_text("#game-info") and "seed" not in page.inner_text("#game-info")
        assert "p07" in page.inner_text("#game-info") and _state(page)["participant"] == "p07"
        page.click("#show-scorecard")  # mid-game: progress only
        page.wait_for_selector("#scorecard tr")
        assert "in progress" in page.inner_text("#scorecard")
        assert not errors, errors


def test_a_failed_resume_keeps_the_game_and_a_double_click_hands_in_once(tmp_path: Path) -> None:
    """Any error on resume (a 503, a 429 when every slot is busy, a network blip) made the page
    forget its game id silently: the game could never be resumed. A double click on "Hand in
    report" sent it twice (the second a 409, shown as an error when it came last)."""
    with live_server(tmp_path) as base, browser_page() as page:
        start_game(page, base, "DialogTest")
        _press(page, "ArrowRight")
        gid = _state(page)["id"]
        page.route(f"**/api/games/{gid}", lambda route: route.fulfill(
            status=503, content_type="application/json", body=json.dumps({"detail": "busy"})))  # fmt: skip
        page.reload()
        page.wait_for_function("document.getElementById('status').textContent.includes('Could not resume')")
        assert page.evaluate("localStorage.getItem('discoverylab.game')") == gid
        page.unroute(f"**/api/games/{gid}")
        page.reload()
        page.wait_for_function(f"game !== null && game.id === {json.dumps(gid)} && game.step === 1")

        reports: list[str] = []
        page.on("request", lambda r: reports.append(r.url) if r.url.endswith("/report") else None)
        page.fill("#report", "Gail asked for the apple.")
        page.dblclick("#submit-report")
        page.wait_for_function("game.finished")
        page.wait_for_timeout(500)
        assert len(reports) == 1 and page.get_attribute("#status", "class") != "bad"


def test_a_second_tab_on_the_same_game_keeps_the_whole_history(tmp_path: Path) -> None:
    """Two tabs on one game (the id is in localStorage): steps played in one were missing from
    the other's History (and its copy all), which appended only its own latest step."""
    with live_server(tmp_path) as base, browser_page() as first:
        start_game(first, base, "DialogTest")
        second = first.context.browser.new_page(bypass_csp=True)
        second.set_default_timeout(10_000)
        second.goto(base + "/play")
        second.evaluate("id => localStorage.setItem('discoverylab.game', id)", _state(first)["id"])
        second.reload()
        second.wait_for_function("game !== null && game.step === 0")
        _press(first, "ArrowRight")
        _press(first, "ArrowRight")
        second.keyboard.press("ArrowLeft")  # its page still shows step 0
        second.wait_for_function("game.step === 3")
        second.wait_for_function("hist.map((h) => h.step).join() === '0,1,2,3'")
        assert second.locator("#history li").count() == 4


def test_a_double_click_on_new_game_starts_one_game(tmp_path: Path) -> None:
    """Two games were started: the orphan (never played, never closed) became the player's
    `human` entry on the board, abandoned and failed, and the game they played a `human (replay)`."""
    from discoverylab.ui.leaderboard import leaderboard

    with live_server(tmp_path) as base, browser_page() as page:
        page.goto(base + "/play")
        page.wait_for_function("document.getElementById('task').options.length > 0")
        page.select_option("#task", "DialogTest")
        page.dblclick("#new-game")
        page.wait_for_function("game !== null && !document.getElementById('new-game').disabled")
        page.wait_for_timeout(500)
        _press(page, "ArrowRight")
        assert [p.name for p in tmp_path.glob("*.jsonl")] == [_state(page)["log"]]
    assert leaderboard(tmp_path)["agents"] == ["human"]


def _lose_dialog(page) -> dict:  # type: ignore[no-untyped-def]
    """DialogTest lost on the page: talk to the character and press a wrong option's number."""
    person = re.findall(r"`([^`]+)`", page.inner_text("#task-text"))[0]
    for text in (f"goto {person.lower()}", f"talk {person}"):
        page.keyboard.press(":")
        page.keyboard.type(text)
        before = _state(page)["step"]
        page.keyboard.press("Enter")
        page.wait_for_function(f"game.step === {before + 1}")
    box = _state(page)["observation"]["dialog_box"]
    wanted = box["dialogIn"].split("`")[1]
    wrong = next(k for k, v in box["dialogOptions"].items() if v not in (wanted, "Exit"))
    state = _press(page, wrong)
    assert state["terminated"] and state["outcome"] == "failure"
    return state


def test_new_game_before_the_report_asks_and_a_reload_keeps_the_draft(tmp_path: Path) -> None:
    """The episode ended, the player was writing the report, then pressed New game: the page
    closed the game without asking (knowledge 0) and the report was gone. A reload mid-report
    emptied the box too. Now New game asks (Cancel goes back to the report, nothing is closed),
    and the draft is kept per game until it is handed in."""
    with live_server(tmp_path) as base, browser_page() as page:
        start_game(page, base, "DialogTest")
        lost = _lose_dialog(page)
        page.keyboard.press("k")
        page.keyboard.type("Gail wanted the apple; I chose the wrong thing.")
        dialogs: list[str] = []

        def dismiss(dialog) -> None:  # type: ignore[no-untyped-def]
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.once("dialog", dismiss)
        page.click("#new-game")
        page.wait_for_function("!document.getElementById('new-game').disabled")
        assert dialogs and "report" in dialogs[0]
        assert _state(page)["id"] == lost["id"] and page.input_value("#report").startswith("Gail wanted")
        last = json.loads((tmp_path / lost["log"]).read_text().splitlines()[-1])
        assert last["knowledge"].get("pending")  # the game was not closed

        page.reload()  # reload in the middle of the report: the draft comes back
        page.wait_for_function(f"game !== null && game.id === {json.dumps(lost['id'])}")
        assert page.input_value("#report") == "Gail wanted the apple; I chose the wrong thing."

        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#new-game")
        page.wait_for_function(f"game.id !== {json.dumps(lost['id'])}")
        last = json.loads((tmp_path / lost["log"]).read_text().splitlines()[-1])
        assert last["knowledge"]["no_report"] and last["record"]["status"] == "ok"
        assert page.input_value("#report") == ""
        assert page.evaluate(f"localStorage.getItem('draft.{lost['id']}')") is None


def test_keys_pressed_while_the_server_is_slow_are_taken_in_order(tmp_path: Path) -> None:
    """Each key sent its step at once: with a slow server two requests raced, and the server
    could take the second key's action first (the log, and the world, in another order than the
    player pressed). A stopped server showed "Failed to fetch". Now the page sends one step at a
    time, in order, drops the keys pressed after a step that failed, and says what happened."""
    import asyncio

    from ui_kit import free_port

    from discoverylab.ui.server import create_app
    from uvicorn_kit import serve_in_thread

    app = create_app(tmp_path)
    delayed: list[str] = []

    @app.middleware("http")
    async def slow_first_step(request, call_next):  # type: ignore[no-untyped-def]
        if request.url.path.endswith("/step") and not delayed:
            delayed.append(request.url.path)
            await asyncio.sleep(1.0)
        return await call_next(request)

    with serve_in_thread(app, free_port(), what="the UI server", timeout=15) as port, browser_page() as page:
        start_game(page, f"http://127.0.0.1:{port}", "DialogTest")
        page.keyboard.press("ArrowRight")  # slow
        page.keyboard.press("w")
        page.wait_for_function("game.step === 2")
        log = [json.loads(x) for x in (tmp_path / _state(page)["log"]).read_text().splitlines()]
        assert [x["action"]["action"] for x in log if x["type"] == "step"] == ["ROTATE_CW", "WAIT"]
        assert [h["step"] for h in page.evaluate("hist")] == [0, 1, 2]

        held: list[Any] = []  # the server is gone: the step is held until the next key is in, then fails
        page.route("**/api/games/*/step", lambda route: held.append(route))
        page.keyboard.press("w")
        page.keyboard.press("ArrowRight")
        for _ in range(100):  # (route callbacks run while Playwright waits)
            if held:
                break
            page.wait_for_timeout(50)
        page.wait_for_function("queued === 2")  # both keys are in before the step fails (on a loaded CI the second came late)
        held[0].abort()
        page.wait_for_function("document.getElementById('status').textContent.includes('did not answer')")
        page.unroute("**/api/games/*/step")
        page.wait_for_timeout(300)
        assert len(held) == 1  # the key pressed while the failed step was out was never sent
        taken = [x["action"] for x in map(json.loads, (tmp_path / _state(page)["log"]).read_text().splitlines()) if x["type"] == "step"]
        assert _state(page)["step"] == 2, taken  # the key pressed after the failed one was dropped, not sent later
        _press(page, "w")
        assert page.get_attribute("#status", "class") != "bad"


def test_keyboard_only_from_page_load_to_the_action_menu(tmp_path: Path) -> None:
    """Keyboard-only play: Tab never left the page (it toggled the task box wherever the focus
    was), so New game could not be reached without a mouse; in the action menu the first arrow
    key chose the first action and left the menu; Esc did not leave the report box."""
    with live_server(tmp_path) as base, browser_page() as page:
        page.goto(base + "/play")
        page.wait_for_function("document.getElementById('task').options.length > 0")
        page.keyboard.press("Shift+Tab")  # on the page: to the game picker
        assert page.evaluate("document.activeElement.id") == "task"
        page.keyboard.type("DialogTest")
        assert page.input_value("#task") == "DialogTest"
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "difficulty"
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "new-game"
        page.keyboard.press("Enter")
        page.wait_for_function("game !== null && game.task === 'DialogTest'")
        page.wait_for_function("document.activeElement === document.body")
        _press(page, "ArrowRight")  # the game has the keys again

        hidden = page.evaluate("document.getElementById('task-box').hidden")
        page.keyboard.press("Tab")  # on the game: the task box, as in DiscoveryWorld
        assert page.evaluate("document.getElementById('task-box').hidden") != hidden

        page.keyboard.press("m")
        for _ in range(3):
            page.keyboard.press("ArrowDown")
        assert page.evaluate("document.activeElement.id") == "action-menu" and page.input_value("#command") == ""
        chosen = page.evaluate("document.getElementById('action-menu').selectedOptions[0].value")
        assert chosen
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "command" and page.input_value("#command") != ""
        page.keyboard.press("Control+a")
        page.keyboard.press("Backspace")
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement === document.body")

        page.keyboard.press("k")
        page.keyboard.type("notes")
        page.keyboard.press("Escape")
        assert page.evaluate("document.activeElement === document.body")
        _press(page, "w")
        assert page.input_value("#report") == "notes"


def test_a_reload_keeps_the_answer_sheet_being_filled_in(tmp_path: Path) -> None:
    """The answer sheet's fields are built by the page: a reload emptied them (and the report)."""
    with live_server(tmp_path) as base, browser_page() as page:
        start_game(page, base, "Proteomics", "easy")
        page.wait_for_selector("#answer-fields select.answer")
        choice = page.evaluate("document.querySelector('#answer-fields select.answer').options[2].value")
        page.select_option("#answer-fields select.answer", choice)
        page.fill("#report", "the outlier")
        page.reload()
        page.wait_for_function("game !== null")
        page.wait_for_selector("#answer-fields select.answer")
        assert page.input_value("#answer-fields select.answer") == choice
        assert page.input_value("#report") == "the outlier"
        page.click("#submit-report")
        page.wait_for_function("game.finished")
        assert page.evaluate("Object.keys(localStorage).filter((k) => k.startsWith('draft.')).length") == 0


def test_the_leaderboard_page_shows_minutes_and_answers(tmp_path: Path) -> None:
    """docs/ui.md: the leaderboard shows humans' minutes of play and an `answers` column; the page
    showed procedure, completion, knowledge and n only (the API had both)."""
    import httpx

    with live_server(tmp_path) as base, browser_page() as page:
        game = httpx.post(f"{base}/api/games", json={"task": "Proteomics", "difficulty": "easy", "seed": 0}).json()
        httpx.post(f"{base}/api/games/{game['id']}/step", json={"action": "WAIT"})
        httpx.post(f"{base}/api/games/{game['id']}/report", json={"report": "x", "answers": {"outlier_species": "echojelly"}})
        cell = httpx.get(f"{base}/api/leaderboard").json()["rows"][0]["cells"]["human"]
        page.goto(base + "/leaderboard")
        page.wait_for_selector("#board td")
        heads = page.locator("#board tr").nth(1).inner_text()
        assert "minutes" in heads and "answers" in heads
        text = page.inner_text("#board")
        assert f"{cell['answers']:.2f}" in text and f"{cell['minutes']:.1f}" in text


def test_study_participant_id_survives_a_reload(tmp_path: Path) -> None:
    """Study mode: after a reload the participant field was empty, so the participant's next
    New game was recorded with no participant at all (the report's rows said `–`)."""
    with live_server(tmp_path, study_key=b"0123456789abcdef-browser-study") as base, browser_page() as page:
        page.goto(base + "/play")
        page.wait_for_function("document.getElementById('task').options.length > 0")
        page.select_option("#task", "DialogTest")
        page.fill("#participant", "p11")
        page.click("#new-game")
        page.wait_for_function("game !== null && game.participant === 'p11'")
        _press(page, "w")
        page.reload()
        page.wait_for_function("game !== null && game.step === 1")
        assert page.input_value("#participant") == "p11"
        page.select_option("#task", "DialogTest")
        first = _state(page)["id"]
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#new-game")
        page.wait_for_function(f"game.id !== {json.dumps(first)}")
        assert _state(page)["participant"] == "p11"


def test_at_the_step_limit_the_page_says_so_everywhere(tmp_path: Path) -> None:
    """A game played to its step limit: the banner said Failure (the step limit was reached)
    while the scorecard beside it said the task was "in progress"."""
    import httpx

    with live_server(tmp_path) as base, browser_page() as page:
        start_game(page, base, "DialogTest")
        state = _state(page)
        for _ in range(state["max_steps"] - 1):
            httpx.post(f"{base}/api/games/{state['id']}/step", json={"action": "WAIT"})
        page.reload()
        page.wait_for_function(f"game !== null && game.step === {state['max_steps'] - 1}")
        ended = _press(page, "w")
        assert ended["truncated"] and page.inner_text("#banner").startswith("Failure: the step limit was reached")
        page.click("#show-scorecard")
        page.wait_for_selector("#scorecard tr")
        assert "in progress" not in page.inner_text("#scorecard") and "step limit" in page.inner_text("#scorecard")
        page.keyboard.press("w")  # no more moves: the page says what is left
        page.wait_for_function("document.getElementById('status').textContent.includes('knowledge report')")
