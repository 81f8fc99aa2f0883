"""Lost in Translation: the alien vocabulary and the village's characters (the scenery they live
among is shared with the Tutorial, in `scenarios/village_things.py`).

The trainer throws a stick that the dog fetches, forever; the elder takes the items it
asked for when the player agrees to hand them over.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from mypy_extensions import mypyc_attr

from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import Layer, WorldObject

if TYPE_CHECKING:
    from discoverylab.world.world import World

# The tokens the village's texts use ("[token]" -> the alien word(s) drawn for the instance).
# The original had one fixed gibberish table; here every instance draws its own vocabulary.
WORD_TOKENS = (
    "[Bring me]", "[Add]", "[Reset]", "[stick]", "[key]", "[flower]", "[mushroom]",
    "[red]", "[green]", "[blue]", "[yellow]", "[pink]", "[white]", "[orange]",
    "[one]", "[two]", "[three]", "[four]", "[five]",
    "[paint]", "[general]", "[shop]", "[School]", "[seed]", "[shovel]", "[pot]", "[jar]", "[flag]",
)  # fmt: skip
# Compounds, built from the words above as the original built them ("Squibble Vloxurn").
COMPOUNDS = {
    "[the stick]": ("[stick]",), "[Paint Shop]": ("[paint]", "[shop]"),
    "[General Store]": ("[general]", "[shop]"), "[Key Shop]": ("[key]", "[shop]"),
}  # fmt: skip
COUNT_WORDS = ("zero", "one", "two", "three", "four", "five")

# Pronounceable alien words: onset + vowel, a joint, vowel (+ onset + vowel) (+ coda). The joint
# is a consonant pair no English word has inside it ("zv", "gv", ...), so no drawn word is English.
ONSETS = ("bl", "fl", "gl", "pl", "kl", "sn", "sk", "dr", "tr", "gr", "z", "v", "k", "g", "b", "p", "m", "n", "f",
          "w", "j", "sh")  # fmt: skip
VOWELS = ("a", "e", "i", "o", "u", "oo", "ee", "ai")
JOINTS = ("zv", "zk", "vk", "kz", "zg", "gv", "vz", "zb", "kv")
CODAS = ("", "", "b", "k", "p", "rk", "nk", "rp", "mp", "x", "z", "g", "lb", "rt")


def alien_word(rng: np.random.Generator) -> str:
    """A pronounceable made-up word (capitalised like a name), e.g. "Glozvirk"."""

    def pick(options: tuple[str, ...]) -> str:
        return options[int(rng.integers(0, len(options)))]

    word = pick(ONSETS) + pick(VOWELS) + pick(JOINTS) + pick(VOWELS)
    if rng.random() < 0.25:
        word += pick(ONSETS) + pick(VOWELS)
    return (word + pick(CODAS)).capitalize()


def draw_words(rng: np.random.Generator, count: int, taken: set[str] | None = None) -> list[str]:
    """`count` alien words, no two alike (case aside), none in `taken` (lower case)."""
    seen = set(taken or ())
    out: list[str] = []
    while len(out) < count:
        word = alien_word(rng)
        key = word.lower()
        if key in seen:
            continue
        seen.add(key)
        out.append(word)
    return out


def draw_vocabulary(rng: np.random.Generator) -> dict[str, str]:
    """One instance's alien language: every token of the village's texts -> its word(s)."""
    words = draw_words(rng, len(WORD_TOKENS))
    vocab = {
        token: (word if token[1].isupper() else word.lower())
        for token, word in zip(WORD_TOKENS, words, strict=True)
    }
    vocab["[flowerpot]"] = vocab["[flower]"] + vocab["[pot]"]  # a compound word, as in the original
    for token, parts in COMPOUNDS.items():
        vocab[token] = " ".join(vocab[p].capitalize() if token[1].isupper() else vocab[p] for p in parts)
    return vocab


def translate(text: str, vocab: dict[str, str]) -> str:
    """Replace every "[token]" of `text` by the instance's word (longer tokens first)."""
    return re.sub(r"\[[^\]]+\]", lambda m: vocab.get(m[0], m[0]), text)


# ---- characters (compiled with the engine, `make native`: they tick every step) ----------------
@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class Dog(NPC):
    """Fetches the stick the trainer throws and brings it back to the trainer's tile."""

    dialogable = False

    def __init__(self, world: World, name: str, x: int, y: int, **attrs: Any) -> None:
        super().__init__(world, name, x, y, "west", **attrs)  # (compiled: `**attrs` after a keyword lost)
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


@mypyc_attr(allow_interpreted_subclasses=True)
class Trainer(NPC):
    """Throws the stick whenever it holds it (one tick after getting it back) and sends the dog."""

    def __init__(
        self, world: World, name: str, x: int, y: int, throw_to: tuple[int, int], **attrs: Any
    ) -> None:
        super().__init__(world, name, x, y, "east", **attrs)  # (compiled: `**attrs` after a keyword lost)
        self.throw_to = throw_to
        self.dog: Dog | None = None
        self._held_for = 0

    def release(self) -> None:
        self.dog = None  # the dog points back at its trainer

    def tick(self) -> None:
        super().tick()
        if not self.contents:  # (most ticks: the dog has the stick) no stick held
            self._held_for = 0
            return
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


@mypyc_attr(allow_interpreted_subclasses=True)
class Elder(NPC):
    """Asks for items in the alien language. When a conversation starts it looks at what the
    partner carries (open containers included); saying "Yes" hands it all of that. It shows
    interest in anything carried, wanted or not (the original showed interest only in wanted
    items, which told an agent carrying one of each candidate which one was asked for)."""

    def __init__(self, world: World, name: str, x: int, y: int, wants: Callable[[WorldObject], bool]) -> None:
        super().__init__(world, name, x, y, facing="south")
        self.wants: Callable[[WorldObject], bool] | None = wants
        self.interesting: list[WorldObject] = []
        self._looked = False

    def release(self) -> None:
        self.wants = None  # a bound method of the scenario, which holds this elder
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
