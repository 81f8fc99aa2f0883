"""`discoverylab play`: after a discovery task, ask the player for the task's answer sheet."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from discoverylab.scoring.answer_sheet import Choice


def _value(text: str) -> Any:
    """What the player typed: JSON when it parses (a list, a number), else the text itself; a
    bare comma-separated list of numbers is a list."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 1:
        try:
            return [float(p) for p in parts]
        except ValueError:
            return text
    return text


def read_answer_sheet(console: Console, env: Any) -> dict[str, Any] | None:
    """Print the form and read one line per field (EOF or an empty line skips); None when the
    task has no answer sheet. Nothing is graded here: the game grades and logs the sheet."""
    from discoverylab.scenarios.answer_forms import answer_form, has_answer_sheet

    if env.scenario is None or not has_answer_sheet(env.scenario_cls.task_id):
        return None
    form = answer_form(env)
    console.print(form.text())
    answers: dict[str, Any] = {}
    for f in form.fields:
        try:
            line = console.input(f"[bold cyan]{f.name}> [/bold cyan]").strip()
        except (EOFError, KeyboardInterrupt):
            break
        if line:
            answers[f.name] = line if isinstance(f.kind, Choice) else _value(line)
    return answers


def print_sheet_grade(console: Console, sheet: dict[str, Any]) -> None:
    """The graded sheet as the game logged it (`answers_score`, `answers_grade`), gold included:
    shown only after the sheet was handed in."""
    grade = sheet["answers_grade"]
    for row in grade["fields"]:
        note = grade["errors"].get(row["name"], "")
        mark = "[green]right[/green]" if row["correct"] else f"[red]wrong[/red] {note}".rstrip()
        console.print(f"{row['name']}: {mark} (gold: {row['gold']})")
    console.print(f"answer sheet: {sheet['answers_score']:.2f}")
