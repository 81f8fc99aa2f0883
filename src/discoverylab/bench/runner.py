"""The benchmark runner: many episodes, in parallel processes, resumable, JSONL results.

Results go to `<out>/results.jsonl` (one `EpisodeRecord` per line, appended and fsync'd as
each episode finishes) and each episode's full log to `<out>/logs/<task>-<difficulty>-s<seed>-<agent>.jsonl`.
A re-run with the same `out` skips episodes already recorded, so a killed run resumes without
redoing or losing finished work.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench import records
from discoverylab.bench.episode import EpisodeRecord, run_episode
from discoverylab.bench.runs import execute_resumable
from discoverylab.scenarios.registry import all_tasks

SUITES = ("unit", "discovery", "tutorial", "all")
KEY_FIELDS = ("task", "difficulty", "seed", "agent")


@dataclass(frozen=True, slots=True)
class Job:
    task: str
    difficulty: str
    seed: int
    agent: str
    max_steps: int | None = None
    llm: LLMSettings | None = None  # model settings of the LLM agents
    judge: LLMSettings | None = None  # knowledge judge (None: not judged during the run)

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.task, self.difficulty, self.seed, self.agent)

    @property
    def log_name(self) -> str:
        return f"{self.task}-{self.difficulty}-s{self.seed}-{self.agent}.jsonl"


def parse_seeds(text: str) -> list[int]:
    """'0-4' -> [0..4]; '1,3,5' -> [1, 3, 5]; '7' -> [7]."""
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            a, b = int(lo), int(hi)
            if b < a:
                raise ValueError(f"Bad seed range {part!r}: end before start.")
            seeds.extend(range(a, b + 1))
        else:
            seeds.append(int(part))
    if not seeds:
        raise ValueError(f"No seeds in {text!r}; use e.g. '0-4' or '0,2,5'.")
    return seeds


def suite_tasks(suite: str, difficulty: str | None = None) -> list[tuple[str, str]]:
    """(task, difficulty) pairs of a suite, optionally one difficulty only."""
    if suite not in SUITES:
        raise ValueError(f"Unknown suite {suite!r}. Valid suites: {', '.join(SUITES)}.")
    pairs = []
    for tid, cls in all_tasks().items():
        if suite != "all" and cls.suite != suite:
            continue
        for diff in cls.difficulties:
            if difficulty is None or diff == difficulty.lower():
                pairs.append((tid, diff))
    return pairs


def make_jobs(
    pairs: Iterable[tuple[str, str]], seeds: list[int], agent: str, max_steps: int | None,
    llm: LLMSettings | None = None, judge: LLMSettings | None = None,
) -> list[Job]:  # fmt: skip
    return [Job(t, d, s, agent, max_steps, llm, judge) for t, d in pairs for s in seeds]


def _run_job(job: Job, out: str | None) -> EpisodeRecord:
    """Worker body: never raises; a crash becomes a record with status 'error'."""
    try:
        record, log = run_episode(job.task, job.difficulty, job.seed, job.agent, job.max_steps, keep_log=out is not None,
                                  llm=job.llm, judge=job.judge)  # fmt: skip
        if out is not None:
            records.write_jsonl(Path(out) / "logs" / job.log_name, log)
        return record
    except Exception as exc:  # noqa: BLE001 - one bad episode must not stop a benchmark
        return EpisodeRecord(
            task=job.task, difficulty=job.difficulty, seed=job.seed, agent=job.agent, status="error",
            procedure_score=0.0, error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}",
        )  # fmt: skip


def run_jobs(
    jobs: list[Job],
    out: str | Path | None = None,
    workers: int = 1,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> list[EpisodeRecord]:
    """Run jobs (resuming from `out/results.jsonl`), in job order in the returned list."""
    results_path = Path(out) / "results.jsonl" if out is not None else None
    finished: dict[tuple[object, ...], EpisodeRecord] = {}
    if results_path is not None:
        for rec in records.read_jsonl(results_path):
            if rec.get("status") == "ok":
                finished[tuple(rec.get(f) for f in KEY_FIELDS)] = EpisodeRecord.model_validate(rec)
    run_one = partial(_run_job, out=str(out) if out is not None else None)
    return execute_resumable(
        jobs, _job_key, _record_key, run_one, finished, results_path, workers, on_done
    )


def _job_key(job: Job) -> tuple[object, ...]:
    return job.key


def _record_key(record: EpisodeRecord) -> tuple[object, ...]:
    return (record.task, record.difficulty, record.seed, record.agent)


def summarize(results: list[EpisodeRecord]) -> list[dict[str, object]]:
    """One row per (task, difficulty): episodes, completion and success rates, mean procedure score and steps."""
    groups: dict[tuple[str, str], list[EpisodeRecord]] = {}
    for rec in results:
        groups.setdefault((rec.task, rec.difficulty), []).append(rec)
    rows = []
    for (task, diff), recs in groups.items():
        n = len(recs)
        rows.append({
            "task": task,
            "difficulty": diff,
            "episodes": n,
            "errors": sum(r.status != "ok" for r in recs),
            "completion": sum(r.success for r in recs) / n,
            "procedure": sum(r.procedure_score for r in recs) / n,
            "steps": sum(r.steps for r in recs) / n,
        })  # fmt: skip
    return rows
