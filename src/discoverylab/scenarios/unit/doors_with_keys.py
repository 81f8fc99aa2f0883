"""Small Skills: Doors with Keys."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._levels import GOALS, free_cells, spawn_goal
from discoverylab.scenarios.unit.doors import DOORS_TASK, doors_site, finish_doors_map, solve_doors, wall_row
from discoverylab.world.agent import Agent
from discoverylab.world.objects import WorldObject


@register
class DoorsWithKeysTest(Scenario):
    """Unlock the doors in a row with the keys lying south of them, then take the goal object.

    Description: the narrow "Key Puzzle" building (5-7 wide, 14 high) is split by three walls,
    each with a locked door. The key to each door lies in the room just south of it, so the
    agent collects a key, opens the door north of it, and so on up to the goal object (a
    coloured flag or another small thing, named in the task) in the top room.
    Actions: movement, PICKUP, OPEN (with the matching key in the inventory; teleports help).
    Observation: standard text observation; keys are all named "key" (each fits one door).
    Scoring: Pick up the object /1, Open all doors /3 (doors seen open at any tick), Collect
    all keys /3 (distinct keys held at some tick; the spare key does not count); /2 and /2 at
    Easy. Success with all points; no failure.
    Difficulty knobs: the level draws where the building stands (the start, outside its front
    door, moves with it), the width, walls, doors, keys and the goal object (20). Easy: a
    10-high building with two walls (two locked doors, two keys). Challenge: each key lies on
    any free tile south of its door (not just in the room before it), and a spare key that
    fits no door lies in the bottom room.
    Registered ids: discoverylab/DoorsWithKeysTest-Easy-v0, discoverylab/DoorsWithKeysTest-Normal-v0,
    discoverylab/DoorsWithKeysTest-Challenge-v0.
    """

    task_id = "DoorsWithKeysTest"
    title = "Small Skills: Doors with Keys Test"
    suite = "unit"
    task_name = "SmallSkillsDoorsKeysTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        easy = self.difficulty == "easy"
        width, height = self.randint(5, 7), 10 if easy else 14
        x0, y0 = doors_site(self, width, height)
        layout.fill_grass(world, under=((x0, y0, width, height),))  # the draws above read no tile
        layout.building(world, x0, y0, width, height, "Key Puzzle")
        rows = [self.randint(3, 4), self.randint(6, 7)] + ([] if easy else [self.randint(9, 10)])
        for row in rows:
            wall_row(self, x0, y0 + row, width)
        spots = [(x0 + self.randint(1, width - 2), y0 + row) for row in rows]
        self.doors: list[WorldObject] = []
        self.keys: list[WorldObject] = []
        for key_id, (x, y) in enumerate(spots, start=1):
            self.doors.append(layout.door_at(world, x, y, key_id=key_id))
        for key_id, (_, y) in enumerate(spots, start=1):
            key = layout.spawn(world, "key", key_id=key_id)
            cell = (x0 + self.randint(1, width - 2), y + 1)
            if self.difficulty == "challenge":  # anywhere south of its door
                south = [c for c in free_cells(world, (x0 + 1, y + 1, x0 + width - 2, y0 + height - 2)) if c[1] - y0 not in rows]
                cell = self.choice(south)
            self.keys.append(world.place(key, *cell))
        if self.difficulty == "challenge":  # a spare key that fits no door, in the bottom room
            bottom = free_cells(world, (x0 + 1, y0 + rows[-1] + 1, x0 + width - 2, y0 + height - 2))
            world.place(layout.spawn(world, "key", key_id=99), *self.choice(bottom))
        self.flag = world.place(spawn_goal(self, self.choice(GOALS)), x0 + width - 2, y0 + 1)
        start = (x0 + width // 2, y0 + height)
        self.building = building = (x0, y0, x0 + width - 1, y0 + height - 1)
        self.pick, self.open_all = finish_doors_map(self, start, building, self.flag, self.doors)
        self.collect = self.scorecard.add(
            "Collect all keys", "Collect all keys in the building.", len(self.keys)
        )
        return Agent(world, "agent", *start)

    def description(self) -> str:
        return DOORS_TASK.format(goal=self.flag.name)

    def update(self) -> None:
        if self.flag.held_by_agent:
            self.pick.set(1)
        opened: list[int] = []  # loops, not comprehensions and generators: this runs every tick
        for door in self.doors:
            if door.is_open:
                opened.append(door.uuid)
        self.open_all.add_distinct(opened)
        held: list[int] = []
        for key in self.keys:
            if key.held_by_agent:
                held.append(key.uuid)
        self.collect.add_distinct(held)
        if self.pick.completed and self.open_all.completed and self.collect.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        yield from solve_doors(obs)
