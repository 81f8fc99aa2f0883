"""Small Skills: Doors."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._levels import (
    GOALS,
    Cell,
    Rect,
    draw_cell,
    free_cells,
    grow,
    spawn_goal,
    trees_clear_of,
)
from discoverylab.scoring.scorecard import ScorecardItem
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import place_each
from discoverylab.world.objects import Layer, WorldObject

DOORS_TASK = (
    "Your task is to enter the building, and go through all the doors until you reach the `{goal}`.  When you see "
    "the `{goal}`, pick it up to complete the task.  Note that for the task to be considered complete, all the "
    "doors must be opened, too.\n"
)
# Tree spots round the doors buildings (the original's), kept where they miss the building.
DOORS_TREES = ((13, 13), (14, 16), (29, 18), (30, 14), (28, 7), (22, 8), (17, 8), (14, 12), (13, 17), (22, 18),
               (23, 14), (18, 7), (3, 3), (6, 25), (25, 29), (28, 2))  # fmt: skip


def doors_site(sc: Scenario, width: int, height: int) -> tuple[int, int]:
    """The building's top-left corner, drawn wherever it and the tile before its door fit."""
    return sc.randint(1, sc.world.size - 1 - width), sc.randint(1, sc.world.size - 2 - height)


def scatter_distractors(sc: Scenario, rect: Rect, goals: list[tuple[str, str]], avoid: Cell) -> None:
    """Goal-pool objects (not the goal) on drawn free floor cells of `rect`."""
    for goal in goals:
        sc.world.place(spawn_goal(sc, goal), *draw_cell(sc, rect, lambda c: c != avoid))


def wall_row(scenario: Scenario, x0: int, y: int, width: int) -> None:
    """An interior wall across a building of `width` whose left outer wall is at `x0`."""
    place_each(scenario.world, "wall", [(x0 + i, y) for i in range(1, width - 1)])  # one call: ~4,000 instructions a wall less


def add_walls(scenario: Scenario, cells: list[Cell]) -> None:
    """A wall segment on each of `cells` (distinct floor tiles of a building) that has none yet,
    in order, in one `place_each` (a wall on one tile never changes another's check)."""
    world = scenario.world
    bare = [(x, y) for x, y in cells if not any(o.type == "wall" for o in world.layer_at(x, y, Layer.BUILDING))]
    place_each(world, "wall", bare)


def solve_doors(obs: ot.Obs) -> OracleGen:
    """Pick up every key in sight, open every closed door in sight and step through it, take
    the goal object, and otherwise explore the building's floor until the task completes."""
    goal = ot.quoted(ot.task_text(obs))[0]
    ex = Explorer(obs)
    needs_key: set[int] = set()  # doors that refused to open; retried after a new key
    out_of_reach: set[int] = set()  # keys behind a locked door; retried after a door opens
    while not ex.completed:
        key = next((s for s in ex.map.named("key") if not ex.holding(s.uuid) and s.uuid not in out_of_reach), None)
        if key is not None:
            if not ex.reachable(key.uuid):
                yield from ex.teleport(key.uuid)
            if not ex.reachable(key.uuid):
                out_of_reach.add(key.uuid)
                continue
            yield from ex.checked(ot.act("PICKUP", key.uuid))
            needs_key.clear()
            continue
        door = next(
            (
                s
                for s in ex.map.named("door")
                if s.description.startswith("closed") and s.uuid not in needs_key
            ),
            None,
        )
        if door is not None:
            if not ex.reachable(door.uuid):
                yield from ex.teleport(door.uuid)
            obs = yield from ex.act(ot.act("OPEN", door.uuid))
            if not obs["lastActionMessage"].startswith("I opened"):
                needs_key.add(door.uuid)
                continue
            out_of_reach.clear()
            needs_key.clear()  # a door that could not be reached before may be reachable now
            for _ in range(2):  # go through
                yield from ex.act(ot.act("MOVE_FORWARD"))
            continue
        flag = next((s for s in ex.map.named(goal) if not ex.holding(s.uuid)), None)
        if flag is not None:
            yield from ex.take(flag.uuid)
            continue
        yield from ex.explore_frontier(lambda s: s.name == "floor")


def finish_doors_map(
    scenario: Scenario,
    start: tuple[int, int],
    building: Rect,
    flag: WorldObject,
    doors: list[WorldObject],
) -> tuple[ScorecardItem, ScorecardItem]:
    """Scenery (clear of the building and the start), start teleport and the two shared
    scorecard items of the doors tasks."""
    world = scenario.world
    clear = [grow(building, 1), grow((*start, *start), 1)]
    trees_clear_of(world, clear, DOORS_TREES)
    for x in (start[0] - 2, start[0] + 2):
        if 0 <= x < world.size and all(o.type == "grass" for o in world.top_level_at(x, start[1])):
            layout.tree(world, x, start[1])
    if all(o.type == "grass" for o in world.top_level_at(15, 1)):
        layout.place(world, "plant_generic", 15, 1)
    layout.scatter_plants(world)
    world.teleports["initial location"] = start
    pick = scenario.scorecard.add("Pick up the object", f"Pick up the {flag.name}.", 1)
    open_all = scenario.scorecard.add("Open all doors", "Open all doors in the building.", len(doors))
    return pick, open_all


