"""sb3-contrib's MaskablePPO on DiscoveryWorld unit tests, as an RL researcher would call it.

Trains one policy per task (`SlotPolicy` or "MlpPolicy" on `OneHotObservation` features through
`discoverylab.rl.sb3.SB3VecEnv`, the batched env with masks) on the `train` split's levels, and
evaluates greedy success on held-out `dev` levels every `--eval-every` steps.
`--obs flatten` runs the naive route (Gymnasium's FlattenObservation of the raw uint8
symbolic observation, one env per process through SB3's DummyVecEnv) for the comparison in
docs/rl.md ("Why flatten + MLP learns nothing").

    pip install -e '.[rl]'        # torch (CPU), stable-baselines3, sb3-contrib
    python benchmarks/sb3.py --tasks DialogTest --steps 50000 --out /tmp/dialog
    # the 10-task sweep: one process per task, each pinned to one core, all done within 460 s
    python benchmarks/sb3.py --jobs 10 --cpus 0-13 --steps 300000 --time-limit 460 --parts /tmp/sb3_parts --out $OUT/sb3_curve
    python benchmarks/sb3.py --plot-only --out $OUT/sb3_curve   # redraw .png and .md from .json

Every task writes its curve to `<parts>/<task>.json` (default `<out>.parts`) after each evaluation, so a run killed
at a time limit still leaves its partial curves; the sweep merges them into `<out>.json`,
`<out>.png` (greedy held-out success vs env steps) and `<out>.md` (a table). Ctrl-C writes what there
is to `<out>-interrupted.*` instead, leaving a complete `<out>.*` as it was, and exits 130.
tests/test_sb3_smoke.py runs a few hundred steps of it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sb3_outputs.py lies beside this script
from sb3_outputs import curves_problem, interrupted, parts_dir, plot, redraw, table, write_outputs  # noqa: E402, F401  (plot: callers' sb3.plot)

LAUNCHED = (time.monotonic(), time.time())  # --time-limit counts from here: the whole command's wall time
UNIT = ("DialogTest", "PickAndPlaceTest", "PickAndGiveTest", "DoorsTest", "DoorsWithKeysTest", "SearchTest",
        "NavigationHouseTest", "MovingAgentsTest", "InstrumentMeasurementTest", "DiscoveryFeedTest")  # fmt: skip
TRAINING = ("steps", "num_envs", "workers", "max_steps", "reward", "obs", "policy", "n_steps", "batch_size", "epochs",
            "ent_coef", "lr", "num_levels", "eval_every", "eval_episodes", "seed", "history", "notes", "early_stop")  # what --jobs passes on  # fmt: skip
# Episode limits: 50 steps, 100 where the goal lies out of the first view (walking demonstrations of
# these take 15-90 steps; teleports to things in view shorten that). `--max-steps N` sets one for all.
MAX_STEPS = {"DoorsTest": 100, "DoorsWithKeysTest": 100, "SearchTest": 100, "NavigationHouseTest": 100, "MovingAgentsTest": 100}
EVAL_RESERVE = 30.0  # seconds kept back from --time-limit for the final greedy and sampled evaluations


def evaluate(model: Any, task: str, episodes: int, max_steps: int, obs: str = "onehot", difficulty: str = "normal",
             history: bool = False, greedy: bool = True, notes: bool = False) -> float:  # fmt: skip
    """Greedy (or sampled) success on `dev` levels 0..episodes-1 (never trained on: training
    draws `train`); the episodes run side by side so that the policy acts on one batch per step."""
    from gymnasium.wrappers import FlattenObservation

    from discoverylab.instances import make_instance
    from discoverylab.rl import make_rl_env, make_sb3_env

    if episodes < 1:
        return 0.0
    envs: list[Any] = [make_sb3_env(task, difficulty, max_steps=max_steps, history=history, notes=notes) if obs == "onehot" else
                       FlattenObservation(make_rl_env(task, difficulty, max_steps=max_steps)) for _ in range(episodes)]  # fmt: skip
    first = [env.reset(options={"instance": make_instance(task, difficulty, "dev", i)})[0] for i, env in enumerate(envs)]
    current = np.stack(first)
    masks = np.stack([env.get_wrapper_attr("action_masks")() for env in envs])
    live = np.ones(episodes, dtype=bool)
    wins = 0
    while live.any():
        rows = np.flatnonzero(live)
        actions, _ = model.predict(current[rows], action_masks=masks[rows], deterministic=greedy)
        for i, action in zip(rows, np.asarray(actions).reshape(-1), strict=True):
            o, _, term, trunc, info = envs[i].step(int(action))
            current[i], masks[i] = o, envs[i].get_wrapper_attr("action_masks")()
            if term or trunc:
                live[i] = False
                wins += int(info["scorecard"]["completedSuccessfully"])
    for env in envs:
        env.close()
    return wins / episodes


def _write(path: Path | None, curve: dict[str, Any]) -> None:
    if path is not None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({k: v for k, v in curve.items() if k not in ("model", "_start")}, indent=1))
        tmp.replace(path)  # a kill never leaves half a file


def _callback(task: str, every: int, episodes: int, max_steps: int, obs: str, difficulty: str, history: bool,
              deadline: float | None, curve: dict[str, Any], path: Path | None, notes: bool = False,
              early_stop: float | None = None) -> Any:  # fmt: skip
    from stable_baselines3.common.callbacks import BaseCallback

    class Curve(BaseCallback):  # type: ignore[misc]
        """Training success per rollout, greedy held-out success every `every` steps, and the
        time limit (training stops cleanly at `deadline`, a `perf_counter` time)."""

        def __init__(self) -> None:
            super().__init__()
            self.next, self.wins = every, []

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
                if done and "is_success" in info:
                    self.wins.append(int(info["is_success"]))
            if every and self.num_timesteps >= self.next:
                self.next += every
                score = evaluate(self.model, task, episodes, max_steps, obs, difficulty, history, notes=notes)
                curve["eval"].append({"steps": self.num_timesteps, "success": score,
                                      "seconds": round(time.perf_counter() - curve["_start"], 1)})  # fmt: skip
                print(json.dumps({"task": task, **curve["eval"][-1]}), flush=True)
                _write(path, curve)
                last = [e["success"] for e in curve["eval"][-2:]]
                if early_stop is not None and len(last) == 2 and min(last) >= early_stop:
                    curve["stopped"] = "early_stop"  # two held-out evaluations in a row at the target
                    return False
            if deadline is not None and time.perf_counter() >= deadline:
                curve["stopped"] = "time_limit"
                return False
            return True

        def _on_rollout_end(self) -> None:
            curve["steps"].append(self.num_timesteps)
            curve["train_success"].append(float(np.mean(self.wins[-50:])) if self.wins else 0.0)

    return Curve()


def train(task: str, steps: int, num_envs: int = 16, workers: int = 1, max_steps: int = 50, reward: str = "explore",
          obs: str = "onehot", seed: int = 0, eval_every: int = 0, eval_episodes: int = 50, num_levels: int | None = None,
          difficulty: str = "normal", n_steps: int = 128, ent_coef: float = 0.01, policy: str = "slot",
          batch_size: int = 256, n_epochs: int = 4, learning_rate: float = 1e-3, time_limit: float | None = None,
          curve_path: Path | None = None, history: bool = True, notes: bool = True,
          early_stop: float | None = None) -> dict[str, Any]:  # fmt: skip
    """Train MaskablePPO on `task` for `steps` env steps (or until `time_limit` seconds, keeping
    `EVAL_RESERVE` for the final evaluation); returns the curve (and the model)."""
    import torch
    from gymnasium.wrappers import FlattenObservation
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from discoverylab.rl import make_rl_env
    from discoverylab.rl.sb3 import SB3VecEnv
    from discoverylab.rl.sb3_policy import SlotPolicy

    start = time.perf_counter()
    torch.set_num_threads(1)  # more threads than cores slows every update tenfold on a shared box
    torch.manual_seed(seed)
    if policy not in ("mlp", "slot"):
        raise ValueError(f"policy must be 'mlp' or 'slot', not {policy!r}.")
    kwargs: dict[str, Any] = {"max_steps": max_steps, "reward": reward, "levels": "train", "num_levels": num_levels}
    if obs == "onehot":
        kwargs["notes"] = notes
        venv: Any = SB3VecEnv(task, difficulty, num_envs=num_envs, workers=workers, seed=seed, history=history, **kwargs)
    elif obs == "flatten":
        history = notes = False  # the naive route, as users first tried it
        venv = DummyVecEnv([lambda: FlattenObservation(make_rl_env(task, difficulty, **kwargs)) for _ in range(num_envs)])
        venv.seed(seed)
    else:
        raise ValueError(f"obs must be 'onehot' or 'flatten', not {obs!r}.")
    curve: dict[str, Any] = {"task": task, "obs": obs, "reward": reward, "policy": policy, "steps": [],
                             "train_success": [], "eval": [], "_start": start,
                             "settings": {"num_envs": num_envs, "workers": workers, "max_steps": max_steps,
                                          "n_steps": n_steps, "batch_size": batch_size, "n_epochs": n_epochs,
                                          "ent_coef": ent_coef, "learning_rate": learning_rate, "seed": seed, "history": history, "notes": notes,
                                          "eval_episodes": eval_episodes, "target_steps": steps}}  # fmt: skip
    model = MaskablePPO("MlpPolicy" if policy == "mlp" else SlotPolicy, venv, n_steps=n_steps, batch_size=batch_size,
                        n_epochs=n_epochs, learning_rate=learning_rate, ent_coef=ent_coef, gamma=0.99, seed=seed,
                        verbose=0, device="cpu")  # fmt: skip
    deadline = None if time_limit is None else start + max(1.0, time_limit - EVAL_RESERVE)
    callback = _callback(task, eval_every, eval_episodes, max_steps, obs, difficulty, history, deadline, curve, curve_path,
                         notes, early_stop)
    model.learn(steps, callback=callback)
    curve["train_seconds"] = round(time.perf_counter() - start, 1)
    curve["total_steps"] = int(model.num_timesteps)
    venv.close()
    curve["final"] = evaluate(model, task, eval_episodes, max_steps, obs, difficulty, history, notes=notes) \
        if eval_episodes else None  # fmt: skip
    curve["seconds_total"] = round(time.perf_counter() - start, 1)
    _write(curve_path, curve)  # the greedy figure is safe should the sampled one be cut off
    torch.manual_seed(seed + 1)  # sampled actions from torch's generator: seeded, so the figure repeats
    curve["final_sampled"] = evaluate(model, task, eval_episodes, max_steps, obs, difficulty, history, greedy=False, notes=notes) \
        if eval_episodes else None  # fmt: skip
    del curve["_start"]
    _write(curve_path, curve)
    curve["model"] = model
    return curve


def parse_cpus(text: str) -> list[int]:
    """"0-13" or "0,2,4-6" -> [0, ..., 13]."""
    cpus: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if not lo.strip().isdigit() or (hi and not hi.strip().isdigit()):
            raise SystemExit(f"--cpus: cannot read {text!r} (e.g. 0-13 or 0,2,4-6).")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def preflight() -> None:
    """Fail at once, naming the module, where a package the tasks need is missing (rather than
    ten task logs with the same traceback)."""
    import importlib

    for name in ("numpy", "gymnasium", "torch", "stable_baselines3", "sb3_contrib", "matplotlib", "matplotlib.pyplot",
                 "discoverylab.rl.sb3"):  # fmt: skip
        try:
            importlib.import_module(name)
            if name == "matplotlib":
                importlib.import_module(name).use("Agg")  # headless, before pyplot picks a backend
        except ImportError as exc:
            raise SystemExit(f"sb3 sweep: cannot import {name} ({exc}); install the `rl` extra "
                             "(torch, stable-baselines3, sb3-contrib) and discoverylab's dependencies.") from exc


def sweep(args: argparse.Namespace, tasks: list[str], forward: list[str]) -> None:
    """Each task in its own process (at most `--jobs` at a time), pinned round-robin to `--cpus`;
    at `--time-limit` anything still running is stopped and the partial curves are merged."""
    out = Path(args.out)
    parts = parts_dir(out, args.parts)
    parts.mkdir(parents=True, exist_ok=True)
    cpus = parse_cpus(args.cpus) if args.cpus else []
    preflight()  # (imports matplotlib too: the stop handler must not import it mid-signal)
    start, wall = LAUNCHED
    pending, running, launched = list(tasks), {}, set()

    def stop(signum: int, frame: Any) -> None:  # an outer `timeout`: stop the tasks, keep their partial curves
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # `timeout` signals the whole process group: once is enough
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for proc in running.values():
            proc.kill()
        started = [t for t in tasks if t in launched]  # a task not started may hold an earlier run's curve
        if signum == signal.SIGINT:
            interrupted(out, started, list(running), parts)
        print(table(write_outputs(out, started, parts)), flush=True)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while pending or running:
        while pending and len(running) < args.jobs:
            task = pending.pop(0)
            cmd = [sys.executable, __file__, "--tasks", task, "--out", str(out), "--parts", str(parts), "--sweep-task",
                   *forward]  # fmt: skip
            if cpus:
                cmd += ["--cpu", str(cpus[tasks.index(task) % len(cpus)])]
            if args.time_limit:  # the child stops by the wall clock: its imports count too
                cmd += ["--until", f"{wall + args.time_limit - 5:.1f}"]
            (parts / f"{task}.json").unlink(missing_ok=True)  # an earlier run's curve is never taken for this one's
            with (parts / f"{task}.log").open("w") as log:  # the child writes through its own copy
                running[task] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
            launched.add(task)
        time.sleep(0.5)
        for task, proc in list(running.items()):
            if proc.poll() is not None:
                del running[task]
                print(json.dumps({"task": task, "exit": proc.returncode, "seconds": round(time.monotonic() - start, 1)}), flush=True)
        if args.time_limit and time.monotonic() - start > args.time_limit and running:
            for proc in running.values():
                proc.kill()
            running.clear()
            pending.clear()
    curves = write_outputs(out, [t for t in tasks if t in launched], parts)  # (the time limit may leave some unstarted)
    print(table(curves), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(UNIT))
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1, help="env processes (1: in the training process)")
    parser.add_argument("--max-steps", type=int, default=None, help="episode limit (default: 50, or the task's MAX_STEPS)")
    parser.add_argument("--reward", default="explore", choices=("success", "explore", "procedure"))
    parser.add_argument("--obs", default="onehot", choices=("onehot", "flatten"))
    parser.add_argument("--policy", default="slot", choices=("mlp", "slot"), help="slot: SlotPolicy's shared per-slot head")
    parser.add_argument("--n-steps", type=int, default=128, help="rollout steps per env between updates")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--history", action=argparse.BooleanOptionalAction, default=True,
                        help="append ActionHistory's features (last action's kind, steps unchanged)")
    parser.add_argument("--notes", action=argparse.BooleanOptionalAction, default=True,
                        help="the symbolic observation's notes (rl/notes.py: feed instructions, readings, visited tiles)")
    parser.add_argument("--early-stop", type=float, default=None, metavar="X",
                        help="stop a task's training once two held-out evaluations in a row reach X (e.g. 0.95)")
    parser.add_argument("--num-levels", type=int, default=None)
    parser.add_argument("--eval-every", type=int, default=30_000)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds for the whole run (each task stops in time)")
    parser.add_argument("--jobs", type=int, default=0, help="run the tasks as this many parallel processes")
    parser.add_argument("--cpus", default="", help="with --jobs: pin task processes to these cores, e.g. 0-13")
    parser.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)  # set by --jobs
    parser.add_argument("--until", type=float, default=None, help=argparse.SUPPRESS)  # set by --jobs: a time.time()
    parser.add_argument("--sweep-task", action="store_true", help=argparse.SUPPRESS)  # set by --jobs: the sweep merges
    parser.add_argument("--plot-only", action="store_true", help="redraw <out>.png and <out>.md from <out>.json")
    parser.add_argument("--out", default="runs/sb3_curve", help="names <out>.json, .png and .md (default runs/sb3_curve, "
                        "git-ignored; the docs' figure is regenerated with --out docs/images/sb3_curve)")
    parser.add_argument("--parts", default=None, help="folder of the per-task curves and logs (default: <out>.parts)")
    args = parser.parse_args()
    out = Path(args.out)
    tasks = [t for t in args.tasks.split(",") if t]
    if args.plot_only:
        if not out.with_suffix(".json").is_file():  # a usage error, not a FileNotFoundError traceback
            parser.error(f"--plot-only redraws from {out.with_suffix('.json')}, which does not exist (check --out).")
        problem = curves_problem(out.with_suffix(".json"))
        if problem:  # before: a JSONDecodeError, KeyError or TypeError traceback
            parser.error(f"--plot-only: {out.with_suffix('.json')} {problem}")
        print(table(redraw(out)), end="")
        return
    from discoverylab.scenarios.registry import get_task

    try:  # a wrong name: a usage error now, not a traceback (or, with --jobs, a sweep of failing processes)
        [get_task(t) for t in tasks]
    except ValueError as exc:
        parser.error(str(exc))
    small = [f"--{n.replace('_', '-')}" for n in ("num_envs", "workers", "n_steps", "batch_size", "epochs") if getattr(args, n) < 1]
    if small:  # was a ValueError traceback from the env or the model (with --jobs, one per task process)
        parser.error(f"{', '.join(small)} must be at least 1")
    try:  # where the curves go, before any work (a file where a folder should be: a usage error, not a traceback)
        parts_dir(out, args.parts).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"cannot make the folder {parts_dir(out, args.parts)} for the curves ({exc.strerror or exc}); check --out and --parts")
    if args.jobs:
        forward = [(f"--{name}" if value else f"--no-{name}") if isinstance(value, bool) else f"--{name}={value}"
                   for name, value in ((k.replace("_", "-"), v) for k, v in vars(args).items() if k in TRAINING)
                   if value is not None]  # fmt: skip
        sweep(args, tasks, forward)
        return
    if args.cpu is not None and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {args.cpu})
        except OSError as exc:  # a core this container may not use: run unpinned rather than not at all
            print(json.dumps({"task": args.tasks, "warning": f"cannot pin to core {args.cpu}: {exc}"}), flush=True)
    from discoverylab.rl import relax_gc

    relax_gc()
    parts = parts_dir(out, args.parts)
    parts.mkdir(parents=True, exist_ok=True)
    until = args.until if args.until is not None else None if args.time_limit is None else LAUNCHED[1] + args.time_limit
    for done, task in enumerate(tasks):
        left = None if until is None else until - time.time()
        max_steps = args.max_steps or MAX_STEPS.get(task, 50)
        if not args.sweep_task:  # (the sweep cleared it before starting this process)
            (parts / f"{task}.json").unlink(missing_ok=True)  # an earlier run's curve is never taken for this one's
        try:
            curve = train(task, args.steps, args.num_envs, args.workers, max_steps, args.reward, args.obs, args.seed,
                          args.eval_every, args.eval_episodes, args.num_levels, n_steps=args.n_steps, ent_coef=args.ent_coef,
                          policy=args.policy, batch_size=args.batch_size, n_epochs=args.epochs, learning_rate=args.lr,
                          time_limit=left, curve_path=parts / f"{task}.json", history=args.history, notes=args.notes,
                          early_stop=args.early_stop)  # fmt: skip
        except KeyboardInterrupt:
            if args.sweep_task:  # the sweep merges what its tasks left
                raise SystemExit(130) from None
            interrupted(out, tasks[: done + 1], [task], parts)
        curve.pop("model")
        print(json.dumps({"task": task, "final": curve["final"], "steps": curve["total_steps"],
                          "seconds": curve["seconds_total"]}), flush=True)  # fmt: skip
    if not args.sweep_task:  # a single run merges its outputs itself; a sweep's task leaves that to the sweep
        write_outputs(out, tasks, parts)  # (before, without --cpus each wrote its curve alone over <out>.json)


if __name__ == "__main__":
    main()
