"""Small Skills: Pick and Give."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import (
    OBJECT_POOL,
    VILLA_TABLE_SPOTS,
    outdoor_around,
    shuffled_kept,
    villa,
)
from discoverylab.scenarios.unit._levels import PEOPLE
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC

NPC_NAMES = PEOPLE
NPC_SPRITES = ("character32_", "character15_", "character16_", "character17_", "character35_", "character9_")
# Where characters (and the agent) stand, relative to the villa's corner: the central cells.
STANDING_SPOTS = ((2, 2), (3, 2), (4, 2), (2, 3), (3, 3), (4, 3))


@register
class PickAndGiveTest(Scenario):
    """Pick up a named object and give it to a named character.

    Description: inside the locked villa, five objects lie on tables among three characters.
    The task names one character and one object; one character asks for that object when
    talked to, the other two ask to be given nothing.
    Actions: movement, PICKUP, PUT onto a character (giving), optionally TALK.
    Observation: standard text observation; the agent may need a step or two to see the whole
    room from its starting tile.
    Scoring: Pick up the object /1, Give the object /1. Giving anything to another character,
    or anything else to the named one first, ends the task unsuccessfully.
    Difficulty knobs: the level draws where the villa stands, the objects, the characters' names
    (from 24), everyone's cells and the agent's start. Easy: three objects and two characters.
    Challenge: seven objects and four characters.
    Registered ids: discoverylab/PickAndGiveTest-Easy-v0, discoverylab/PickAndGiveTest-Normal-v0,
    discoverylab/PickAndGiveTest-Challenge-v0.
    """

    task_id = "PickAndGiveTest"
    title = "Small Skills: Pick and Give Test"
    suite = "unit"
    task_name = "SmallSkillsPickAndGiveTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        site = villa(self)
        count, people = {"easy": (3, 2), "normal": (5, 3), "challenge": (7, 4)}[self.difficulty]
        spots = [site.at(*s) for s in self.shuffled(VILLA_TABLE_SPOTS)]
        objects = shuffled_kept(self, OBJECT_POOL, count)
        for obj, (x, y) in zip(objects, spots[:count], strict=True):
            layout.table_with(world, x, y, obj)
        self.target = objects[0]
        names = self.shuffled(NPC_NAMES)[:people]
        standing = self.shuffled([*(site.at(*s) for s in STANDING_SPOTS), *spots[count:]])
        self.npcs: list[NPC] = []
        for i, name in enumerate(names):
            npc = NPC(world, name, *standing[i], sprite=self.choice(NPC_SPRITES))
            tree = npc.dialog_tree
            assert tree is not None
            if i == 0:
                tree.add_node("root", f"Hello! Could you please give me the `{self.target.name}`?")
                tree.add_option("root", "I'll go get it for you.", "end")
            else:
                tree.add_node("root", "Hello! Please do not give me anything.")
                tree.add_option("root", "OK.", "end")
            tree.add_node("end", "Thank you for talking with me.")
            self.npcs.append(npc)
        self.recipient = self.npcs[0]
        start = standing[people]
        world.teleports["initial location"] = start
        outdoor_around(self, site)
        self.pick = self.scorecard.add("Pick up the object", f"Pick up the {self.target.name}.", 1)
        self.give = self.scorecard.add(
            "Give the object", f"Give the {self.target.name} to {self.recipient.name}.", 1
        )
        return Agent(world, "agent", *start)

    def description(self) -> str:
        return f"Your task is to give {self.recipient.name} the `{self.target.name}`.\n"

    def update(self) -> None:
        if self.target.held_by_agent:
            self.pick.set(1)
        if self.target.parent is self.recipient:
            self.give.set(1)
        distracted = False
        for npc in self.npcs:  # a loop, not any() over a generator: this runs every tick
            if npc.contents and npc is not self.recipient:
                distracted = True
                break
        if distracted or (self.recipient.contents and not self.give.completed):
            self.scorecard.finish(False)
        elif self.pick.completed and self.give.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        text = ot.task_text(obs)
        (item,) = ot.quoted(text)
        person = text.split("give ", 1)[1].split(" the `", 1)[0]
        while ot.find_nearby(obs, item) is None or ot.find_nearby(obs, person) is None:
            obs = yield from ot.checked(ot.require(ot.step_to_room_centre(obs), "a way into the room"))
        # Remember the person while both are in view: from the item's table they may be out of
        # sight (seed 34: the oracle ran out of steps looking for Gail), and TELEPORT_TO_OBJECT
        # takes anything the agent has seen.
        recipient = ot.require(ot.find_nearby(obs, person), f"a visible {person!r}")["uuid"]
        obs = yield from ot.take(obs, item)
        thing = ot.require(ot.find_inventory(obs, item), f"{item!r} in the inventory")["uuid"]
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", recipient))
        yield from ot.checked(ot.act("PUT", thing, recipient))
