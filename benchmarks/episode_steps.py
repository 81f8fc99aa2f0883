"""Where an episode's time goes: the wall clock of `env.reset` and of `env.step` by the step's
index in its episode (unit tests' 100-step episodes fill their caches in the first steps, so a
step early in an episode costs several times a late one). A benchmark, not a test:

    .venv/bin/python benchmarks/episode_steps.py [--episodes 300] [--steps 100] TASK [TASK ...]

Random masked actions (one seeded generator), `relax_gc()` as `rl_speed.py`. Prints per task the
median reset and the mean step in each bucket of step indices [0,1) [1,5) [5,10) [10,25) [25,50)
[50,100) (an episode's last step also builds its scorecard for `info`).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from discoverylab.rl import make_rl_env, relax_gc
from discoverylab.scenarios.registry import task_problem

BUCKETS = (0, 1, 5, 10, 25, 50, 100)


def profile(task: str, episodes: int, steps: int) -> str:
    """One line: the reset and the per-bucket step times of `task`."""
    env = make_rl_env(task, max_steps=steps)
    rng = np.random.default_rng(0)
    edges = np.array(BUCKETS[1:])
    total, count = np.zeros(len(BUCKETS) - 1), np.zeros(len(BUCKETS) - 1)
    resets = []
    for episode in range(episodes):
        start = time.perf_counter()
        env.reset(seed=episode)
        resets.append(time.perf_counter() - start)
        for index in range(steps):
            allowed = np.flatnonzero(env.action_masks())
            action = allowed[int(rng.integers(len(allowed)))]
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            spent = time.perf_counter() - start
            bucket = min(int(np.searchsorted(edges, index, side="right")), len(total) - 1)
            total[bucket] += spent
            count[bucket] += 1
            if terminated or truncated:
                break
    mean = total / np.maximum(count, 1)
    cells = " ".join(f"[{BUCKETS[i]},{BUCKETS[i + 1]}):{mean[i] * 1e6:.1f}us" for i in range(len(mean)))
    return f"{task} reset {statistics.median(resets) * 1e6:.0f}us {cells}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    if args.episodes < 1 or args.steps < 1:
        parser.error("--episodes and --steps must be at least 1")
    for task in args.tasks:
        if why := task_problem(task):
            parser.error(why)
    relax_gc()
    for task in args.tasks:
        print(profile(task, args.episodes, args.steps), flush=True)


if __name__ == "__main__":
    main()
