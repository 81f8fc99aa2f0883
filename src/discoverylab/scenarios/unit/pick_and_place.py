"""Small Skills: Pick and Place."""

from __future__ import annotations

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import (
    VILLA_CENTRE,
    outdoor_around,
    put_named_in,
    score_pick_and_place,
    start_inside,
    villa,
    villa_objects_and_container,
)
from discoverylab.world.agent import Agent


@register
class PickAndPlaceTest(Scenario):
    """Pick up a named object and place it in a named container.

    Description: inside a locked villa, five objects lie on tables and a pot or a jar stands on a
    sixth. The task names one object and the container.
    Actions: movement, PICKUP, PUT (teleports help).
    Observation: standard text observation; from the Normal and Easy start cells everything is
    within the default 3-tile radius.
    Scoring: Pick up the object /1, Place the object /1. Putting anything else into the
    container first ends the task unsuccessfully.
    Difficulty knobs: the level draws where the villa stands, the tables' spots, the objects,
    the target, the container and the start cell (one of the six central cells). Easy: three
    objects. Challenge: a 9x7 villa, its nine tables drawn among the wall-side tiles so every
    free tile can be walked to and every table stands beside one; seven objects, both a pot and
    a jar (the task names one), and the start is any free cell of the villa.
    Registered ids: discoverylab/PickAndPlaceTest-Easy-v0, discoverylab/PickAndPlaceTest-Normal-v0,
    discoverylab/PickAndPlaceTest-Challenge-v0.
    """

    task_id = "PickAndPlaceTest"
    title = "Small Skills: Pick and Place Test"
    suite = "unit"
    task_name = "SmallSkillsPickAndPlaceTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        site = villa(self)
        hard = self.difficulty == "challenge"
        count = {"easy": 3, "normal": 5, "challenge": 7}[self.difficulty]
        objects, self.container = villa_objects_and_container(self, site, count, both_containers=hard)
        self.target = objects[0]
        outdoor_around(self, site)
        start = start_inside(self, site, None if hard else VILLA_CENTRE)
        self.pick = self.scorecard.add("Pick up the object", "The target object was picked up.", 1)
        self.place = self.scorecard.add("Place the object", "The target object is in the container.", 1)
        return Agent(world, "agent", *start)

    def description(self) -> str:
        return f"Your task is to pick up the `{self.target.name}` and place it in the `{self.container.name}`.\n"

    def update(self) -> None:
        score_pick_and_place(self.scorecard, self.target, self.container, self.pick, self.place)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        item, container = ot.quoted(ot.task_text(obs))
        yield from put_named_in(Explorer(obs), item, container)
