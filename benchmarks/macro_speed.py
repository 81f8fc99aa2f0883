"""Speed of the Macroeconomic Simulation Lab (issue #3 target: 100 quarters, 1,000 households < 0.5 s).

Usage: .venv/bin/python benchmarks/macro_speed.py [--repeats 5] [--json]
Reports the median wall time of a 100-quarter run for several population sizes, and of one
measured ground-truth graph (optional, --graph: ~170 runs of 200 quarters).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from discoverylab.labs.macroecon.ground_truth import measure_effect_graph
from discoverylab.labs.macroecon.model import simulate
from discoverylab.labs.macroecon.params import MacroParams, MacroStructure

SIZES = ((1_000, 20), (10_000, 200), (100_000, 2_000))


def time_run(n_households: int, n_firms: int, steps: int, repeats: int) -> float:
    """Median seconds for one `steps`-quarter run (after one warm-up run)."""
    structure = MacroStructure(n_households=n_households, n_firms=n_firms)
    simulate(MacroParams(), 5, 0, structure)
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        simulate(MacroParams(), steps, seed, structure)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--graph", action="store_true", help="also time the default ground-truth graph")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.repeats < 1 or args.steps < 1:
        parser.error("--repeats and --steps must be at least 1")
    rows = []
    for n_h, n_f in SIZES:
        seconds = time_run(n_h, n_f, args.steps, args.repeats if n_h <= 10_000 else 1)
        rows.append({"households": n_h, "firms": n_f, "quarters": args.steps, "seconds": round(seconds, 4),
                     "target_s": 0.5 if n_h == 1_000 else None})
    if args.graph:
        start = time.perf_counter()
        measure_effect_graph()
        rows.append({"ground_truth_graph_s": round(time.perf_counter() - start, 2)})
    if args.json:
        print(json.dumps(rows))
        return
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
