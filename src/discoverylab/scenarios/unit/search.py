"""Small Skills: Search."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._house import House, build_house, decorate
from discoverylab.scenarios.unit._levels import GOALS, draw_cell, spawn_goal
from discoverylab.world.agent import Agent


@register
class SearchTest(Scenario):
    """Find a flag somewhere around a house and pick it up.

    Description: the house of the navigation task (four rooms, a hall, a soil plot behind it);
    the goal object (a coloured flag or another small thing, named in the task) lies on an
    empty floor or grass tile somewhere in the house or around it (for half the levels, by a
    coin of their own, always inside on the floor). The agent starts outside the front door,
    empty-handed.
    Actions: movement, PICKUP (teleports help a lot: the view is only 7x7).
    Observation: standard text observation.
    Scoring: Find the Flag /1 (the goal object is in the agent's inventory). Critical
    hypothesis: "The <object> is located at (x, y).".
    Difficulty knobs: the level draws where the house stands (the start moves with it), its
    rooms, the goal object (20) and its tile. Easy: the object is always on the house's floor,
    and the task says so. Challenge: the object may lie on any free tile of the world, and
    three other goal-pool objects lie about as distractors.
    Registered ids: discoverylab/SearchTest-Easy-v0, discoverylab/SearchTest-Normal-v0,
    discoverylab/SearchTest-Challenge-v0.
    """

    task_id = "SearchTest"
    title = "Small Skills: Search Test"
    suite = "unit"
    task_name = "SmallSkillsSearchTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.house = house = House(self)
        layout.fill_grass(world, under=(house.site,))  # `build_house` lays the house first
        build_house(self, house)  # the location draws happen (as in the original) but are unused
        # Floor tiles for half the instances; the others accept grass or floor (the original
        # checked before clearing the grass under floors, so its floors still counted as grass;
        # it split on the seed's parity, here a stream of the instance's own draws the coin).
        floor_only = int(world.child_rng("SearchTest/floor-only").integers(0, 2)) == 0
        if self.difficulty == "easy":
            floor_only = True
        allowed = ({"floor"},) if floor_only else ({"grass"}, {"floor"})
        area = house.area() if self.difficulty != "challenge" else (0, 0, world.size - 1, world.size - 1)
        goals = self.shuffled(GOALS)

        def bare(cell: tuple[int, int]) -> bool:
            return {o.type for o in world.top_level_at(*cell)} in allowed

        x, y = draw_cell(self, area, bare)
        self.flag = world.place(spawn_goal(self, goals[0]), x, y)
        if self.difficulty == "challenge":  # distractors: other goal objects lying about
            for goal in goals[1:4]:
                world.place(spawn_goal(self, goal), *draw_cell(self, area, bare))
        self.inside_only = self.difficulty == "easy"
        start = house.front
        player = Agent(world, "agent", *start)
        decorate(self, house)
        world.teleports["initial location"] = start
        self.find = self.scorecard.add("Find the Flag", f"Have the {self.flag.name} in your inventory.", 1)
        self.find.associated_uuids = [self.flag.uuid]
        self.scorecard.critical_hypotheses.append(f"The {self.flag.name} is located at ({x}, {y}).")
        return player

    def description(self) -> str:
        where = "inside the house" if self.inside_only else "somewhere in the environment"
        return f"Your task is to find the `{self.flag.name}` (located {where}) and pick it up."

    def update(self) -> None:
        if self.flag.held_by_agent:
            self.find.set(1)
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        (name,) = ot.quoted(ot.task_text(obs))
        ex = Explorer(obs, max_hops=60)  # Challenge: the object may lie anywhere in the world

        def seen() -> bool:
            return bool(ex.map.named(name))

        # The task says only "somewhere": search the house behind the start (its front door)
        # and round it first, then everywhere.
        x, y = ex.here
        yield from ex.sweep((max(0, x - 10), max(0, y - 18), min(31, x + 10), min(31, y + 3)), done=seen)
        if not seen():
            yield from ex.sweep((0, 0, 31, 31), done=seen)
        flag = ex.map.named(name)
        if not flag:
            raise ot.OracleFailure(f"no {name} anywhere")
        yield from ex.take(flag[0].uuid)
