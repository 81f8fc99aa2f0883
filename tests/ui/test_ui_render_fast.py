"""The fast PNG path behind the UI (direct palette PNG, plain-ground pictures by position, the
recent-views cache) gives the same pixels as composing every tile from its look."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest
from PIL import Image

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.render import renderer as render


def _env(task: str, seed: int = 0) -> DiscoveryWorldEnv:
    env = DiscoveryWorldEnv(task, "normal", max_steps=10**6)
    env.reset(seed=seed)
    return env


def _composed_view(env: DiscoveryWorldEnv) -> np.ndarray:
    """The view built tile by tile from `tile_look` + `compose_tile`, no fast paths."""
    assert env.scenario is not None
    world, (ax, ay) = env.scenario.world, env.scenario.player.location()
    out = np.zeros((512, 768, 3), np.uint8)
    for j in range(16):
        for i in range(24):
            x, y = ax - 12 + i, ay - 8 + j
            if 0 <= x < world.size and 0 <= y < world.size:
                out[j * 32 : j * 32 + 32, i * 32 : i * 32 + 32] = np.asarray(render.compose_tile(render.tile_look(world, x, y)))
    return out


@pytest.mark.parametrize("task", ["MovingAgentsTest", "Proteomics", "DoorsTest"])
def test_fast_png_has_the_composed_pixels(task: str) -> None:
    env = _env(task)
    for action in ({"action": "MOVE_FORWARD"}, {"action": "ROTATE_CW"}, {"action": "MOVE_FORWARD"}):
        env.step(action)
        assert env.scenario is not None
        png = render.view_png(env.scenario.world, env.scenario.player)
        with Image.open(io.BytesIO(png)) as image:
            assert image.mode == "P" and image.size == (768, 512)
            assert np.array_equal(np.asarray(image.convert("RGB")), _composed_view(env))


def test_png_cache_returns_the_bytes_a_fresh_encoding_gives() -> None:
    env = _env("PickAndPlaceTest")
    assert env.scenario is not None
    world, agent = env.scenario.world, env.scenario.player
    first = render.view_png(world, agent)
    assert render.view_png(world, agent) is first  # the same view: served from the cache
    render._PNG_CACHE.clear()
    assert render.view_png(world, agent) == first
    grid = render.view_png(world, agent, grid=True)
    assert grid != first and render.view_png(world, agent, grid=True) == grid
    env.step({"action": "ROTATE_CW"})  # the agent's sprite changes: a new picture
    assert render.view_png(world, agent) != first


def test_cached_grid_views_keep_their_own_labels() -> None:
    """Same pictures in the same cells at another place: the grid labels differ, so the cache
    must not hand back the first one's PNG."""
    env = _env("MovingAgentsTest")
    assert env.scenario is not None
    world = env.scenario.world
    layout = render._layout(world, 3, 3, 2, 2, 1, True)
    elsewhere = dataclasses.replace(layout, origin=(9, 9), labels=render._layout(world, 9, 9, 2, 2, 1, True).labels)
    first = render._layout_png(layout, True)
    assert render._layout_png(elsewhere, True) != first
    assert render._layout_png(layout, True) == first


def test_views_rendered_from_many_threads_match_single_threaded_ones() -> None:
    """The UI server renders from a thread pool; the process-wide caches must stay consistent."""
    from concurrent.futures import ThreadPoolExecutor

    tasks = ["MovingAgentsTest", "Proteomics", "LostInTranslation", "DoorsTest"]
    envs = [_env(task, seed=5) for task in tasks]
    render._PNG_CACHE.clear()

    def views(env: DiscoveryWorldEnv) -> list[bytes]:
        out = []
        for action in ("MOVE_FORWARD", "ROTATE_CW", "MOVE_FORWARD", "ROTATE_CCW") * 3:
            env.step({"action": action})
            assert env.scenario is not None
            out.append(render.view_png(env.scenario.world, env.scenario.player, grid=len(out) % 2 == 0))
        return out

    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(views, envs))
    again = [views(_env(task, seed=5)) for task in tasks]  # same actions, one thread
    assert threaded == again
