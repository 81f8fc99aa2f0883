"""The reset fast paths (issue #27, speed) against the plain code they stand in for: inline
scenery, opaque streams, UUID hand-out and the lazily filled symbolic tile mirror."""

from __future__ import annotations

import pickle
import random
import zlib

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.world import catalog
from discoverylab.world.streams import opaque_rng, seed_words, seeded_rng
from discoverylab.world.uuids import UuidPool
from discoverylab.world.world import World, WorldError


def _snapshot(world: World) -> list[tuple[object, ...]]:
    """Everything `place` leaves behind: registry order, attributes in order, stacks."""
    objects = [(uuid, type(o).__name__, repr(tuple(vars(o).items())[1:])) for uuid, o in world.objects.items()]  # skip `world`
    stacks = [[[o.uuid for o in stack] for stack in column] for column in world.stacks]
    return [tuple(objects), repr(stacks)]


def _general(world: World, kind: str, x: int, y: int) -> None:
    world.place(catalog.spawn(world, kind), x, y)


@pytest.mark.parametrize("kind", sorted(catalog.templates()))
def test_inline_placement_equals_spawn_and_place(kind: str) -> None:
    """`catalog.place` / `place_each` build plain kinds inline: the same objects (attributes
    in the same order), UUIDs, registry order, tiles and stacks as `spawn` + `World.place`, on
    an empty map and over grass, for every template; other kinds take the general path."""
    cells = [(3, 4), (3, 5), (31, 0), (0, 31)]
    worlds = [World(7), World(7), World(7)]
    for world in worlds:
        catalog.place_each(world, "grass", [(x, y) for x in range(32) for y in range(32)])
    for x, y in cells:
        _general(worlds[0], kind, x, y)
        catalog.place(worlds[1], kind, x, y)
    catalog.place_each(worlds[2], kind, cells)
    reference = _snapshot(worlds[0])
    assert _snapshot(worlds[1]) == reference and _snapshot(worlds[2]) == reference


def test_inline_objects_with_their_own_materials_get_copies() -> None:
    """A plain kind that is not scenery (a tree, a jar) is built inline with copies of its
    materials, as `spawn` makes them: changing one object's never changes another's."""
    world = World(4)
    first, second = catalog.place(world, "tree_trunk", 1, 1), catalog.place(world, "tree_trunk", 2, 2)
    assert catalog.inline_plan("tree_trunk") is not None and first.uuid not in world._built
    first.materials[0].ph = 1.5
    assert second.materials[0].ph != 1.5 and catalog.spawn(world, "tree_trunk").materials[0].ph != 1.5


@pytest.mark.parametrize("attr", ["needs_tick", "is_agent", "dialogable"])
def test_a_template_that_ticks_or_talks_takes_the_general_path(monkeypatch: pytest.MonkeyPatch, attr: str) -> None:
    """A kind whose template makes its objects tick, or characters or dialog partners, is never
    built inline (inline objects are not registered: no ticker, nothing `dispose` unties)."""
    own = {**catalog.templates(), "odd": {"class": "WorldObject", "name": "odd", "type": "odd", "attrs": {attr: True}}}
    monkeypatch.setattr(catalog, "templates", lambda: own)
    catalog._plan.cache_clear()
    catalog.inline_plan.cache_clear()
    try:
        assert catalog.inline_plan("odd") is None and catalog.inline_plan("table") is not None
        world = World(6)
        obj = catalog.place(world, "odd", 2, 2)
        assert obj.uuid in world._built and (obj in world._tickers) == (attr == "needs_tick")
    finally:
        catalog._plan.cache_clear()
        catalog.inline_plan.cache_clear()


def test_inline_grass_equals_the_general_path_on_an_empty_world() -> None:
    a, b = World(3), World(3)
    for x in range(32):
        for y in range(32):
            _general(a, "grass", x, y)
    catalog.place_each(b, "grass", [(x, y) for x in range(32) for y in range(32)])
    assert _snapshot(a) == _snapshot(b)
    assert a.next_uuid() == b.next_uuid()  # the pool moved on by as much


