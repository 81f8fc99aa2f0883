"""RL-path speed: one env with the symbolic observation and masked discrete actions, the text
env for comparison, Gymnasium's vector envs, and the batched vector env (`BatchedVectorEnv`,
2 workers x k envs) against one env. A benchmark, not a test:

    .venv/bin/python benchmarks/rl_speed.py [--steps 5000] [--task DoorsTest] [--batched 4,8,16]
        [--repeat 1] [--warmup 500] [--max-steps N] [--default-gc] [--wait-idle] [--only-batched] [--busy N] [--json out.json]
        [--suite unit|normal [--resets 30] [--rounds 3] [--out rows.json]]

Steps/s count `env.step` plus picking a random masked action; `env_steps_per_s` counts the time
inside `step` only (and in the resets of episodes that end, as the vector envs' autoreset). The symbolic single env, the batched rows and their serial twins share one
numpy sampler (a row per env, no per-env Python loop). `ratio` (wall clock) and `env_ratio` (time
inside `step` only) compare a batched row with the symbolic single env (seed 0) measured next to
it; `ratio_to_serial` with its serial twin: the same envs and seeds stepped one after another
in this process (one core). Every env of a trio first plays `--warmup` untimed steps: the
timed part then compares envs equally warm (a batched row of 32 envs over 8,000 steps would
otherwise spend a quarter of each env's 250 steps filling its view and mask caches, which the
single env fills once). With `--repeat` the trios run back to back in alternating order
and a summary line gives each ratio's median, min and max. Episodes are
long (`max_steps` is huge; `--max-steps 100` gives a unit test's default episodes, whose resets
then weigh in); the few the random policy completes are reset. Every row runs with
`discoverylab.rl.relax_gc()` in this process (the batched env's workers call it themselves)
unless `--default-gc`. The single-env rows
also print the process-CPU rate: on a busy machine it is the steadier figure. `--suite unit` (the unit tests) and `--suite normal` (every task's Normal difficulty) print
instead one row per task and a table, and write the rows as JSON with `--out PATH`; see `suite`
for what each column measures (`--rounds N`: every task N times, its best round kept). A suite needs only numpy, gymnasium and this package, and runs
in under 90 s on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.rl import DiscreteActions, make_rl_env, relax_gc
from discoverylab.rl.vector import BatchedVectorEnv
from discoverylab.scenarios.registry import task_problem

MOVES = 15  # the argument-less actions come first in the layout
LIMIT = [10**9]  # every env's max_steps (`--max-steps`): by default episodes are long


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


def single(task: str, steps: int, symbolic: bool, warmup: int = 0) -> dict[str, Any]:
    """One env: `warmup` untimed steps, then `steps` timed ones."""
    env = make_rl_env(task, max_steps=LIMIT[0]) if symbolic else DiscreteActions(
        DiscoveryWorldEnv(task, max_steps=LIMIT[0], info="lean"))  # fmt: skip
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    in_env = 0.0
    clock = time.perf_counter
    for i in range(-warmup, steps):
        if not i:
            wall, cpu, in_env = clock(), time.process_time(), 0.0
        action = int(_sample(rng, info["action_mask"][None], i)[0])
        start = clock()
        *_, term, trunc, info = env.step(action)
        if term or trunc:  # inside the timed part, as the vector envs' autoreset is
            _, info = env.reset(seed=i + warmup)
        in_env += clock() - start
    wall, cpu = clock() - wall, time.process_time() - cpu
    return {"mode": "symbolic" if symbolic else "text", "steps_per_s": steps / wall,
            "env_steps_per_s": steps / in_env, "cpu_steps_per_s": steps / cpu}  # fmt: skip


def _masked(rng: np.random.Generator, mask: np.ndarray, i: int) -> int:
    return int(_sample(rng, mask[None], i)[0])


def suite_row(task: str, steps: int, count: int) -> dict[str, Any]:
    """One task at Normal, one symbolic RL env (`make_rl_env`), the random masked policy of the
    other rows; clocks read around `reset` and `step` only (the sampler is not counted):

    - `reset_ms`: median and min warm `reset` over `count` new seeds (a new world, its tile
      mirror and the first observation), after 5 untimed resets;
    - `steps_per_s`: `steps` steps of the task's own episodes (100 steps for a unit test, the
      task's step limit otherwise; ended episodes reset on a new seed), resets counted;
    - `long_steps_per_s`: `steps` steps of one endless episode (no resets: the step alone).
    """
    env = make_rl_env(task)
    for seed in range(5):
        env.reset(seed=10_000 + seed)
    times = []
    clock = time.perf_counter
    for seed in range(count):
        start = clock()
        env.reset(seed=seed)
        times.append(clock() - start)
    row: dict[str, Any] = {"task": task, "reset_ms": 1000 * statistics.median(times), "reset_min_ms": 1000 * min(times)}
    for key, limit in (("steps_per_s", None), ("long_steps_per_s", 10**9)):
        env = make_rl_env(task, max_steps=limit)
        start = clock()
        _, info = env.reset(seed=0)
        spent, episodes, rng = clock() - start, 1, np.random.default_rng(0)
        for i in range(steps):
            action = _masked(rng, info["action_mask"], i)
            start = clock()
            *_, term, trunc, info = env.step(action)
            if term or trunc:
                _, info = env.reset(seed=episodes)
                episodes += 1
            spent += clock() - start
        row[key] = steps / spent
        if limit is None:
            row["episodes"] = episodes
    return row


def suite(tasks: list[str], steps: int, count: int, rounds: int = 1) -> list[dict[str, Any]]:
    """`suite_row` per task, each printed as a JSON line, then a table. With `rounds` > 1 every
    task is measured that often, the tasks' order reversed every other round (a slow spell of a
    shared machine then hits different tasks), and each task's row is its best round
    (`_best`): noise on a shared machine only ever slows a run, so the best round is the
    closest to an idle core (timeit's reasoning); the median rides along."""
    measured: dict[str, list[dict[str, Any]]] = {task: [] for task in tasks}
    for r in range(rounds):
        for task in tasks if r % 2 == 0 else tasks[::-1]:
            measured[task].append(suite_row(task, steps, count))
            _show(task, {**measured[task][-1], **({"round": r + 1} if rounds > 1 else {})})
    rows = [_best(measured[task]) for task in tasks]
    best = f" (best of {rounds})" if rounds > 1 else ""
    print(f"\n{'task':<28} {'reset ms (median/min)':>22} {'steps/s with resets' + best:>20} {'steps/s no reset':>17} {'episodes':>9}")
    for row in rows:
        reset = f"{row['reset_ms']:.2f} / {row['reset_min_ms']:.2f}"
        print(f"{row['task']:<28} {reset:>22} {row['steps_per_s']:>20,.0f} {row['long_steps_per_s']:>17,.0f} {row['episodes']:>9}")
    if rounds > 1:
        print("(each column the best round's; medians of the rounds in the JSON rows, `*_median`)")
    return rows


def _best(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """One task's row from its rounds: the fastest of each column (the lowest reset times), the
    rounds' medians as `<column>_median`, and every round under `rounds`; one round as it is."""
    if len(rounds) == 1:
        return rounds[0]
    row: dict[str, Any] = {"task": rounds[0]["task"], "episodes": rounds[0]["episodes"]}
    for key, pick in (("reset_ms", min), ("reset_min_ms", min), ("steps_per_s", max), ("long_steps_per_s", max)):
        values = [r[key] for r in rounds]
        row[key], row[f"{key}_median"] = pick(values), statistics.median(values)
    row["rounds"] = rounds
    return row


def _machine() -> dict[str, Any]:
    """Where the figures come from (and how busy the machine was while they were measured)."""
    import os

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = -1.0
    return {"python": platform.python_version(), "numpy": np.__version__, "gymnasium": gymnasium.__version__,
            "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "load_average_1min": load}  # fmt: skip


def vector(task: str, steps: int, num_envs: int, mode: str) -> dict[str, Any]:
    envs = gymnasium.make_vec(f"discoverylab/{task}-Normal-v0", num_envs=num_envs, vectorization_mode=mode,
                              observation="symbolic", max_steps=LIMIT[0], wrappers=[DiscreteActions])  # fmt: skip
    _, info = envs.reset(seed=0)  # env i gets seed i
    rng = np.random.default_rng(0)
    rounds = steps // num_envs
    wall = time.perf_counter()
    for i in range(rounds):
        actions = np.array([_policy(rng, m, i) for m in info["action_mask"]])
        *_, info = envs.step(actions)
    wall = time.perf_counter() - wall
    envs.close()
    return {"mode": f"{mode} x{num_envs}", "steps_per_s": rounds * num_envs / wall}


def _timed(rounds: int, masks: Callable[[], np.ndarray], step: Callable[[np.ndarray], None],
           warmup: int = 0) -> tuple[float, float]:  # fmt: skip
    """Wall seconds and seconds inside `step` over `rounds` batches of actions drawn by `_sample`
    from the current `masks()` (one row per env), after `warmup` untimed batches."""
    rng = np.random.default_rng(0)
    in_env = 0.0
    clock = time.perf_counter
    for i in range(-warmup, rounds):
        if not i:
            wall, in_env = clock(), 0.0
        actions = _sample(rng, masks(), i)
        start = clock()
        step(actions)
        in_env += clock() - start
    return clock() - wall, in_env


def serial(task: str, steps: int, num_envs: int, warmup: int = 0) -> dict[str, Any]:
    """The batched rows' work on one core: the same envs and seeds stepped one after another."""
    envs = [make_rl_env(task, max_steps=LIMIT[0]) for _ in range(num_envs)]
    infos = [env.reset(seed=j)[1] for j, env in enumerate(envs)]

    def step(actions: np.ndarray) -> None:
        for j, (env, action) in enumerate(zip(envs, actions.tolist(), strict=True)):
            *_, term, trunc, infos[j] = env.step(action)
            if term or trunc:
                _, infos[j] = env.reset()

    rounds = max(1, steps // num_envs)
    wall, in_env = _timed(rounds, lambda: np.stack([info["action_mask"] for info in infos]), step, warmup)
    return {"mode": f"serial x{num_envs}", "steps_per_s": rounds * num_envs / wall,
            "env_steps_per_s": rounds * num_envs / in_env}  # fmt: skip


def batched(task: str, steps: int, workers: int, per_worker: int, warmup: int = 0) -> dict[str, Any]:
    """`BatchedVectorEnv` (seeds 0..n-1) with the vectorised sampler."""
    num_envs = workers * per_worker
    envs = BatchedVectorEnv(task, num_envs=num_envs, workers=workers, max_steps=LIMIT[0])
    latest = [envs.reset(seed=0)[1]]

    def step(actions: np.ndarray) -> None:
        latest[0] = envs.step(actions)[-1]

    rounds = max(1, steps // num_envs)
    wall, in_env = _timed(rounds, lambda: latest[0]["action_mask"], step, warmup)
    balancer = envs.balancer  # how often its envs moved, and probes put off while no CPU was idle (`Balancer`)
    switches, postponed = (None, None) if balancer is None else (balancer.switches, balancer.postponed)
    envs.close()
    return {"mode": f"batched {workers}x{per_worker}", "steps_per_s": rounds * num_envs / wall,
            "env_steps_per_s": rounds * num_envs / in_env, "switches": switches, "postponed": postponed}  # fmt: skip


def _machine_busy(seconds: float = 0.4) -> float:
    """Share of all CPUs busy over `seconds` (Linux /proc/stat; 0.0 elsewhere)."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as fh:
            values = [int(v) for v in fh.readline().split()[1:]]
        return sum(values), values[3] + values[4]  # total, idle + iowait

    try:
        total, idle = sample()
        time.sleep(seconds)
        total2, idle2 = sample()
    except OSError:
        return 0.0
    return 1.0 - (idle2 - idle) / max(1, total2 - total)


def _wait_idle(limit: float = 0.08, patience: float = 120.0) -> None:
    """Wait (at most `patience` s) until other jobs leave the machine idle: a job on the other
    core slows a single process by up to a third on our VM, so ratios need quiet trios."""
    deadline = time.monotonic() + patience
    while _machine_busy() > limit and time.monotonic() < deadline:
        pass


def _show(task: str, row: dict[str, Any]) -> None:
    shown = {k: (round(v, 2) if "ratio" in k else round(v)) if isinstance(v, float) else v for k, v in row.items()}
    print(json.dumps({"task": task, **shown}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int)
    parser.add_argument("--task", help="the task (default DoorsTest); with --suite, only these of the suite's "
                        "tasks (comma-separated)")
    parser.add_argument("--batched", default="4,8,16", help="envs per worker of the batched rows (2 workers)")
    parser.add_argument("--repeat", type=int, default=1, help="measure each batched/serial/single trio this often")
    parser.add_argument("--only-batched", action="store_true", help="skip the text and Gymnasium vector rows")
    parser.add_argument("--wait-idle", action="store_true", help="before each trio, wait until the machine is idle")
    parser.add_argument("--json", "--out", dest="json", metavar="PATH", help="write the rows as JSON")
    parser.add_argument("--suite", choices=("unit", "normal"), help="a row per task instead: the unit tests, or "
                        "every task's Normal difficulty (see `suite_row`); --steps defaults to 4000 there")
    parser.add_argument("--resets", type=int, default=30, help="timed resets per task of a suite")
    parser.add_argument("--rounds", type=int, default=1, help="a suite: measure every task this often (order reversed "
                        "every other round) and keep each task's best round, medians alongside (a shared machine)")
    parser.add_argument("--warmup", type=int, default=500, help="untimed steps per env before each batched/serial/single "
                        "row: every env starts the timed part as warm as the others (caches of views and masks)")
    parser.add_argument("--max-steps", type=int, default=10**9, help="every env's episode length (e.g. 100, a unit "
                        "test's default: resets, which cost ~400 steps each, then weigh in)")
    parser.add_argument("--default-gc", action="store_true", help="keep Python's collector thresholds in this "
                        "process (by default `relax_gc()`, as the batched env's workers do, for every row)")
    parser.add_argument("--busy", type=int, default=0, help="this many busy-looping processes run during the batched "
                        "trios (a loaded machine; use long rows, e.g. --steps 400000: the balancer decides over "
                        "50 ms windows and probes every 2 s and more)")
    args = parser.parse_args()
    if args.steps is None:
        args.steps = 4000 if args.suite else 5000
    if args.steps < 1 or args.resets < 1 or args.rounds < 1:
        parser.error("--steps, --resets and --rounds must be at least 1")
    if args.json and (os.path.isdir(args.json) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json)))):
        parser.error(f"--json {args.json!r}: a file in an existing folder is needed (checked now, not after the run)")
    LIMIT[0] = args.max_steps
    if not args.default_gc:
        relax_gc()
    if args.suite:
        from discoverylab.scenarios.registry import all_tasks

        chosen = [tid for tid, cls in all_tasks().items() if "normal" in cls.difficulties and (args.suite == "normal" or cls.suite == "unit")]
        if args.task:
            wanted = [t.strip() for t in args.task.split(",") if t.strip()]
            unknown = [t for t in wanted if t not in chosen]
            if unknown:
                parser.error(f"not in --suite {args.suite}: {', '.join(unknown)} (its tasks: {', '.join(chosen)})")
            chosen = [t for t in chosen if t in wanted]
        started = time.perf_counter()
        rows = suite(chosen, args.steps, args.resets, args.rounds)
        report = {"suite": args.suite, "steps": args.steps, "resets": args.resets, "rounds": args.rounds, "gc": "default" if args.default_gc else "relax_gc()",
                  "seconds": round(time.perf_counter() - started, 1), **_machine(), "rows": rows}  # fmt: skip
        print(f"\n{len(rows)} tasks in {report['seconds']} s; load average {report['load_average_1min']:.2f}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=1)
        return
    args.task = args.task or "DoorsTest"
    if why := task_problem(args.task):
        parser.error(why)
    base = single(args.task, args.steps, True)
    rows = [base]
    if not args.only_batched:
        rows += [single(args.task, args.steps, False),
                 vector(args.task, args.steps, 1, "sync"), vector(args.task, args.steps, 2, "async")]  # fmt: skip
    for row in rows:
        if row is not base:
            row["ratio"] = row["steps_per_s"] / base["steps_per_s"]
        _show(args.task, row)
    hogs = _busy(args.busy)
    try:
        _trios(args, rows)
    finally:
        for hog in hogs:
            hog.kill()
            hog.join()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


def _busy(count: int) -> list[Any]:
    """`count` processes that loop forever (killed by the caller)."""
    import multiprocessing as mp

    hogs = [mp.get_context("fork").Process(target=_spin, daemon=True) for _ in range(count)]
    for hog in hogs:
        hog.start()
    return hogs


def _spin() -> None:
    while True:
        pass


def _trios(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    """The batched rows, each measured next to one env and its serial twin (`--repeat` times)."""
    for k in (int(k) for k in args.batched.split(",") if k):
        ratios: list[tuple[float, float, float]] = []
        for r in range(args.repeat):  # back to back, order alternating, so a busy spell hits all rows
            if args.wait_idle:
                _wait_idle()
            w = args.warmup
            if r % 2:
                one, slow, fast = single(args.task, args.steps, True, w), serial(args.task, args.steps, 2 * k, w), batched(args.task, args.steps, 2, k, w)
            else:
                fast, slow, one = batched(args.task, args.steps, 2, k, w), serial(args.task, args.steps, 2 * k, w), single(args.task, args.steps, True, w)
            fast["ratio"] = fast["steps_per_s"] / one["steps_per_s"]
            fast["env_ratio"] = fast["env_steps_per_s"] / one["env_steps_per_s"]
            fast["ratio_to_serial"] = fast["steps_per_s"] / slow["steps_per_s"]
            ratios.append((fast["ratio"], fast["env_ratio"], fast["ratio_to_serial"]))
            rows += [fast, slow, one]
            for row in (fast, slow, one):
                _show(args.task, row)
        if args.repeat > 1:
            summary = {name: [round(float(np.median(col)), 2), round(min(col), 2), round(max(col), 2)]
                       for name, col in zip(("ratio", "env_ratio", "ratio_to_serial"), zip(*ratios, strict=True), strict=True)}  # fmt: skip
            print(json.dumps({"task": args.task, "mode": f"batched 2x{k}", "median_min_max": summary}), flush=True)


if __name__ == "__main__":
    main()
