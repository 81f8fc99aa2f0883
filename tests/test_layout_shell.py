"""`layout.building`'s inline shell (`_bare_shell`: slices of `all_cells`, UUID pickers,
`spare_check.put`) against the loop of `ground` and `place` it stands in for (a watched world
takes that loop): the same objects, UUIDs, registry order and stacks, for every shape of shell,
with new objects and with a disposed world's spares."""

from __future__ import annotations

import pytest

from discoverylab.scenarios import layout
from discoverylab.world import catalog
from discoverylab.world.world import World

SHELLS = [(5, 0, 1, 1), (3, 4, 1, 5), (4, 3, 5, 1), (30, 30, 2, 2), (1, 9, 2, 1), (0, 27, 2, 5), (7, 7, 3, 3), (2, 7, 13, 15),
          (19, 0, 13, 15), (14, 15, 5, 6)]  # fmt: skip


def _snapshot(world: World) -> list[object]:
    """Registry order with each object's attributes in order (its world left out), and stacks."""
    objects = [(uuid, type(o).__name__, repr(tuple(vars(o).items())[1:])) for uuid, o in world.objects.items()]
    stacks = [[[o.uuid for o in stack] for stack in column] for column in world.stacks]
    return [objects, stacks]


def _built(seed: int, shell: tuple[int, int, int, int], watched: bool) -> World:
    x, y, w, h = shell
    world = World(seed)
    if watched:
        world.watch_tiles()
    layout.fill_grass(world, under=(shell,))
    layout.building(world, x, y, w, h, "shed", key_id=5)
    catalog.place(world, "wall", 31 - x, 31 - y)  # the spares `building` left (a wall placed alone)
    return world


@pytest.mark.parametrize("shell", SHELLS)
def test_the_inline_shell_equals_the_loop_of_ground_and_place(shell: tuple[int, int, int, int]) -> None:
    first = _built(3, shell, watched=False)
    assert _snapshot(first) == _snapshot(_built(3, shell, watched=True))
    first.dispose()  # its untouched floors and walls are the next shell's
    again = _built(4, shell, watched=False)
    assert _snapshot(again) == _snapshot(_built(4, shell, watched=True))
    again.dispose()


def test_a_shell_over_something_takes_the_loop() -> None:
    """A tile not bare (a flag left there) sends `building` down its loop, which clears grass only."""
    world, watched = World(5), World(5)
    watched.watch_tiles()
    for each in (world, watched):
        catalog.place(each, "flag", 8, 9)
        layout.building(each, 6, 6, 5, 5, "hut")
    assert _snapshot(world) == _snapshot(watched)
    assert [o.type for o in world.stacks[8][9]] == [o.type for o in watched.stacks[8][9]]
