"""Small Skills: Doors."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.registry import register
from discoverylab.scoring.scorecard import ScorecardItem
from discoverylab.world.agent import Agent
from discoverylab.world.objects import Layer, WorldObject

DOORS_TASK = (
    "Your task is to enter the building, and go through all the doors until you reach a flag.  When you see the "
    "flag, pick it up to complete the task.  Note that for the task to be considered complete, all the doors must "
    "be opened, too.\n"
)


def wall_row(scenario: Scenario, x0: int, y: int, width: int) -> None:
    """An interior wall across a building of `width` whose left outer wall is at `x0`."""
    for i in range(1, width - 1):
        layout.place(scenario.world, "wall", x0 + i, y)


def add_wall(scenario: Scenario, x: int, y: int) -> None:
    """A wall segment on the floor of a building, unless a wall is already there."""
    if not any(o.type == "wall" for o in scenario.world.tiles[x][y][Layer.BUILDING]):
        layout.place(scenario.world, "wall", x, y)


def solve_doors(obs: ot.Obs) -> OracleGen:
    """Pick up every key in sight, open every closed door in sight and step through it, take
    the flag, and otherwise explore the building's floor until the task completes."""
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
            for _ in range(2):  # go through
                yield from ex.act(ot.act("MOVE_FORWARD"))
            continue
        flag = next((s for s in ex.map.named("flag") if not ex.holding(s.uuid)), None)
        if flag is not None:
            yield from ex.take(flag.uuid)
            continue
        yield from ex.explore_frontier(lambda s: s.name == "floor")


def finish_doors_map(
    scenario: Scenario,
    start: tuple[int, int],
    trees: tuple[tuple[int, int], ...],
    flag: WorldObject,
    doors: list[WorldObject],
) -> tuple[ScorecardItem, ScorecardItem]:
    """Scenery, start teleport and the two shared scorecard items of the doors tasks."""
    world = scenario.world
    for x, y in trees:
        layout.tree(world, x, y)
    layout.tree(world, start[0] - 2, start[1])
    layout.tree(world, start[0] + 2, start[1])
    layout.place(world, "plant_generic", 15, 1)
    layout.scatter_plants(world)
    world.teleports["initial location"] = start
    pick = scenario.scorecard.add("Pick up the object", f"Pick up the {flag.name}.", 1)
    open_all = scenario.scorecard.add("Open all doors", "Open all doors in the building.", len(doors))
    return pick, open_all


@register
class DoorsTest(Scenario):
    """Open the seven doors of a divided building and pick up the flag in its far room.

    Description: the "Door Dilemma" building (14x14) is split by three horizontal walls and two
    partial vertical walls into a chain of rooms joined by seven unlocked doors; the flag lies
    in the last room (top right). Wall rows, wall columns and door positions are random.
    Actions: movement, OPEN, PICKUP (teleports help).
    Observation: standard text observation; the rooms are larger than the 7x7 view, so the
    agent has to move around to find the doors.
    Scoring: Pick up the object /1, Open all doors /7 (distinct interior doors seen open at
    any tick; closing them again is fine). Success with all 8 points; there is no failure.
    Difficulty knobs: none (Normal only); the seed picks the walls and doors.
    Registered ids: discoverylab/DoorsTest-Normal-v0.
    """

    task_id = "DoorsTest"
    title = "Small Skills: Doors Test"
    suite = "unit"
    task_name = "SmallSkillsDoorsTask"

    def build(self) -> Agent:
        world = self.world
        self.burn()
        layout.fill_grass(world)
        x0, y0, width, height = 15, 9, 14, 14
        layout.building(world, x0, y0, width, height, "Door Dilemma")
        rows = [self.randint(3, 4), self.randint(6, 7), self.randint(9, 10)]
        for row in rows:
            wall_row(self, x0, y0 + row, width)
        col1 = self.randint(3, 5)
        for j in range(rows[0], rows[2]):
            add_wall(self, x0 + col1, y0 + j)
        spots = [(x0 + self.randint(1, col1 - 1), y0 + row) for row in rows]
        col2 = self.randint(8, 9)
        for j in range(1, rows[1]):
            add_wall(self, x0 + col2, y0 + j)
        spots += [(x0 + self.randint(col1 + 1, col2 - 1), y0 + row) for row in rows[:2]]
        spots += [(x0 + self.randint(col2 + 1, width - 2), y0 + row) for row in rows[:2]]
        self.doors: list[WorldObject] = [layout.door_at(world, x, y) for x, y in spots]
        self.flag = layout.place(world, "flag", x0 + width - 2, y0 + 1)
        start = (x0 + width // 2, y0 + height)
        trees = ((13, 13), (14, 16), (29, 18), (30, 14), (28, 7), (22, 8), (17, 8))
        self.pick, self.open_all = finish_doors_map(self, start, trees, self.flag, self.doors)
        return Agent(world, "agent", *start)

    def description(self) -> str:
        return DOORS_TASK

    def update(self) -> None:
        if self.flag.held_by_agent:
            self.pick.set(1)
        self.open_all.add_distinct([door.uuid for door in self.doors if door.is_open])
        if self.pick.completed and self.open_all.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        yield from solve_doors(obs)
