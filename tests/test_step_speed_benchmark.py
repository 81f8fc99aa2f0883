"""`benchmarks/step_speed.py` around its workers: a worker that died without a row (e.g. `--steps
0` divided by zero in it) left the parent waiting on the queue for ever; bad counts, suites and
`--json` paths are usage errors before any worker starts."""

from __future__ import annotations

import multiprocessing as mp
import os

import pytest

from bench_loader import load_benchmark, main_exit_code

step_speed = load_benchmark("step_speed.py", "step_speed_bench")


def test_a_worker_that_dies_without_a_row_is_noticed_not_waited_for() -> None:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=os._exit, args=(1,))
    proc.start()
    assert step_speed._row(proc, queue) is None
    proc.join()


@pytest.mark.parametrize("argv", [["--steps", "0"], ["--resets", "-1"], ["--suite", "unitt"], ["--json", "."],
                                  ["--json", "no-such-folder/x.json"]])  # fmt: skip
def test_bad_arguments_are_usage_errors_before_any_worker(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main_exit_code(monkeypatch, step_speed.main, ["step_speed.py", *argv], (step_speed.mp, "get_context")) == 2