def test_placement_outside_the_world_still_raises_clearly() -> None:
    world = World(1)
    with pytest.raises(WorldError, match="outside the 32x32 world"):
        catalog.place(world, "grass", 32, 0)
    with pytest.raises(WorldError, match="outside the 32x32 world"):
        catalog.place_each(world, "grass", [(0, 0), (-1, 5)])


def test_watched_worlds_take_the_general_path_and_report_every_tile() -> None:
    world = World(2)
    watch = world.watch_tiles()
    catalog.place_each(world, "grass", [(1, 1), (2, 2)])
    catalog.place(world, "floor", 4, 4)
    assert watch == {(1, 1), (2, 2), (4, 4)}


def test_a_building_over_a_meadow_equals_the_watched_general_path() -> None:
    """`layout.clear_ground`'s inline removal of plain grass (and `place`'s inline floors and
    walls) leave what `remove_from_world` and `spawn` + `World.place` leave (a watched world
    takes those): registry order, attributes, stacks; plants, a grass holding a flag and a
    second grass on one tile are removed as before."""
    from discoverylab.scenarios import layout

    worlds = [World(9), World(9)]
    worlds[1].watch_tiles()
    for world in worlds:
        catalog.place_each(world, "grass", catalog.all_cells(world.size))
        catalog.place(world, "plant_generic", 6, 6)
        catalog.place(world, "grass", 7, 7)
        world.stacks[8][8][0].add(catalog.spawn(world, "flag"))
        layout.building(world, 5, 5, 6, 5, "lab")
        assert not any(o.type in ("grass", "plant") for x in range(5, 11) for y in range(5, 10) for o in world.stacks[x][y])
    assert _snapshot(worlds[0]) == _snapshot(worlds[1])


def test_stack_insert_without_the_scan_equals_a_stable_sort_by_layer() -> None:
    """`stack_insert` appends without scanning when the stack ends on the object's layer or
    higher: the stack stays what a stable sort of the arrivals by layer, top first, gives."""
    from discoverylab.world.objects import Layer, stack_insert

    rng = np.random.default_rng(4)
    world = World(3)
    for _ in range(200):
        stack: list[object] = []
        arrivals = []
        for _ in range(int(rng.integers(1, 7))):
            obj = catalog.spawn(world, "flag")
            obj.layer = Layer(int(rng.integers(0, len(Layer))))
            arrivals.append(obj)
            stack_insert(stack, obj, obj.layer)  # type: ignore[arg-type]
        assert stack == sorted(arrivals, key=lambda o: -o.layer)  # sorted() is stable


def test_take_uuids_hands_out_what_register_would() -> None:
    a, b = World(11), World(11)
    taken = a.take_uuids(3000)  # past the first slice of the pool
    assert taken == [b.next_uuid() for _ in range(3000)]
    assert len(set(taken)) == 3000 and a.next_uuid() == b.next_uuid()


def test_the_uuid_pool_still_runs_out_with_a_clear_error() -> None:
    world = World(5)
    world.take_uuids(65535)
    with pytest.raises(WorldError, match="UUID pool"):
        world.take_uuids(1)
    with pytest.raises(WorldError, match="UUID pool"):
        world.next_uuid()


