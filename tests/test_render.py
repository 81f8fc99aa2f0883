"""Image observations (render/renderer.py, render/tiles.py, render/sprite_keys.py,
render/sprites.py): sizes, determinism, state changes, art for every object of every registered
task, grid labels."""

from __future__ import annotations

import io
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

from discoverylab.render import renderer as render
from discoverylab.render.sprites import atlas_keys, is_fallback, sprite, sprite_key, sprite_sheet
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.catalog import place, spawn
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World
from world_kit import Player, meadow

TASK_CASES = [(task_id, diff) for task_id, cls in all_tasks().items() for diff in cls.difficulties]


def build(task_id: str, difficulty: str = "normal", seed: int = 0) -> Scenario:
    cls = all_tasks()[task_id]
    return cls(World(seed), difficulty if difficulty in cls.difficulties else cls.difficulties[0])


def every_object(world: World) -> Iterator[WorldObject]:
    """Everything that can ever be drawn: top-level objects and all contents, recursively."""
    for column in world.stacks:
        for stack in column:
            for obj in stack:
                yield obj
                yield from obj.all_contents()


def decoded(png: bytes) -> bytes:
    return Image.open(io.BytesIO(png)).convert("RGB").tobytes()


# ---- sizes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1, 2])
def test_view_sizes(scale: int) -> None:
    scenario = build("PickAndPlaceTest")
    world, agent = scenario.world, scenario.player
    size = (768 * scale, 512 * scale)
    assert render.render_view(world, agent, scale=scale).size == size
    assert render.render_view(world, agent, scale=scale, grid=True).size == size
    assert render.view_array(world, agent, scale=scale).shape == (size[1], size[0], 3)
    assert Image.open(io.BytesIO(render.view_png(world, agent, scale=scale))).size == size
    assert render.render_world(world, scale=scale).size == (1024 * scale, 1024 * scale)


def test_bad_scale_is_refused() -> None:
    scenario = build("PickAndPlaceTest")
    with pytest.raises(ValueError, match="scale"):
        render.render_view(scenario.world, scenario.player, scale=0)


def test_fast_png_and_array_match_the_image() -> None:
    scenario = build("NavigationHouseTest")
    world, agent = scenario.world, scenario.player
    for scale in (1, 2):
        for grid in (False, True):
            image = render.render_view(world, agent, scale=scale, grid=grid)
            assert decoded(render.view_png(world, agent, scale=scale, grid=grid)) == image.tobytes()
            assert render.view_array(world, agent, scale=scale, grid=grid).tobytes() == image.tobytes()
    vision = render.vision_observation(world, agent)
    assert set(vision) == {"base64_no_grid", "base64_with_grid"}
    assert all(url.startswith("data:image/png;base64,") for url in vision.values())


def test_tiles_outside_the_world_are_black() -> None:
    world = meadow(w=32, h=32)
    player = Player(world, 0, 0)
    view = render.view_array(world, player.agent)
    # The view starts at (-12, -8): the first 12 tile columns and 8 tile rows are outside.
    assert not view[: 8 * 32].any() and not view[:, : 12 * 32].any()
    assert view[8 * 32 :, 12 * 32 :].any()


# ---- determinism and state -------------------------------------------------------------------
def test_same_state_same_bytes_whatever_the_cache_history(monkeypatch: pytest.MonkeyPatch) -> None:
    first = build("DoorsTest")
    png = render.view_png(first.world, first.player, grid=True)
    plain = render.to_png_bytes(render.render_view(first.world, first.player))
    render.render_world(build("MovingAgentsTest").world)  # fill the caches with other tiles
    monkeypatch.setattr(render, "_COLOURS", render._ColourTable())  # as in a fresh process
    monkeypatch.setattr(render, "_TILE_CACHE", {})
    monkeypatch.setattr(render, "_LABEL_CACHE", {})
    second = build("DoorsTest")
    assert render.view_png(second.world, second.player, grid=True) == png
    assert render.to_png_bytes(render.render_view(second.world, second.player)) == plain


def test_rendering_does_not_change_the_world() -> None:
    scenario = build("MovingAgentsTest")
    world = scenario.world
    before = [(o.uuid, o.location(), o.layer) for o in world.objects.values()]
    step, rng_state = world.step, world.rng_npc.bit_generator.state
    render.render_view(world, scenario.player, grid=True)
    render.render_world(world, scale=2)
    render.vision_observation(world, scenario.player)
    assert [(o.uuid, o.location(), o.layer) for o in world.objects.values()] == before
    assert world.step == step and world.rng_npc.bit_generator.state == rng_state


def test_opening_a_door_changes_the_image() -> None:
    world = meadow()
    door = place(world, "door", 5, 4)
    player = Player(world, 5, 5, facing="north")
    closed = render.view_png(world, player.agent)
    assert player.do("OPEN", door).success
    opened = render.view_png(world, player.agent)
    assert opened != closed
    door.is_open = False
    assert render.view_png(world, player.agent) == closed  # the image follows the state back


def test_moving_and_turning_change_the_image() -> None:
    world = meadow()
    player = Player(world, 5, 5)
    start = render.view_png(world, player.agent)
    assert player.do("ROTATE_DIRECTION", "east").success
    turned = render.view_png(world, player.agent)
    assert turned != start
    assert player.do("MOVE_DIRECTION", "east").success
    moved = render.view_png(world, player.agent)
    assert moved not in (start, turned)


