"""A player's results, downloaded from the page: the finished games whose ids the browser holds.

Game ids are the only credential the UI has (random, unguessable; a page drives only its own
game), so an export names games by id, never by participant name, which anyone can type. Each
game is read from its log's last `end` line: a game counts once that line is final (report
handed in, or closed without one): what the page itself shows of a finished game, whose full
scorecard, knowledge verdicts and graded sheet it shows then too. A game still in play, or
awaiting its report, is left out (its gold would fill the sheet), and a sealed game carries its
instance's public part only (index and commitment, never a seed) and its receipt (what was handed
in), never its scores, scorecard or graded sheet, as its page does (`ui.sealed`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from discoverylab.ui.logfiles import finite, last_entry
from discoverylab.ui.sealed import is_sealed
from discoverylab.ui.sealed import result as sealed_result

MAX_EXPORT_GAMES = 200
RECORD_KEYS = ("task", "difficulty", "seed", "instance", "participant", "status", "steps", "completed", "success",
               "procedure_score", "replay_of", "gold_seen", "session_seconds", "answers", "answers_score",
               "answers_grade")  # fmt: skip
CSV_COLUMNS = ("game", "participant", "task", "difficulty", "split", "index", "seed", "commitment", "status", "steps",
               "completed", "success", "procedure_score", "knowledge_score", "knowledge_graded", "answers_score",
               "session_seconds", "replay_of", "gold_seen", "report", "log")  # fmt: skip


def game_ids(text: str) -> list[str]:
    """The comma-separated ids of the query, without blanks and repeats, at most MAX_EXPORT_GAMES."""
    ids = list(dict.fromkeys(i.strip() for i in text.split(",") if i.strip()))
    if len(ids) > MAX_EXPORT_GAMES:
        raise ValueError(f"At most {MAX_EXPORT_GAMES} games per export, not {len(ids)}.")
    return ids


def finished_game(game_id: str, path: Path, max_bytes: int) -> dict[str, Any] | None:
    """The game's results from its log's final `end` line, or None while it is not finished."""
    end = last_entry(path, "end", max_bytes)
    knowledge = (end or {}).get("knowledge")
    record = (end or {}).get("record")
    if end is None or not isinstance(knowledge, dict) or knowledge.get("pending") or not isinstance(record, dict):
        return None
    out: dict[str, Any] = {"game": game_id, "log": path.name}
    out.update({k: record[k] for k in RECORD_KEYS if k in record})
    if out.get("seed") is None:
        out.pop("seed", None)  # a sealed game's (the record holds null): its page shows none either
    out["knowledge"] = knowledge
    if is_sealed(record):  # a receipt: its scores and gold are the evaluator's (`discoverylab report`)
        return sealed_result(out, record)
    out["scorecard"] = end.get("scorecard")
    return out


def export(ids: list[str], logs_of: Callable[[list[str]], dict[str, Path | None]], max_bytes: int) -> dict[str, Any]:
    """`{"games": [...], "skipped": [{"game", "reason"}]}` for the ids, in their order."""
    games: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    paths = logs_of(ids)
    for game_id in ids:
        path = paths.get(game_id)
        result = None if path is None else finished_game(game_id, path, max_bytes)
        if result is not None:
            games.append(result)
        else:
            skipped.append({"game": game_id[:64], "reason": "no such game" if path is None else "not finished"})
    return {"games": games, "skipped": skipped}


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting like a formula gets a leading quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(games: list[dict[str, Any]]) -> str:
    """One row per game (CSV_COLUMNS): the numbers and the report, without the nested scorecard."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for g in games:
        inst: dict[str, Any] = g["instance"] if isinstance(g.get("instance"), dict) else {}
        knowledge = g.get("knowledge") or {}
        row = {**g, "split": inst.get("split"), "index": inst.get("index"), "commitment": inst.get("commitment"),
               "knowledge_score": finite(knowledge.get("score")), "knowledge_graded": knowledge.get("graded"),
               "report": knowledge.get("report", "")}  # fmt: skip
        writer.writerow([_cell("" if row.get(c) is None else row.get(c)) for c in CSV_COLUMNS])
    return buffer.getvalue()