def test_opaque_streams_equal_their_seed_sequence_and_do_not_keep_it() -> None:
    seq = np.random.SeedSequence([123456789, 4242])
    opaque, plain = opaque_rng(seq), np.random.Generator(np.random.PCG64(seq))
    assert opaque.bit_generator.state == plain.bit_generator.state
    assert np.array_equal(opaque.integers(0, 2**62, 50), plain.integers(0, 2**62, 50))
    held = opaque.bit_generator.seed_seq
    assert held.entropy == 0 and "4242" not in repr([getattr(held, name) for name in held.__slots__])
    with pytest.raises(ValueError, match="spent"):
        held.generate_state(4, np.uint64)  # the words were handed over once
    # `Generator.spawn` gives children of this stream's instance (not of a blank SeedSequence(0))
    blank = np.random.Generator(np.random.PCG64(0))
    children = [g.random() for g in opaque.spawn(2)]
    assert children != [g.random() for g in blank.spawn(2)]
    assert children == [g.random() for g in opaque_rng(np.random.SeedSequence([123456789, 4242])).spawn(2)]
    assert children != [g.random() for g in opaque_rng(np.random.SeedSequence([123456789, 4243])).spawn(2)]
    clone = pickle.loads(pickle.dumps(opaque))
    assert clone.random() == opaque.random()


def test_seed_words_equal_the_seed_sequence_state() -> None:
    """`seed_words` (the world's streams hash their seed themselves) gives the words
    `SeedSequence(entropy, spawn_key=...).generate_state(4, np.uint64)` gives: one-word,
    sealed (two-word) and longer seeds, lists of them, no key, one key, several and wide keys."""
    draw = random.Random(7)
    cases: list[tuple[int | list[int], tuple[int, ...]]] = [(0, ()), (0, (0,)), (2**32, (4,)), (2**64 + 3, (1,)), ([], ()),
                                                           ([1, 2, 3, 4, 5, 6], (1, 2)), (123, (2**33,))]  # fmt: skip
    for _ in range(400):
        seed = draw.choice([draw.randrange(2**32), draw.randrange(2**32, 2**64), draw.randrange(2**100), draw.randrange(10)])
        keys = tuple(draw.randrange(2 ** draw.choice([3, 32, 40])) for _ in range(draw.randrange(3)))
        cases.append(draw.choice([(seed, keys), ([seed, draw.randrange(2**32)], ())]))
    for entropy, keys in cases:
        want = np.random.SeedSequence(entropy, spawn_key=keys).generate_state(4, np.uint64)
        got = seed_words(entropy, keys)
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), (entropy, keys)
    ours, numpys = seeded_rng(2**40 + 9, (3,)), opaque_rng(np.random.SeedSequence(2**40 + 9, spawn_key=(3,)))
    assert ours.bit_generator.state == numpys.bit_generator.state
    assert [g.random() for g in ours.spawn(2)] == [g.random() for g in numpys.spawn(2)]
    with pytest.raises(ValueError, match="non-negative"):
        seed_words(-1)


def test_world_streams_are_the_seed_sequence_children_whenever_first_read() -> None:
    """A world's streams (the layout's, the noise's and the objects' made on first read, the
    NPCs' up front without the parent's spawn) each equal child i of `SeedSequence(seed).spawn(5)`, as before, in any
    reading order, after a pickle round trip; the UUID pool (child 4) is unchanged; a replaced
    stream stays."""
    seed = 2**40 + 17  # a sealed seed: not readable from the world
    children = np.random.SeedSequence(seed).spawn(5)
    expected = [np.random.Generator(np.random.PCG64(c)).integers(0, 2**62, 8).tolist() for c in children]
    names = ["rng_build", "rng_npc", "rng_noise", "rng_objects"]
    for order in (names, names[::-1]):
        world = World(seed)
        for name in order:
            assert getattr(world, name).integers(0, 2**62, 8).tolist() == expected[names.index(name)]
    assert all(name in vars(World) for name in names)  # (the NPCs' per-tick reads: `npc_draws`, a plain attribute)
    assert "npc_draws" not in vars(World)
    world = World(seed)
    world.rng_noise.random()
    assert "rng_build" not in vars(world)
    clone = pickle.loads(pickle.dumps(world))
    assert clone.rng_noise.random() == world.rng_noise.random()
    assert clone.rng_npc.integers(0, 2**62, 8).tolist() == expected[1]
    label = zlib.crc32(b"answer")  # `child_rng`: the stream of SeedSequence([seed, crc32(label)])
    want = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, label]))).integers(0, 2**62, 8).tolist()
    assert World(seed).child_rng("answer").integers(0, 2**62, 8).tolist() == want
    assert clone.rng_objects.integers(0, 2**62, 8).tolist() == expected[3]  # never read before the pickle
    pool = UuidPool(np.random.Generator(np.random.PCG64(children[4])))
    pool.extend(100)
    assert World(seed).take_uuids(100) == pool.drawn[:100]
    world.reseed_build("x")
    assert world.rng_build is world.rng_build and world.rng_build.integers(0, 2**62, 8).tolist() != expected[0]


