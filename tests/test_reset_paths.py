"""Reset fast paths (session 11, round 2) against the plain code they replace: each test
fails when its fast path takes other draws or builds other objects than the plain one."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.world.catalog import place
from discoverylab.world.world import World


def _plain_scatter(world: World, count: int = 15, kind: str = "plant_generic") -> None:
    """`layout.scatter_plants` as it was: one `size=2` draw per try."""
    placed, tries = 0, 0
    while placed < count and tries < 2000:
        tries += 1
        x, y = world.rng_build.integers(0, world.size, size=2).tolist()
        stack = world.stacks[x][y]
        if stack and all(o.type == "grass" for o in stack):
            place(world, kind, x, y)
            placed += 1


def _meadow(seed: int) -> World:
    world = World(seed)
    world.reseed_build("meadow")
    layout.fill_grass(world)
    for x in range(3, 20):  # tiles the plants must skip
        layout.ground(world, "path", x, 7)
    return world


def test_scatter_plants_draws_what_one_size_two_draw_per_try_draws() -> None:
    for seed in range(6):
        fast, plain = _meadow(seed), _meadow(seed)
        layout.scatter_plants(fast, count=25)
        _plain_scatter(plain, count=25)
        spots = [(o.uuid, o.x, o.y, o.type) for o in fast.objects.values()]
        assert spots == [(o.uuid, o.x, o.y, o.type) for o in plain.objects.values()]
        assert fast.rng_build.bit_generator.state == plain.rng_build.bit_generator.state
        assert int(fast.rng_build.integers(1 << 30)) == int(plain.rng_build.integers(1 << 30))
