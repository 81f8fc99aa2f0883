"""The oracle guarantee (issue 21): every oracle solves every task and difficulty, and states every
gold fact of the knowledge questions, on seeds 0-99 and on sealed test instances.

Usage: .venv/bin/python benchmarks/oracle_sweep.py [--seeds 0-99] [--sealed 5] [--task T]
       [--workers 2] [--json]
Prints one row per task and difficulty: successes / episodes, knowledge reports stating every
gold fact / episodes (discovery tasks), and the failing seeds with the reason. Sealed instances
use the key from $DISCOVERYLAB_EVAL_KEY (or `--key-file`), else a fixed demo key. The whole sweep
(3,500 episodes, seeds 0-99) takes about 3 CPU-minutes. Exit status 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass

from discoverylab.bench.episode import run_episode
from discoverylab.bench.runner import check_seed_count
from discoverylab.instances import Instance, load_key, make_instance
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scoring.knowledge import missing_gold_facts

DEMO_KEY = b"discoverylab-oracle-sweep-demo-key"


@dataclass(frozen=True, slots=True)
class Outcome:
    task: str
    difficulty: str
    label: str  # "seed 34" or "test 2" (a sealed instance is named by its index only)
    success: bool
    knowledge: bool | None  # every gold fact stated (None: the task asks no knowledge questions)
    problem: str  # why it failed, "" if it did not


def play(task: str, difficulty: str, seed: int | Instance, label: str) -> Outcome:
    record, _ = run_episode(task, difficulty, seed, "oracle", keep_log=False)
    gold = [fact for q in record.scorecard["knowledgeQuestions"] for fact in q["goldFacts"]]
    knowledge: bool | None = None
    missing: list[str] = []
    if gold:
        report = record.knowledge_report
        missing = missing_gold_facts(gold, report["text"]) if report else ["(no report)"]
        knowledge = not missing
    problem = ""
    if record.error or not record.success:
        problem = record.error or f"status {record.status}, {record.steps} steps, not successful"
    elif missing:
        problem = f"report lacks {missing[:6]}"
    return Outcome(task, difficulty, label, bool(record.success), knowledge, problem[:160])


def jobs(seeds: list[int], sealed: int, key: bytes, only: str | None) -> list[tuple[str, str, int | Instance, str]]:
    out: list[tuple[str, str, int | Instance, str]] = []
    for task, cls in all_tasks().items():
        if only and task != only:
            continue
        for difficulty in cls.difficulties:
            out += [(task, difficulty, seed, f"seed {seed}") for seed in seeds]
            out += [
                (task, difficulty, make_instance(task, difficulty, "test", i, key), f"test {i}")
                for i in range(sealed)
            ]
    return out


def sweep(seeds: list[int], sealed: int = 0, key: bytes = DEMO_KEY, workers: int = 2,
          task: str | None = None) -> list[Outcome]:  # fmt: skip
    todo = jobs(seeds, sealed, key, task)
    if workers <= 1:
        return [play(*job) for job in todo]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(play, *zip(*todo, strict=True), chunksize=8))


def table(outcomes: list[Outcome]) -> list[dict[str, object]]:
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.task, o.difficulty)].append(o)
    rows = []
    for (task, difficulty), items in groups.items():
        asked = [o for o in items if o.knowledge is not None]
        rows.append({
            "task": task, "difficulty": difficulty, "episodes": len(items),
            "successes": sum(o.success for o in items),
            "facts_stated": f"{sum(bool(o.knowledge) for o in asked)}/{len(asked)}" if asked else "-",
            "failures": [f"{o.label}: {o.problem}" for o in items if o.problem],
        })  # fmt: skip
    return rows


def parse_seeds(text: str) -> list[int]:
    """`0-99` or `0,34,38`; a reversed range or a part that is no number is a ValueError, since an
    empty sweep would pass the guarantee without playing an episode."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or not (high or low).isdigit() or int(high or low) < int(low):
            raise ValueError(f"--seeds: {part!r} is not a seed or a range LOW-HIGH of seeds (e.g. 0-99 or 0,34,38)")
        # bounded before it is listed: `0-99999999999` filled the memory (the runner's bound)
        check_seed_count(len(seeds) + int(high or low) + 1 - int(low), text)
        seeds += list(range(int(low), int(high or low) + 1))
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-99", help="e.g. 0-99 or 0,34,38")
    parser.add_argument("--sealed", type=int, default=0, help="also this many sealed test instances per pair")
    parser.add_argument("--key-file", default=None, help="the evaluation key (default $DISCOVERYLAB_EVAL_KEY)")
    parser.add_argument("--task", default=None, help="only this task")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        parser.error(str(exc))
    if args.task is not None and args.task not in all_tasks():
        parser.error(f"--task: no task {args.task!r} (tasks: {', '.join(all_tasks())})")
    if args.sealed < 0:
        parser.error("--sealed must be 0 or more")
    key = load_key(args.key_file) or DEMO_KEY
    start = time.perf_counter()
    outcomes = sweep(seeds, args.sealed, key, args.workers, args.task)
    rows = table(outcomes)
    if args.json:
        print(json.dumps({"rows": rows, "outcomes": [asdict(o) for o in outcomes]}))
    else:
        print(f"{'task':<26} {'difficulty':<10} {'successes':>11} {'facts stated':>13}")
        for row in rows:
            done = f"{row['successes']}/{row['episodes']}"
            print(f"{row['task']:<26} {row['difficulty']:<10} {done:>11} {row['facts_stated']:>13}")
            for failure in row["failures"]:  # type: ignore[attr-defined]
                print(f"    {failure}")
        bad = sum(1 for o in outcomes if o.problem)
        print(f"{len(outcomes)} episodes, {bad} failed, {time.perf_counter() - start:.0f} s")
    sys.exit(1 if any(o.problem for o in outcomes) else 0)


if __name__ == "__main__":
    main()
