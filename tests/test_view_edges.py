"""The mirror's one-step window reads (`rl/window_reads.py`: `_refresh_edge`, `_mark_edge`; session 15)
against the whole-window scans they stand in for. After a one-tile move from a place left with
nothing pending (or a window marked whole), only the entering row or column can hold pending
(or unmarked) tiles; a random walk with the edge reads must leave the mirror, the agent's seen
set and every observation exactly as with whole-window scans only."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from discoverylab.rl import make_rl_env, scenery
from discoverylab.rl.cells import entering_edges


def _walk(task: str, seed: int, radius: int, steps: int) -> tuple[list[Any], dict[str, int]]:
    """Per step: the observation's bytes and the mirror's flags and cells, `agent.seen`; and how
    often each edge read ran."""
    env = make_rl_env(task, "normal", max_steps=10**9, radius=radius)
    obs, info = env.reset(seed=seed)
    base = env.unwrapped
    counts = {"refresh": 0, "mark": 0}
    mirror_type = scenery.SceneryMirror
    refresh_edge, mark_edge = mirror_type._refresh_edge, mirror_type._mark_edge

    def counted_refresh(self: Any, *args: Any) -> Any:
        counts["refresh"] += 1
        return refresh_edge(self, *args)

    def counted_mark(self: Any, *args: Any) -> None:
        counts["mark"] += 1
        mark_edge(self, *args)

    trace: list[Any] = []
    rng = np.random.default_rng(seed)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(mirror_type, "_refresh_edge", counted_refresh)
        patch.setattr(mirror_type, "_mark_edge", counted_mark)
        for i in range(steps):
            mirror = base.symbolic._mirror
            trace.append((b"".join(np.ascontiguousarray(v).tobytes() for v in obs.values()), mirror.pending.tobytes(),
                          mirror.unseen.tobytes(), mirror.marked.tobytes(), mirror.kinds.tobytes(),
                          mirror.state.tobytes(), sorted(base.scenario.player.seen), mirror.waiting))  # fmt: skip
            mask = info["action_mask"]
            allowed = np.flatnonzero(mask if i % 3 == 0 or not mask[:15].any() else mask[:15])
            obs, _, term, trunc, info = env.step(int(rng.choice(allowed)))
            if term or trunc:
                obs, info = env.reset(seed=seed + 1000 + i)
    env.close()
    return trace, counts


@pytest.mark.parametrize(("task", "seed", "radius"), [("MovingAgentsTest", 1, 3), ("Proteomics", 2, 3), ("SpaceSick", 0, 3),
                                                      ("NavigationHouseTest", 3, 2), ("LostInTranslation", 4, 1),
                                                      ("DoorsTest", 5, 0)])  # fmt: skip
def test_edge_reads_after_a_step_equal_whole_window_scans(task: str, seed: int, radius: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Every step of a random walk (moves on two steps of three, characters walking in and out of
    view) leaves the same mirror, seen set and observation with the edge reads as without them
    (`entering_edges` emptied: every scan reads the whole window). Fails when an edge misses a
    tile, a tile reported in the same refresh is left pending, or the UUIDs go in another order."""
    fast, counts = _walk(task, seed, radius, 300)
    assert counts["mark"] > 20 and (radius == 0 or counts["refresh"] > 20), counts
    monkeypatch.setattr(scenery, "entering_edges", lambda reach: {})
    plain, none = _walk(task, seed, radius, 300)
    assert none == {"refresh": 0, "mark": 0}
    for step, (got, want) in enumerate(zip(fast, plain, strict=True)):
        assert got == want, (task, step)


def test_entering_edges_are_the_tiles_a_step_brings_within_reach() -> None:
    """Each edge (first offset, direction) lists exactly the offsets within `reach` of the new
    centre that were not within reach of the old one, in row-major order."""
    for reach in range(4):
        span = range(-reach, reach + 1)
        for (dx, dy), (x0, y0, along_x) in entering_edges(reach).items():
            listed = [(x0 + i, y0) if along_x else (x0, y0 + i) for i in range(2 * reach + 1)]
            new = [(ox, oy) for oy in span for ox in span if max(abs(ox + dx), abs(oy + dy)) > reach]
            assert listed == new, (reach, dx, dy)
