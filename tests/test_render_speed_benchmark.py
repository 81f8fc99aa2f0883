"""`benchmarks/render_speed.py`'s arguments: an unknown `--difficulty` printed an empty table and
exited 0, `--images 0` divided by zero and an unknown suite or unwritable `--json` raised a
traceback (the last after the whole run); all are usage errors now, before any measurement."""

from __future__ import annotations

import pytest

from bench_loader import load_benchmark, main_exit_code

render_speed = load_benchmark("render_speed.py", "render_speed_bench")


@pytest.mark.parametrize("argv", [["--difficulty", "hard"], ["--images", "0"], ["--suite", "unitt"], ["--json", "."],
                                  ["--json", "no-such-folder/x.json"]])  # fmt: skip
def test_bad_arguments_are_usage_errors_before_any_measurement(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    argv = ["render_speed.py", "--suite", "unit", *argv]
    assert main_exit_code(monkeypatch, render_speed.main, argv, (render_speed, "measure")) == 2
    assert "error:" in capsys.readouterr().err


def test_a_task_s_row_has_every_rate() -> None:
    row = render_speed.measure("DoorsTest", "normal", 1)
    assert row["task"] == "DoorsTest" and all(min(row[c]) > 0 for c in render_speed.COLUMNS)
