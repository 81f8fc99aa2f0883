"""What a participant's page may carry of a sealed game (study mode): never its outcome or gold.

Gold leaves the system only after an episode ends and only to the evaluator. Every server with
the study key plays the same `test#N`, so a participant told "success", a score, a field's
right/wrong or the gold of test#N could pass it on to whoever plays test#N next (another study
server, an agent on `env-serve`). So a sealed game ends with a receipt (what was handed in, that
it was recorded), and the page, the results download, the leaderboard and the log list carry
nothing that differs between a win and a loss. The log on disk keeps everything: the evaluator,
who holds the key and the logs folder, reads scores and gold with `discoverylab report` and
`discoverylab judge`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from discoverylab.instances import SEALED_SPLIT

GRADED = "by the evaluator only: a sealed game's score and gold never reach the participant's page"
PROGRESS_KEYS = ("taskName", "taskDescription", "completed")  # no completedSuccessfully
RESULT_KEYS = ("task", "difficulty", "instance", "participant", "status", "steps", "replay_of", "gold_seen",
               "session_seconds")  # fmt: skip


def is_sealed(start: Mapping[str, Any]) -> bool:
    """A log's start line (or a record) names a sealed test instance."""
    inst = start.get("instance")
    return start.get("split") == SEALED_SPLIT or (isinstance(inst, Mapping) and inst.get("split") == SEALED_SPLIT)


def progress(card: Mapping[str, Any]) -> dict[str, Any]:
    """Task progress without its success: `completed` says the task was decided (the episode
    ended, as `terminated` does), not how."""
    return {k: card[k] for k in PROGRESS_KEYS if k in card}


def observation(obs: Mapping[str, Any]) -> dict[str, Any]:
    """The observation with each `taskProgress` entry stripped of `completedSuccessfully`."""
    tasks = obs.get("taskProgress")
    if not isinstance(tasks, list):
        return dict(obs)
    return {**obs, "taskProgress": [{k: v for k, v in t.items() if k != "completedSuccessfully"} if isinstance(t, Mapping)
                                    else t for t in tasks]}  # fmt: skip


def receipt(knowledge: Mapping[str, Any] | None, sheet: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a finished sealed game shows: the report and sheet handed in, and that they were
    recorded (the log's final `end` line is fsync'd before any page sees this). No score, no
    right/wrong, no gold."""
    knowledge = knowledge or {}
    answers = (sheet or {}).get("answers")
    answers = dict(answers) if isinstance(answers, Mapping) else {}
    handed_in = not (knowledge.get("no_report") or knowledge.get("abandoned"))
    return {"received": handed_in, "recorded": True, "report": str(knowledge.get("report") or ""),
            "answers": answers, "fields_submitted": sorted(k for k, v in answers.items() if v not in (None, "", [])),
            "graded": GRADED}  # fmt: skip


def state(full: Mapping[str, Any], sheet: Mapping[str, Any] | None) -> dict[str, Any]:
    """A sealed game's page state: the episode's end without its outcome ("ended"), the
    observation without task success, and a receipt instead of grades."""
    out = dict(full)
    out["outcome"] = None if full.get("outcome") is None else "ended"
    out["success"] = None
    out["observation"] = observation(full["observation"])
    out["knowledge"] = None if full.get("knowledge") is None else receipt(full["knowledge"], sheet)
    out["answers"] = None
    return out


def result(full: Mapping[str, Any], sheet: Mapping[str, Any] | None) -> dict[str, Any]:
    """A sealed game in the results download: who played which instance, for how long, and the
    receipt; the scores, the scorecard and the sheet's grade stay in the log for the evaluator."""
    out = {k: full[k] for k in ("game", "log", *RESULT_KEYS) if k in full}
    out["knowledge"] = receipt(full.get("knowledge"), sheet)
    return out
