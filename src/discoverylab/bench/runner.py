"""The benchmark runner: many episodes, in parallel processes, resumable, JSONL results.

Results go to `<out>/results.jsonl` (one `EpisodeRecord` per line, appended and fsync'd as
each episode finishes) and each episode's full log to `<out>/logs/<task>-<difficulty>-<instance>-<agent>.jsonl`
(`<instance>` is `s<seed>` for a raw seed, `<split><index>` for a split's instance, e.g. `test3`).
A re-run with the same `out` skips episodes already recorded, so a killed run resumes without
redoing or losing finished work. Episodes are keyed by task, difficulty, instance label
(`s42`, `test#3`) and agent: a sealed record carries no seed, so the label stands in for it.
"""

from __future__ import annotations

import itertools
import traceback
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from discoverylab.agents.llm_common import LLMSettings
from discoverylab.bench import records
from discoverylab.bench.episode import EpisodeRecord, run_episode
from discoverylab.bench.pool import LocalPool, Pool, report_played
from discoverylab.bench.ray_pool import RayPool
from discoverylab.bench.rundir import RunLock, Scan, check_config, check_out, is_disk_error, scan_results
from discoverylab.bench.runs import BREAKER_DEFAULT, Outcome, execute
from discoverylab.bench.schema import classify, config_hash
from discoverylab.instances import SEED_SPLIT, Instance, make_instance
from discoverylab.scenarios.registry import all_tasks

SUITES = ("unit", "discovery", "tutorial", "all")
BACKENDS = ("local", "ray")



def episode_log_name(task: str, difficulty: str, instance: Instance, agent: str) -> str:
    """An episode's log file in a run folder's logs/ (the runner's and `env-serve --out`'s)."""
    return f"{task}-{difficulty}-{instance.label.replace('#', '')}-{agent}.jsonl"


@dataclass(frozen=True, slots=True)
class Job:
    """One episode to run. `seed` is what the worker builds (for a sealed instance, the keyed
    seed: it stays on the evaluator's side, out of repr, records and logs)."""

    task: str
    difficulty: str
    seed: int = field(repr=False)
    agent: str
    max_steps: int | None = None
    llm: LLMSettings | None = None  # model settings of the LLM agents
    judge: LLMSettings | None = None  # knowledge judge (None: not judged during the run)
    split: str = SEED_SPLIT  # "seed" (a raw public seed) or the split of `index`
    index: int | None = None  # the instance index within `split` (None for a raw seed)

    @property
    def instance(self) -> Instance:
        index = self.seed if self.index is None else self.index
        return Instance(self.task, self.difficulty, self.split, index, self.seed)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.task, self.difficulty, self.instance.label, self.agent)

    @property
    def log_name(self) -> str:
        return episode_log_name(self.task, self.difficulty, self.instance, self.agent)


class SeedRanges:
    """The seeds of `--seeds`, kept as ranges so that '0-100000' costs nothing until used."""

    def __init__(self, ranges: list[range]) -> None:
        self.ranges = ranges

    def __iter__(self) -> Iterator[int]:
        return itertools.chain.from_iterable(self.ranges)

    def __len__(self) -> int:
        return sum(len(r) for r in self.ranges)


MAX_SEEDS = 1_000_000
"""The most seeds one `--seeds` may name. Ranges cost nothing until used, but `0-99999999999` is no
run anyone finishes: before, it started (or crashed with an OverflowError past 2**63 seeds, or ate
the memory of `lab run`, which lists its jobs) instead of saying so."""


def parse_seed_ranges(text: str) -> SeedRanges:
    """'0-4' -> 0..4; '1,3,5'; '7'. Seeds are whole numbers >= 0; a bad part gets a clear message,
    and so do more than `MAX_SEEDS` seeds. A seed given twice ('0,0,0-1') is kept once, at its
    first place."""
    ranges: list[range] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"Bad seeds {part!r}: seeds are whole numbers >= 0, e.g. '0-4' or '0,2,5'.") from None
        if b < a:
            raise ValueError(f"Bad seed range {part!r}: end before start.")
        ranges.extend(_minus(range(a, b + 1), ranges))
        check_seed_count(sum(r.stop - r.start for r in ranges), text)  # (len() overflows past 2**63)
    if not ranges:
        raise ValueError(f"No seeds in {text!r}; use e.g. '0-4' or '0,2,5'.")
    return SeedRanges(ranges)


