"""Lost in Translation: the alien vocabulary and the village's characters (the scenery they live
among is shared with the Tutorial, in `scenarios/village_things.py`).

The trainer throws a stick that the dog fetches, forever; the elder takes the items it
asked for when the player agrees to hand them over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer, WorldObject

if TYPE_CHECKING:
    from discoverylab.world.world import World

# The original's gibberish table ("[token]" -> alien text), applied to every sign and disk name.
ROSETTA = {
    "[Bring me]": "Womple", "[Add]": "Plonk", "[Reset]": "Flibberwomp",
    "[the stick]": "blonk", "[stick]": "blonk", "[key]": "squibble", "[flower]": "florpt",
    "[mushroom]": "nushblort",
    "[red]": "blarg", "[green]": "flib", "[blue]": "womp", "[yellow]": "zibble", "[pink]": "quark",
    "[white]": "snoof", "[orange]": "gleep",
    "[one]": "blip", "[two]": "blob", "[three]": "blorp", "[four]": "squarp", "[five]": "zorp",
    "[Paint Shop]": "Blorpt Vloxurn", "[General Store]": "Flibble Vloxurn", "[Key Shop]": "Squibble Vloxurn",
    "[School]": "Plonken",
    "[seed]": "snarf", "[shovel]": "blurf", "[pot]": "plink", "[jar]": "klonk", "[flag]": "flarp",
    "[flowerpot]": "florptink",
}  # fmt: skip
COUNT_WORDS = ("zero", "one", "two", "three", "four", "five")


def translate(text: str) -> str:
    for token, alien in ROSETTA.items():
        text = text.replace(token, alien)
    return text


# ---- characters ---------------------------------------------------------------------------
class Dog(NPC):
    """Fetches the stick the trainer throws and brings it back to the trainer's tile."""

    dialogable = False

    def __init__(self, world: World, name: str, x: int, y: int, **attrs: Any) -> None:
        super().__init__(world, name, x, y, facing="west", **attrs)
        self.mode = "idle"  # idle | fetch | return
        self.target: tuple[int, int] = (x, y)
        self.trainer: Trainer | None = None

    def fetch(self, x: int, y: int) -> None:
        self.mode, self.target = "fetch", (x, y)
        self.clear_queue()
        self.enqueue("goto", x=x, y=y)

    def tick(self) -> None:
        # Like the original, the dog acts on the tick after it arrives.
        here = (self.x, self.y)
        trainer = self.trainer
        if trainer is not None and not self.queue and here == self.target:
            if self.mode == "fetch":
                found = [o for o in self.world.top_level_at(*here) if o.type == "stick"]
                if found:
                    self.add(found[0])
                    self.record("PICKUP", found[0], None, True, f"I picked up the {found[0].name}.")
                    self.mode, self.target = "return", (trainer.x, trainer.y)
                    self.enqueue("goto", x=trainer.x, y=trainer.y)
                else:
                    self.mode = "idle"
            elif self.mode == "return":
                for item in [o for o in self.contents if o.type == "stick"]:
                    trainer.add(item)
                    self.record("PUT", item, trainer, True, f"I gave the {item.name} to {trainer.name}.")
                self.mode = "idle"
        super().tick()


class Trainer(NPC):
    """Throws the stick whenever it holds it (one tick after getting it back) and sends the dog."""

    def __init__(
        self, world: World, name: str, x: int, y: int, throw_to: tuple[int, int], **attrs: Any
    ) -> None:
        super().__init__(world, name, x, y, facing="east", **attrs)
        self.throw_to = throw_to
        self.dog: Dog | None = None
        self._held_for = 0

    def release(self) -> None:
        self.dog = None  # the dog points back at its trainer

    def tick(self) -> None:
        super().tick()
        sticks = [o for o in self.contents if o.type == "stick"]
        if not sticks:
            self._held_for = 0
            return
        if self._held_for < 1:
            self._held_for += 1
            return
        self._held_for = 0
        self.world.place(sticks[0], *self.throw_to, Layer.OBJECTS)
        if self.dog is not None:
            self.dog.fetch(*self.throw_to)


class Elder(NPC):
    """Asks for items in the alien language. When a conversation starts it looks at what the
    partner carries (open containers included); saying "Yes" hands it all of that. It shows
    interest in anything carried, wanted or not (the original showed interest only in wanted
    items, which told an agent carrying one of each candidate which one was asked for)."""

    def __init__(self, world: World, name: str, x: int, y: int, wants: Callable[[WorldObject], bool]) -> None:
        super().__init__(world, name, x, y, facing="south")
        self.wants = wants
        self.interesting: list[WorldObject] = []
        self._looked = False

    def release(self) -> None:
        self.__dict__.pop("wants", None)  # a bound method of the scenario, which holds this elder
        self.interesting = []

    def tick(self) -> None:
        super().tick()
        partner = self.dialog_partner
        if isinstance(partner, Agent) and not self._looked:
            # Re-evaluated at every conversation (the original remembered the first one's items).
            self._looked = True
            self.interesting = list(partner.inventory())
            if self.interesting:
                self.states.add("interestingItems")
            else:
                self.states.discard("interestingItems")
        elif partner is None:
            self._looked = False
        if "takeItems" in self.states:
            for obj in reversed(self.interesting):  # contents before their containers
                holder = obj.root()
                if obj.alive and holder.is_agent and holder is not self:
                    self.add(obj)  # straight from any carried container (the original crashed there)
            self.interesting = []
            self.states.difference_update(("takeItems", "interestingItems"))


def elder_dialog(elder: Elder, message: str) -> None:
    tree = elder.dialog_tree
    assert tree is not None
    tree.add_node("root", f"Elder: {message}.")
    tree.add_option(
        "root",
        "You can't quite understand what the elder is saying, but that seems important.",
        "end",
        anti_states=("interestingItems",),
    )
    tree.add_option(
        "root",
        "The elder seems interested in what you carry.",
        "ask",
        requires_states=("interestingItems",),
    )
    tree.add_node("end", "Goodbye", states_to_add=("taskGiven",))
    tree.add_node("ask", "Do you want to give the items to the elder?")
    tree.add_option("ask", "Yes. You hand the elder everything you carry.", "took")
    tree.add_option("ask", "No way. That's my stuff!", "end")
    # Hearing the elder out and handing the items over both count as talking to the elder.
    tree.add_node("took", "The elder seems happier.", states_to_add=("takeItems", "taskGiven"))


def trainer_dialog(trainer: Trainer, message: str) -> None:
    tree = trainer.dialog_tree
    assert tree is not None
    tree.add_node("root", f"You hear them say '{message}' to their dog.")
    tree.add_option("root", "Let's not interrupt their go-fetch game.", "end")
    tree.add_node("end", "Goodbye")
