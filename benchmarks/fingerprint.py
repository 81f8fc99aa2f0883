"""Byte-identity fingerprint: hashes of what every task shows, for A/B checks of a speed change
(before against after, pure against compiled). A check, not a test or a timing:

    .venv/bin/python benchmarks/fingerprint.py [--tasks Proteomics,SpaceSick] [--oracle-seeds 0,1,2]
    DISCOVERYLAB_NATIVE=1 .venv/bin/python benchmarks/fingerprint.py   # the compiled engine

Per Normal task: 300 symbolic steps of a seeded random masked policy (masks, observations,
rewards; 100-step episodes for unit tests) and 150 text-env steps of `RandomAgent` (observation,
reward, flags, scorecard); with `--oracle-seeds`, the oracle's episodes of every task and
difficulty at those seeds (records without timings, whole logs). Prints JSON: a short hash per
entry and a total. Two trees or engines agree when every line but "active" does. Why: the
compiled engine once wrote a device's setting as 5100.0 where the pure engine wrote 5100, in
dialog text only symbolic rollouts never show (docs/performance.md, session 26).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

import numpy as np

from discoverylab import make, native
from discoverylab.agents import RandomAgent
from discoverylab.bench.episode import run_episode
from discoverylab.rl import make_rl_env
from discoverylab.scenarios.registry import all_tasks


def symbolic(task: str, h: hashlib._Hash) -> Any:
    """300 steps of the task's RL env hashed into `h`; the env, mid-episode (tests clone it)."""
    env = make_rl_env(task, "normal")
    rng = np.random.default_rng(3)
    env.reset(seed=11)
    for i in range(300):
        mask = env.action_masks()
        h.update(mask.tobytes())
        obs, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        for key in sorted(obs):
            h.update(np.ascontiguousarray(obs[key]).tobytes())
        h.update(repr((reward, terminated, truncated)).encode())
        if terminated or truncated or (task.endswith("Test") and (i + 1) % 100 == 0):
            env.reset(seed=12 + i)
    return env


def text(task: str, h: hashlib._Hash) -> None:
    """150 steps of `RandomAgent` in the task's text env hashed into `h`."""
    env, agent = make(task, "normal"), RandomAgent(seed=5)
    _, info = env.reset(seed=5)
    for _ in range(150):
        obs, reward, terminated, truncated, info = env.step(agent.act(info["observation"]))
        h.update(json.dumps([obs, reward, terminated, truncated, info.get("scorecard")], sort_keys=True, default=str).encode())
        if terminated or truncated:
            break


def hashes(tasks: list[str], oracle_seeds: list[int]) -> dict[str, str]:
    """A short hash per task (`symbolic` then `text`), per oracle episode, and their total."""
    out: dict[str, str] = {}
    total = hashlib.sha256()
    for task in tasks:
        h = hashlib.sha256()
        symbolic(task, h)
        text(task, h)
        out[task] = h.hexdigest()[:16]
        total.update(h.digest())
    for seed in oracle_seeds:
        for task, cls in all_tasks().items():
            for difficulty in cls.difficulties:
                record, log = run_episode(task, difficulty, seed, "oracle")
                played = [{k: v for k, v in vars(record).items() if "second" not in k}, log]
                digest = hashlib.sha256(json.dumps(played, sort_keys=True, default=str).encode())
                out[f"oracle {task} {difficulty} {seed}"] = digest.hexdigest()[:16]
                total.update(digest.digest())
    out["total"] = total.hexdigest()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task ids (default: every task with a Normal difficulty)")
    parser.add_argument("--oracle-seeds", default="", help="comma-separated seeds of oracle episodes (default: none)")
    args = parser.parse_args()
    chosen = [t for t, cls in all_tasks().items() if "normal" in cls.difficulties]
    if args.tasks:
        unknown = sorted(set(args.tasks.split(",")) - set(chosen))
        if unknown:
            parser.error(f"unknown or without Normal: {', '.join(unknown)} (tasks: {', '.join(chosen)})")
        chosen = [t for t in chosen if t in args.tasks.split(",")]
    try:
        seeds = [int(s) for s in args.oracle_seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--oracle-seeds takes whole numbers separated by commas, not {args.oracle_seeds!r}")
    if any(seed < 0 for seed in seeds):
        parser.error("--oracle-seeds must be 0 or more")
    out: dict[str, object] = {"active": native.active(), **hashes(chosen, seeds)}
    json.dump(out, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
