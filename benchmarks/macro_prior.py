"""Rewrite the macro lab's published-graph package data (`src/discoverylab/data/macro_published_graph.json`)
from the simulator: run it when the default economy or the measurement changes (the slow test
`tests/labs/test_macro_prior.py::test_the_package_data_matches_the_simulator` says when).

    .venv/bin/python benchmarks/macro_prior.py
"""

from __future__ import annotations

from discoverylab.labs.macroecon.prior import PACKAGED_GRAPH, write_packaged_graph


def main() -> None:
    stored = write_packaged_graph()
    print(f"wrote {PACKAGED_GRAPH} ({len(stored.nonzero())} non-zero edges)")


if __name__ == "__main__":
    main()
