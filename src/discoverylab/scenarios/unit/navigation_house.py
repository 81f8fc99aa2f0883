"""Small Skills: Navigation in a House."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer, Sighting, Tile
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._house import LOCATIONS, House, build_house, decorate, inside
from discoverylab.scenarios.unit._levels import GOALS, draw_cell, grow, spawn_goal
from discoverylab.world.agent import Agent

# What tells the locations apart (oracle knowledge, the way a person recognises rooms).
FURNISHINGS = {
    "kitchen": ("fridge", "stove", "sink"),
    "bedroom": ("bed", "bedside table"),
    "science lab": ("microscope", "spectrometer", "petri dish"),
}


def _is_floor(s: Sighting) -> bool:
    return s.name == "floor"


def _find_room(ex: Explorer, place: str) -> OracleGen:
    """Explore the house until a telltale object of `place` is seen; stand beside it."""
    while not ex.map.named(*FURNISHINGS[place]):
        yield from ex.explore_frontier(_is_floor)
    yield from ex.teleport(ex.map.named(*FURNISHINGS[place])[0].uuid)


def _find_soil_plot(ex: Explorer) -> OracleGen:
    """A garden plot is usually out back: look behind the house first (north of the start,
    when that is the front door), then everywhere."""
    x, y = ex.here
    behind = (max(0, x - 8), max(0, y - 24), min(31, x + 8), max(0, y - 14))
    for area in (behind, (0, 0, 31, 31)):
        yield from ex.sweep(area, done=lambda: bool(ex.map.named("soil")))
        if ex.map.named("soil"):
            break
    soils = ex.map.named("soil")
    if not soils:
        raise ot.OracleFailure("no soil plot found")
    top = min(soils, key=lambda s: (s.near()[1], s.near()[0]))
    yield from ex.teleport(top.uuid)
    yield from ex.act(ot.act("MOVE_FORWARD"))  # teleporting lands beside it, facing it: step onto it


def _find_empty_room(ex: Explorer) -> OracleGen:
    """The house's four rooms sit in the corners of the hall that joins its front and back
    doors; the empty room is the corner where none of the other rooms' furniture is."""

    def located() -> bool:
        return len(ex.map.named("door")) >= 2 and all(ex.map.named(*names) for names in FURNISHINGS.values())

    while not located():
        yield from ex.explore_frontier(_is_floor)
    doors = [s.near() for s in ex.map.named("door")[:2]]
    centre = ((doors[0][0] + doors[1][0]) / 2, (doors[0][1] + doors[1][1]) / 2)

    def corner(tile: Tile) -> tuple[int, int]:
        return (1 if tile[0] > centre[0] else -1), (1 if tile[1] > centre[1] else -1)

    furnished = {corner(ex.map.named(*names)[0].near()) for names in FURNISHINGS.values()}
    empty = next(c for c in ((-1, -1), (1, -1), (-1, 1), (1, 1)) if c not in furnished)

    def room_floor() -> list[tuple[float, int]]:
        # Floor well inside that corner (away from the hall), farthest first.
        out = []
        for tile, s in ex.map.pinned():
            dx, dy = tile[0] - centre[0], tile[1] - centre[1]
            if s.name == "floor" and corner(tile) == empty and abs(dx) >= 2 and abs(dy) >= 3:
                out.append((-(abs(dx) + abs(dy)), s.uuid))
        return sorted(out)

    if not room_floor():
        goal = (round(centre[0] + 4 * empty[0]), round(centre[1] + 5 * empty[1]))
        yield from ex.travel(goal, tolerance=1)
    if not room_floor():
        raise ot.OracleFailure("could not see the empty room")
    yield from ex.teleport(room_floor()[0][1])


