"""Small Skills: Dialog."""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._common import outdoor_base
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

    Description: Sally waits in the locked Talking Hut with the agent. Talking to her starts a
    dialog that asks, three times, to choose the option spelling a given word among eight
    shuffled ones (a fruit, a vehicle, a plant). A wrong choice ends the conversation and fails
    the task (in the original a new TALK started again, so trying every option passed).
    Actions: TALK, then dialog choices ({"chosen_dialog_option_int": N}); the hut's key lies on
    a table but leaving is not needed.
    Observation: standard text observation; the dialog box shows Sally's line and the options.
    Scoring: Talk to other person /1, Reach Stage 2 /1, Reach Stage 3 /1, Complete Task /1.
    Fails on the first wrong choice ("Exit" is not wrong); success when all four are scored.
    Difficulty knobs: none (Normal only); the seed picks the three words and option orders.
    Registered ids: discoverylab/DialogTest-Normal-v0.
    """

    task_id = "DialogTest"
    title = "Small Skills: Dialog Test"
    suite = "unit"
    task_name = "SmallSkillsDialogTask"

    def build(self) -> Agent:
        world = self.world
        self.burn()
        outdoor_base(world)
        layout.building(world, 15, 10, 4, 4, "Talking Hut", key_id=123)
        layout.table_with(world, 16, 11, layout.spawn(world, "key", key_id=123))
        self.sally = NPC(world, "Sally", 17, 11)
        self._build_dialog(self.sally.dialog_tree)
        world.teleports["initial location"] = (16, 12)
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
        return Agent(world, "agent", 16, 12)

    def _build_dialog(self, tree: DialogTree | None) -> None:
        assert tree is not None
        names = ("root", "stage2", "stage3")
        for i, words in enumerate(STAGES):
            answer = self.choice(words)
            node = names[i]
            tree.add_node(node, STAGE_TEXTS[i].format(answer), states_to_add=(f"stage{i + 1}",))
            success = names[i + 1] if i + 1 < len(names) else "success"
            for word in self.shuffled(words):
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
        return "Your task is to follow the instructions of the other person in the room.\n"

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
        people = ot.nearby_agents(obs)
        if len(people) != 1:
            raise ot.OracleFailure(f"expected exactly one other person nearby, saw {people}")
        (person,) = people
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", person))

        def pick(box: dict[str, Any]) -> int:
            wanted = ot.quoted(box["dialogIn"])
            return ot.option_index(box["dialogOptions"], wanted[0] if wanted else "Exit")

        yield from ot.converse(obs, person, pick)
