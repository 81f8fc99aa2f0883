"""Issue #26's "done when", in headless Debian chromium: full games played with the keyboard
only (Tutorial and Proteomics Easy to success, Proteomics Easy to failure), the right banner
each time, a game resumed after a server restart, and no lock-out after 40 New-game presses on
a server with --max-games 4."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_kit import NO_CHROMIUM, browser_page, chromium_available, free_port, live_server, start_game

from discoverylab.bench.episode import run_episode

pytestmark = [pytest.mark.skipif(not chromium_available(), reason=NO_CHROMIUM), pytest.mark.timeout(300)]

SHIFT_ARROW = {"north": "Shift+ArrowUp", "south": "Shift+ArrowDown", "west": "Shift+ArrowLeft", "east": "Shift+ArrowRight"}
SINGLE = {"MOVE_FORWARD": "ArrowUp", "MOVE_BACKWARD": "ArrowDown", "ROTATE_CCW": "ArrowLeft", "ROTATE_CW": "ArrowRight",
          "WAIT": "w", "DISCOVERY_FEED_GET_UPDATES": "v", "DISCOVERY_FEED_GET_ARTICLES": "f"}  # fmt: skip
VERBS = {"PICKUP": "take", "DROP": "drop", "OPEN": "open", "CLOSE": "close", "ACTIVATE": "activate", "DEACTIVATE": "deactivate",
         "TALK": "talk", "EAT": "eat", "READ": "read", "TELEPORT_TO_OBJECT": "goto"}  # fmt: skip


def oracle_actions(task: str, difficulty: str, seed: int) -> list[dict[str, Any]]:
    record, log = run_episode(task, difficulty, seed, "oracle")
    assert record.success
    return [e["action"] for e in log if e.get("type") == "step"]


def keys_for(action: dict[str, Any]) -> tuple[str | None, str | None]:
    """(a key to press, or a command to type after ':'): how a person sends `action` from the keyboard."""
    if "chosen_dialog_option_int" in action:
        return str(action["chosen_dialog_option_int"]), None
    name, a1, a2 = action["action"], action.get("arg1"), action.get("arg2")
    if name in SINGLE:
        return SINGLE[name], None
    if name == "MOVE_DIRECTION":
        return SHIFT_ARROW[a1], None
    if name == "ROTATE_DIRECTION":
        return None, f"rotate {a1}"
    if name == "TELEPORT_TO_LOCATION":
        return "l", str(a1).lower()  # 'l' opens "tp "; names match in any case
    if name in ("PUT", "USE"):
        return None, f"{'put' if name == 'PUT' else 'use'} {a1} {'in' if name == 'PUT' else 'on'} {a2}"
    if name == "DISCOVERY_FEED_GET_POST_BY_ID":
        return "n", str(a1)
    return None, f"{VERBS[name]} {a1}"


def play_keys(page: Any, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """Send every action with the keyboard only; each must be one step."""
    for action in actions:
        before = page.evaluate("() => game.step")
        key, text = keys_for(action)
        if text is None:
            page.keyboard.press(key)
        else:
            page.keyboard.press(key or ":")
            page.keyboard.type(text)
            page.keyboard.press("Enter")
        page.wait_for_function(f"game.step === {before + 1}", timeout=15_000)
    return dict(page.evaluate("() => game"))


def hand_in(page: Any, text: str) -> None:
    page.keyboard.press("k")
    page.keyboard.type(text)
    page.keyboard.press("Control+Enter")
    page.wait_for_function("game.finished === true")


def expect_banner(page: Any, outcome: str) -> None:
    page.wait_for_selector(f"#banner[data-outcome='{outcome}']")
    assert page.inner_text("#banner").startswith("Success" if outcome == "success" else "Failure")


def test_keyboard_only_games_banners_and_resume(tmp_path: Path) -> None:
    port = free_port()
    tutorial = oracle_actions("Tutorial", "normal", 0)
    proteomics = oracle_actions("Proteomics", "easy", 0)
    with browser_page() as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda dialog: dialog.accept())
        with live_server(tmp_path, port=port) as base:
            start_game(page, base, "Tutorial", "normal", 0)
            page.focus("body")
            state = play_keys(page, tutorial)
            assert state["outcome"] == "success" and state["success"] is True
            expect_banner(page, "success")
            hand_in(page, "I warmed the meal in the microwave and got the key.")
            assert "Game over" in page.inner_text("#banner")

            start_game(page, base, "Proteomics", "easy", 0)  # a failure: the flag beside another statue
            page.focus("body")
            statue = proteomics[-2]["arg1"]
            wrong = next(p for p in page.evaluate("() => game.observation.teleportLocations")
                         if p.startswith("Statue") and p != statue)  # fmt: skip
            state = play_keys(page, [*proteomics[:-2], {"action": "TELEPORT_TO_LOCATION", "arg1": wrong}, proteomics[-1]])
            assert state["outcome"] == "failure" and state["success"] is False
            expect_banner(page, "failure")
            hand_in(page, f"I guessed the {wrong}.")

            start_game(page, base, "Proteomics", "easy", 0)  # the same world again, to success, across a restart
            page.focus("body")
            play_keys(page, proteomics[:4])
            history = page.inner_text("#history")
            assert "USE" in history or "PICKUP" in history
        with live_server(tmp_path, port=port) as base:  # the server restarted: the page picks the game up
            page.reload()
            # `game` is set as soon as the server answers; the history, the board and the status
            # line follow (app.js `init`): wait for the status too, or the check races the page
            page.wait_for_function("game !== null && game.step === 4 && $('status').textContent !== ''")
            assert "Resumed" in page.inner_text("#status")
            page.focus("body")
            state = play_keys(page, proteomics[4:])
            assert state["outcome"] == "success"
            expect_banner(page, "success")
            hand_in(page, "The outlier species is the one the statue flag marks.")
        assert not errors, errors


def test_forty_new_game_presses_with_max_games_4_never_lock_out(tmp_path: Path) -> None:
    with live_server(tmp_path, max_games=4) as base, browser_page() as page:
        page.on("dialog", lambda dialog: dialog.accept())
        start_game(page, base, "DialogTest", "normal", 0)
        page.click("#view")  # lists the tile's objects: they must not outlive the game
        assert page.locator("#tile-objects > *").count() > 0
        ids = set()
        for i in range(40):
            before = page.evaluate("() => game.id")
            if i % 3 == 0:
                if i == 0:  # a clicked checkbox kept the keys: the arrows stopped working
                    page.click("#grid")
                    page.click("#show-ground")
                page.keyboard.press("w")  # some games are played a little before the next press
                page.wait_for_function("game.step === 1")
            page.click("#new-game")
            page.wait_for_function(f"game.id !== {before!r}", timeout=15_000)
            assert "already" not in page.inner_text("#status") and "slots" not in page.inner_text("#status")
            ids.add(page.evaluate("() => game.id"))
        assert len(ids) == 40
        assert page.locator("#tile-objects > *").count() == 0