@register
class NavigationHouseTest(Scenario):
    """Carry a flag to a named place in a house (or its garden) and drop it there.

    Description: a house with four rooms round a cross-shaped hall (a kitchen, a bedroom, a
    science lab and an empty room, in a random arrangement) and a 3x3 soil plot behind it. The
    agent starts outside the front door holding an object (a coloured flag or another small
    thing, named in the task); the task names one of the five places. The agent has to
    recognise the place from what is in it.
    Actions: movement, OPEN (doors), DROP or PUT (teleports help).
    Observation: standard text observation; nothing names the rooms.
    Scoring: Move to location /1 (the agent stood in the place's region: the room plus one tile
    on every side), Drop Flag /1 (the flag left the agent's hands inside that region).
    Dropping the flag anywhere else ends the task unsuccessfully.
    Difficulty knobs: the level draws where the house stands (so the start cell moves with it),
    the room arrangement, the furniture, the plot, the object carried (20) and the target place
    (5). Easy: the agent starts in the middle of the hall, and the target is one of the three
    furnished rooms. Challenge: the agent starts on a drawn free tile anywhere outside the
    house.
    Registered ids: discoverylab/NavigationHouseTest-Easy-v0, discoverylab/NavigationHouseTest-Normal-v0,
    discoverylab/NavigationHouseTest-Challenge-v0.
    """

    task_id = "NavigationHouseTest"
    title = "Small Skills: Navigation in a House Test"
    suite = "unit"
    task_name = "SmallSkillsNavigationHouseTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        self.house = house = House(self)
        layout.fill_grass(world, under=(house.site,))  # `build_house` lays the house first
        self.regions, self.target = build_house(self, house)
        if self.difficulty == "easy" and self.target in ("empty room", "soil plot"):
            self.target = self.choice(LOCATIONS[:3])
        self.region = self.regions[self.target]
        self.flag = spawn_goal(self, self.choice(GOALS))
        decorate(self, house)
        start = house.front
        if self.difficulty == "easy":
            start = house.hall
        elif self.difficulty == "challenge":
            near = grow(house.rect, 1)
            start = draw_cell(self, (0, 0, world.size - 1, world.size - 1), lambda c: not inside(near, *c))
        player = Agent(world, "agent", *start)
        player.add(self.flag)
        world.teleports["initial location"] = start
        self.visit = self.scorecard.add("Move to location", f"Be inside the {self.target}.", 1)
        self.drop = self.scorecard.add("Drop Flag", f"Drop the {self.flag.name} in the {self.target}.", 1)
        return player

    def description(self) -> str:
        return f"Your task is to drop the `{self.flag.name}` inside the following location: `{self.target}`.\n"

    def update(self) -> None:
        # Runs every tick, interpreted: the region's bounds compared inline (`inside`), the
        # flag's holder read once, and a completed visit (`set` would return) not set again.
        x0, y0, x1, y1 = self.region
        drop, visit = self.drop, self.visit
        failed = False
        if not drop.completed:
            holder = self.flag.parent
            if holder is None or not holder.is_agent:  # placed
                fx, fy = self.flag.location()
                if x0 <= fx <= x1 and y0 <= fy <= y1:
                    drop.set(1)
                else:
                    drop.set(0, completed=True, note="The flag was dropped outside the location.")
                    failed = True
        if not visit.completed:
            player = self.player
            if x0 <= player.x <= x1 and y0 <= player.y <= y1:
                visit.set(1)
        if failed:
            self.scorecard.finish(False)
        elif visit.completed and drop.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        thing, place = ot.quoted(ot.task_text(obs))
        ex = Explorer(obs)
        if place != "soil plot" and not ex.map.named("floor"):  # started away from the house: find it
            yield from ex.sweep((0, 0, 31, 31), done=lambda: bool(ex.map.named("door")))
            yield from ex.teleport(ex.map.named("door")[0].uuid)
        if place == "soil plot":
            yield from _find_soil_plot(ex)
        elif place == "empty room":
            yield from _find_empty_room(ex)
        else:
            yield from _find_room(ex, place)
        flag = ot.require(ot.find_inventory(ex.obs, thing), f"the {thing} in the inventory")
        yield from ex.checked(ot.act("DROP", flag["uuid"]))