@register
class DoorsTest(Scenario):
    """Open the doors of a divided building and pick up the goal object in its far room.

    Description: the "Door Dilemma" building (14x14) is split by three horizontal walls and two
    partial vertical walls into a chain of rooms joined by seven unlocked doors; the goal object
    (a coloured flag or another small thing, named in the task) lies in the last room (top
    right). Wall rows, wall columns and door positions are random.
    Actions: movement, OPEN, PICKUP (teleports help).
    Observation: standard text observation; the rooms are larger than the 7x7 view, so the
    agent has to move around to find the doors.
    Scoring: Pick up the object /1, Open all doors /7 (/2 at Easy; distinct interior doors seen
    open at any tick; closing them again is fine). Success with all points; there is no failure.
    Difficulty knobs: the level draws where the building stands (the start, outside its front
    door, moves with it), the walls, the doors and the goal object (20). Easy: an 8x10 building
    split by two walls, two doors in a row. Challenge: the goal lies on any free tile of the last
    room, and three other goal-pool objects lie about the building.
    Registered ids: discoverylab/DoorsTest-Easy-v0, discoverylab/DoorsTest-Normal-v0,
    discoverylab/DoorsTest-Challenge-v0.
    """

    task_id = "DoorsTest"
    title = "Small Skills: Doors Test"
    suite = "unit"
    task_name = "SmallSkillsDoorsTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        goals = self.shuffled(GOALS)
        if self.difficulty == "easy":
            return self._build_easy(goals[0])
        width, height = 14, 14
        x0, y0 = doors_site(self, width, height)
        layout.fill_grass(world, under=((x0, y0, width, height),))  # the draws above read no tile
        layout.building(world, x0, y0, width, height, "Door Dilemma")
        rows = [self.randint(3, 4), self.randint(6, 7), self.randint(9, 10)]
        for row in rows:
            wall_row(self, x0, y0 + row, width)
        col1 = self.randint(3, 5)
        add_walls(self, [(x0 + col1, y0 + j) for j in range(rows[0], rows[2])])
        spots = [(x0 + self.randint(1, col1 - 1), y0 + row) for row in rows]
        col2 = self.randint(8, 9)
        add_walls(self, [(x0 + col2, y0 + j) for j in range(1, rows[1])])
        spots += [(x0 + self.randint(col1 + 1, col2 - 1), y0 + row) for row in rows[:2]]
        spots += [(x0 + self.randint(col2 + 1, width - 2), y0 + row) for row in rows[:2]]
        self.doors: list[WorldObject] = [layout.door_at(world, x, y) for x, y in spots]
        goal_cell = (x0 + width - 2, y0 + 1)
        if self.difficulty == "challenge":  # anywhere in the last room
            goal_cell = self.choice(free_cells(world, (x0 + col2 + 1, y0 + 1, x0 + width - 2, y0 + rows[0] - 1)))
        self.flag = world.place(spawn_goal(self, goals[0]), *goal_cell)
        if self.difficulty == "challenge":
            scatter_distractors(self, (x0 + 1, y0 + 1, x0 + width - 2, y0 + height - 2), goals[1:4], goal_cell)
        return self._finish(x0, y0, width, height)

    def _build_easy(self, goal: tuple[str, str]) -> Agent:
        """Two horizontal walls, one door in each: three rooms in a column."""
        world = self.world
        width, height = 8, 10
        x0, y0 = doors_site(self, width, height)
        layout.fill_grass(world, under=((x0, y0, width, height),))
        layout.building(world, x0, y0, width, height, "Door Dilemma")
        rows = [self.randint(3, 4), self.randint(6, 7)]
        for row in rows:
            wall_row(self, x0, y0 + row, width)
        self.doors = [layout.door_at(world, x0 + self.randint(1, width - 2), y0 + row) for row in rows]
        self.flag = world.place(spawn_goal(self, goal), x0 + width - 2, y0 + 1)
        return self._finish(x0, y0, width, height)

    def _finish(self, x0: int, y0: int, width: int, height: int) -> Agent:
        start = (x0 + width // 2, y0 + height)
        self.building = building = (x0, y0, x0 + width - 1, y0 + height - 1)
        self.pick, self.open_all = finish_doors_map(self, start, building, self.flag, self.doors)
        return Agent(self.world, "agent", *start)

    def description(self) -> str:
        return DOORS_TASK.format(goal=self.flag.name)

    def update(self) -> None:
        if self.flag.held_by_agent:
            self.pick.set(1)
        opened: list[int] = []  # a loop, not a comprehension: this runs every tick
        for door in self.doors:
            if door.is_open:
                opened.append(door.uuid)
        self.open_all.add_distinct(opened)
        if self.pick.completed and self.open_all.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        yield from solve_doors(obs)
