"""Instrument readings (spec §3.4): what each reads from the object tree, and the exact texts."""

from __future__ import annotations

import numpy as np

from discoverylab.world.catalog import place, spawn
from discoverylab.world.materials import material
from discoverylab.world.objects import WorldObject
from discoverylab.world.things import Mold
from discoverylab.world.world import World
from world_kit import Player, meadow


def _setup(seed: int = 0, grass: bool = True) -> tuple[Player, dict[str, WorldObject]]:
    """The player at (5, 5) facing south, carrying every instrument."""
    world = meadow(seed) if grass else World(seed)
    p = Player(world, 5, 5, facing="south")
    kit = {}
    for kind in ("microscope", "spectrometer", "ph_meter", "radiation_meter", "thermometer", "densitometer"):
        kit[kind] = spawn(world, kind)
        p.agent.add(kit[kind])
    return p, kit


def _moldy_mushroom(world: World) -> tuple[WorldObject, Mold]:
    mushroom = spawn(world, "mushroom")
    mold = Mold(world, "mold", "mold", [material("mold_red")], poisonous=True)
    mushroom.add_part(mold)
    return mushroom, mold


def _source(world: World, name: str = "radioactive source") -> WorldObject:
    return WorldObject(world, name, "rock", [material("heavy_radioactive")])


def test_microscope_lists_materials_parts_and_the_dead_mold_note() -> None:
    p, kit = _setup()
    shovel = place(p.world, "shovel", 5, 6)
    result = p.do("USE", kit["microscope"], shovel)
    assert result.success and result.important
    assert result.message == (
        "You use the microscope to observe the shovel.\n"
        "Observing the shovel, you see the following: A shiny surface with fine machining marks, Long woody fibres.\n"
    )
    soil = place(p.world, "soil", 5, 6)  # no materials of its own
    assert p.do("USE", kit["microscope"], soil).message == (
        "You use the microscope to observe the soil.\n"
        "Observing the soil, you don't observe anything particularly noteworthy.\n"
    )
    mushroom, mold = _moldy_mushroom(p.world)
    p.world.place(mushroom, 5, 6)
    expected = (
        "You use the microscope to observe the mushroom.\n"
        "Observing the mushroom, you see the following parts: mold. \n"
        "Observing the mushroom, you see the following: Pale plant cells with thick walls.\n"
        "Observing the mold, you see the following: Thread-like filaments that look like a mold.\n"
    )
    assert p.do("USE", kit["microscope"], mushroom).message == expected
    mold.temperature_c = 80.0
    p.world.tick()
    assert not mold.poisonous
    assert p.do("USE", kit["microscope"], mushroom).message == expected + "This mold appears dead.\n"


def test_spectrometer_sums_materials_and_parts_but_not_contents() -> None:
    p, kit = _setup()
    mushroom, _ = _moldy_mushroom(p.world)
    p.world.place(mushroom, 5, 6)
    assert p.do("USE", kit["spectrometer"], mushroom).message == (
        "You use the spectrometer to examine the mushroom.\n"
        "The results are as follows:\n"
        "- Channel 1: 0.20\n- Channel 2: 0.30\n- Channel 3: 0.40\n- Channel 4: 0.50\n- Channel 5: 1.00\n"
    )
    jar = place(p.world, "jar", 5, 6)
    jar.add(_source(p.world))
    assert p.do("USE", kit["spectrometer"], jar).message.endswith(
        "- Channel 1: 0.10\n- Channel 2: 0.10\n- Channel 3: 0.10\n- Channel 4: 0.10\n- Channel 5: 0.10\n"
    )
    soil = place(p.world, "soil", 5, 6)
    assert p.do("USE", kit["spectrometer"], soil).message == (
        "You use the spectrometer to examine the soil.\nThe results are inconclusive.\n"
    )


def test_ph_meter_averages_materials_contents_and_parts() -> None:
    p, kit = _setup()
    jar = place(p.world, "jar", 5, 6)  # glass, pH 7
    mushroom, _ = _moldy_mushroom(p.world)  # plant matter 6, mold 4
    jar.add(mushroom)
    assert p.do("USE", kit["ph_meter"], jar).message == (
        "You use the PH meter to investigate the jar.\nThe PH meter reports a PH of 5.7.\n"
    )
    soil = place(p.world, "soil", 5, 6)
    soil.contents.clear()  # no dirt: nothing to measure
    assert p.do("USE", kit["ph_meter"], soil).message == (
        "You use the PH meter to investigate the soil.\nThe results are inconclusive.\n"
    )