def test_items_on_a_table_are_drawn() -> None:
    world = meadow()
    table = place(world, "table", 3, 3)
    player = Player(world, 5, 5)
    bare = render.view_png(world, player.agent)
    table.add(spawn(world, "flag"))
    one = render.view_png(world, player.agent)
    table.add(spawn(world, "coin"))
    two = render.view_png(world, player.agent)
    assert len({bare, one, two}) == 3
    assert render.tile_look(world, 3, 3)[-1] == ("table", ("flag:red", "coin"), False)


def test_closed_containers_hide_their_contents() -> None:
    world = meadow()
    fridge = place(world, "fridge", 3, 3)
    fridge.add(spawn(world, "mushroom"))
    assert all(isinstance(entry, str) for entry in render.tile_look(world, 3, 3))
    fridge.is_open = True
    assert any(isinstance(entry, tuple) for entry in render.tile_look(world, 3, 3))


def test_later_placed_lies_on_top_within_a_layer() -> None:
    world = meadow()  # grass everywhere on the world layer
    place(world, "soil", 3, 3)
    assert render.tile_look(world, 3, 3) == ("soil",)  # opaque soil hides the grass under it
    place(world, "coin", 4, 4)
    place(world, "flag", 4, 4)
    assert render.tile_look(world, 4, 4)[-2:] == ("coin", "flag:red")


def test_canopy_fades_over_an_agent() -> None:
    world = meadow()
    place(world, "tree_leaves", 5, 4)
    player = Player(world, 5, 4)
    assert any(str(entry).endswith(render.FADE_SUFFIX) for entry in render.tile_look(world, 5, 4))
    world.place(player.agent, 6, 6)
    assert not any(str(entry).endswith(render.FADE_SUFFIX) for entry in render.tile_look(world, 5, 4))


# ---- art for everything ----------------------------------------------------------------------
@pytest.mark.parametrize(("task_id", "difficulty"), TASK_CASES)
def test_every_object_of_every_task_has_art(task_id: str, difficulty: str) -> None:
    scenario = build(task_id, difficulty)
    missing = sorted(
        {f"{o.type!r} ({o.name!r})" for o in every_object(scenario.world) if is_fallback(sprite_key(o))}
    )
    assert not missing, f"no sprite for {missing}: add a painter or a BY_TYPE entry in render/sprite_keys.py"
    image = render.render_world(scenario.world)
    assert image.size == (1024, 1024)
    assert len(image.getcolors(1 << 16) or []) > 20  # drawn, not a blank sheet


def test_atlas_sprites_are_tiles() -> None:
    for key in atlas_keys():
        image = sprite(key)
        assert image.size == (32, 32) and image.mode == "RGBA", key
        assert image.getchannel("A").getbbox() is not None, f"{key} is empty"
        assert is_fallback(key) == key.startswith("unknown"), key
    assert sprite_sheet().mode == "RGBA"


def test_unknown_types_get_a_labelled_crate() -> None:
    world = meadow()
    thing = WorldObject(world, "flux capacitor", "flux capacitor")
    assert is_fallback(sprite_key(thing))
    assert np.asarray(sprite(sprite_key(thing))).any()


def test_npcs_look_distinct_from_the_player() -> None:
    scenario = build("MovingAgentsTest")
    keys = {sprite_key(agent) for agent in scenario.world.agents}
    assert len(keys) == len(scenario.world.agents)
    assert sprite_key(scenario.player) == "agent:player:south"


# ---- grid ------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1, 2])
def test_grid_lines_and_labels(scale: int) -> None:
    world = meadow(w=32, h=32)
    player = Player(world, 12, 8)  # the view starts at (0, 0)
    plain = render.view_array(world, player.agent, scale=scale)
    grid = render.view_array(world, player.agent, scale=scale, grid=True)
    px = 32 * scale
    assert not grid[:, ::px].any() and not grid[::px, :].any()  # black 1-px lines
    for x, y in ((0, 0), (3, 7), (23, 15)):
        mask = render._label(x, y, scale)
        label = np.where(mask[..., None], np.uint8(255), np.array(render.LABEL_PLATE, np.uint8))
        corner = grid[y * px + 1 : y * px + 1 + mask.shape[0], x * px + 1 : x * px + 1 + mask.shape[1]]
        assert np.array_equal(corner, label), (x, y)
        assert mask.sum() >= 5 * scale * scale  # text pixels
    assert not np.array_equal(render._label(3, 7, scale), render._label(7, 3, scale))
    assert np.array_equal(grid[px + 20 * scale, px + 20 * scale], plain[px + 20 * scale, px + 20 * scale])


def test_rust_shows_on_the_chemistry_key_and_nail_until_it_is_removed() -> None:
    """The nail has its own art (it used to borrow the stick's), and a derusted "key (no rust)"
    shows clean: its name's "rust" no longer counts once the object says it is not rusted."""
    from discoverylab.scenarios.combinatorial_chemistry.things import RustedKey, RustyNail

    world = World(seed=0)
    remedy = {"A": 1, "B": 1}
    key, nail = RustedKey(world, remedy, 7), RustyNail(world, remedy)
    assert sprite_key(key).endswith(":rust") and sprite_key(nail) == "nail:rust"
    for thing in (key, nail):
        thing.props["rusted"] = False
        thing._rename()
    assert "no rust" in key.name and "no rust" in nail.name
    assert not sprite_key(key).endswith(":rust") and sprite_key(nail) == "nail:"
    assert not is_fallback(sprite_key(nail))
