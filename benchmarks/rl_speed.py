"""RL-path speed: one env with the symbolic observation and masked discrete actions, the text
env for comparison, and async vector envs (2 workers) against one env. A benchmark, not a test:

    .venv/bin/python benchmarks/rl_speed.py [--steps 5000] [--task DoorsTest] [--json out.json]

Steps/s count `env.step` plus picking a random masked action (no resets: `max_steps` is huge and
the random policy avoids the actions that end these episodes). Both wall-clock and process-CPU
rates are printed: on a busy machine the CPU rate is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import gymnasium
import numpy as np

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import DiscreteActions, make_rl_env

MOVES = 15  # the argument-less actions come first in the layout


def _policy(rng: np.random.Generator, mask: np.ndarray, i: int) -> int:
    """Mostly moves and turns, every third step any masked-in action (object actions included)."""
    allowed = np.flatnonzero(mask if i % 3 == 0 else mask[:MOVES])
    if not len(allowed):
        allowed = np.flatnonzero(mask)
    return int(rng.choice(allowed))


def single(task: str, steps: int, symbolic: bool) -> dict[str, Any]:
    env = make_rl_env(task, max_steps=10**9) if symbolic else DiscreteActions(
        DiscoveryWorldEnv(task, max_steps=10**9, info="lean"))  # fmt: skip
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(steps):
        *_, term, trunc, info = env.step(_policy(rng, info["action_mask"], i))
        if term or trunc:
            _, info = env.reset(seed=i)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"mode": "symbolic" if symbolic else "text", "steps_per_s": steps / wall, "cpu_steps_per_s": steps / cpu}


def vector(task: str, steps: int, num_envs: int, mode: str) -> dict[str, Any]:
    envs = gymnasium.make_vec(f"discoverylab/{task}-Normal-v0", num_envs=num_envs, vectorization_mode=mode,
                              observation="symbolic", max_steps=10**9, wrappers=[DiscreteActions])  # fmt: skip
    _, info = envs.reset(seed=list(range(num_envs)))
    rng = np.random.default_rng(0)
    rounds = steps // num_envs
    wall = time.perf_counter()
    for i in range(rounds):
        actions = np.array([_policy(rng, m, i) for m in info["action_mask"]])
        *_, info = envs.step(actions)
    wall = time.perf_counter() - wall
    envs.close()
    return {"mode": f"{mode} x{num_envs}", "steps_per_s": rounds * num_envs / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--task", default="DoorsTest")
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = [single(args.task, args.steps, True), single(args.task, args.steps, False),
            vector(args.task, args.steps, 1, "sync"), vector(args.task, args.steps, 2, "async")]  # fmt: skip
    for row in rows:
        print(json.dumps({"task": args.task, **{k: round(v) if isinstance(v, float) else v for k, v in row.items()}}))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
