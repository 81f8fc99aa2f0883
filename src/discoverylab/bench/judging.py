"""Knowledge grading of episode records (paper App. D): one 0/1 verdict per critical question.

A judge never loses work. During a run, `judge_record` grades an episode whose record is already
complete and never raises: a judge that fails (HTTP 400, unusable replies, a deadline, a server
without json_schema support) leaves the record `ok` with its scores, marks its knowledge
`unjudged` and records each verdict's validity (`valid`, `retries`, `error`). `judge_run`
(`discoverylab judge`) re-grades a saved run folder offline, by default every episode, or only
the unjudged ones; it writes `<run>/knowledge.jsonl` (merged with the rows of an earlier pass, so
an episode it could not grade this time keeps its earlier grade), leaves `results.jsonl` untouched
and returns what it could not grade instead of raising.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench import records
from discoverylab.llm import LLMClient, knowledge_judge
from discoverylab.llm.judge import DEFAULT_CONTEXT_TOKENS, LLMJudge
from discoverylab.scoring.knowledge import grade_knowledge

KNOWLEDGE_FILE = "knowledge.jsonl"
EMBEDDED_CONTEXT_TOKENS = 4096  # the embedded SmolLM2 server's n_ctx
JUDGED, UNJUDGED = "judged", "unjudged"
KEY_FIELDS = ("task", "difficulty", "seed", "split", "index", "agent")


def make_judge(settings: LLMSettings | None = None, client: LLMClient | None = None, *,
               request_timeout: float | None = None, context_tokens: int | None = None) -> LLMJudge:  # fmt: skip
    """A fail-closed yes/no judge with the settings' model, endpoint and `json_mode`.

    An unusable verdict is marked invalid (never raised). `request_timeout` None means the
    client's default ($DISCOVERYLAB_LLM_REQUEST_TIMEOUT, which `bench --request-timeout` sets for
    its workers); `context_tokens` None means 4,096 for the embedded model, else 8,192.
    """
    settings = settings or LLMSettings()
    short = client is None and settings.embedded  # the embedded 135M model: keep verdicts short
    if client is None:
        client = settings.client()
        if request_timeout is not None:
            client.request_timeout = request_timeout
    if context_tokens is None:
        context_tokens = EMBEDDED_CONTEXT_TOKENS if short else DEFAULT_CONTEXT_TOKENS
    return knowledge_judge(client, fail_closed=True, max_explanation_chars=300 if short else 600,
                           max_tokens=settings.max_tokens or 400, context_tokens=context_tokens)  # fmt: skip


def asks_questions(scorecard: dict[str, Any]) -> bool:
    return bool(scorecard.get("knowledgeQuestions") or scorecard.get("criticalQuestions"))


def judge_episode(scorecard: dict[str, Any], knowledge: str | None, judge: Any) -> tuple[float | None, list[dict[str, Any]]]:
    """(score, verdicts) for one episode; (None, []) when the task asks no critical questions.

    The score is None, with the verdicts saying why, when the judge could not grade every question.
    """
    if not asks_questions(scorecard):
        return None, []
    grade = grade_knowledge(scorecard, knowledge or "(the agent wrote down no knowledge)", judge)
    verdicts = [{"criticalQuestion": v["question"], "evaluation": v["evaluation"], "explanation": v["explanation"],
                 "valid": v["valid"], "retries": v["retries"], "error": v["error"]} for v in grade.verdicts]  # fmt: skip
    return grade.score, verdicts


def judge_record(record: Any, settings: LLMSettings, make: Callable[[LLMSettings], Any] = make_judge) -> dict[str, Any] | None:
    """Grade a finished record's knowledge in place; never raises. Returns the log entry (None:
    the task asks no critical question, nothing to judge).

    Only the knowledge fields change (`knowledge_score`, `knowledge_verdicts`, `knowledge_status`
    and `knowledge_error`): the status, steps and scores of the episode are the judge's to read,
    never to change.
    """
    card = record.scorecard or {}
    if not asks_questions(card):
        return None
    try:
        score, verdicts = judge_episode(card, record.knowledge, make(settings))
        error = next((v["error"] for v in verdicts if not v["valid"]), None)
    except Exception as exc:  # noqa: BLE001 - whatever the judge does, the episode's result stands
        score, verdicts, error = None, [], f"{type(exc).__name__}: {str(exc)[:300]}"
    record.knowledge_score, record.knowledge_verdicts = score, verdicts
    record.knowledge_status = JUDGED if score is not None else UNJUDGED
    record.knowledge_error = error
    return {"type": "judge", "status": record.knowledge_status, "knowledge_score": score,
            "knowledge_verdicts": verdicts, "error": error}  # fmt: skip


def judge_within(record: Any, settings: LLMSettings, seconds_left: float | None,
                 make: Callable[..., Any] | None = None) -> dict[str, Any] | None:  # fmt: skip
    """`judge_record` bounded by the episode's time left (`--episode-timeout`); never raises.

    Without a bound a hanging judge let the runner kill the worker at the episode deadline, which
    threw away the finished episode's record, usage and log and recorded a `timeout` (issue 23.8).
    Here the judge runs in a thread on a copy of the record, each request limited to the time
    left; if it is not done in time the episode stays `ok` and its knowledge is `unjudged`
    (`discoverylab judge` grades it later). The abandoned thread ends at its request deadline.
    """
    if seconds_left is None:
        return judge_record(record, settings) if make is None else judge_record(record, settings, make)
    margin = max(0.2, min(2.0, 0.1 * seconds_left))  # to write the log and hand the record back
    budget = seconds_left - margin
    if not asks_questions(record.scorecard or {}):
        return None
    if budget <= 0.05:
        return _unjudged(record, "no time was left to judge before --episode-timeout; "
                                 "grade it with `discoverylab judge`")
    from discoverylab.llm.client import DEFAULT_REQUEST_TIMEOUT, ENV_REQUEST_TIMEOUT, _env_seconds

    per_request = min(budget, _env_seconds(ENV_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT))
    copy = record.model_copy(deep=True)
    box: list[dict[str, Any] | None] = []
    thread = threading.Thread(target=lambda: box.append(judge_record(copy, settings, partial(make or make_judge, request_timeout=per_request))),
                              name="knowledge-judge", daemon=True)  # fmt: skip
    thread.start()
    thread.join(budget)
    if thread.is_alive() or not box:
        return _unjudged(record, f"the judge did not finish in the {budget:.1f} s left before --episode-timeout; "
                                 "grade it with `discoverylab judge`")
    for name in ("knowledge_score", "knowledge_verdicts", "knowledge_status", "knowledge_error"):
        setattr(record, name, getattr(copy, name))
    return box[0]


STOPPED_WHILE_JUDGING = ("the run was stopped (Ctrl-C or SIGTERM) while the judge graded this finished episode; "
                         "grade it with `discoverylab judge RUN_DIR --unjudged-only`")


def stopped_while_judging(record: Any) -> Any:
    """A copy of a played episode's record with its knowledge `unjudged`, for the runner to keep
    if a stop cuts the judging short (`bench.pool.report_played`): the episode is not played again."""
    copy = record.model_copy(deep=True)
    _unjudged(copy, STOPPED_WHILE_JUDGING)
    return copy


def _unjudged(record: Any, error: str) -> dict[str, Any]:
    record.knowledge_score, record.knowledge_verdicts = None, []
    record.knowledge_status, record.knowledge_error = UNJUDGED, error
    return {"type": "judge", "status": UNJUDGED, "knowledge_score": None, "knowledge_verdicts": [], "error": error}


@dataclass(slots=True)
class JudgeRun:
    """What a `judge_run` pass did: rows graded, episodes it could not grade (key, error), skipped."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    failed: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    skipped: int = 0  # already judged (with `only_unjudged`) or not ok


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    """The episode a record or knowledge row is about (sealed rows have no seed: split + index)."""
    from discoverylab.bench.episode import episode_key

    return episode_key(*(row.get(k) for k in ("task", "difficulty", "agent", "split", "index", "seed")))  # type: ignore[arg-type]


