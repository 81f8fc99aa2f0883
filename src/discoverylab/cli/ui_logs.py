"""`report` and `judge` on a folder of browser-UI game logs (a human study): the CLI's side, which
may read the run folders' checks (`cli/`), while `ui/` stays below the CLI."""

from __future__ import annotations

import functools
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console


def _console() -> Console:
    """A console per command, as wide as the terminal; written to a file or a pipe (a study lead
    keeping the tables) as wide as the tables need: at rich's default 80 columns the study's games
    table cut its cells ("ok (rep…" for "ok (replay)")."""
    return Console() if sys.stdout.isatty() else Console(width=_UNBOUNDED)


_UNBOUNDED = 10_000  # columns: tables keep their natural width (they do not expand to it)


def or_ui_logs(command: Callable[..., None], ui_command: Callable[..., None]) -> Callable[..., None]:
    """`command` (report / judge on a `bench --out` folder), or `ui_command` when its RUN_DIR is
    a folder of UI game logs; the same options and help either way."""

    @functools.wraps(command)
    def either(**kwargs: Any) -> None:
        from discoverylab.ui.study_report import is_ui_logs

        if is_ui_logs(Path(kwargs["run_dir"])):
            ui_command(**kwargs)
        else:
            command(**kwargs)

    either.__annotations__ = typing.get_type_hints(command, include_extras=True)  # resolved in its own module
    return either


def report_ui_logs(run_dir: Path, markdown: bool = False, figure: Path | None = None, **_: Any) -> None:
    """The study's results from a UI logs folder, in the paper's Table 6 layout, with times."""
    from rich.table import Table

    from discoverylab.cli.options import fail

    if figure is not None:  # checked before any output, as on a bench folder
        fail(f"--figure draws a bench folder's results; {run_dir} holds UI game logs: use `report {run_dir} --markdown` "
             "for the study's tables.")

    from discoverylab.ui.study_report import _fmt, _replay_note, human_games, table6
    from discoverylab.ui.study_report import markdown as as_markdown

    if markdown:
        typer.echo(as_markdown(run_dir), nl=False)
        return
    board = table6(run_dir)
    table = Table(title=f"Humans and agents per task (Table 6 layout): {run_dir}")
    table.add_column("task", no_wrap=True)
    table.add_column("difficulty")
    for agent in board["agents"]:
        for metric in ("procedure", "completion", "knowledge", "answers", "minutes", "n"):
            table.add_column(f"{agent}\n{metric}", justify="right")
    for row in board["rows"]:
        cells = []
        for agent in board["agents"]:
            c = row["cells"].get(agent)
            cells += [_fmt(c[k], 1 if k == "minutes" else 2) if c else "" for k in ("procedure", "completion", "knowledge", "answers", "minutes")]
            cells.append(str(c["n"]) if c else "")
        table.add_row(row["task"], row["difficulty"], *cells)
    console = _console()
    console.print(table)
    games = Table(title="Human games")
    for col in ("participant", "task", "difficulty", "instance", "steps", "minutes", "status", "completion", "procedure", "knowledge"):
        games.add_column(col)
    for g in human_games(run_dir):
        games.add_row(g["participant"] or "–", g["task"], g["difficulty"], g["instance"], _fmt(g["steps"]), _fmt(g["minutes"], 1),
                      g["status"] + _replay_note(g), _fmt(g["completion"]),
                      _fmt(g["procedure"]), _fmt(g["knowledge"]))  # fmt: skip
    console.print(games)


def judge_ui_logs(run_dir: Path, model: str | None = None, base_url: str | None = None, as_json: bool = False,
                  **options: Any) -> None:  # fmt: skip
    """Grade every handed-in human report of a UI logs folder (writes <logs>/knowledge.jsonl)."""
    import json

    from discoverylab.agents.llm_common import LLMSettings
    from discoverylab.bench.judging import judge_episode, make_judge
    from discoverylab.cli.saved_runs import check_sealed_records
    from discoverylab.ui.logfiles import last_entry, log_files
    from discoverylab.ui.study_report import GRADES_FILE, judge_folder

    extra = {"json_mode": options["json_mode"]} if options.get("json_mode") else {}
    settings = LLMSettings(model=model, base_url=base_url, **extra)
    # a study's sealed games: the judge reads their gold, so it is named (as for a run folder)
    ends = [(last_entry(path) or {}).get("record") for path in log_files(run_dir)]
    check_sealed_records([{**rec, "split": (rec.get("instance") or {}).get("split")} for rec in ends
                          if isinstance(rec, dict) and isinstance(rec.get("instance"), dict)], settings)  # fmt: skip
    judge = make_judge(settings)
    rows = judge_folder(run_dir, lambda card, report: judge_episode(card, report, judge))
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for row in rows:
        score = row["knowledge_score"]
        _console().print(f"{row['log']}: {row['participant'] or '–'} {row['task']} {row['difficulty']} "
                      f"knowledge {'n/a' if score is None else f'{score:.2f}'}", soft_wrap=True)  # fmt: skip
    _console().print(f"{len(rows)} human report(s) graded; verdicts: {run_dir / GRADES_FILE}")
