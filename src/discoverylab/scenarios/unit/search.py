"""Small Skills: Search."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._house import (
    HOUSE_H,
    HOUSE_W,
    HOUSE_X,
    HOUSE_Y,
    START,
    build_house,
    decorate,
)
from discoverylab.world.agent import Agent

# Where the flag may be: the house and a margin around it (x 6-26, y 7-28).
SEARCH_AREA = (HOUSE_X - 4, HOUSE_Y - 3, HOUSE_X + HOUSE_W + 3, HOUSE_Y + HOUSE_H + 3)


@register
class SearchTest(Scenario):
    """Find a flag somewhere around a house and pick it up.

    Description: the house of the navigation task (four rooms, a hall, a soil plot behind it);
    a flag lies on an empty floor or grass tile somewhere in the house or around it (on even
    seeds always inside on the floor). The agent starts outside the front door, empty-handed.
    Actions: movement, PICKUP (teleports help a lot: the view is only 7x7).
    Observation: standard text observation.
    Scoring: Find the Flag /1 (the flag is in the agent's inventory). Critical hypothesis:
    "The flag is located at (x, y).".
    Difficulty knobs: none (Normal only); the seed picks the house's rooms and the flag's tile.
    Registered ids: discoverylab/SearchTest-Normal-v0.
    """

    task_id = "SearchTest"
    title = "Small Skills: Search Test"
    suite = "unit"
    task_name = "SmallSkillsSearchTask"

    def build(self) -> Agent:
        world = self.world
        layout.fill_grass(world)
        build_house(self)  # the location draws happen (as in the original) but are unused
        # Floor tiles for half the instances; the others accept grass or floor (the original
        # checked before clearing the grass under floors, so its floors still counted as grass;
        # it split on the seed's parity, here a stream of the instance's own draws the coin).
        floor_only = int(world.child_rng("SearchTest/floor-only").integers(0, 2)) == 0
        allowed = ({"floor"},) if floor_only else ({"grass"}, {"floor"})
        x0, y0, x1, y1 = SEARCH_AREA
        while True:
            x, y = self.randint(x0, x1), self.randint(y0, y1)
            if {o.type for o in world.top_level_at(x, y)} in allowed:
                break
        self.flag = layout.place(world, "flag", x, y)
        player = Agent(world, "agent", *START)
        decorate(self)
        world.teleports["initial location"] = START
        self.find = self.scorecard.add("Find the Flag", "Have the flag in your inventory.", 1)
        self.find.associated_uuids = [self.flag.uuid]
        self.scorecard.critical_hypotheses.append(f"The flag is located at ({x}, {y}).")
        return player

    def description(self) -> str:
        return "Your task is to find the flag (located somewhere in the environment) and pick it up."

    def update(self) -> None:
        if self.flag.held_by_agent:
            self.find.set(1)
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        ex = Explorer(obs)

        def seen() -> bool:
            return bool(ex.map.named("flag"))

        # The task says only "somewhere": search around the house first, then everywhere.
        yield from ex.sweep(SEARCH_AREA, done=seen)
        if not seen():
            yield from ex.sweep((0, 0, 31, 31), done=seen)
        flag = ex.map.named("flag")
        if not flag:
            raise ot.OracleFailure("no flag anywhere")
        yield from ex.take(flag[0].uuid)
