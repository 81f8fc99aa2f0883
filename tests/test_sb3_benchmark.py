"""`benchmarks/sb3.py` with a zero count (`--num-envs 0`, ...): a ValueError traceback from the
env or the model after the set-up (with `--jobs`, one per task process); a usage error now."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

from bench_loader import load_benchmark, main_exit_code  # noqa: E402

sb3 = load_benchmark("sb3.py", "sb3_bench")


@pytest.mark.parametrize("argv", [["--num-envs", "0"], ["--workers", "0"], ["--n-steps", "0"], ["--jobs", "2", "--epochs", "0"]])
def test_a_zero_count_is_a_usage_error_before_training(argv: list[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    argv = ["sb3.py", "--tasks", "DoorsTest", "--out", str(tmp_path / "out"), *argv]
    assert main_exit_code(monkeypatch, sb3.main, argv, (sb3, "train"), (sb3, "sweep")) == 2
