"""Lost in Translation (Rosetta stone): learn words of an alien language to do what is asked."""

from __future__ import annotations

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.lost_in_translation.things import (
    COUNT_WORDS,
    Dog,
    Elder,
    Trainer,
    draw_vocabulary,
    draw_words,
    elder_dialog,
    trainer_dialog,
    translate,
)
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.village import (
    EASY_KINDS,
    EASY_NPC_SPOTS,
    EASY_TABLES,
    PAINT_SHOP_INTERIOR,
    SCHOOL_INTERIOR,
    TELEPORTS,
    build_store,
    build_village,
    scatter_outskirts,
)
from discoverylab.scenarios.village_things import COLORS, stick
from discoverylab.scoring.scorecard import ScorecardItem
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import WorldObject

NORMAL_ITEMS = ("stick", "mushroom", "flower", "key", "shovel")
CHALLENGE_ITEMS = ("mushroom", "flower", "key")
EASY_NAMES = ("Gail", "Harry", "Yugo", "Dors", "Wanda")
EASY_SPRITES = ("character32_", "character15_", "character16_", "character17_", "character35_", "character9_")
WRONG_COUNT = (
    "The elder counts what you handed over, frowns and shakes his head: that is not what he asked for."
)
VILLAGE_TEXT = (
    "You find yourself venturing into a small village of Planet X where everyone speaks a dialect unknown to you. "
    "An elder (at the center of the village) is trying to tell you something that seems very important. "
    "You need to figure out what the elder is saying. \n"
    "Some helpful notes: \n"
    "1. Even though you don't understand them, you can still interact with the inhabitants. \n"
    "2. Look for signs to read, you might be able to decipher some words from them. \n"
)


def _inside(x: int, y: int, area: tuple[int, int, int, int]) -> bool:
    return area[0] <= x <= area[2] and area[1] <= y <= area[3]


