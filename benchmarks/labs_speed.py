"""Speed of the Sequence Modeling Lab's hot paths (issue #3 targets).

    .venv/bin/python benchmarks/labs_speed.py [--repeats 5]

* all 7 properties on 10,000 random sequences of length 30 (target < 1 s);
* sampler requests of 10 sequences at eps = 0.1, every property x targets 0, 0.1, ..., 1 at N = 30
  (target: median < 50 ms), with the per-property medians and worst cases;
* directed evolution: 400 starts x 40 steps (the grader's attractor estimation workload).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from discoverylab.labs.core.spec import LabSpec, ObjectsSpec
from discoverylab.labs.sequence.evolution import DirectedEvolution
from discoverylab.labs.sequence.lab import SequenceLab, property_table
from discoverylab.labs.sequence.properties import PROPERTY_NAMES, compute_all, decode


def bench_properties(repeats: int) -> float:
    rng = np.random.default_rng(0)
    seqs = decode(rng.integers(0, 4, size=(10_000, 30), dtype=np.uint8))
    compute_all(seqs[:10])  # warm caches (energy extremes, references)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        compute_all(seqs, PROPERTY_NAMES)
        times.append(time.perf_counter() - start)
    return min(times)


def bench_sampler(length: int) -> dict[str, list[float]]:
    lab = SequenceLab(LabSpec(objects=ObjectsSpec(length=length), properties=property_table()), seed=0)
    out: dict[str, list[float]] = {}
    for name in PROPERTY_NAMES:
        lab.sample({name: (0.5, 0.1)}, 10)  # warm-up (composition tables, feasible ranges)
        out[name] = []
        for target in np.round(np.linspace(0, 1, 11), 1):
            start = time.perf_counter()
            lab.sample({name: (float(target), 0.1)}, 10)
            out[name].append(time.perf_counter() - start)
    return out


def bench_evolution() -> float:
    rng = np.random.default_rng(0)
    starts = rng.integers(0, 4, size=(400, 30), dtype=np.uint8)
    start = time.perf_counter()
    DirectedEvolution().evolve_batch(starts, 40, rng)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")

    props = bench_properties(args.repeats)
    print(f"{'benchmark':<48}{'value':>12}  target")
    print(f"{'7 properties x 10,000 seqs (N=30), best of ' + str(args.repeats):<48}{props * 1000:>9.1f} ms  < 1000 ms")
    for length in (10, 30):
        timings = bench_sampler(length)
        every = [t for ts in timings.values() for t in ts]
        print(f"{f'sampler n=10 eps=0.1 N={length}: median of {len(every)}':<48}"
              f"{statistics.median(every) * 1000:>9.1f} ms  < 50 ms")
        for name, ts in timings.items():
            print(f"{'  ' + name + ' median / max':<48}{statistics.median(ts) * 1000:>9.1f} ms  "
                  f"(max {max(ts) * 1000:.1f} ms)")
    print(f"{'directed evolution 400 starts x 40 steps (N=30)':<48}{bench_evolution() * 1000:>9.1f} ms")


if __name__ == "__main__":
    main()
