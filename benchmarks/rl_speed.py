"""RL-path speed: one env with the symbolic observation and masked discrete actions, the text
env for comparison, Gymnasium's vector envs, and the batched vector env (`BatchedVectorEnv`,
2 workers x k envs) against one env. A benchmark, not a test:

    .venv/bin/python benchmarks/rl_speed.py [--steps 5000] [--task DoorsTest] [--batched 4,8,16] [--json out.json]

Steps/s count `env.step` plus picking a random masked action; `env_steps_per_s` counts the time
inside `step` only. The symbolic single env and the batched rows share one numpy sampler (one
row per env, no per-env Python loop), so their policy cost per call is the same; `ratio` and
`env_ratio` compare each vector row with the symbolic single env. Episodes are long
(`max_steps` is huge); the few that the random policy completes are reset. The single-env rows
also print the process-CPU rate: on a busy machine it is the steadier figure.
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
from discoverylab.rl.vector import BatchedVectorEnv

MOVES = 15  # the argument-less actions come first in the layout


def _policy(rng: np.random.Generator, mask: np.ndarray, i: int) -> int:
    """Mostly moves and turns, every third step any masked-in action (object actions included)."""
    allowed = np.flatnonzero(mask if i % 3 == 0 else mask[:MOVES])
    if not len(allowed):
        allowed = np.flatnonzero(mask)
    return int(rng.choice(allowed))


def _sample(rng: np.random.Generator, masks: np.ndarray, i: int) -> np.ndarray:
    """`_policy` over a batch of masks at once: a uniform masked-in action per row (argmax of
    random scores), restricted to moves and turns on two steps of three when a row has one."""
    scores = rng.random(masks.shape) * masks
    if i % 3:
        moves = scores[:, :MOVES]
        return np.where(moves.max(axis=1) > 0, moves.argmax(axis=1), scores.argmax(axis=1))
    return scores.argmax(axis=1)


def single(task: str, steps: int, symbolic: bool) -> dict[str, Any]:
    env = make_rl_env(task, max_steps=10**9) if symbolic else DiscreteActions(
        DiscoveryWorldEnv(task, max_steps=10**9, info="lean"))  # fmt: skip
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    in_env = 0.0
    clock = time.perf_counter
    wall, cpu = clock(), time.process_time()
    for i in range(steps):
        action = int(_sample(rng, info["action_mask"][None], i)[0])
        start = clock()
        *_, term, trunc, info = env.step(action)
        in_env += clock() - start
        if term or trunc:
            _, info = env.reset(seed=i)
    wall, cpu = clock() - wall, time.process_time() - cpu
    return {"mode": "symbolic" if symbolic else "text", "steps_per_s": steps / wall,
            "env_steps_per_s": steps / in_env, "cpu_steps_per_s": steps / cpu}  # fmt: skip


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


def batched(task: str, steps: int, workers: int, per_worker: int) -> dict[str, Any]:
    num_envs = workers * per_worker
    envs = BatchedVectorEnv(task, num_envs=num_envs, workers=workers, max_steps=10**9)
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    rounds = max(1, steps // num_envs)
    in_env = 0.0
    clock = time.perf_counter
    wall = clock()
    for i in range(rounds):
        actions = _sample(rng, info["action_mask"], i)
        start = clock()
        *_, info = envs.step(actions)
        in_env += clock() - start
    wall = clock() - wall
    envs.close()
    return {"mode": f"batched {workers}x{per_worker}", "steps_per_s": rounds * num_envs / wall,
            "env_steps_per_s": rounds * num_envs / in_env}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--task", default="DoorsTest")
    parser.add_argument("--batched", default="4,8,16", help="envs per worker of the batched rows (2 workers)")
    parser.add_argument("--only-batched", action="store_true", help="skip the text and Gymnasium vector rows")
    parser.add_argument("--json")
    args = parser.parse_args()
    base = single(args.task, args.steps, True)
    rows = [base]
    if not args.only_batched:
        rows += [single(args.task, args.steps, False),
                 vector(args.task, args.steps, 1, "sync"), vector(args.task, args.steps, 2, "async")]  # fmt: skip
    rows += [batched(args.task, args.steps, 2, int(k)) for k in args.batched.split(",") if k]
    for row in rows[1:]:
        row["ratio"] = row["steps_per_s"] / base["steps_per_s"]
        if "env_steps_per_s" in row:
            row["env_ratio"] = row["env_steps_per_s"] / base["env_steps_per_s"]
    for row in rows:
        shown = {k: (round(v, 2) if k.endswith("ratio") else round(v)) if isinstance(v, float) else v for k, v in row.items()}
        print(json.dumps({"task": args.task, **shown}))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
