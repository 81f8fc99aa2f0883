"""Tutorial: warm up the elder's meal in Dr. House, get the door key and step outside."""

from __future__ import annotations

import re

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.tutorial.oracle import solve
from discoverylab.scenarios.tutorial.things import make_fridge
from discoverylab.scenarios.village import build_village
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

HOUSE = (18, 20, 10, 7)  # x, y, width, height: walls x 18-27, y 20-26, front door (23, 26)
INTERIOR = (19, 21, 26, 25)  # x0, y0, x1, y1 inclusive
DOOR_KEY = 42
START = (25, 22)
TELEPORTS = {"Starting Location": START, "Near Elder": (20, 24), "Kitchen": (20, 22), "Front Door": (23, 25)}
WARM_C = 50.0
BED_CLUTTER = ("coin", "seed", "flower_pot", "red_flower", "blue_flower")
TASK_TEXT = (
    "Welcome to the DiscoveryWorld tutorial. You wake up in the bedroom of Dr. House. The elder who lives "
    "here needs your help: talk to them and do what they ask. They hold the key to the front door; once you "
    "have it, leave the house to explore the village.\n"
)


def _english(text: str) -> str:
    """The village's texts are written with "[token]" words for Lost in Translation; here they
    are plain English."""
    return re.sub(r"\[([^\]]*)\]", r"\1", text)


class HouseElder(NPC):
    """Holds the door key. Keeps the state `hasMeal` while holding anything else, and
    `mealWarm` while any of it is a cooked dish at 50 C or more."""

    def __init__(self, world: World, x: int, y: int, key: WorldObject) -> None:
        super().__init__(world, "Elder", x, y, facing="east")
        self.key = key
        self.add(key)

    def meal(self) -> list[WorldObject]:
        return [o for o in self.contents if o is not self.key]

    def tick(self) -> None:
        super().tick()
        self._update_states()

    def _update_states(self) -> None:
        contents = self.contents
        if not contents or (len(contents) == 1 and contents[0] is self.key):  # no meal (most ticks)
            states = self.states
            if "hasMeal" in states or "mealWarm" in states:
                states.difference_update(("hasMeal", "mealWarm"))
            return
        held = [o for top in self.meal() for o in (top, *top.all_contents())]
        self.states.discard("hasMeal")
        self.states.discard("mealWarm")
        if held:
            self.states.add("hasMeal")
        if any(o.cooked and o.temperature_c >= WARM_C for o in held):
            self.states.add("mealWarm")

    def give_back_meal(self) -> None:
        for obj in self.meal():
            self.world.place(obj, self.x, self.y)
        self._update_states()

    def give_key(self) -> None:
        if self.key.parent is self:
            self.world.place(self.key, self.x, self.y)


def elder_dialog(elder: HouseElder) -> None:
    tree = elder.dialog_tree
    assert tree is not None
    tree.add_node("root", "Elder: I'm starving. Can you please help me?")
    tree.add_option("root", "Of course. What can I do?", "task", anti_states=("taskAccepted",))
    tree.add_option("root", "No. I need to leave.", "refuse", anti_states=("taskAccepted",))
    tree.add_option(
        "root", "Here's you meal.", "put", requires_states=("taskAccepted",), anti_states=("hasMeal",)
    )
    tree.add_option(
        "root", "How's your meal?", "cold", requires_states=("hasMeal",), anti_states=("mealWarm",),
        callback=elder.give_back_meal,
    )  # fmt: skip
    tree.add_option(
        "root", "How's your meal?", "warm", requires_states=("hasMeal", "mealWarm"), callback=elder.give_key
    )
    tree.add_node(
        "task",
        "There's a meal in the fridge. You can heat it up in the stove.",
        states_to_add=("taskAccepted",),
    )
    tree.add_node("refuse", "Please do this task and I'll give you the code to complete the tutorial...")
    tree.add_node("put", "Great! Give it to me using the 'Put' command.")
    tree.add_node("cold", "I'm not sure what this is, but it's not a pot of cooked mushrooms.")
    tree.add_node(
        "warm",
        "Yum! That's perfect.\n\nYour completion code is 3941.\n\n"
        "By the way, here's the key to access the rest of the village.",
        states_to_add=("mealEaten",),
    )


def _inside(x: int, y: int) -> bool:
    return INTERIOR[0] <= x <= INTERIOR[2] and INTERIOR[1] <= y <= INTERIOR[3]


