"""Rewrite the macro lab's public-graph package data from the simulator: the published graph
(`src/discoverylab/data/macro_published_graph.json`) and the public panels' signs
(`src/discoverylab/data/macro_public_panel.json`: the default config and the 100-household setting
of the attack tests). Run it when the default economy, the draw or the measurement changes (the slow
tests in `tests/labs/test_macro_prior.py` say when). `DISCOVERYLAB_CACHE_DIR` reuses graphs measured
before (each panel graph is 10-40 s of CPU).

    .venv/bin/python benchmarks/macro_prior.py
"""

from __future__ import annotations

from discoverylab.labs.macroecon.prior import (
    PACKAGED_GRAPH,
    PACKAGED_PANELS,
    write_packaged_graph,
    write_packaged_panels,
)


def main() -> None:
    stored = write_packaged_graph()
    print(f"wrote {PACKAGED_GRAPH} ({len(stored.nonzero())} non-zero edges)")
    panels = write_packaged_panels()
    print(f"wrote {PACKAGED_PANELS} ({len(panels)} panels of {len(panels[0]['graphs'])} graphs)")


if __name__ == "__main__":
    main()
