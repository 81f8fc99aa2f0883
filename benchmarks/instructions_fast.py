"""Instructions per symbolic step (callgrind), instrumenting only the steps: `instructions.py
--mode symbolic` (or episodes) for a loaded machine. A benchmark, not a test:

    .venv/bin/python benchmarks/instructions_fast.py [--task Proteomics] [--difficulty normal]
        [--mode symbolic|episodes] [--steps 300] [--src other/checkout/src]

The same rollout as `instructions.py` (seeded masked policy; episodes that end are reset), run
twice (0 steps, then `--steps`) under `valgrind --tool=callgrind --instr-atstart=no`: the process
switches instrumentation on itself after the env's first reset (`callgrind_control -i on`), so
imports and world building run uninstrumented (a minute per task instead of ~20 at load 8-10).
Not exact like `instructions.py`: the same tree measured twice differed by up to ~0.5% (about
2.6k instructions per step on Space Sick), so compare differences above that.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

MOVES = 15  # argument-less actions come first in the discrete layout (as instructions.py)


def rollout(task: str, difficulty: str, mode: str, steps: int) -> None:
    """Reset, switch callgrind's instrumentation on, then play `steps` steps."""
    import numpy as np

    from discoverylab.rl import make_rl_env

    limit = {"max_steps": 10**9} if mode == "symbolic" else {}
    env = make_rl_env(task, difficulty, **limit)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
    for i in range(steps):
        mask = info["action_mask"]
        allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:MOVES].any() else mask[:MOVES])
        *_, term, trunc, info = env.step(int(allowed[int(rng.integers(len(allowed)))]))
        if term or trunc:
            _, info = env.reset(seed=i + 1)


def count(args: argparse.Namespace, steps: int) -> int:
    """Instructions collected by one run of `steps` steps."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    if args.src:
        env["PYTHONPATH"] = os.path.abspath(args.src)
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--inner", "--task", args.task, "--difficulty", args.difficulty,
               "--mode", args.mode, "--steps", str(steps)]  # fmt: skip
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="Proteomics")
    parser.add_argument("--difficulty", default="normal")
    parser.add_argument("--mode", choices=("symbolic", "episodes"), default="symbolic")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--src", help="measure this source tree instead of the installed package")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        rollout(args.task, args.difficulty, args.mode, args.steps)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind not found: install it (apt-get install valgrind) to count instructions.")
    base, run = count(args, 0), count(args, args.steps)
    where = args.src or "installed package"
    print(f"{args.task} {args.difficulty} {args.mode}: {(run - base) / args.steps:,.0f} instructions per step "
          f"({args.steps} steps, {where}; steps instrumented only)")  # fmt: skip


if __name__ == "__main__":
    main()
