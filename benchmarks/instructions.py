"""Instructions per step (callgrind): a deterministic speed measure for A/B comparisons on
machines whose clock drifts. A benchmark, not a test:

    .venv/bin/python benchmarks/instructions.py [--task SpaceSick] [--difficulty normal]
        [--mode text|symbolic|episodes|reset] [--steps 500] [--src other/checkout/src] [--fast] [--default-gc]
        [--function module:Qualified.name] [--seed 0]

Runs the same rollout twice under `valgrind --tool=callgrind` (0 steps, then `--steps`), with
`PYTHONHASHSEED=0` and pinned to one CPU when `taskset` exists, and prints the difference per
step: imports, world building and the first reset cancel out. Text mode plays the random agent
(`RandomAgent(seed=0)`) on the text env; symbolic mode plays the RL env (`make_rl_env`) with a
seeded random masked policy (moves and turns on two steps of three, as `rl_speed.py`). Episodes
that end are reset. Episodes mode plays the same policy on the task's own episodes (its step
limit: 100 steps for a unit test), each ended one reset on a new seed, as `rl_speed.py --suite`'s
"steps/s with resets": resets and the cold first views of each new world count. Reset mode counts instructions per `reset` of the RL env instead (`--steps`
resets: dispose, world building, the tile mirror, the first observation). `--src` measures another checkout (e.g. a `git worktree` of the base
commit) with this script. Needs valgrind (`apt-get install valgrind`); ~50x slower than a
plain run, so a few hundred steps are enough (the count is exact).

`--fast` (for a loaded machine): callgrind starts with instrumentation off (`--instr-atstart=no`)
and the process switches it on itself (`callgrind_control -i on`) once the env is built and first
reset, so imports and world building run uninstrumented: a minute per task instead of ~20 at load
8-10. Not exact: the same tree measured twice differed by up to ~0.5% (about 2.6k instructions per
step on Space Sick), so compare differences above that.

`--seed K` shifts every seed of the rollout (the episodes' and the policy's) by K. A change that
alters a random stream (how characters walk) sends a seed's rollout elsewhere, and that alone
moved Moving Agents' count by +15% (session 23): compare such trees over several seeds.

`--function discoverylab.world.world:World.dispose` counts only the instructions spent inside
that function (and what it calls) per step or reset: where an episode's instructions go, one
function per run. After the first reset the function (a module's function or a class's method,
looked up by the module's name as callers look it up) is wrapped so that its outermost call
runs through `operator.call`, and callgrind collects only inside that C function
(`--collect-atstart=no --toggle-collect=_operator_call`); a nested call of it is not counted twice.
A function that callers imported by name (`from m import f`) is not seen there: name the caller,
or the method. Wrapping adds arguments' references (`sys.getrefcount` checks may then see one more).
"""

from __future__ import annotations

import argparse
import importlib
import operator
import os
import re
import shutil
import subprocess
import sys

MOVES = 15  # argument-less actions come first in the discrete layout


def _instrument() -> None:
    """Switch callgrind's instrumentation on for this process (`--fast`)."""
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)


def resolve(spec: str) -> tuple[object, str, object]:
    """`module:Qualified.name` as (the object holding the name, the name, the function); a
    ValueError that says what is wrong otherwise."""
    module_name, colon, qualname = spec.partition(":")
    if not colon or not module_name or not qualname:
        raise ValueError(f"--function {spec!r}: give module:name or module:Class.method (e.g. discoverylab.world.world:World.dispose).")
    try:
        owner: object = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"--function {spec!r}: cannot import {module_name!r} ({error}).") from None
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            raise ValueError(f"--function {spec!r}: {module_name} has no {part!r}.")
    found = getattr(owner, name, None)
    if not callable(found):
        raise ValueError(f"--function {spec!r}: {qualname!r} is not a function of {module_name}.")
    return owner, name, found


def wrap(spec: str) -> None:
    """Route the outermost calls of `spec`'s function through `operator.call` (see `--function`)."""
    owner, name, function = resolve(spec)
    raw = vars(owner).get(name) if isinstance(owner, type) else function
    depth = [0]

    def counted(*args: object, **kwargs: object) -> object:
        if depth[0]:
            return function(*args, **kwargs)  # type: ignore[operator]
        depth[0] += 1
        try:
            return operator.call(function, *args, **kwargs)  # type: ignore[arg-type]
        finally:
            depth[0] -= 1

    # A static or class method's function is already what callers reach (a class method's bound to
    # its class): the wrapper must not be bound to an instance in its place.
    setattr(owner, name, staticmethod(counted) if isinstance(raw, (staticmethod, classmethod)) else counted)


