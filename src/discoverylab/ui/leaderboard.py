"""Human vs agent scores over a folder of run logs, in the paper's Table 6 layout.

Per task and difficulty, per agent (human, oracle, random, LLM agents...): mean procedure score,
completion (completed successfully) and knowledge, over the finished episodes (logs with an
`end` line). Knowledge is averaged over graded episodes only; "not graded" when there are none.

Every started human game counts: one closed or left without a report is failed with knowledge 0
(its `end` line says abandoned; a log a crashed server left without one counts the same, unless
it is a game still in progress, `live`). A human game on an instance someone already played in
this folder is listed as `human (replay)`, apart from the first game: whoever ended a game early
to read its gold cannot replay it into a clean score.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_LOG_BYTES = 50_000_000
HUMAN = "human"
REPLAY = "human (replay)"


def _end_line(path: Path) -> dict[str, Any] | None:
    """The log's `end` entry, read from the file's tail (logs end with it)."""
    size = path.stat().st_size
    if size > MAX_LOG_BYTES:
        return None
    with path.open("rb") as fh:
        fh.seek(max(0, size - 262_144))
        tail = fh.read().decode("utf-8", errors="replace")
    for line in reversed(tail.splitlines()):
        if '"type":"end"' in line.replace(" ", ""):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                return None
            return entry if isinstance(entry, dict) else None
    return None


def _start_line(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            entry = json.loads(fh.readline(4_000_000))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def episodes(logs: Path, live: frozenset[str] = frozenset()) -> Iterator[dict[str, Any]]:
    """One row per finished episode under `logs` (agent, task, difficulty, scores); human logs
    without an end that are not `live` (names relative to `logs`) count as abandoned."""
    root = logs.resolve()
    for path in sorted(logs.rglob("*.jsonl")):
        if path.name == "results.jsonl" or not path.resolve().is_relative_to(root):
            continue
        end = _end_line(path)
        record = (end or {}).get("record")
        if not isinstance(record, dict):
            start = _start_line(path) if end is None else None
            if start is None or start.get("agent") != HUMAN or path.relative_to(logs).as_posix() in live:
                continue
            record = {**start, "procedure_score": 0.0, "success": False}
            end = {"knowledge": {"score": 0.0, "abandoned": True}}
        knowledge = end.get("knowledge") if end else None
        graded = isinstance(knowledge, dict) and (knowledge.get("graded") or knowledge.get("abandoned"))
        agent = str(record.get("agent", "?"))
        yield {
            "agent": REPLAY if agent == HUMAN and record.get("replay_of") else agent,
            "task": str(record.get("task", "?")),
            "difficulty": str(record.get("difficulty", "?")),
            "procedure": float(record.get("procedure_score", 0.0)),
            "completion": 1.0 if record.get("success") else 0.0,
            "knowledge": float(knowledge["score"]) if graded and knowledge else None,
        }


def leaderboard(logs: Path, live: frozenset[str] = frozenset()) -> dict[str, Any]:
    """{"agents": [...], "rows": [{"task", "difficulty", "cells": {agent: {n, procedure, ...}}}]}."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for ep in episodes(logs, live):
        groups[(ep["task"], ep["difficulty"])][ep["agent"]].append(ep)
    agents = sorted({a for g in groups.values() for a in g}, key=lambda a: (a != HUMAN, a != REPLAY, a))
    rows = []
    for (task, difficulty), by_agent in sorted(groups.items()):
        cells = {}
        for agent, eps in by_agent.items():
            graded = [e["knowledge"] for e in eps if e["knowledge"] is not None]
            cells[agent] = {
                "n": len(eps),
                "procedure": sum(e["procedure"] for e in eps) / len(eps),
                "completion": sum(e["completion"] for e in eps) / len(eps),
                "knowledge": sum(graded) / len(graded) if graded else None,
                "graded": len(graded),
            }
        rows.append({"task": task, "difficulty": difficulty, "cells": cells})
    return {"agents": agents, "rows": rows}