def check_seed_count(seeds: int, text: str, per_seed: int = 1, what: str = "") -> None:
    """A ValueError saying how to split the run when `seeds` seeds, each `per_seed` episodes
    (`what` says of what, e.g. "4 protocols x 1 agent x "), make more than `MAX_SEEDS`."""
    total = seeds * per_seed
    if total <= MAX_SEEDS:
        return
    shown = text if len(text) <= 60 else text[:57] + "..."
    unit = "seeds" if per_seed == 1 else "episodes"
    asks = f"{seeds:,} seeds" if per_seed == 1 else f"{total:,} episodes ({what}{seeds:,} seeds)"
    step = max(1, MAX_SEEDS // per_seed)
    raise ValueError(f"--seeds {shown!r} asks for {asks}; one run takes at most {MAX_SEEDS:,} {unit}. Split it "
                     f"into smaller runs with the same --out, e.g. --seeds 0-{step - 1}, then --seeds {step}-{2 * step - 1}.")


def _minus(new: range, earlier: list[range]) -> list[range]:
    """The seeds of `new` not in `earlier`, as ranges: '0,0,0-1' runs seed 0 once (issue 23.8)."""
    parts = [new]
    for old in earlier:
        parts = [piece for part in parts for piece in (range(part.start, min(part.stop, old.start)),
                                                       range(max(part.start, old.stop), part.stop)) if piece]
    return parts


def parse_seeds(text: str) -> list[int]:
    """'0-4' -> [0..4]; '1,3,5' -> [1, 3, 5]; '7' -> [7]."""
    return list(parse_seed_ranges(text))


def suite_tasks(suite: str, difficulty: str | None = None) -> list[tuple[str, str]]:
    """(task, difficulty) pairs of a suite, optionally one difficulty only. Without a difficulty
    the unit tests play Normal only (the paper's unit tests; their Easy and Challenge levels,
    added for RL, are asked for by name)."""
    if suite not in SUITES:
        raise ValueError(f"Unknown suite {suite!r}. Valid suites: {', '.join(SUITES)}.")
    known = list(dict.fromkeys(d for cls in all_tasks().values() for d in cls.difficulties))
    if difficulty is not None and difficulty.strip().lower() not in known:  # not "no tasks in the suite"
        raise ValueError(f"Unknown difficulty {difficulty!r}. Valid difficulties: {', '.join(known)}.")
    pairs = []
    for tid, cls in all_tasks().items():
        if suite != "all" and cls.suite != suite:
            continue
        for diff in cls.difficulties:
            if difficulty is None and cls.suite == "unit" and diff != "normal":
                continue
            if difficulty is None or diff == difficulty.strip().lower():
                pairs.append((tid, diff))
    return pairs


def make_jobs(
    pairs: Iterable[tuple[str, str]], seeds: Iterable[int], agent: str, max_steps: int | None,
    llm: LLMSettings | None = None, judge: LLMSettings | None = None,
) -> list[Job]:  # fmt: skip
    return list(iter_jobs(list(pairs), seeds, agent, max_steps, llm, judge))


def iter_jobs(pairs: list[tuple[str, str]], seeds: Iterable[int], agent: str, max_steps: int | None,
              llm: LLMSettings | None = None, judge: LLMSettings | None = None, *,
              split: str | None = None, key: bytes | None = None) -> Iterator[Job]:  # fmt: skip
    """Jobs one at a time (task-major, then seed), so huge seed ranges are never built in memory.

    Without `split`, `seeds` are raw public seeds; with it, they are instance indices of that
    split (`key`: the evaluator's key, needed by the sealed test split)."""
    if split is not None:
        make_instance(pairs[0][0] if pairs else "", "", split, 0, key)  # a bad split or missing key fails now
    for task, diff in pairs:
        for seed in seeds:
            if split is None:
                yield Job(task, diff, seed, agent, max_steps, llm, judge)
            else:
                inst = make_instance(task, diff, split, seed, key)
                yield Job(task, diff, inst.seed, agent, max_steps, llm, judge, split=split, index=seed)


def run_config(max_steps: int | None, **agent_options: Any) -> dict[str, Any]:
    """The settings that change an episode's result (besides its key): stored with the run."""
    return {"runner": "discoveryworld", "max_steps": max_steps, **agent_options}


def _run_job(job: Job, out: str | None, config: dict[str, Any] | None = None,
             episode_timeout: float | None = None) -> EpisodeRecord:
    """Worker body: never raises; a crash becomes a record with the matching failure status."""
    def played(record: EpisodeRecord, log: list[dict[str, Any]]) -> None:
        """The episode is over, its judge about to start: its log is written and the runner holds its
        record, so a stop during the judging keeps the episode (knowledge unjudged) instead of
        dropping it to be played again on resume."""
        if out is not None:
            records.write_jsonl(Path(out) / "logs" / job.log_name, log)
        report_played(record)

    try:
        record, log = run_episode(job.task, job.difficulty, job.instance, job.agent, job.max_steps,
                                  keep_log=out is not None, config=config, llm=job.llm, judge=job.judge,
                                  time_limit=episode_timeout, on_played=played)  # fmt: skip
        if out is not None:
            records.write_jsonl(Path(out) / "logs" / job.log_name, log)
        return record
    except Exception as exc:  # noqa: BLE001 - one bad episode must not stop a benchmark
        if is_disk_error(exc):
            raise  # a full disk stops the run (pool.py reports it), it is no episode's failure
        return _failed(config or {}, job, classify(exc),
                       f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}")  # fmt: skip


def _failed(config: dict[str, Any], job: Job, status: str, message: str) -> EpisodeRecord:
    return EpisodeRecord(
        task=job.task, difficulty=job.difficulty, **job.instance.public(), agent=job.agent, status=status,  # type: ignore[arg-type]
        procedure_score=0.0, error=message, config=config, config_hash=config_hash(config),
    )  # fmt: skip


def make_pool(backend: str, run_one: Callable[[Any], Any], workers: int, *, address: str | None = None,
              close_fds: tuple[int, ...] = ()) -> Pool:
    """`local` (worker processes, the default) or `ray` (tasks on a Ray cluster at `address`)."""
    if backend == "local":
        return LocalPool(run_one, workers, close_fds=close_fds)
    if backend == "ray":
        return RayPool(run_one, workers, address=address)
    raise ValueError(f"Unknown backend {backend!r}. Valid backends: {', '.join(BACKENDS)}.")


def run_bench(
    jobs: Iterable[Job],
    out: str | Path | None = None,
    workers: int = 1,
    *,
    total: int | None = None,
    config: dict[str, Any] | None = None,
    on_done: Callable[[EpisodeRecord], None] | None = None,
    on_resume: Callable[[Scan[EpisodeRecord]], None] | None = None,
    episode_timeout: float | None = None,
    backend: str = "local",
    address: str | None = None,
    breaker: int = BREAKER_DEFAULT,
) -> Outcome[EpisodeRecord]:
    """Run jobs, resuming from `out/results.jsonl` (see `runs.execute` for stops and deadlines).

    With `out`, the directory is checked and locked before any work (`RunDirError`, `RunLocked`)
    and its stored config compared with `config` (`RunConfigMismatch`). `on_resume` sees what
    was read back, including skipped bad lines.
    """
    config = dict(config) if config is not None else run_config(None)
    out_dir = Path(out) if out is not None else None
    results_path: Path | None = None
    finished: dict[Hashable, EpisodeRecord] = {}
    lock: RunLock | None = None
    if out_dir is not None:
        results_path = check_out(out_dir)
        lock = RunLock(out_dir).acquire()
    try:
        if out_dir is not None and results_path is not None:
            scan = scan_results(results_path, EpisodeRecord, _record_key, config_hash=config_hash(config))
            # records that are not ours (a Tiny Labs run's) count too: before, they were all "bad
            # lines" and the run wrote its own records and run.json into the other runner's folder
            check_config(out_dir, "discoveryworld", config, has_records=bool(scan.latest) or scan.objects > 0)
            finished = dict(scan.finished())
            if on_resume is not None:
                on_resume(scan)
        run_one = partial(_run_job, out=str(out_dir) if out_dir is not None else None, config=config,
                          episode_timeout=episode_timeout)
        size = max(1, min(workers, total)) if total is not None else max(1, workers)
        pool = make_pool(backend, run_one, size, address=address,
                         close_fds=(lock.fd,) if lock is not None and lock.fd is not None else ())
        return execute(jobs, _job_key, run_one, partial(_failed, config), finished, results_path,
                       on_done=on_done, pool=pool, episode_timeout=episode_timeout, breaker=breaker)
    finally:
        if lock is not None:
            lock.release()


def run_jobs(
    jobs: list[Job],
    out: str | Path | None = None,
    workers: int = 1,
    on_done: Callable[[EpisodeRecord], None] | None = None,
) -> list[EpisodeRecord]:
    """Run jobs (resuming from `out/results.jsonl`); their records in job order."""
    max_steps = jobs[0].max_steps if jobs else None
    return run_bench(jobs, out, workers, total=len(jobs), config=run_config(max_steps), on_done=on_done).results


def _job_key(job: Job) -> Hashable:
    return job.key


def _record_key(record: EpisodeRecord) -> Hashable:
    return record.key


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
