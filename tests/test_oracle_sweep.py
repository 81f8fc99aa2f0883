"""The oracle guarantee (issue 21): every oracle solves every task and difficulty and its knowledge
report states every gold fact, on seeds 0-99 and on sealed test instances.

The full sweep (benchmarks/oracle_sweep.py, about 3 CPU-minutes) is slow-marked; CI plays a
sample: a few seeds per task and difficulty, always including the seeds that once failed.
"""

from __future__ import annotations

import pytest

from bench_loader import load_benchmark
from discoverylab.scenarios.registry import all_tasks

SWEEP = load_benchmark("oracle_sweep.py", "oracle_sweep_benchmark")
# Seeds that failed a sweep once, per task (fixed on issue 21): the sample always plays them.
ONCE_FAILED = {
    "PickAndGiveTest": (34, 91),  # out of steps: the recipient out of sight from the item's table
    "SearchTest": (43, 55, 87),  # Explorer.sweep stuck beside an unreachable viewpoint
    # Challenge burnt out (2, 38, 65, 75) or radiation fits off (8, 9, 11, 18, 32); Easy reports
    "ReactorLab": (2, 8, 9, 10, 11, 18, 32, 33, 38, 50, 65, 75, 96),
    "CombinatorialChemistry": (26, 32, 35),  # Challenge reports (before the etching redesign)
    "RocketScience": (58,),  # Challenge report (a number off)
}
SAMPLE = (0, 17, 42)
PAIRS = [(t, d) for t, cls in all_tasks().items() for d in cls.difficulties]
# No excuses left (issue 21): Reactor Lab Challenge's radiation fits missed b or c by more than 6%
# on 9 of 20 radiation seeds until the shielded lab let the oracle read each crystal exactly, and
# Rocket Science Challenge's gold stated int(litres) where the oracle reports round(litres).


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_oracle_sample_succeeds_and_reports(task: str, difficulty: str) -> None:
    _check_pair(task, difficulty, sorted({*SAMPLE, *ONCE_FAILED.get(task, ())}))


def _check_pair(task: str, difficulty: str, seeds: list[int], sealed: int = 0) -> None:
    outcomes = [
        SWEEP.play(task, difficulty, seed, f"seed {seed}") for seed in seeds
    ] + [
        SWEEP.play(task, difficulty, SWEEP.make_instance(task, difficulty, "test", i, SWEEP.DEMO_KEY), f"test {i}")
        for i in range(sealed)
    ]  # fmt: skip
    failed = [o for o in outcomes if o.problem]
    assert not failed, [f"{o.label}: {o.problem}" for o in failed]


@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_oracle_sample_on_sealed_instances(task: str, difficulty: str) -> None:
    _check_pair(task, difficulty, [], sealed=1)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "difficulty"), PAIRS)
def test_oracle_solves_seeds_0_to_99_and_sealed_instances(task: str, difficulty: str) -> None:
    _check_pair(task, difficulty, list(range(100)), sealed=5)


def test_the_sweep_table_reports_failures() -> None:
    """The benchmark's table names a failing episode (a sweep that cannot fail proves nothing)."""
    ok = SWEEP.Outcome("T", "easy", "seed 1", True, True, "")
    bad = SWEEP.Outcome("T", "easy", "seed 2", False, None, "status ok, 100 steps, not successful")
    (row,) = SWEEP.table([ok, bad])
    assert row["successes"] == 1 and row["episodes"] == 2 and row["facts_stated"] == "1/1"
    assert row["failures"] == ["seed 2: status ok, 100 steps, not successful"]
    assert SWEEP.parse_seeds("0-2,34") == [0, 1, 2, 34]
