"""Simulator speed per task: reset time, steps/s of a random agent with text observations,
and peak memory. A benchmark, not a test: run `make bench` or

    .venv/bin/python benchmarks/step_speed.py [--steps 2000] [--resets 20] [--suite unit] [--task SpaceSick] [--json out.json]

Each task runs in a fresh process so peak RSS is per task. Reset times: the first (cold) reset
of the process, then the median and max over `--resets` seeds. Steps/s counts only `agent.act`
+ `env.step` (the random agent's episodes end and are reset; those resets are timed separately);
"env only" counts `env.step` alone (the simulator, without the random agent's choice). Targets (issue #2, 2-core machine):
reset <= 50 ms and >= 2,000 steps/s on every unit-test task.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import statistics
import sys
import time
from queue import Empty
from typing import Any


def measure(task: str, difficulty: str, steps: int, resets: int) -> dict[str, Any]:
    from discoverylab.agents import RandomAgent
    from discoverylab.env import DiscoveryWorldEnv

    env = DiscoveryWorldEnv(task, difficulty, max_steps=10**9)
    t0 = time.perf_counter()
    env.reset(seed=10**6)  # cold start: imports, template and material caches
    cold_ms = 1000 * (time.perf_counter() - t0)
    reset_times = []
    for seed in range(resets):
        t0 = time.perf_counter()
        env.reset(seed=seed)
        reset_times.append(time.perf_counter() - t0)
    _, info = env.reset(seed=0)
    agent = RandomAgent(seed=0)
    obs = info["observation"]
    n = 0
    obs_bytes = 0
    elapsed = 0.0  # time in agent.act + env.step only; resets are measured above
    env_elapsed = 0.0  # time in env.step alone: the simulator without the random agent
    clock = time.perf_counter
    while n < steps:
        t0 = clock()
        action = agent.act(obs)
        t1 = clock()
        text, _, terminated, truncated, info = env.step(action)
        t2 = clock()
        elapsed += t2 - t0
        env_elapsed += t2 - t1
        obs = info["observation"]
        obs_bytes += len(text)
        n += 1
        if terminated or truncated:
            _, info = env.reset(seed=n)
            obs = info["observation"]
    return {
        "task": task,
        "difficulty": difficulty,
        "reset_ms_cold": cold_ms,
        "reset_ms_median": 1000 * statistics.median(reset_times),
        "reset_ms_max": 1000 * max(reset_times),
        "steps_per_s": n / elapsed,
        "env_steps_per_s": n / env_elapsed,
        "obs_kb_mean": obs_bytes / n / 1024,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _worker(args: tuple[str, str, int, int], queue: Any) -> None:
    queue.put(measure(*args))


def _row(proc: Any, queue: Any) -> dict[str, Any] | None:
    """The worker's row, or None once it has exited without one (its traceback is on stderr): a
    bare `queue.get()` waited forever for a worker that had failed."""
    while True:
        try:
            return queue.get(timeout=0.5)  # type: ignore[no-any-return]
        except Empty:
            if not proc.is_alive():
                try:  # a row put just before the exit
                    return queue.get(timeout=0.5)  # type: ignore[no-any-return]
                except Empty:
                    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--resets", type=int, default=20)
    parser.add_argument("--suite", default="all", choices=("unit", "discovery", "tutorial", "all"))
    parser.add_argument("--task", default=None, help="only this task (all its difficulties)")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    if args.steps < 1 or args.resets < 1:
        parser.error("--steps and --resets must be at least 1")
    if args.json_out and (os.path.isdir(args.json_out) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json_out)))):
        parser.error(f"--json {args.json_out!r}: a file in an existing folder is needed")

    from discoverylab.bench.runner import suite_tasks

    ctx = mp.get_context("spawn")
    rows = []
    pairs = [(t, d) for t, d in suite_tasks(args.suite) if args.task in (None, t)]
    if not pairs:
        parser.error(f"no task {args.task!r} in suite {args.suite!r}")
    for task, diff in pairs:
        queue = ctx.Queue()
        proc = ctx.Process(target=_worker, args=((task, diff, args.steps, args.resets), queue))
        proc.start()
        row = _row(proc, queue)
        proc.join()
        if row is None:
            sys.exit(f"step_speed.py: the worker for {task} ({diff}) failed (exit status {proc.exitcode}); no table written")
        rows.append(row)
    header = f"{'task':28} {'diff':7} {'reset ms cold/med/max':>22} {'steps/s':>8} {'env only':>8} {'obs KB':>7} {'peak MB':>8}"
    print(header)
    print("-" * len(header))
    for r in rows:
        resets = f"{r['reset_ms_cold']:.0f}/{r['reset_ms_median']:.1f}/{r['reset_ms_max']:.1f}"
        print(f"{r['task']:28} {r['difficulty']:7} {resets:>22} {r['steps_per_s']:8.0f} {r['env_steps_per_s']:8.0f} {r['obs_kb_mean']:7.1f} "
              f"{r['peak_rss_mb']:8.0f}")  # fmt: skip
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
