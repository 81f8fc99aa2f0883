"""Space Sick Easy: a locked lab with five instruments, three mushrooms and a jar.

One mushroom carries a pathogen that only one instrument detects. Which instrument (and which
pathogen name) is drawn per instance from a stream of its own (no blocks of seeds); which mushroom is drawn from the build stream and the three are created alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from discoverylab.scenarios import layout
from discoverylab.scenarios.space_sick.things import COLOURS, PATHOGENS, SIMPLE_INSTRUMENTS, simple_instrument
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import spawn
from discoverylab.world.objects import WorldObject

if TYPE_CHECKING:
    from discoverylab.scenarios.space_sick.scenario import SpaceSick

TEXT = (
    "Some of the food on Planet X has been contaminated with a pathogen that is causing mild stomach illness. "
    "You must determine which of the 3 mushrooms is contaminated, then place the contaminated mushroom in the jar "
    "for further analysis and disposal."
)
TREES = ((3, 4), (7, 3), (11, 5), (24, 4), (28, 6), (4, 11), (27, 12), (3, 19),
         (9, 24), (14, 27), (21, 25), (26, 20), (29, 27), (6, 28))  # fmt: skip


def build_easy(sc: SpaceSick) -> Agent:
    world = sc.world
    layout.fill_grass(world)
    sc.burn()
    layout.building(world, 15, 10, 7, 5, "Ministry of Measurement", key_id=123)
    critical = sc.balanced(len(SIMPLE_INSTRUMENTS), "instrument")
    sc.pathogen = PATHOGENS[sc.balanced(len(PATHOGENS), "pathogen")]
    sc.instrument_name = SIMPLE_INSTRUMENTS[critical]
    made: list[WorldObject] = [simple_instrument(world, name, i == critical) for i, name in enumerate(SIMPLE_INSTRUMENTS)]
    sc.instruments = made
    for inst, x in zip(sc.shuffled(made), sc.shuffled([16, 17, 18, 19, 20]), strict=True):
        layout.table_with(world, x, 11, inst)
    foods = [spawn(world, "mushroom", color=sc.choice(COLOURS)) for _ in range(3)]
    sc.target = foods[sc.randint(0, 2)]
    sc.target.props["pathogen"] = sc.pathogen
    sc.foods = foods
    spots = sc.shuffled([(16, 13), (17, 13), (19, 13), (20, 13)])
    for food, (x, y) in zip(foods, spots, strict=False):
        layout.table_with(world, x, y, food)
    sc.jar = spawn(world, "jar")
    layout.table_with(world, *spots[3], sc.jar)
    for x, y in TREES:
        layout.tree(world, x, y)
    for x in range(8, 26):
        layout.ground(world, "path", x, 16)
    layout.scatter_plants(world, 15)
    world.teleports["initial location"] = (18, 12)
    return Agent(world, "agent", 18, 12, facing="south")


def declare_easy(sc: SpaceSick) -> None:
    card = sc.scorecard
    card.task_name = "SpaceSickEasy"
    inst = sc.instrument_name
    card.critical_hypotheses.append(
        f"One of the mushrooms is contaminated with {sc.pathogen}, which only the {inst} detects."
    )
    card.ask(
        f"Does it clearly state that one of the food items is contaminated with a pathogen (`{sc.pathogen}`)?",
        f"One of the three mushrooms is contaminated with {sc.pathogen}.",
    )
    card.ask(
        f"Does it clearly state that the pathogen can be measured/detected with the {inst}?",
        f"The {inst} detects the pathogen; the other four instruments read normal.",
    )
    sc.picked = card.add("Pick up infected food", "The infected food has been picked up", 1)
    sc.measured = card.add("Use measurement devices", "Distinct instruments used on the mushrooms", 5)
    sc.detected = card.add("Measure pathogen", "The pathogen was measured with the right instrument", 1)
    sc.placed = card.add("Place the object", "The infected food is in the jar", 1)
    sc.easy_used = set()


def update_easy(sc: SpaceSick) -> None:
    target = sc.target
    if not sc.picked.completed and target.held_by_agent:
        sc.picked.set(1)
        sc.picked.associated_uuids = [target.uuid]
    foods = {f.uuid for f in sc.foods}
    critical = next(i for i in sc.instruments if i.props.get("detects_pathogen"))
    names: set[str] = set()
    for record in sc.new_actions():
        tool, what = record.arg1, record.arg2
        if record.action != "USE" or not record.success or not isinstance(what, WorldObject):
            continue
        if tool in sc.instruments and what.uuid in foods:
            names.add(tool.name)
            if tool is critical and what is target:
                sc.detected.set(1)
    if not names <= sc.easy_used:
        sc.easy_used |= names
        sc.measured.set(len(sc.easy_used), note=", ".join(sorted(sc.easy_used)))
    if target.parent is sc.jar:
        sc.placed.set(1, note="The contaminated mushroom is in the jar.")
        sc.scorecard.finish(True)
    elif sc.jar.contents:
        sc.scorecard.finish(False)
