"""`discoverylab report` and `judge` on the UI's logs folder: the human study's results.

`report <ui logs>` prints the paper's Table 6 layout (per task and difficulty: procedure,
completion, knowledge, answer sheet (where the build has the forms) and minutes of play per agent, humans beside agents) and one row per human
game (participant, instance, steps, minutes, outcome). `judge <ui logs>` grades every handed-in
human report offline with the agents' knowledge judge and writes the verdicts to
`<logs>/knowledge.jsonl` (the logs themselves are never rewritten); the report and the
leaderboard then use those grades for reports the server left ungraded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from discoverylab.bench.records import dumps
from discoverylab.ui.leaderboard import HUMAN, REPLAY, episodes, leaderboard
from discoverylab.ui.logfiles import first_line, last_entry, log_files

GRADES_FILE = "knowledge.jsonl"


def is_ui_logs(folder: Path) -> bool:
    """A folder of UI game logs (human start lines), not a `bench --out` folder."""
    if not folder.is_dir() or (folder / "results.jsonl").is_file():
        return False
    return any((first_line(p) or {}).get("agent") == HUMAN for p in log_files(folder))


def human_games(folder: Path) -> list[dict[str, Any]]:
    """One row per human game in the folder: who, what, how long, how it ended."""
    grades = load_grades(folder)
    rows = []
    for ep in episodes(folder):
        if ep["agent"] not in (HUMAN, REPLAY):
            continue
        record: dict[str, Any] = ep["record"]  # the end line's, or the start line's for a game left without one
        knowledge = ep["knowledge"] if ep["knowledge"] is not None else grades.get(ep["log"], {}).get("knowledge_score")
        status = str(record.get("status", "abandoned"))
        rows.append({**ep, "knowledge": knowledge, "steps": record.get("steps"), "status": status,
                     "instance": _instance(record), "gold_seen": record.get("gold_seen")})  # fmt: skip
    return rows


def _instance(record: dict[str, Any]) -> str:
    inst = record.get("instance")
    if isinstance(inst, dict) and inst.get("split") == "test":
        return f"test#{inst.get('index')}"
    return f"seed {record.get('seed')}" if record.get("seed") is not None else "?"


def load_grades(folder: Path) -> dict[str, dict[str, Any]]:
    """log name -> the offline grade `judge` wrote for it."""
    out: dict[str, dict[str, Any]] = {}
    path = folder / GRADES_FILE
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("log"), str):
                out[row["log"]] = row
    return out


def judge_folder(folder: Path, grade: Callable[[dict[str, Any], str], tuple[float | None, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Grade every handed-in human report (`grade(scorecard, report)` -> (score, verdicts));
    writes `<folder>/knowledge.jsonl` and returns its rows."""
    rows = []
    for path in log_files(folder):
        end = last_entry(path)
        start = first_line(path) or {}
        if start.get("agent") != HUMAN or not end:
            continue
        knowledge: dict[str, Any] = end["knowledge"] if isinstance(end.get("knowledge"), dict) else {}
        report = knowledge.get("report")
        if not isinstance(report, str) or knowledge.get("pending"):
            continue
        record: dict[str, Any] = end["record"] if isinstance(end.get("record"), dict) else {}
        score, verdicts = grade(end.get("scorecard") or {}, report) if report.strip() else (0.0, [])
        rows.append({"log": path.relative_to(folder).as_posix(), "task": record.get("task"),
                     "difficulty": record.get("difficulty"), "participant": record.get("participant"),
                     "knowledge_score": score, "knowledge_verdicts": verdicts})  # fmt: skip
    (folder / GRADES_FILE).write_text("".join(dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def table6(folder: Path) -> dict[str, Any]:
    """The leaderboard, with offline grades filled in for reports the server left ungraded."""
    grades = load_grades(folder)
    if not grades:
        return leaderboard(folder)
    board = leaderboard(folder)
    humans: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for game in human_games(folder):
        humans.setdefault((game["task"], game["difficulty"], game["agent"]), []).append(game)
    for row in board["rows"]:
        for agent in (HUMAN, REPLAY):
            games = humans.get((row["task"], row["difficulty"], agent))
            if games and agent in row["cells"]:
                scores = [g["knowledge"] for g in games if g["knowledge"] is not None]
                row["cells"][agent].update(knowledge=sum(scores) / len(scores) if scores else None, graded=len(scores))
    return board


def _replay_note(game: dict[str, Any]) -> str:
    """Why a game is not clean: its instance was played before, or another game of it showed its gold."""
    if game["agent"] != REPLAY:
        return ""
    return " (gold seen)" if game.get("gold_seen") else " (replay)"


def _fmt(value: Any, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown(folder: Path) -> str:
    """Table 6 and the per-game rows as markdown."""
    board = table6(folder)
    agents = board["agents"]
    head = ["task", "difficulty"] + [f"{a} {m}" for a in agents for m in ("procedure", "completion", "knowledge", "answers", "minutes", "n")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in board["rows"]:
        cells = [row["task"], row["difficulty"]]
        for agent in agents:
            c = row["cells"].get(agent)
            cells += [_fmt(c[k], 1 if k == "minutes" else 2) if c else "" for k in ("procedure", "completion", "knowledge", "answers", "minutes")]
            cells.append(str(c["n"]) if c else "")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| participant | task | difficulty | instance | steps | minutes | status | completion | procedure | knowledge |",
              "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for g in human_games(folder):
        lines.append(f"| {g['participant'] or '–'} | {g['task']} | {g['difficulty']} | {g['instance']} | {_fmt(g['steps'])} | "
                     f"{_fmt(g['minutes'], 1)} | {g['status']}{_replay_note(g)} | "
                     f"{_fmt(g['completion'])} | {_fmt(g['procedure'])} | {_fmt(g['knowledge'])} |")  # fmt: skip
    return "\n".join(lines) + "\n"
