"""Shared by the UI tests and the docs screenshots: a live server on a free port, Debian's
chromium driven by Playwright (never a downloaded browser), run logs of the oracle.

Screenshots for docs/images: `PYTHONPATH=src python tests/ui/ui_kit.py docs/images`.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from discoverylab.bench.episode import run_episode
from discoverylab.bench.records import write_jsonl
from discoverylab.ui.games import StepRequest
from discoverylab.ui.manager import GameManager
from discoverylab.ui.server import create_app
from uvicorn_kit import serve_in_thread

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
NO_CHROMIUM = "Debian's chromium is not installed (/usr/bin/chromium); `make test` installs it with apt-get"
# One task per theme for the screenshots: (file stem, task, difficulty).
THEME_SHOTS = [
    ("tutorial", "Tutorial", "normal"), ("proteomics", "Proteomics", "normal"),
    ("archaeology", "ArchaeologyDating", "normal"), ("lost-in-translation", "LostInTranslation", "normal"),
    ("reactor-lab", "ReactorLab", "normal"), ("chemistry", "CombinatorialChemistry", "normal"),
    ("plant-nutrients", "PlantNutrients", "normal"), ("rocket-science", "RocketScience", "normal"),
]  # fmt: skip


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() or shutil.which("chromium") is not None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def live_server(logs: Path, port: int | None = None, **kwargs: Any) -> Iterator[str]:
    """The UI app served by uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    with serve_in_thread(create_app(logs, **kwargs), port or free_port(), what="the UI server", timeout=15) as bound:
        yield f"http://127.0.0.1:{bound}"


@contextlib.contextmanager
def browser_page(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A Playwright page in headless Debian chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium"),
                                     args=CHROMIUM_ARGS)  # fmt: skip
        try:
            # The page's CSP forbids eval; Playwright's string predicates need it (test side only).
            page = browser.new_page(viewport={"width": width, "height": height}, bypass_csp=True)
            page.set_default_timeout(10_000)
            yield page
        finally:
            browser.close()


def oracle_log(folder: Path, task: str, seed: int = 0, difficulty: str = "normal") -> Path:
    """Run the oracle and write its log exactly as `discoverylab run` does."""
    record, log = run_episode(task, difficulty, seed, "oracle")
    path = folder / f"{record.task}-{record.difficulty}-s{seed}-oracle.jsonl"
    write_jsonl(path, log)
    return path


def start_game(page: Any, base: str, task: str, difficulty: str = "normal", seed: int = 0) -> None:
    """Open the play page and start a game through the picker."""
    if not page.url.startswith(base + "/play"):
        page.goto(base + "/play")
    page.wait_for_function("document.getElementById('task').options.length > 0")
    page.select_option("#task", task)
    page.select_option("#difficulty", difficulty)
    page.fill("#seed", str(seed))
    before = page.evaluate("() => (typeof game !== 'undefined' && game) ? game.id : null")
    page.click("#new-game")
    page.wait_for_function(f"game !== null && game.id !== {json.dumps(before)} && game.task === {task!r}")
    page.wait_for_function("document.getElementById('view').complete && document.getElementById('view').naturalWidth > 0")


def theme_screenshots(page: Any, base: str, out: Path, themes: list[tuple[str, str, str]] = THEME_SHOTS) -> list[Path]:
    """A screenshot of the play page per theme (what docs/images holds)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for stem, task, difficulty in themes:
        start_game(page, base, task, difficulty)
        if task == "RocketScience":  # show the rocket, with the keys a player uses
            page.focus("body")
            page.keyboard.press("l")
            page.keyboard.type("rocket")
            page.keyboard.press("Enter")
            page.wait_for_function("game.step === 1")
            page.wait_for_function("document.getElementById('view').complete")
        path = out / f"ui-{stem}.png"
        page.screenshot(path=str(path))
        paths.append(path)
    return paths


def replay_and_board_screenshots(page: Any, base: str, log_name: str, step: int, out: Path) -> list[Path]:
    """Screenshots of the replay page (at `step`) and of the leaderboard."""
    page.goto(f"{base}/replay?log={log_name}")
    page.wait_for_function("rp !== null")
    page.fill("#rp-slider", str(step))
    page.dispatch_event("#rp-slider", "input")
    page.click("#rp-show-scorecard")
    page.wait_for_selector("#rp-scorecard tr")
    page.wait_for_function("document.getElementById('rp-view').complete && document.getElementById('rp-view').naturalWidth > 0")
    shots = [out / "ui-replay.png", out / "ui-leaderboard.png"]
    page.screenshot(path=str(shots[0]))
    page.goto(f"{base}/leaderboard")
    page.wait_for_selector("#board td")
    page.locator("#leaderboard").screenshot(path=str(shots[1]))
    return shots


def _small(path: Path) -> None:
    """Re-save a screenshot as a 256-colour PNG (a quarter of the size, same look)."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


if __name__ == "__main__":  # docs screenshots: the same code the browser test runs
    import tempfile

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
    with tempfile.TemporaryDirectory() as tmp, live_server(Path(tmp)) as url, browser_page() as pg:
        for task in ("DialogTest", "PickAndPlaceTest"):
            oracle_log(Path(tmp), task)
            write_jsonl(Path(tmp) / f"{task}-normal-s0-random.jsonl", run_episode(task, "normal", 0, "random", 30)[1])
        human = GameManager(Path(tmp)).create("DialogTest", "normal", 0)  # a human replaying the oracle
        for line in Path(tmp, "DialogTest-normal-s0-oracle.jsonl").read_text().splitlines()[1:-1]:
            human.step(StepRequest(**json.loads(line)["action"]))
        human.finish("The person asked me to pick fruit names in the dialog.", None)
        pg.on("dialog", lambda dialog: dialog.accept())
        shots = theme_screenshots(pg, url, target)
        shots += replay_and_board_screenshots(pg, url, "PickAndPlaceTest-normal-s0-oracle.jsonl", 3, target)
        for shot in shots:
            _small(shot)
            sys.stdout.write(f"wrote {shot}\n")
