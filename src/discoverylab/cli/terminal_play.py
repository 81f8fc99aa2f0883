"""`discoverylab play`: a task in the terminal, logged like a browser game.

The game is a UI game (`ui.manager.GameManager`): its log is written to `--logs` in the UI's
format (start line, one step line per action with times, the end line with the report), so
`replay`, `report` and `judge` read it like any human game. Commands name objects by name or
UUID (`ui.commands`); a command that does not parse says why and costs no step. The task is
printed once (and on `task`), and text is printed as is (no rich markup: '[uuid: 12]' stays).
As on the page, the knowledge report is asked when the episode ends, or handed in any time with
`report <text>`; `quit` before the end leaves the game abandoned (recorded, failed). The full
scorecard is printed only after that (`main.play`), never before the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from discoverylab.cli.answer_prompt import print_sheet_grade, read_answer_sheet
from discoverylab.render.text import render_text
from discoverylab.ui.commands import HELP, parse_command
from discoverylab.ui.games import Game, StepRequest, UIError
from discoverylab.ui.manager import GameManager


def view(obs: dict[str, Any], with_task: bool) -> str:
    """The text view, without the task's text unless asked (it does not change)."""
    text = render_text(obs)
    if with_task:
        return text
    task = f"Task: {obs['taskProgress'][0]['description'].strip()}\n"
    return text.replace(task, "", 1)


def play_in_terminal(console: Console, task: str, difficulty: str, seed: int, max_steps: int | None, logs: Path) -> Game:
    """Play until the episode ends or the player quits; returns the ended game."""
    games = GameManager(logs, max_games=1)
    try:  # the logs folder is made here: a file in its place is a clear error, not a traceback
        game = games.create(task, difficulty, seed, client="terminal", max_steps=max_steps)
    except OSError as exc:
        raise UIError(f"cannot use {logs} as the logs folder: {exc.strerror or exc}") from None
    say = lambda text: console.print(text, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
    say(view(game.info["observation"], with_task=True))
    report: str | None = None
    while not game.over:
        try:
            line = console.input("> ").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if line.lower() in ("quit", "exit", "q"):
            break
        if line.lower() in ("help", "?"):
            say(HELP + "\n  report <text>                   hand in your knowledge report (ends the game)")
            continue
        if line.lower() == "task":
            say(game.info["observation"]["taskProgress"][0]["description"].strip())
            continue
        if line.lower().startswith("report ") and line[7:].strip():
            report = line[7:].strip()
            break
        try:
            game.step(StepRequest.model_validate(parse_command(line, game.info["observation"], game.seen)))
        except (ValueError, UIError) as exc:
            say(f"{str(exc).splitlines()[-1]} (no step taken)")
            continue
        say(view(game.info["observation"], with_task=False))
    outcome = game.outcome()
    say(f"Episode over: {outcome.upper()}." if outcome else "You left the game before it ended.")
    if report is None and game.over:  # like the page: the report is asked when the episode ends
        try:
            report = console.input("Your knowledge report (what did you find out? Enter to skip): ").strip()
        except (EOFError, KeyboardInterrupt):
            report = ""
    answers = read_answer_sheet(console, game.env)  # discovery tasks: before any gold is shown
    if report or answers:  # the sheet is graded and logged with the report, as the page's
        game.finish(report or "", games.judge(), answers)
    else:  # left without a report or a sheet: abandoned (or, after the end, the outcome with knowledge 0)
        games.close(game.id, "terminal")
    if answers is not None and game.sheet is not None:
        print_sheet_grade(console, game.sheet)
    if game.log_path.exists():
        say(f"Log: {game.log_path}")
    return game
