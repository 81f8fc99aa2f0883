"""The first steps of an episode (session 16): work each new world used to redo, now done more
cheaply or carried across resets by content. Each test compares the fast path with the plain
one and fails when the fast path goes stale."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np

from discoverylab.rl import make_rl_env
from discoverylab.rl.scenery import SceneryMirror
from discoverylab.rl.symbolic import DEPTH
from discoverylab.rl.view import mentioned


def _far_corner(mirror: SceneryMirror, x: int, y: int) -> tuple[int, int]:
    """A place whose whole window was never computed (the far side of the world from (x, y))."""
    size, r = mirror.world.size, mirror.radius
    fx = size - 1 - r if x < size // 2 else r
    fy = size - 1 - r if y < size // 2 else r
    assert mirror.unseen[fy : fy + 2 * r + 1, fx : fx + 2 * r + 1].all()
    return fx, fy


def _tile_by_tile(mirror: SceneryMirror, x: int, y: int) -> tuple[bytes, bytes]:
    """The window at (x, y) computed by `_tile` per tile on a new mirror of the same world."""
    fresh = SceneryMirror(mirror.world, mirror.radius, DEPTH, mirror.viewer)
    fresh._fill_first = lambda tiles: [fresh._tile(tx, ty, True) for tx, ty, _ in tiles]  # type: ignore[method-assign]
    fresh.refresh(x, y)
    w = 2 * mirror.radius + 1
    window = fresh.kinds[y : y + w, x : x + w].tobytes(), fresh.state[y : y + w, x : x + w].tobytes()
    fresh.close()
    return window


def test_a_cloned_mirror_fills_its_own_arrays() -> None:
    """`_fill_first` writes a whole view through flat item views of `kinds` and `state`
    (`_cells_views`); a copied or unpickled mirror must write into its own arrays, not into
    copies of the views it was cloned with (fails if `__getstate__` keeps `_cell_items`)."""
    env = make_rl_env("DoorsTest", max_steps=10**9)
    env.reset(seed=1)
    mirror = env.unwrapped.symbolic._mirror
    assert mirror._cell_items is not None  # the reset's first view was written in one batch
    agent = env.unwrapped.scenario.player
    w = 2 * mirror.radius + 1
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        cloned = clone.unwrapped.symbolic._mirror
        before = mirror.kinds.copy()
        fx, fy = _far_corner(cloned, agent.x, agent.y)
        cloned.refresh(fx, fy)
        window = cloned.kinds[fy : fy + w, fx : fx + w].tobytes(), cloned.state[fy : fy + w, fx : fx + w].tobytes()
        assert any(window[1])  # filled (every tile inside the world has a state)
        assert window == _tile_by_tile(cloned, fx, fy)
        assert np.array_equal(mirror.kinds, before)  # the original's arrays untouched


def _mentioned_by_regex(word: str, text: str) -> bool:
    """The plain definition `mentioned` must keep: a whole-word regular expression."""
    word = word.strip().lower()
    return bool(word) and re.search(r"(?<![a-z0-9])" + re.escape(word) + r"(?![a-z0-9])", text.lower()) is not None


def test_mentioned_agrees_with_the_whole_word_regular_expression() -> None:
    """`mentioned` finds words with `str.find` and checks the characters around each occurrence
    (a miss per object name and new task text is the common case); it must say exactly what
    the regular expression says: at the text's ends, next to digits, punctuation, non-ASCII
    letters, repeated and overlapping occurrences, upper case, blank words."""
    cases = [
        ("jar", "Put it in the `jar`."), ("jar", "jars"), ("jar", "ajar"), ("jar", "jar"), ("jar", "Jar 2"),
        ("jar", "jar2 jar"), ("jar", "2jar"), ("jar", "jar_"), ("jar", "éjar"), ("jar", "jaré"), ("aa", "aaa aa"),
        ("aa", "aaa"), ("red ball", "the Red Ball!"), ("red ball", "red  ball"), ("  Coin ", "a coin."),
        ("", "anything"), ("   ", "   "), ("x", ""), ("İ", "i̇"), ("1", "a1 1"), ("a.b", "a.b"), ("a.b", "axb"),
        ("quantum crystal", "Your task is to pick up the `quantum crystal` and place it in the `jar`.\n"),
    ]  # fmt: skip
    rng = np.random.default_rng(0)
    alphabet = list("ab1 _.-éA")
    for _ in range(3000):
        word = "".join(rng.choice(alphabet, int(rng.integers(0, 4))))
        text = "".join(rng.choice(alphabet, int(rng.integers(0, 12))))
        cases.append((word, text))
    mentioned.cache_clear()
    for word, text in cases:
        assert mentioned(word, text) == _mentioned_by_regex(word, text), (word, text)


class _Recorder:
    """A marker whose `seen` records each `update`'s UUIDs in order (`mark_seen`)."""

    def __init__(self) -> None:
        self.updates: list[list[int]] = []
        recorder = self

        class _Seen(set):  # type: ignore[type-arg]
            def update(self, *others: object) -> None:
                recorder.updates.append(list(others[0]))  # type: ignore[call-overload]
                super().update(*others)

        self.seen = _Seen()


def test_mark_seen_of_a_whole_new_window_runs_row_by_row() -> None:
    """`mark_seen` reads a new place's whole window column list by column list (no cell table);
    it must add the same UUIDs in the same order as the cell-by-cell scan (row by row): a set's
    iteration order can follow its insertion order. Also with one tile marked (the cell path)."""
    for task in ("DoorsTest", "PickAndPlaceTest", "MovingAgentsTest"):
        env = make_rl_env(task, max_steps=10**9)
        env.reset(seed=4)
        world = env.unwrapped.world
        mirror = SceneryMirror(world, 3, DEPTH, None)
        r, w = mirror.radius, 2 * mirror.radius + 1
        rng = np.random.default_rng(0)
        for _ in range(12):
            x, y = (int(v) for v in rng.integers(r, world.size - r, 2))
            mirror.refresh(x, y)
            for skip in (None, (x + 1, y - 2)):
                marker = _Recorder()
                mirror.marker = marker
                mirror.marked[:] = False
                mirror.marked_windows.clear()
                if skip is not None:
                    mirror.marked[skip[1] + r, skip[0] + r] = True
                mirror._last_marked = None
                mirror.mark_seen(marker, x, y, w)  # type: ignore[arg-type]
                rows = [(tx, ty) for ty in range(y - r, y + r + 1) for tx in range(x - r, x + r + 1) if (tx, ty) != skip]
                assert marker.updates == [[o.uuid for tx, ty in rows for o in mirror.visible[tx][ty]]]
        mirror.close()
