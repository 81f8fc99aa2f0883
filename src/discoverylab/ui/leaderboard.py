"""Human vs agent scores over a folder of run logs, in the paper's Table 6 layout.

Per task and difficulty, per agent (human, oracle, random, LLM agents...): mean procedure score,
completion (completed successfully), knowledge and (human games) minutes of play, over the
finished episodes (logs with an
`end` line). Knowledge is averaged over graded episodes only; "not graded" when there are none.

Every started human game counts: one closed or left without a report is failed with knowledge 0
(its `end` line says abandoned; a log a crashed server left without one counts the same, unless
it is a game still in progress, `live`). A log with no move and no end (New game pressed, then
the tab closed; swept after an hour) showed nothing but the start: it is no game. A human game on an instance someone already played in
this folder is listed as `human (replay)`, apart from the first game: whoever ended a game early
to read its gold cannot replay it into a clean score. So is a game that was open while another
game of its instance ended and showed its gold (`gold_seen`): a game started first, won after
ending a second one at step 0 to read the answer, is no clean score either.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from discoverylab.ui.logfiles import finite, first_line, last_entry, log_files
from discoverylab.ui.sealed import is_sealed

MAX_LOG_BYTES = 50_000_000
HUMAN = "human"
REPLAY = "human (replay)"


def episodes(logs: Path, live: frozenset[str] = frozenset()) -> Iterator[dict[str, Any]]:
    """One row per finished episode under `logs` (agent, task, difficulty, scores, minutes);
    human logs without an end that are not `live` (names relative to `logs`) count as
    abandoned if a move was played (else they are no game). Odd files (folders, FIFOs, dangling links) and rows whose scores are not finite
    numbers are skipped, never an error."""
    for path in log_files(logs):
        name = path.relative_to(logs).as_posix()
        end = last_entry(path, "end", MAX_LOG_BYTES)
        record = (end or {}).get("record")
        if not isinstance(record, dict):
            start = first_line(path) if end is None else None
            if start is None or start.get("agent") != HUMAN or name in live:
                continue
            last = last_entry(path, "step", MAX_LOG_BYTES)
            if last is None:  # never played: a page load, no game
                continue
            record = {**start, "procedure_score": 0.0, "success": False, "status": "abandoned",
                      "steps": last.get("step"), "session_seconds": last.get("elapsed_s")}  # fmt: skip
            end = {"knowledge": {"score": 0.0, "abandoned": True}}
        knowledge = end.get("knowledge") if end else None
        score: float | None = None
        if isinstance(knowledge, dict):
            if knowledge.get("pending") and name not in live:  # the episode ended, no report came
                score = 0.0
            elif knowledge.get("graded") or knowledge.get("abandoned") or knowledge.get("no_report"):
                score = finite(knowledge.get("score"))
        if knowledge is None and record.get("agent") != HUMAN:  # an agent's run: graded in its record
            score = finite(record.get("knowledge_score"))
        procedure = finite(record.get("procedure_score"))
        if procedure is None:
            continue
        agent = str(record.get("agent", "?"))
        seconds = finite(record.get("session_seconds"))
        yield {
            "agent": REPLAY if agent == HUMAN and (record.get("replay_of") or record.get("gold_seen")) else agent,
            "participant": record.get("participant") if isinstance(record.get("participant"), str) else None,
            "task": str(record.get("task", "?")),
            "difficulty": str(record.get("difficulty", "?")),
            "procedure": procedure,
            "completion": 1.0 if record.get("success") is True else 0.0,
            "knowledge": score,
            "minutes": None if seconds is None else seconds / 60.0,
            "answers": finite(record.get("answers_score")),
            "log": name,
            "record": record,
            "sealed": is_sealed(record),
        }


def leaderboard(logs: Path, live: frozenset[str] = frozenset(), include_sealed: bool = True) -> dict[str, Any]:
    """{"agents": [...], "rows": [{"task", "difficulty", "cells": {agent: {n, procedure, ...}}}],
    "sealed_hidden": n}. Without `include_sealed` (the page's, which participants read) sealed
    episodes are only counted: a mean over one participant's game is that game's score."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    hidden = 0
    for ep in episodes(logs, live):
        if ep["sealed"] and not include_sealed:
            hidden += 1
            continue
        groups[(ep["task"], ep["difficulty"])][ep["agent"]].append(ep)
    agents = sorted({a for g in groups.values() for a in g}, key=lambda a: (a != HUMAN, a != REPLAY, a))
    rows = []
    for (task, difficulty), by_agent in sorted(groups.items()):
        cells = {}
        for agent, eps in by_agent.items():
            graded = [e["knowledge"] for e in eps if e["knowledge"] is not None]
            times = [e["minutes"] for e in eps if e["minutes"] is not None]
            sheets = [e["answers"] for e in eps if e["answers"] is not None]
            cells[agent] = {
                "n": len(eps),
                "procedure": sum(e["procedure"] for e in eps) / len(eps),
                "completion": sum(e["completion"] for e in eps) / len(eps),
                "knowledge": sum(graded) / len(graded) if graded else None,
                "graded": len(graded),
                "minutes": sum(times) / len(times) if times else None,
                "answers": sum(sheets) / len(sheets) if sheets else None,
            }
        rows.append({"task": task, "difficulty": difficulty, "cells": cells})
    return {"agents": agents, "rows": rows, "sealed_hidden": hidden}