def is_judged(rec: dict[str, Any]) -> bool:
    """Whether a stored record (or knowledge row) holds a valid knowledge grade."""
    status = rec.get("knowledge_status")
    return status == JUDGED if status is not None else rec.get("knowledge_score") is not None


def judge_run(run_dir: str | Path, judge: Any, judge_name: str = "", *, only_unjudged: bool = False) -> JudgeRun:
    """Re-grade the `ok` episodes of `run_dir/results.jsonl` (the last record of each).

    With `only_unjudged`, episodes already graded (in the run or in an earlier knowledge.jsonl)
    are skipped. Each graded row is appended to `run_dir/knowledge.jsonl` as it comes (readers
    take the last row per episode), and the file is compacted at the end: this pass's rows replace
    earlier rows of the same episodes, which are kept otherwise. An episode the judge cannot grade
    is listed in `JudgeRun.failed`, never raised; only a missing results.jsonl raises, and
    `RunLocked` while a runner or another judge pass holds the folder (two passes each compacting
    knowledge.jsonl from their own view could drop each other's rows).
    """
    from discoverylab.bench.rundir import RunLock

    run_dir = Path(run_dir)
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise FileNotFoundError(f"no results.jsonl in {run_dir}: pass a folder written by `discoverylab bench --out`")
    lock = RunLock(run_dir).acquire()
    try:
        return _judge_locked(run_dir, results, judge, judge_name, only_unjudged)
    finally:
        lock.release()


def _judge_locked(run_dir: Path, results: Path, judge: Any, judge_name: str, only_unjudged: bool) -> JudgeRun:
    """`judge_run`'s pass, the folder locked. Only DiscoveryWorld records of the run's own config
    count (`run.json`): a record pasted in from another run is no episode of this one."""
    from discoverylab.bench.rundir import stored_config_hash

    run_hash = stored_config_hash(run_dir)
    latest = {_key(rec): rec for rec in records.read_jsonl(results)
              if "task" in rec and (run_hash is None or rec.get("config_hash") == run_hash)}
    earlier = {_key(row): row for row in records.read_jsonl(run_dir / KNOWLEDGE_FILE)}
    out = JudgeRun()
    for key, rec in latest.items():
        if rec.get("status") != "ok" or (only_unjudged and (is_judged(rec) or is_judged(earlier.get(key, {})))):
            out.skipped += 1
            continue
        try:
            score, verdicts = judge_episode(rec.get("scorecard") or {}, rec.get("knowledge"), judge)
        except Exception as exc:  # noqa: BLE001 - one episode the judge cannot grade stops nothing
            score, verdicts = None, [{"valid": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}]
        row = {field: rec.get(field) for field in KEY_FIELDS} | {
            "judge": judge_name, "has_knowledge": bool(rec.get("knowledge")), "knowledge_score": score,
            "knowledge_verdicts": verdicts, "knowledge_status": JUDGED if score is not None else None,
        }  # fmt: skip
        if verdicts and score is None:
            out.failed.append((row, next(v["error"] for v in verdicts if not v["valid"])))
            continue
        out.rows.append(row)
        earlier[key] = row
        records.append_jsonl(run_dir / KNOWLEDGE_FILE, row)  # durable at once: an interrupted pass keeps it
    records.write_jsonl(run_dir / KNOWLEDGE_FILE, list(earlier.values()))  # compacted: one row per episode
    return out
