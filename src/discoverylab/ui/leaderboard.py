"""Human vs agent scores over a folder of run logs, in the paper's Table 6 layout.

Per task and difficulty, per agent (human, oracle, random, LLM agents...): mean procedure score,
completion (completed successfully) and knowledge, over the finished episodes (logs with an
`end` line). Knowledge is averaged over graded episodes only; "not graded" when there are none.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_LOG_BYTES = 50_000_000


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


def episodes(logs: Path) -> Iterator[dict[str, Any]]:
    """One row per finished episode under `logs` (agent, task, difficulty, scores)."""
    root = logs.resolve()
    for path in sorted(logs.rglob("*.jsonl")):
        if path.name == "results.jsonl" or not path.resolve().is_relative_to(root):
            continue
        end = _end_line(path)
        record = (end or {}).get("record")
        if not isinstance(record, dict):
            continue
        knowledge = end.get("knowledge") if end else None
        graded = isinstance(knowledge, dict) and knowledge.get("graded")
        yield {
            "agent": str(record.get("agent", "?")),
            "task": str(record.get("task", "?")),
            "difficulty": str(record.get("difficulty", "?")),
            "procedure": float(record.get("procedure_score", 0.0)),
            "completion": 1.0 if record.get("success") else 0.0,
            "knowledge": float(knowledge["score"]) if graded and knowledge else None,
        }


def leaderboard(logs: Path) -> dict[str, Any]:
    """{"agents": [...], "rows": [{"task", "difficulty", "cells": {agent: {n, procedure, ...}}}]}."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for ep in episodes(logs):
        groups[(ep["task"], ep["difficulty"])][ep["agent"]].append(ep)
    agents = sorted({a for g in groups.values() for a in g}, key=lambda a: (a != "human", a))
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
