"""Every unit-test task at every difficulty: the oracle solves it on seeds 0-9 with full
procedural score."""

from __future__ import annotations

import pytest

from discoverylab.bench.episode import run_episode
from discoverylab.scenarios.registry import all_tasks

UNIT_TASKS = [tid for tid, cls in all_tasks().items() if cls.suite == "unit"]
UNIT_PAIRS = [(tid, d) for tid in UNIT_TASKS for d in all_tasks()[tid].difficulties]


def test_all_ten_unit_tasks_registered() -> None:
    assert len(UNIT_TASKS) == 10, UNIT_TASKS
    assert all(all_tasks()[t].difficulties == ("easy", "normal", "challenge") for t in UNIT_TASKS)


@pytest.mark.parametrize(("task", "difficulty"), UNIT_PAIRS)
@pytest.mark.parametrize("seed", range(10))
def test_oracle_solves_unit_task(task: str, difficulty: str, seed: int) -> None:
    record, _ = run_episode(task, difficulty, seed, "oracle", keep_log=False)
    assert record.error is None, record.error
    assert record.success, record.scorecard
    assert record.procedure_score == 1.0, record.scorecard
    assert record.steps <= 100
