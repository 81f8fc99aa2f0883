"""Image-observation speed per task: images/s at scale 1 and 2. A benchmark, not a test:

    .venv/bin/python benchmarks/render_speed.py [--images 100] [--suite all] [--difficulty normal] [--json out.json]

A random agent walks each task (seed 0); after every step the agent's view is rendered and
only the rendering is timed. Columns, in images per second:
- `array`: `render.view_array`, the RGB array a Gymnasium image observation holds;
- `png`: `render.view_png`, PNG bytes (what an LLM agent would be sent, and the browser UI);
  a view identical to a recent one (a failed action, a wait, a dialog step) comes from the
  renderer's PNG cache;
- `png new`: the same with that cache emptied before every view, i.e. every view encoded;
- `vision`: `render.vision_observation` at scale 1, the original's pair of PNG data URLs (with
  and without grid) counted as one observation.
`first ms` is the first view of the task (new tiles composed; sprites already drawn by earlier
tasks). Each rate is shown as wall clock / process CPU time: on a busy machine the CPU-time rate
is what an idle machine would reach. Targets (2-core machine): >= 100 images/s at scale 1; PNG
(issue #11): >= 500 views/s at 768x512 on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any


def _rate(fn: Callable[[], Any], step: Callable[[], None], images: int) -> tuple[float, float]:
    """(images per wall second, images per CPU second) of `fn`, calling `step` untimed between."""
    wall = cpu = 0.0
    for _ in range(images):
        step()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    return images / wall, images / max(cpu, 1e-9)


def measure(task: str, difficulty: str, images: int) -> dict[str, Any]:
    from discoverylab.agents import RandomAgent
    from discoverylab.env import DiscoveryWorldEnv
    from discoverylab.render import renderer as render

    env = DiscoveryWorldEnv(task, difficulty, max_steps=10**9)
    _, info = env.reset(seed=0)
    agent = RandomAgent(seed=0)
    state: dict[str, Any] = {"obs": info["observation"]}

    def step() -> None:
        _, _, terminated, truncated, info = env.step(agent.act(state["obs"]))
        state["obs"] = info["observation"]
        if terminated or truncated:  # a new episode builds a new world
            _, info = env.reset(seed=0)
            state["obs"] = info["observation"]

    def view(fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        def call() -> Any:
            assert env.scenario is not None
            return fn(env.scenario.world, env.scenario.player, *args)

        return call

    t0 = time.perf_counter()
    view(render.view_array)()
    first_ms = 1000 * (time.perf_counter() - t0)
    row: dict[str, Any] = {"task": task, "difficulty": difficulty, "first_ms": first_ms}
    for scale in (1, 2):
        row[f"array_s{scale}"] = _rate(view(render.view_array, scale), step, images)
        row[f"png_s{scale}"] = _rate(view(render.view_png, scale), step, images)
        row[f"pngnew_s{scale}"] = _rate(view(_uncached_png, scale), step, images)
    row["vision_s1"] = _rate(view(render.vision_observation), step, images)
    return row


COLUMNS = ("array_s1", "png_s1", "pngnew_s1", "vision_s1", "array_s2", "png_s2")


def _uncached_png(world: Any, agent: Any, scale: int = 1) -> bytes:
    from discoverylab.render import renderer as render

    render._PNG_CACHE.clear()
    return render.view_png(world, agent, scale)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--images", type=int, default=100, help="images per measurement")
    parser.add_argument("--suite", default="all", choices=("unit", "discovery", "tutorial", "all"))
    parser.add_argument("--difficulty", default="normal", help="one difficulty per task (unit tests: normal)")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    if args.images < 1:
        parser.error("--images must be at least 1")
    if args.json_out and (os.path.isdir(args.json_out) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json_out)))):
        parser.error(f"--json {args.json_out!r}: a file in an existing folder is needed")

    from discoverylab.bench.runner import suite_tasks

    try:
        pairs = suite_tasks(args.suite, args.difficulty)
    except ValueError as exc:  # an unknown suite or difficulty, said by the runner
        parser.error(str(exc))
    if not pairs:  # an empty table with status 0 read as a run that measured nothing slow
        parser.error(f"no task of suite {args.suite!r} has difficulty {args.difficulty!r} (easy, normal, challenge)")
    rows = [measure(task, diff, args.images) for task, diff in pairs]
    header = f"{'task':26} {'diff':7} {'first ms':>8} " + " ".join(f"{c:>11}" for c in COLUMNS)
    print("images/s, wall clock / process CPU time")
    print(header)
    print("-" * len(header))
    for r in rows:
        rates = " ".join(f"{r[c][0]:5.0f}/{r[c][1]:<5.0f}" for c in COLUMNS)
        print(f"{r['task']:26} {r['difficulty']:7} {r['first_ms']:8.1f} {rates}")
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
