"""Zero counts and an --out that is a file in the small benchmarks: each was a traceback
(median/min of nothing, numpy's `high <= 0`, mkdir over a file); now a usage error (exit 2)
before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_loader import load_benchmark, main_exit_code

CASES = [
    ("macro_speed.py", ["--repeats", "0"], "time_run"),
    ("macro_speed.py", ["--steps", "0"], "time_run"),
    ("labs_speed.py", ["--repeats", "0"], "bench_properties"),
    ("lab_samplers.py", ["--lengths", "0"], "measure"),
    ("lab_samplers.py", ["--lengths", "200,x"], "measure"),
    ("llm_local_speed.py", ["--repeats", "0"], "EmbeddedModelServer"),
]


@pytest.mark.parametrize(("script", "argv", "work"), CASES)
def test_a_zero_count_is_a_usage_error_before_any_work(script: str, argv: list[str], work: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    bench = load_benchmark(script, script.removesuffix(".py") + "_count_bench")
    assert main_exit_code(monkeypatch, bench.main, [script, *argv], (bench, work)) == 2


def test_chaos_out_that_is_a_file_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chaos = load_benchmark("chaos.py", "chaos_count_bench")
    monkeypatch.setattr(chaos, "ChaosServer", lambda *a, **k: pytest.fail("a server was started"))
    a_file = tmp_path / "out"
    a_file.write_text("x")
    with pytest.raises(SystemExit) as exc:
        chaos.main(["--out", str(a_file)])
    assert exc.value.code == 2
    assert a_file.read_text() == "x"
