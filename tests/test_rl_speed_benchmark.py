"""Smoke tests of `benchmarks/rl_speed.py --suite`: the rows it measures and the JSON it writes
(the figures themselves are the benchmark's business, not a test's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench_loader import load_benchmark

rl_speed = load_benchmark("rl_speed.py", "rl_speed_bench")


def test_suite_row_counts_resets_and_steps_of_the_tasks_own_episodes() -> None:
    row = rl_speed.suite_row("DialogTest", steps=250, count=3)
    assert row["task"] == "DialogTest" and row["episodes"] >= 3  # 100-step episodes: 250 steps start 3
    assert 0 < row["reset_min_ms"] <= row["reset_ms"]
    assert row["steps_per_s"] > 0 and row["long_steps_per_s"] > 0


def test_unit_suite_writes_a_row_per_unit_test_and_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "unit.json"
    argv = ["rl_speed.py", "--suite", "unit", "--steps", "30", "--resets", "2", "--default-gc", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)  # --default-gc: this test process keeps its collector
    rl_speed.main()
    report = json.loads(out.read_text())
    from discoverylab.scenarios.registry import all_tasks

    units = [tid for tid, cls in all_tasks().items() if cls.suite == "unit"]
    assert [row["task"] for row in report["rows"]] == units
    assert report["suite"] == "unit" and report["steps"] == 30 and report["gc"] == "default" and report["cpus"] >= 1 and report["seconds"] > 0
    table = capsys.readouterr().out
    assert "steps/s with resets" in table and all(task in table for task in units)


def test_suite_runs_only_the_tasks_named_and_refuses_one_outside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "two.json"
    argv = ["rl_speed.py", "--suite", "unit", "--task", "SearchTest,DialogTest", "--steps", "30", "--resets", "2",
            "--default-gc", "--out", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    rl_speed.main()
    assert [row["task"] for row in json.loads(out.read_text())["rows"]] == ["DialogTest", "SearchTest"]
    monkeypatch.setattr(sys, "argv", ["rl_speed.py", "--suite", "unit", "--task", "Proteomics"])
    with pytest.raises(SystemExit) as exit_info:
        rl_speed.main()
    assert exit_info.value.code == 2 and "not in --suite unit: Proteomics" in capsys.readouterr().err


def test_rounds_keep_each_tasks_best_round_and_every_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--rounds 3`: every task measured three times, the order reversed in the middle round (a slow
    spell of a shared machine then hits other tasks), each row the best of its rounds (highest
    rates, lowest reset times) with the rounds' medians and every round kept."""
    order: list[str] = []
    fake = iter(range(1, 100))

    def row(task: str, steps: int, count: int) -> dict[str, object]:
        order.append(task)
        k = next(fake)
        return {"task": task, "reset_ms": 10.0 / k, "reset_min_ms": 5.0 / k, "steps_per_s": 1000.0 * k,
                "episodes": 3, "long_steps_per_s": 2000.0 * k}  # fmt: skip

    monkeypatch.setattr(rl_speed, "suite_row", row)
    out = tmp_path / "rows.json"
    argv = ["rl_speed.py", "--suite", "unit", "--task", "SearchTest,DialogTest", "--rounds", "3", "--default-gc", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    rl_speed.main()
    assert order == ["DialogTest", "SearchTest", "SearchTest", "DialogTest", "DialogTest", "SearchTest"]
    report = json.loads(out.read_text())
    dialog, search = report["rows"]
    assert report["rounds"] == 3 and [r["steps_per_s"] for r in dialog["rounds"]] == [1000.0, 4000.0, 5000.0]
    assert dialog["steps_per_s"] == 5000.0 and dialog["steps_per_s_median"] == 4000.0
    assert search["long_steps_per_s"] == 12000.0 and search["reset_ms"] == 10.0 / 6 and search["reset_ms_median"] == 10.0 / 3
    monkeypatch.setattr(sys, "argv", ["rl_speed.py", "--suite", "unit", "--rounds", "0", "--default-gc"])
    with pytest.raises(SystemExit) as exit_info:
        rl_speed.main()
    assert exit_info.value.code == 2


def test_busy_processes_run_during_the_batched_trios_and_are_gone_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--busy N` loads the machine for the batched rows only, and never leaves a busy process
    behind; every batched row says how often its balancer moved the envs and put off a probe."""
    import multiprocessing as mp

    seen: list[int] = []
    trios = rl_speed._trios

    def counting(args: object, rows: list[dict[str, object]]) -> None:
        seen.append(sum(1 for child in mp.active_children() if child.is_alive()))
        trios(args, rows)

    monkeypatch.setattr(rl_speed, "_trios", counting)
    out = tmp_path / "rows.json"
    argv = ["rl_speed.py", "--only-batched", "--batched", "1", "--steps", "40", "--warmup", "0", "--busy", "2",
            "--default-gc", "--out", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    rl_speed.main()
    assert seen == [2]  # the two busy processes, before the batched env's worker starts
    assert not [child for child in mp.active_children() if child.is_alive()]
    rows = json.loads(out.read_text())
    batched = [row for row in rows if row["mode"].startswith("batched")]
    assert len(batched) == 1 and isinstance(batched[0]["switches"], int) and isinstance(batched[0]["postponed"], int)


def test_envs_per_process_measures_each_count_and_writes_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    per_process = load_benchmark("envs_per_process.py", "envs_per_process_bench")
    out = tmp_path / "rows.json"
    monkeypatch.setattr(sys, "argv", ["envs_per_process.py", "--envs", "1,3", "--steps", "30", "--repeat", "2", "--json", str(out)])
    per_process.main()
    rows = json.loads(out.read_text())
    assert [row["envs"] for row in rows] == [1, 3] and rows[0]["x_first"] == 1.0
    assert all(len(row["runs"]) == 2 and row["steps_per_s"] > 0 for row in rows)
    assert "envs in the process" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", ["envs_per_process.py", "--envs", "0,x"])
    with pytest.raises(SystemExit) as exit_info:
        per_process.main()
    assert exit_info.value.code == 2 and "--envs takes counts" in capsys.readouterr().err


@pytest.mark.parametrize(("script", "argv"), [
    ("rl_speed.py", ["--suite", "unit", "--out", "no-such-folder/unit.json"]),
    ("rl_speed.py", ["--task", "DoorsTest", "--json", "."]),
    ("rl_speed.py", ["--task", "DoorsTest", "--steps", "0"]),
    ("envs_per_process.py", ["--envs", "1", "--json", "."]),
])  # fmt: skip
def test_an_unwritable_json_or_zero_steps_is_a_usage_error_before_the_run(script: str, argv: list[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The JSON was written only after the whole run (a traceback then, the figures lost); --steps 0
    was an UnboundLocalError."""
    bench = load_benchmark(script, script.removesuffix(".py") + "_json_bench")
    for work in ("suite", "single", "measure", "relax_gc"):
        if hasattr(bench, work):
            monkeypatch.setattr(bench, work, lambda *a, **k: pytest.fail("the run started"))
    monkeypatch.setattr(sys, "argv", [script, "--default-gc", *argv] if script == "rl_speed.py" else [script, *argv])
    with pytest.raises(SystemExit) as exc:
        bench.main()
    assert exc.value.code == 2
