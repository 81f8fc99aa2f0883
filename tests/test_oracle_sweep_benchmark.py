"""`benchmarks/oracle_sweep.py`'s arguments: a sweep that would play no episode (a misspelt task, a
reversed seed range) once printed '0 episodes, 0 failed' and exited 0, i.e. reported the oracle
guarantee as holding; it is a usage error now."""

from __future__ import annotations

import pytest

from bench_loader import load_benchmark, main_exit_code

oracle_sweep = load_benchmark("oracle_sweep.py", "oracle_sweep_bench")


def test_seeds_parse_ranges_and_lists_and_refuse_what_would_be_empty() -> None:
    assert oracle_sweep.parse_seeds("0-2,7") == [0, 1, 2, 7]
    for bad in ("5-2", "abc", "-1", "1,"):
        with pytest.raises(ValueError, match="--seeds"):
            oracle_sweep.parse_seeds(bad)


@pytest.mark.parametrize("argv", [["--task", "ReactorLabb"], ["--seeds", "5-2"], ["--sealed", "-1"]])
def test_a_sweep_of_nothing_is_a_usage_error_not_a_pass(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main_exit_code(monkeypatch, oracle_sweep.main, ["oracle_sweep.py", *argv], (oracle_sweep, "sweep")) == 2
    assert "error:" in capsys.readouterr().err
