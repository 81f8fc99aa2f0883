"""Smoke test of `benchmarks/episode_steps.py`: a line per task with its reset and every bucket of
step indices, the buckets an episode reaches timed and the ones it does not left at zero."""

from __future__ import annotations

import re

from bench_loader import load_benchmark

episode_steps = load_benchmark("episode_steps.py", "episode_steps_bench")


def test_a_task_s_line_times_the_reset_and_the_buckets_its_episodes_reach() -> None:
    line = episode_steps.profile("DialogTest", episodes=2, steps=12)
    assert line.startswith("DialogTest reset ")
    buckets = re.findall(r"\[(\d+),(\d+)\):([0-9.]+)us", line)
    assert [(int(a), int(b)) for a, b, _ in buckets] == list(zip(episode_steps.BUCKETS, episode_steps.BUCKETS[1:], strict=False))
    times = [float(t) for _, _, t in buckets]
    assert all(t > 0 for t in times[:4]) and times[4:] == [0.0, 0.0]  # 12-step episodes end in [10,25)
