"""How the per-step pace of symbolic RL envs falls as more of them live in one process. A
benchmark, not a test:

    .venv/bin/python benchmarks/envs_per_process.py [--task DoorsTest] [--envs 1,8,32]
        [--steps 16000] [--repeat 4] [--json out.json]

For each count k, k envs (`make_rl_env`, seeds 0..k-1, long episodes) are stepped round-robin in
this process with the random masked sampler of `rl_speed.py`; the clock runs inside `step` only.
The counts take turns, `--repeat` times, and each row gives the median. Each world is ~1-2 MB of
Python objects and its step touches objects spread over that: with many worlds in one process a
step finds less of its world in the CPU's caches (session 18, DoorsTest: 85,000 steps/s with one
env, 75,035 with 8, 62,562 with 32; a simulated 512 KB cache missed 330 times a step with one env,
742 with 32). What that means for vectorising: docs/rl.md, "Batched vector env".
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from discoverylab.rl import make_rl_env, relax_gc
from discoverylab.scenarios.registry import task_problem

sys.path.insert(0, str(Path(__file__).resolve().parent))  # rl_speed.py lies beside this script
from rl_speed import _sample  # noqa: E402  (its sampler: the same random masked policy)


class Group:
    """k envs and their latest infos, stepped round-robin."""

    def __init__(self, task: str, count: int) -> None:
        self.envs = [make_rl_env(task, max_steps=10**9) for _ in range(count)]
        self.infos = [env.reset(seed=j)[1] for j, env in enumerate(self.envs)]
        self.rng = np.random.default_rng(0)
        self.rounds = 0

    def run(self, steps: int) -> float:
        """Steps/s inside `step` over about `steps` steps (whole rounds)."""
        envs, infos, clock, spent = self.envs, self.infos, time.perf_counter, 0.0
        rounds = max(1, steps // len(envs))
        for _ in range(rounds):
            actions = _sample(self.rng, np.stack([info["action_mask"] for info in infos]), self.rounds).tolist()
            self.rounds += 1
            start = clock()
            for j, env in enumerate(envs):
                *_, term, trunc, infos[j] = env.step(actions[j])
                if term or trunc:  # the few the random policy completes
                    _, infos[j] = env.reset()
            spent += clock() - start
        return rounds * len(envs) / spent


def measure(task: str, counts: list[int], steps: int, repeat: int) -> list[dict[str, Any]]:
    groups = {k: Group(task, k) for k in counts}
    for k, group in groups.items():
        group.run(500 * k)  # every env as warm as the others (its view and mask caches)
    paces: dict[int, list[float]] = {k: [] for k in counts}
    for _ in range(repeat):
        for k, group in groups.items():
            paces[k].append(group.run(steps))
    one = statistics.median(paces[counts[0]])
    return [{"task": task, "envs": k, "steps_per_s": statistics.median(paces[k]),
             "x_first": statistics.median(paces[k]) / one, "runs": paces[k]} for k in counts]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="DoorsTest")
    parser.add_argument("--envs", default="1,8,32", help="env counts, comma-separated (the first is the reference)")
    parser.add_argument("--steps", type=int, default=16000, help="steps per count and run")
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--json", metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args()
    try:
        counts = [int(k) for k in args.envs.split(",") if k.strip()]
    except ValueError:
        parser.error(f"--envs takes counts like 1,8,32, got {args.envs!r}")
    if not counts or min(counts) < 1 or args.steps < 1 or args.repeat < 1:
        parser.error("--envs needs counts of at least 1; --steps and --repeat at least 1")
    if why := task_problem(args.task):
        parser.error(why)
    if args.json and (os.path.isdir(args.json) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json)))):
        parser.error(f"--json {args.json!r}: a file in an existing folder is needed (checked now, not after the run)")
    relax_gc()
    rows = measure(args.task, counts, args.steps, args.repeat)
    print(f"{'envs in the process':>20} {'steps/s (median)':>17} {'x the first':>12}")
    for row in rows:
        print(f"{row['envs']:>20} {row['steps_per_s']:>17,.0f} {row['x_first']:>12.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