@register
class LostInTranslation(Scenario):
    """Work out what someone says in an alien language, then bring them what they ask for.

    Description: Easy — in the locked PlanetX Store a character asks for an object by its alien
    name; five objects lie on tables whose signs give their alien names. Normal — in an alien
    village the elder (town square) says "<bring me> <item>!"; signs in the general store name
    its goods, and a trainer shouts the same phrase at a dog fetching a stick. Challenge — the
    elder asks for "<bring me> <count> <colour> <item>!" (1-5 mushrooms, flowers or keys of one
    of seven colours); colour words are on the paint shop's signs, and numbers must be learned
    in the school by running the counting computer's floppy disks ("<add> <number>", "<reset>")
    and measuring the flag pole's flag with the measuring tape. Mushrooms and flowers grow on
    the farm and outside the village fence; keys are sold in the key shop and general store.
    Every instance draws its own alien vocabulary (pronounceable made-up words for the request,
    items, colours, numbers and shop names; no two alike, none English), so words learned on one
    instance are no use on another.
    Actions: movement and teleports (key shop, paint shop, town square, general store, school),
    READ signs, TALK and dialog choices, PICKUP, USE computer ON floppy disk, USE measuring tape
    ON flag pole, PUT (give) items to a character. Talking to the elder while carrying anything
    offers to hand everything carried over (wanted or not: the offer tells nothing).
    Observation: standard text observation; readings and sign texts come in action messages.
    Scoring: Easy — Pick up the object /1, Give the object /1; giving the character anything
    else first ends the task unsuccessfully. Normal (max 5) — Talk to elder /1, Collect objects
    /2 (1 for one wanted item carried, 2 once enough are carried), Give back objects /2 (same,
    in the elder's inventory; completes the task successfully). Challenge (max 11) adds Visit
    the paint shop /1, Read relevant paint sign /1 (the sign of the wanted colour), Visit the
    school /1, Use counting computer /1, Reset counting computer /1, Use measuring tape /1
    (successful uses only). In Normal and Challenge the elder holding anything it did not ask for
    (a wrong item, colour, or a container) ends the task unsuccessfully. The Challenge elder
    judges the first offering as a whole: exactly the number asked for completes the task, too
    many or too few fail it (he counts them, frowns and says so), so hand the items over together.
    Knowledge questions: what the instance's words in the request mean (the request verb, the
    item; Challenge also the colour and the number); Easy: what the wanted word means.
    Difficulty knobs: Easy asks for one of 15 objects by a one-word name; Normal for one item
    (stick, mushroom, flower, key or shovel, drawn per instance); Challenge adds a
    colour and a count.
    Registered ids: discoverylab/LostInTranslation-Easy-v0, discoverylab/LostInTranslation-Normal-v0,
    discoverylab/LostInTranslation-Challenge-v0.
    """

    task_id = "LostInTranslation"
    title = "Lost in Translation"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "RosettaStoneTaskEasy / RosettaStoneTask"  # the scorecard gets the difficulty's own

    def build(self) -> Agent:
        if self.difficulty == "easy":
            self.scorecard.task_name = "RosettaStoneTaskEasy"
            return self._build_easy()
        self.scorecard.task_name = "RosettaStoneTask"
        return self._build_village()

    # ---- Easy -------------------------------------------------------------------------
    def _build_easy(self) -> Agent:
        world = self.world
        self.burn()
        spots = self.shuffled(EASY_TABLES)
        order = [int(i) for i in world.rng_build.permutation(len(EASY_KINDS))]
        placed = build_store(world, spots, order, draw_words(world.rng_build, len(spots)))
        self.target, self.word = placed[0]
        self.offered = [obj for obj, _ in placed]  # the five objects on the store's tables
        who = self.randint(0, len(EASY_NAMES) - 1)
        name = EASY_NAMES[who]
        x, y = self.shuffled(EASY_NPC_SPOTS)[0]
        self.npc = NPC(world, name, x, y, facing="east", sprite=EASY_SPRITES[who])
        tree = self.npc.dialog_tree
        assert tree is not None
        tree.add_node("root", f"Hello! Could you please give me the `{self.word}`?")
        tree.add_option("root", "I'll go get it for you.", "end")
        tree.add_node("end", "Thank you for talking with me.")
        world.teleports["initial location"] = (18, 12)
        card = self.scorecard
        self.pick = card.add("Pick up the object", f"Pick up the {self.target.name}.", 1)
        self.give = card.add("Give the object", f"Give the {self.target.name} to {name}.", 1)
        card.critical_hypotheses.append(
            f"The person ({name}) is using a word in another language ({self.word}) to refer to the "
            f"`{self.target.name}`"
        )
        card.ask(
            f"Does it clearly state the word `{self.word}` refers to the `{self.target.name}`?",
            f"The alien word '{self.word}' means '{self.target.name}'.",
        )
        return Agent(world, "agent", 18, 12)

    def _update_easy(self) -> None:
        if self.player.contains(self.target):
            self.pick.set(1)
        if self.target.parent is self.npc:
            self.give.set(1)
        if self.npc.contents and not self.give.completed:
            self.scorecard.finish(False)
        elif self.pick.completed and self.give.completed:
            self.scorecard.finish(True)

    # ---- Normal and Challenge ---------------------------------------------------------
    def _build_village(self) -> Agent:
        world = self.world
        challenge = self.difficulty == "challenge"
        self.color: str | None = None
        self.count = 1
        if challenge:
            self.item = self.seed_option(CHALLENGE_ITEMS)
            self.color = self.choice(COLORS)
            self.count = self.randint(1, 5)
            words = f"[{COUNT_WORDS[self.count]}] [{self.color}] [{self.item}]"
        else:
            self.item = self.seed_option(NORMAL_ITEMS)
            words = f"[{self.item}]"
        self.instruction = f"[Bring me] {words}!"
        self.vocab = draw_vocabulary(world.rng_build)  # this instance's alien language
        village = build_village(world)
        scatter_outskirts(world)
        assert village.computer and village.reset_disk and village.tape and village.pole
        self.village = village
        for obj in list(world.objects.values()):
            if obj.document:
                obj.document = translate(obj.document, self.vocab)
            if obj.type == "floppy disk":
                obj.name = translate(obj.name, self.vocab)
        dog = Dog(world, "Fido", 27, 1, sprite="enemy06_04_")
        trainer = Trainer(world, "Trainer", 20, 1, (25, 1), sprite="character35_")
        trainer.add(stick(world))
        dog.trainer, trainer.dog = trainer, dog
        trainer_dialog(trainer, translate("[Bring me] [the stick]!", self.vocab))
        self.elder = Elder(world, "Elder", 18, 18, self.wanted)
        elder_dialog(self.elder, translate(self.instruction, self.vocab))
        world.teleports.update(TELEPORTS)
        self._scorecard_village(challenge)
        return Agent(world, "agent", 17, 0)

    def wanted(self, obj: WorldObject) -> bool:
        """What the elder asked for: the item by type (a flowerpot is no flower), and the colour."""
        return obj.type == self.item and (self.color is None or getattr(obj, "color", "") == self.color)

    def _scorecard_village(self, challenge: bool) -> None:
        card = self.scorecard
        self.talk = card.add("Talk to elder", "The agent has learned about the elder's request.", 1)
        self.collect = card.add("Collect objects", "Needed objects are in agent's inventory.", 2)
        self.give = card.add("Give back objects", "Needed objects are in elder's inventory.", 2)
        if challenge:
            color = self.color or ""
            self.visit_paint = card.add(
                "Visit the paint shop", "The agent visited the paint shop to learn about color.", 1
            )
            self.read_sign = card.add(
                "Read relevant paint sign", f"The paint sign of the color {color} has been read.", 1
            )
            self.visit_school = card.add(
                "Visit the school", "The agent visited the school to learn how to count.", 1
            )
            self.use_computer = card.add("Use counting computer", "The counting computer has been used.", 1)
            self.reset_computer = card.add(
                "Reset counting computer", "The reset disk was used on the computer.", 1
            )
            self.use_tape = card.add(
                "Use measuring tape", "The measuring tape has been used on the flag pole.", 1
            )
            alien_color = self.vocab[f"[{color}]"]
            alien_count = self.vocab[f"[{COUNT_WORDS[self.count]}]"]
            card.ask(
                f"Does it clearly state that: The word '{alien_color}' means '{color}'?",
                f"'{alien_color}' means the colour {color}.",
            )
            card.ask(
                f"Does it clearly state that: The word '{alien_count}' means '{COUNT_WORDS[self.count]}'?",
                f"'{alien_count}' means the number {self.count} ({COUNT_WORDS[self.count]}).",
            )
        alien_item = self.vocab[f"[{self.item}]"]
        verb = self.vocab["[Bring me]"]
        card.ask(
            f"Does it clearly state that: The word '{verb}' means something like 'bring me'?",
            f"'{verb}' means 'bring me' (a request to bring something).",
        )
        card.ask(
            f"Does it clearly state that: The word '{alien_item}' means '{self.item}'?",
            f"'{alien_item}' means '{self.item}'.",
        )
        card.critical_hypotheses.append(
            f"The elder says '{translate(self.instruction, self.vocab)}' which translates to "
            f"'{self.instruction.replace('[', '').replace(']', '')}'"
        )

    def _update_village(self) -> None:
        if "taskGiven" in self.elder.states:
            self.talk.set(1)
        challenge = self.difficulty == "challenge"
        # (Most ticks: empty hands, nothing given, or the item done: nothing to look for.)
        if not self.collect.completed and self.player.contents:
            self._found(self.collect, self.player.inventory(), challenge)
        if not self.give.completed and self.elder.contents:
            self._found(self.give, self.elder.contents, challenge)
        if challenge:
            self._update_learning()
        given = self.elder.contents
        if given and any(not self.wanted(o) for o in given):
            self.scorecard.finish(False)  # handing over what was not asked for fails (no trying them all)
        elif challenge and given and len(given) != self.count:
            # The Challenge elder judges one offering: he counts it, and the wrong number (too many
            # as well as too few) fails, so bringing all five, or one at a time, skips no lesson.
            if not self.world.sealed:  # his frown says the item and colour were right: a sealed end says nothing
                self.elder.record("TALK", self.player, None, True, WRONG_COUNT)
            self.scorecard.finish(False)
        elif self.give.completed:
            self.scorecard.finish(True)

    def _found(self, item: ScorecardItem, things: list[WorldObject], challenge: bool) -> None:
        """Score `item` by the wanted objects among `things` (the agent's inventory, or what the
        elder was given): 1 for some, 2 for enough."""
        found = [o for o in things if self.wanted(o)]
        if found:
            item.associated_uuids = sorted(o.uuid for o in found)
            enough = len(found) == self.count if challenge and item is self.give else len(found) >= self.count
            item.set(2 if enough else 1)

    def _update_learning(self) -> None:
        x, y = self.player.x, self.player.y
        if _inside(x, y, PAINT_SHOP_INTERIOR):
            self.visit_paint.set(1)
        if _inside(x, y, SCHOOL_INTERIOR):
            self.visit_school.set(1)
        village = self.village
        sign = village.paint_signs[self.color or ""]
        for record in self.new_actions():
            if not record.success:
                continue
            if record.action == "READ" and record.arg1 is sign:
                self.read_sign.set(1)
            elif record.action == "USE" and record.arg1 is village.computer:
                self.use_computer.set(1)
                if record.arg2 is village.reset_disk:
                    self.reset_computer.set(1)
            elif record.action == "USE" and record.arg1 is village.tape and record.arg2 is village.pole:
                self.use_tape.set(1)

    # ---- shared -----------------------------------------------------------------------
    def description(self) -> str:
        if self.difficulty == "easy":
            return f"Your task is to talk to {self.npc.name} and follow their instructions.\n"
        return VILLAGE_TEXT

    def update(self) -> None:
        if self.difficulty == "easy":
            self._update_easy()
        else:
            self._update_village()

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        from discoverylab.scenarios.lost_in_translation.oracle import solve

        return (yield from solve(obs))
