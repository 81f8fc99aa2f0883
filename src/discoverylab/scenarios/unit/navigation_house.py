"""Small Skills: Navigation in a House."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.explore import Explorer, Sighting, Tile
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._house import START, build_house, decorate, inside
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
    """A garden plot is usually out back: look behind the house first, then everywhere."""
    for area in ((4, 0, 28, 9), (0, 0, 31, 31)):
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
    agent starts outside the front door holding a flag; the task names one of the five places.
    The agent has to recognise the place from what is in it.
    Actions: movement, OPEN (doors), DROP or PUT (teleports help).
    Observation: standard text observation; nothing names the rooms.
    Scoring: Move to location /1 (the agent stood in the place's region: the room plus one tile
    on every side), Drop Flag /1 (the flag left the agent's hands inside that region).
    Dropping the flag anywhere else ends the task unsuccessfully.
    Difficulty knobs: none (Normal only); the seed picks the room arrangement, the furniture,
    the plot and the target.
    Registered ids: discoverylab/NavigationHouseTest-Normal-v0.
    """

    task_id = "NavigationHouseTest"
    title = "Small Skills: Navigation in a House Test"
    suite = "unit"
    task_name = "SmallSkillsNavigationHouseTask"

    def build(self) -> Agent:
        world = self.world
        self.burn()
        layout.fill_grass(world)
        self.regions, self.target = build_house(self)
        self.region = self.regions[self.target]
        player = Agent(world, "agent", *START)
        self.flag = layout.spawn(world, "flag")
        player.add(self.flag)
        decorate(self)
        world.teleports["initial location"] = START
        self.visit = self.scorecard.add("Move to location", f"Be inside the {self.target}.", 1)
        self.drop = self.scorecard.add("Drop Flag", f"Drop the flag in the {self.target}.", 1)
        return player

    def description(self) -> str:
        return f"Your task is to drop the flag inside the following location: `{self.target}`.\n"

    def update(self) -> None:
        failed = False
        if not self.drop.completed:
            placed = self.flag.parent is None or not self.flag.parent.is_agent
            if placed and inside(self.region, *self.flag.location()):
                self.drop.set(1)
            elif placed:
                self.drop.set(0, completed=True, note="The flag was dropped outside the location.")
                failed = True
        if inside(self.region, self.player.x, self.player.y):
            self.visit.set(1)
        if failed:
            self.scorecard.finish(False)
        elif self.visit.completed and self.drop.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        place = ot.quoted(ot.task_text(obs))[0]
        ex = Explorer(obs)
        if place == "soil plot":
            yield from _find_soil_plot(ex)
        elif place == "empty room":
            yield from _find_empty_room(ex)
        else:
            yield from _find_room(ex, place)
        flag = ot.require(ot.find_inventory(ex.obs, "flag"), "the flag in the inventory")
        yield from ex.checked(ot.act("DROP", flag["uuid"]))