def test_a_reset_computes_only_the_tiles_in_view() -> None:
    """The tile mirror starts with every tile pending and computes a tile when a view first
    reaches it: a reset pays for the 7x7 window, not the 1,024 tiles."""
    env = make_rl_env("DoorsTest")
    env.reset(seed=0)
    mirror = env.unwrapped.symbolic._mirror
    r, size = mirror.radius, 32
    inside = mirror.pending[r : r + size, r : r + size]
    assert 900 < int(inside.sum()) < size * size  # the window's tiles (and only they) are done
    agent = env.unwrapped.scenario.player
    assert not mirror.pending[agent.y : agent.y + 2 * r + 1, agent.x : agent.x + 2 * r + 1].any()


def test_lazy_tiles_and_the_faced_tile_of_a_zero_radius_view() -> None:
    env = make_rl_env("PickAndPlaceTest", radius=0, max_steps=10**9)
    env.reset(seed=1)
    base = env.unwrapped
    agent = base.scenario.player
    fx, fy = agent.facing_tile()
    mirror = base.symbolic._mirror
    assert not mirror.pending[fy, fx] and mirror.visible[fx][fy] == base.world.objects_at(fx, fy)
    for action in (4, 5, 6, 7):  # ROTATE_DIRECTION: every neighbour becomes the faced tile
        env.step(action)
        fx, fy = agent.facing_tile()
        assert not mirror.pending[fy, fx] and mirror.visible[fx][fy] == base.world.objects_at(fx, fy)


def test_material_copies_carry_every_field() -> None:
    """`Material.copy` names its fields in order: a field added later must be copied too."""
    import dataclasses

    from discoverylab.world.materials import Material, material

    fields = [f.name for f in dataclasses.fields(Material)]
    marks = {name: object() for name in fields if name != "extra"}
    original = Material(**marks, extra={"x": 1.5})  # type: ignore[arg-type]
    copy = original.copy()
    assert all(getattr(copy, name) is mark for name, mark in marks.items())
    assert copy.extra == {"x": 1.5} and copy.extra is not original.extra
    assert material("soil_good") == material("soil_good") and material("soil_good") is not material("soil_good")


def test_a_disposed_world_hands_out_no_more_uuids() -> None:
    """`dispose` closes the UUID pool (its stream and drawn values): a later `register` is a
    clear error, not a UUID drawn from a forgotten stream or an index error."""
    world = World(5)
    first = world.take_uuids(10)
    world.dispose()
    with pytest.raises(ValueError, match="disposed"):
        world.next_uuid()
    assert World(5).take_uuids(10) == first  # the same seed still draws the same UUIDs


def test_place_hands_out_the_uuids_next_uuid_would_across_the_pool_s_chunks() -> None:
    """`catalog.place` reads the pool's drawn UUIDs inline and asks `next_uuid` only when it
    must draw more: the same UUIDs in the same order as `next_uuid` one by one, past several
    chunks, for recycled-kind and own-material kinds alike."""
    world, other = World(9), World(9)
    kinds = ["tree_trunk", "wall", "plant_generic", "path"]
    placed = [catalog.place(world, kinds[i % 4], i % 32, (i // 32) % 32) for i in range(1300)]
    expected = [other.next_uuid() for _ in range(1300)]
    assert [obj.uuid for obj in placed] == expected == list(world.objects)
    assert world.next_uuid() == other.next_uuid()
