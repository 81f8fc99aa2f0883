"""Small Skills: Dialog."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import Site, bare_site, outdoor_around
from discoverylab.scenarios.unit._levels import PEOPLE, free_cells
from discoverylab.world.agent import Agent
from discoverylab.world.dialog import DialogTree
from discoverylab.world.npc import NPC

# One word to find among eight per stage, in the original's lists.
STAGES = (
    ("banana", "orange", "grape", "pear", "apple", "kiwi", "peach", "lime"),
    ("bus", "truck", "bike", "motorcycle", "car", "scooter", "van", "train"),
    ("bush", "flower", "tree", "grass", "shrub", "weed", "fern", "moss"),
)
STAGE_TEXTS = (
    "I'd like you to select the option that says `{}`.",
    "Great! Now, select the option that says `{}`.",
    "Great! Now, select the option that says `{}`.",
)


@register
class DialogTest(Scenario):
    """Follow a character's spoken instructions through a three-stage dialog.

    Description: a character (named in the task, from 24 names) waits in the locked Talking Hut
    with the agent. Talking to them starts a dialog that asks, three times, to choose the option spelling a given word among eight
    shuffled ones (a fruit, a vehicle, a plant). A wrong choice ends the conversation and fails
    the task (in the original a new TALK started again, so trying every option passed).
    Actions: TALK, then dialog choices ({"chosen_dialog_option_int": N}); the hut's key lies on
    a table but leaving is not needed.
    Observation: standard text observation; the dialog box shows the character's line and the
    options.
    Scoring: Talk to other person /1, Reach Stage 2 /1, Reach Stage 3 /1, Complete Task /1.
    Fails on the first wrong choice ("Exit" is not wrong); success when all four are scored.
    Difficulty knobs: the level draws where the 4x4 hut stands, the character's name, who and
    what stands on which of its four floor cells (the agent's start among them), the three
    words and the option orders. Easy: four options per stage (the word and three others).
    Challenge: a 6x5 hut with two more characters (named otherwise, with nothing to ask; talking
    to them does no harm) and the agent anywhere in it.
    Registered ids: discoverylab/DialogTest-Easy-v0, discoverylab/DialogTest-Normal-v0,
    discoverylab/DialogTest-Challenge-v0.
    """

    task_id = "DialogTest"
    title = "Small Skills: Dialog Test"
    suite = "unit"
    task_name = "SmallSkillsDialogTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        hard = self.difficulty == "challenge"
        w, h = (6, 5) if hard else (4, 4)
        site = Site(self, w, h)
        layout.fill_grass(world, under=bare_site(site))
        layout.building(world, site.x, site.y, w, h, "Talking Hut", key_id=123)
        cells = self.shuffled(free_cells(world, site.interior))
        layout.table_with(world, *cells[0], layout.spawn(world, "key", key_id=123))
        names = self.shuffled(PEOPLE)
        self.sally = NPC(world, names[0], *cells[1])  # the one to follow (named Sally in the original)
        self._build_dialog(self.sally.dialog_tree)
        self.others: list[NPC] = []
        for i in range(2 if hard else 0):
            other = NPC(world, names[1 + i], *cells[2 + i])
            tree = other.dialog_tree
            assert tree is not None
            tree.add_node("root", "Hello! I have nothing to ask of you today.")
            tree.add_option("root", "OK.", "end")
            tree.add_node("end", "Goodbye.")
            self.others.append(other)
        outdoor_around(self, site)
        start = cells[2 + len(self.others)]  # the cells were shuffled: a drawn free cell
        world.teleports["initial location"] = start
        card = self.scorecard
        self.talk = card.add("Talk to other person", "The agent has talked to the other person.", 1)
        self.stage2 = card.add(
            "Reach Stage 2", "The agent has reached the second stage of the dialog tree.", 1
        )
        self.stage3 = card.add(
            "Reach Stage 3", "The agent has reached the third stage of the dialog tree.", 1
        )
        self.complete = card.add(
            "Complete Task", "The agent has completed going through the dialog tree successfully.", 1
        )
        return Agent(world, "agent", *start)

    def _build_dialog(self, tree: DialogTree | None) -> None:
        assert tree is not None
        names = ("root", "stage2", "stage3")
        for i, words in enumerate(STAGES):
            answer = self.choice(words)
            node = names[i]
            tree.add_node(node, STAGE_TEXTS[i].format(answer), states_to_add=(f"stage{i + 1}",))
            success = names[i + 1] if i + 1 < len(names) else "success"
            offered = list(words)
            if self.difficulty == "easy":  # the word and three others
                offered = [answer, *[w for w in self.shuffled(words) if w != answer][:3]]
            for word in self.shuffled(offered):
                tree.add_option(node, word, success if word == answer else "failure")
            tree.add_option(node, "Exit", "end")
        tree.add_node("failure", "I'm sorry, but that's not the correct answer.", states_to_add=("wrongAnswer",))
        tree.add_option("failure", "Exit", "end")
        tree.add_node(
            "success",
            "Thank you for successfully following those instructions.",
            states_to_add=("taskCompleted",),
        )
        tree.add_option("success", "Exit", "end")
        tree.add_node("end", "Thank you for talking with me.")

    def description(self) -> str:
        return f"Your task is to follow the instructions of `{self.sally.name}`, a person in the room.\n"

    def update(self) -> None:
        states = self.sally.states
        for item, state in (
            (self.talk, "stage1"),
            (self.stage2, "stage2"),
            (self.stage3, "stage3"),
            (self.complete, "taskCompleted"),
        ):
            if state in states:
                item.set(1)
        if "wrongAnswer" in states:  # not in the original: trying every option would pass it
            self.scorecard.finish(False)
        elif self.scorecard.all_completed():
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        (name,) = ot.quoted(ot.task_text(obs))
        people = [uid for uid, seen in ot.nearby_agents(obs).items() if seen == name]
        if len(people) != 1:
            raise ot.OracleFailure(f"expected exactly one {name!r} nearby, saw {ot.nearby_agents(obs)}")
        (person,) = people
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", person))

        def pick(box: dict[str, Any]) -> int:
            wanted = ot.quoted(box["dialogIn"])
            return ot.option_index(box["dialogOptions"], wanted[0] if wanted else "Exit")

        yield from ot.converse(obs, person, pick)
