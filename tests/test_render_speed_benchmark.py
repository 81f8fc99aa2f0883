"""`benchmarks/render_speed.py`'s arguments: an unknown `--difficulty` printed an empty table and
exited 0, `--images 0` divided by zero and an unknown suite or unwritable `--json` raised a
traceback (the last after the whole run); all are usage errors now, before any measurement."""

from __future__ import annotations

import sys

import pytest

from bench_loader import load_benchmark

render_speed = load_benchmark("render_speed.py", "render_speed_bench")


@pytest.mark.parametrize("argv", [["--difficulty", "hard"], ["--images", "0"], ["--suite", "unitt"], ["--json", "."],
                                  ["--json", "no-such-folder/x.json"]])  # fmt: skip
def test_bad_arguments_are_usage_errors_before_any_measurement(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setattr(render_speed, "measure", lambda *a: pytest.fail("measured"))
    monkeypatch.setattr(sys, "argv", ["render_speed.py", "--suite", "unit", *argv])
    with pytest.raises(SystemExit) as exc:
        render_speed.main()
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_a_task_s_row_has_every_rate() -> None:
    row = render_speed.measure("DoorsTest", "normal", 1)
    assert row["task"] == "DoorsTest" and all(min(row[c]) > 0 for c in render_speed.COLUMNS)
