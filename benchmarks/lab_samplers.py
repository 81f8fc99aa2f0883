"""Protocol A's SAMPLE samplers on long sequences: hit rate and samples per second (issue #22).

    PYTHONPATH=src .venv/bin/python benchmarks/lab_samplers.py [--lengths 200,500,1000] [--eps 0.1]

For each property of `sampling.LONG_SAMPLERS` (named forms), `--targets` targets spread over the
feasible range, one request of 10 sequences each: the share of samples within eps of the target
and the throughput (the tests assert the hit rate; speed is only measured here).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from discoverylab.labs.sequence.properties import PropertyParams, compute_codes, feasible_range
from discoverylab.labs.sequence.sampling import sample_codes

PROPERTIES = ("gc_content", "hamming_distance", "palindrome_score", "alternation_2", "weighted_count",
              "entropy_score", "interaction_energy")


def measure(name: str, length: int, eps: float, targets: int, params: PropertyParams) -> tuple[float, float]:
    """(hit rate, samples per second) over `targets` requests of 10."""
    rng = np.random.default_rng(0)
    lo, hi = feasible_range(name, length, params)
    hits = total = 0
    start = time.perf_counter()
    for target in np.linspace(lo, hi, targets):
        x = sample_codes(name, params, length, float(target), eps, 10, rng)
        values = compute_codes(name, x, params)
        hits += int((np.abs(values - target) <= eps + 1e-9).sum())
        total += values.size
    return hits / total, total / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="200,500,1000")
    parser.add_argument("--eps", type=float, default=0.1)
    parser.add_argument("--targets", type=int, default=40)
    args = parser.parse_args()
    try:
        lengths = [int(n) for n in args.lengths.split(",")]
    except ValueError:
        lengths = []
    if not lengths or min(lengths) < 1 or args.targets < 1 or args.eps < 0:
        parser.error("--lengths takes lengths of at least 1 like 200,500; --targets at least 1; --eps 0 or more")
    params = PropertyParams()
    print(f"{'property':<20} {'N':>5} {'hit rate':>9} {'samples/s':>10}")
    for length in lengths:
        for name in PROPERTIES:
            rate, speed = measure(name, length, args.eps, args.targets, params)
            print(f"{name:<20} {length:>5} {rate:>9.3f} {speed:>10.0f}")


if __name__ == "__main__":
    main()