def rollout(task: str, difficulty: str, mode: str, steps: int, fast: bool = False, default_gc: bool = False,
            function: str | None = None, seed: int = 0) -> None:  # fmt: skip
    """Play `steps` steps (the measured work); in reset mode, `steps` resets of the RL env
    (seeds 2, 3, ... after two first resets that fill the process's caches). `fast`: switch
    instrumentation on after the first reset (after both first resets in reset mode). The RL
    modes run under `relax_gc()`, as `rl_speed.py` and the batched env's workers do, unless
    `default_gc`: with Python's default thresholds a change of a few allocations moves the
    collector's passes and reads ±0.7% per reset (session 15). `function`: wrapped where
    instrumentation starts (`--function`). `seed` (`--seed`) shifts every seed used (the
    episodes' and the policy's): a change that alters a random stream (the characters' walks)
    sends one seed's rollout elsewhere, so compare such trees over several seeds."""

    def started() -> None:
        if fast:
            _instrument()
        if function:
            wrap(function)

    if mode != "text" and not default_gc:
        from discoverylab.rl import relax_gc

        relax_gc()
    if mode == "reset":
        from discoverylab.rl import make_rl_env

        rl_env = make_rl_env(task, difficulty)
        for first in range(seed, seed + 2):
            rl_env.reset(seed=first)
        started()
        for later in range(seed + 2, seed + 2 + steps):
            rl_env.reset(seed=later)
        return
    if mode in ("symbolic", "episodes"):
        import numpy as np

        from discoverylab.rl import make_rl_env

        limit = {"max_steps": 10**9} if mode == "symbolic" else {}  # episodes: the task's own limit
        env = make_rl_env(task, difficulty, **limit)
        _, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        started()
        for i in range(steps):
            mask = info["action_mask"]
            allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:MOVES].any() else mask[:MOVES])
            *_, term, trunc, info = env.step(int(allowed[int(rng.integers(len(allowed)))]))
            if term or trunc:
                _, info = env.reset(seed=seed + i + 1)
        return
    from discoverylab.agents import RandomAgent
    from discoverylab.env import DiscoveryWorldEnv

    text_env = DiscoveryWorldEnv(task, difficulty, max_steps=10**9)
    _, info = text_env.reset(seed=seed)
    agent = RandomAgent(seed=seed)
    started()
    for i in range(steps):
        *_, term, trunc, info = text_env.step(agent.act(info["observation"]))
        if term or trunc:
            _, info = text_env.reset(seed=seed + i + 1)


def count(args: argparse.Namespace, steps: int) -> int:
    """Instructions of one whole run of `steps` steps under callgrind."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    if args.src:
        env["PYTHONPATH"] = os.path.abspath(args.src)
    fast = ["--instr-atstart=no"] if args.fast else []
    if args.function:
        fast += ["--collect-atstart=no", "--toggle-collect=_operator_call*"]
    command = ["valgrind", "--tool=callgrind", *fast, "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--inner", "--task", args.task, "--difficulty", args.difficulty, "--mode", args.mode,
               "--steps", str(steps), "--seed", str(args.seed), *(["--fast"] if args.fast else []),
               *(["--default-gc"] if args.default_gc else []),
               *(["--function", args.function] if args.function else [])]  # fmt: skip
    if shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="SpaceSick")
    parser.add_argument("--difficulty", default="normal")
    parser.add_argument("--mode", choices=("text", "symbolic", "episodes", "reset"), default="text")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--src", help="measure this source tree instead of the installed package")
    parser.add_argument("--fast", action="store_true", help="instrument only after the first reset (see above)")
    parser.add_argument("--default-gc", action="store_true",
                        help="RL modes: keep Python's default collector thresholds (by default `relax_gc()`, as rl_speed.py)")
    parser.add_argument("--function", help="count only inside this function: module:name or module:Class.method")
    parser.add_argument("--seed", type=int, default=0,
                        help="shift every seed of the rollout (episodes and policy) by this much (default 0)")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        rollout(args.task, args.difficulty, args.mode, args.steps, args.fast, args.default_gc, args.function, args.seed)
        return
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if args.function is not None and args.src is None:  # (another tree's is checked by its own run)
        try:
            resolve(args.function)
        except ValueError as error:
            parser.error(str(error))
    if args.src is not None and not os.path.isfile(os.path.join(args.src, "discoverylab", "__init__.py")):
        # PYTHONPATH at a folder without the package measured the installed one under --src's name
        parser.error(f"--src {args.src!r} holds no discoverylab package (give a checkout's src folder, e.g. base/src)")
    from discoverylab.scenarios.registry import task_problem

    if args.src is None and (why := task_problem(args.task, args.difficulty)):  # another tree may have other tasks
        parser.error(why)
    if shutil.which("valgrind") is None or (args.fast and shutil.which("callgrind_control") is None):
        raise SystemExit("valgrind not found: install it (apt-get install valgrind) to count instructions.")
    base, run = count(args, 0), count(args, args.steps)
    per_step = (run - base) / args.steps
    where = (args.src or "installed package") + ("; measured part instrumented only" if args.fast else "")
    where += "; default gc" if args.default_gc or args.mode == "text" else "; relax_gc"
    where += f"; seed {args.seed}" if args.seed else ""
    unit = "reset" if args.mode == "reset" else "step"
    inside = f" inside {args.function}" if args.function else ""
    print(f"{args.task} {args.difficulty} {args.mode}: {per_step:,.0f} instructions per {unit}{inside} ({args.steps} {unit}s, {where})")


if __name__ == "__main__":
    main()
