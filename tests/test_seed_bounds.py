"""A huge `--seeds` range is refused at once with a clear error, by every command that takes one.

Before: `bench --seeds 0-99999999999` started a run no one finishes, past 2**63 seeds it crashed with
an OverflowError traceback, and `lab run` (which lists its jobs) ate the memory until a MemoryError.
Each command runs in its own process with a deadline, so a command that starts the run fails the
test instead of hanging it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from discoverylab.bench.runner import MAX_SEEDS, parse_seed_ranges, parse_seeds

SRC = Path(__file__).resolve().parents[1] / "src"


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.run([sys.executable, "-m", "discoverylab", *args], env=env, cwd=tmp_path, text=True,
                          capture_output=True, timeout=90)  # fmt: skip


@pytest.mark.parametrize("args", [
    ["bench", "--agent", "random", "--suite", "unit", "--seeds", "0-99999999999", "--max-steps", "2", "--out", "r"],
    ["bench", "--agent", "random", "--suite", "unit", "--seeds", "0-99999999999999999999", "--out", "r"],
    ["run", "--agent", "random", "--task", "DialogTest", "--seeds", "5,0-99999999999", "--out", "r"],
    ["lab", "run", "sequence/hidden-property", "--agent", "random", "--seeds", "0-99999999999", "--no-plots"],
    ["export-sft", "--agent", "oracle", "--suite", "unit", "--seeds", "0-99999999999", "--out", "sft.jsonl"],
], ids=["bench", "bench-past-2**63", "run", "lab-run", "export-sft"])  # fmt: skip
def test_a_huge_seed_range_is_a_clear_error_before_anything_starts(tmp_path: Path, args: list[str]) -> None:
    done = _cli(tmp_path, *args)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "one run takes at most 1,000,000" in done.stderr, done.stderr[-2000:]
    assert "Split it" in done.stderr
    assert not (tmp_path / "r" / "results.jsonl").exists() and not (tmp_path / "sft.jsonl").exists()


def test_the_oracle_sweep_benchmark_refuses_a_huge_range_too(tmp_path: Path) -> None:
    """benchmarks/oracle_sweep.py parses its own --seeds into a list: before, a MemoryError."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, str(SRC.parent / "benchmarks" / "oracle_sweep.py"), "--seeds", "0-99999999999"],
                          env=env, cwd=tmp_path, text=True, capture_output=True, timeout=90)  # fmt: skip
    assert done.returncode == 2 and "one run takes at most 1,000,000" in done.stderr, done.stderr[-2000:]


def test_lab_run_counts_episodes_over_protocols_and_agents(tmp_path: Path) -> None:
    """300,000 seeds are fine alone, but over 4 protocols x 2 agents they make 2.4 million episodes,
    all listed before the run starts: refused, with a split that fits."""
    done = _cli(tmp_path, "lab", "run", "all", "--agent", "random,oracle", "--seeds", "0-299999", "--no-plots")
    assert done.returncode == 2, done.stderr[-2000:]
    text = " ".join(done.stderr.split())
    assert "2,400,000 episodes" in text and "--seeds 0-124999" in text, text


def test_the_bound_is_exact_and_counts_each_seed_once() -> None:
    assert len(parse_seed_ranges(f"0-{MAX_SEEDS - 1}")) == MAX_SEEDS
    assert len(parse_seed_ranges(f"0-{MAX_SEEDS - 1},0-10")) == MAX_SEEDS  # repeats are kept once
    with pytest.raises(ValueError, match="1,000,001 seeds"):
        parse_seed_ranges(f"0-{MAX_SEEDS}")
    with pytest.raises(ValueError, match="at most"):
        parse_seeds(f"7,{10**30}-{2 * 10**30}")
    assert parse_seeds("99999999999999999999") == [99999999999999999999]  # a large seed is still one seed
