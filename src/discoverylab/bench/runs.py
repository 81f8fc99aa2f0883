"""Resumable batch execution shared by the DiscoveryWorld benchmark and the Tiny Labs runner.

Jobs whose key is already among the finished records are not run again; each new record is
appended durably (see `records.append_jsonl`) the moment its episode ends, so a killed run
loses at most the episodes in flight. Workers run in processes; `run_one` must be picklable
(a module-level function or a `functools.partial` of one) and must not raise.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from discoverylab.bench import records

J = TypeVar("J")
R = TypeVar("R", bound=BaseModel)


def execute_resumable(
    jobs: Sequence[J],
    job_key: Callable[[J], Hashable],
    record_key: Callable[[R], Hashable],
    run_one: Callable[[J], R],
    finished: dict[Any, R],
    results_path: Path | None = None,
    workers: int = 1,
    on_done: Callable[[R], None] | None = None,
    make_pool: Callable[[int], Executor] | None = None,
) -> list[R]:
    """Run the jobs not yet in `finished`; return every job's record, in job order.

    `on_done` is called once per job, for resumed records first, then as new ones finish.
    """
    keys = [job_key(job) for job in jobs]
    todo = [job for job, key in zip(jobs, keys, strict=True) if key not in finished]

    def done(record: R) -> None:
        finished[record_key(record)] = record
        if results_path is not None:
            records.append_jsonl(results_path, record)
        if on_done is not None:
            on_done(record)

    if on_done is not None:
        for key in keys:
            if key in finished:
                on_done(finished[key])
    if workers <= 1 or len(todo) <= 1:
        for job in todo:
            done(run_one(job))
    else:
        pool_factory = make_pool or (lambda n: ProcessPoolExecutor(max_workers=n))
        with pool_factory(workers) as pool:
            pending: set[Future[R]] = {pool.submit(run_one, job) for job in todo}
            while pending:
                complete, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in complete:
                    done(future.result())
    return [finished[key] for key in keys if key in finished]