def _noise(seed: int, draws: int = 1) -> list[float]:
    """The radiation meter's background draws: the world's noise stream (third child)."""
    stream = np.random.default_rng(np.random.SeedSequence(seed).spawn(4)[2])
    return [float(stream.random()) * 0.05 for _ in range(draws)]


def test_radiation_meter_reads_the_object_plus_weighted_neighbours() -> None:
    p, kit = _setup(seed=7, grass=False)
    target = _source(p.world)
    p.world.place(target, 5, 6)
    neighbour = _source(p.world, "other source")
    p.world.place(neighbour, 6, 5)  # one tile east of the meter (carried at (5, 5)): weight (1 + 2)^2
    place(p.world, "flag", 3, 3)
    far = _source(p.world, "far source")
    p.world.place(far, 8, 5)  # three tiles away: outside the 5x5 window
    noise = _noise(7, 2)
    expected = 100 + noise[0] + 100 / 9
    assert p.do("USE", kit["radiation_meter"], target).message == (
        "You use the radiation meter to investigate the radioactive source.\n"
        f"The radiation meter reports a level of {expected:.2f} micro Seiverts per hour.\n"
    )
    # Measuring the other source: now the first one is the neighbour; the target is never counted twice.
    p.do("ROTATE_DIRECTION", "east")
    expected = 100 + noise[1] + 100 / 9
    assert p.do("USE", kit["radiation_meter"], neighbour).message.endswith(
        f"level of {expected:.2f} micro Seiverts per hour.\n"
    )


def test_radiation_meter_counts_what_a_container_holds() -> None:
    p, kit = _setup(seed=1, grass=False)
    jar = place(p.world, "jar", 5, 5)  # on the meter's own tile: distance 0, weight 2^2
    jar.add(_source(p.world))
    expected = 0 + _noise(1)[0] + 100 / 4
    assert p.do("USE", kit["radiation_meter"], jar).message.endswith(
        f"level of {expected:.2f} micro Seiverts per hour.\n"
    )


def test_radiation_meter_grass_background_and_determinism_per_seed() -> None:
    def reading(seed: int) -> str:
        p, kit = _setup(seed=seed)
        flag = place(p.world, "flag", 5, 6)
        return p.do("USE", kit["radiation_meter"], flag).message

    # Grass (plant matter, 0.1 uSv/h) on the 25 tiles around the meter adds its weighted share.
    grass = sum(0.1 / (np.hypot(dx, dy) + 2) ** 2 for dx in range(-2, 3) for dy in range(-2, 3))
    assert reading(3) == reading(3)
    assert reading(3).endswith(f"level of {grass + _noise(3)[0]:.2f} micro Seiverts per hour.\n")


def test_thermometer_and_densitometer() -> None:
    p, kit = _setup()
    crystal = place(p.world, "quantum_crystal", 5, 6)
    crystal.temperature_c = -3.456
    assert p.do("USE", kit["thermometer"], crystal).message == (
        "You use the thermometer to measure the temperature of the quantum crystal.\n"
        "The thermometer reports a temperature of -3.46 degrees Celsius.\n"
    )
    assert p.do("USE", kit["densitometer"], crystal).message == (
        "You use the densitometer to examine the quantum crystal.\n"
        "The results are as follows:\n"
        "The density of the quantum crystal appears to be approximately 3.200 grams per cubic centimeter.\n"
    )
    flag = place(p.world, "flag", 5, 6)
    assert p.do("USE", kit["densitometer"], flag).message == (
        "You use the densitometer to examine the flag.\nThe results are inconclusive.\n"
    )


def test_instrument_without_a_reader_and_template_overrides() -> None:
    p, _ = _setup()
    gadget = spawn(p.world, "thermometer", type_="gadget", name="gadget")
    p.agent.add(gadget)
    flag = place(p.world, "flag", 5, 6)
    assert p.do("USE", gadget, flag).message == "I'm not sure how to use the gadget with the flag."
    pellet = place(p.world, "fertilizer_pellet", 5, 6)  # readings set directly by the template
    kit = {o.type: o for o in p.agent.contents}
    assert "PH of 9.0" in p.do("USE", kit["PH meter"], pellet).message
    assert "- Channel 4: 5.00\n" in p.do("USE", kit["spectrometer"], pellet).message