@register
class Tutorial(Scenario):
    """Learn the controls: talk, open, carry, cook, give, unlock a door and walk out.

    Description: the agent wakes up in the bedroom of Dr. House, a locked house at the edge of
    the village of Lost in Translation (farm, key shop, general store, school, town square; no
    paint shop). The elder in the living room is starving: the meal is a pot of two mushrooms
    in the kitchen fridge, to be heated in the stove (cooked at 100 C, served warm, at least
    50 C) and given to the elder with PUT. Asked how the meal is, the elder either hands a cold
    or uncooked meal back (dropped on its tile) or says "Yum! That's perfect." and drops the
    key of the front door (key 42).
    Actions: movement and teleports (Starting Location, Near Elder, Kitchen, Front Door), TALK
    and dialog choices, OPEN/CLOSE, PICKUP, PUT (into the stove, or give to the elder),
    ACTIVATE/DEACTIVATE the stove, WAIT, MOVE through the opened front door.
    Observation: standard text observation; the dialog box shows the elder's lines.
    Scoring: (max 3) Talk to elder /1 (the request was heard: "Of course. What can I do?"),
    Collect key /1 (a key in the agent's inventory), Exit the room /1 (the agent stands
    outside the house's interior once the front door has been opened); the task succeeds when
    the agent leaves the house and the scorecard freezes. No knowledge questions and no failure
    state.
    Difficulty knobs: none (Normal only); the map is the same for every seed but for one small
    object (coin, seed, flower pot or flower) lying on the bed.
    Registered ids: discoverylab/Tutorial-Normal-v0.
    """

    task_id = "Tutorial"
    title = "Tutorial"
    suite = "tutorial"
    difficulties = ("normal",)
    task_name = "TutorialTask"

    def build(self) -> Agent:
        world = self.world
        village = build_village(world, paint_shop=False)
        for obj in list(world.objects.values()):
            if obj.document:
                obj.document = _english(obj.document)
            if obj.type == "floppy disk":
                obj.name = _english(obj.name)
        del village
        self._build_house()
        world.teleports.update(TELEPORTS)
        card = self.scorecard
        self.talk = card.add("Talk to elder", "The agent has talked to the elder and accepted the task.", 1)
        self.collect = card.add("Collect key", "The agent has the door key in its inventory.", 1)
        self.exit = card.add("Exit the room", "The agent has left the house.", 1)
        return Agent(world, "agent", *START, facing="south")

    def _build_house(self) -> None:
        world = self.world
        x, y, w, h = HOUSE
        front = layout.building(world, x, y, w, h, "Dr. House", key_id=DOOR_KEY)
        assert front is not None
        self.front_door = front
        self.door_opened = False
        layout.ground(world, "path", x + w // 2, y + h)
        for i in range(x + 1, x + w - 1):  # the wall between the bedrooms/kitchen and the living room
            layout.wall_segment(world, i, y + 3)
        for j in (y + 1, y + 2):  # and between the kitchen and the bedroom
            layout.wall_segment(world, 23, j)
        layout.door_at(world, 20, 23)
        layout.door_at(world, 25, 23)
        layout.place(world, "sign", 21, 23, document="Kitchen")
        layout.place(world, "sign", 24, 23, document="Bedroom")
        # Kitchen: fridge (with the meal), table, stove, sink.
        fridge = world.place(make_fridge(world), 19, 21)  # `layout.place(world, "fridge", ...)`, asleep when settled
        pot = layout.spawn(world, "pot")
        for _ in range(2):
            mushroom = layout.spawn(world, "mushroom")
            mushroom.temperature_c = -4.0
            pot.add(mushroom)
        pot.temperature_c = -4.0
        fridge.add(pot)
        layout.place(world, "table", 20, 21)
        layout.place(world, "stove", 21, 21)
        layout.place(world, "sink", 22, 21)
        # Bedroom: a bed between two bedside tables.
        layout.place(world, "bedside_table", 24, 21)
        bed = layout.place(world, "bed", 25, 21)
        bed.add(layout.spawn(world, self.choice(BED_CLUTTER)))  # the seed's only visible mark
        layout.place(world, "bedside_table", 26, 21)
        # Living room: a table with two chairs, and the elder.
        layout.place(world, "chair", 19, 25)
        layout.place(world, "table", 20, 25)
        layout.place(world, "chair", 21, 25)
        key = layout.spawn(world, "key", key_id=DOOR_KEY)
        self.elder = HouseElder(world, 19, 24, key)
        elder_dialog(self.elder)

    def description(self) -> str:
        return TASK_TEXT

    def update(self) -> None:
        if "taskAccepted" in self.elder.states:
            self.talk.set(1)
        if not self.collect.completed and self.player.contents:  # (most ticks: empty hands, or done)
            for obj in self.player.inventory():
                if obj.type == "key":
                    self.collect.set(1)
                    break
        # Leaving counts only through the opened front door: TELEPORT_TO_OBJECT on something
        # beyond the walls could otherwise put the agent outside the locked house.
        self.door_opened = self.door_opened or self.front_door.is_open
        if self.door_opened and not _inside(self.player.x, self.player.y):
            self.exit.set(1)
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        yield from solve(obs)
