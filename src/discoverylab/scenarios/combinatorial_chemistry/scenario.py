"""Combinatorial Chemistry: find the rust remover among the shed's chemicals and get out."""

from __future__ import annotations

from functools import cache

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.combinatorial_chemistry.oracle import solve_chemistry
from discoverylab.scenarios.combinatorial_chemistry.things import (
    ETCH_LIMITS,
    NAIL_ETCH_LIMIT,
    SUBSTANCE_NAMES,
    BottleCleaner,
    ChemicalDispenser,
    Recipe,
    RustedKey,
    RustyNail,
    Substance,
    recipe_text,
    remedy_space,
)
from discoverylab.scenarios.registry import register
from discoverylab.world.agent import Agent

DOOR_KEY_ID = 123
SHED_X, SHED_Y, SHED_HEIGHT = 16, 10, 4
START = (18, 12)
TREES = ((14, 10), (20, 8), (18, 6), (16, 15), (18, 20), (25, 11), (24, 16), (28, 16), (14, 18), (12, 16),
         (11, 9), (7, 11), (8, 15), (29, 8))  # fmt: skip
# Easy's remedy: one of the four substances. The original's list held C twice (B, D, C, A, C),
# so a report naming C without playing was right 40% of the time (chance 25%).
EASY_REMEDIES = ("Substance A", "Substance B", "Substance C", "Substance D")
TASK_NAMES = {
    "easy": "RustedKeyTaskEasy",
    "normal": "RustedKeyTaskNormal",
    "challenge": "RustedKeyTaskChallenge",
}

_INTRO = (
    "You were venturing into the wilderness of Planet X to a storage shed to fetch some supplies. The shed door "
    "locked behind you, and your key appears too rusted to work in the lock. "
)
_OUTRO = (
    "You have no means of communication with the other colonists, and must figure this out on your own. \n"
    "Some helpful notes: \n"
    "1. The rusted key is in the shed. \n"
    "2. The shed door is locked, and will only open using a non-rusted key. \n"
)
_LEAVE = "8. When you have successfully derusted the key and opened the door, please leave the shed. \n"


def _etching(limit: int) -> str:
    return (
        "7. Rust removers are strong chemicals. While the key sits in a chemical that does not remove its rust, "
        "its name shows how strongly that chemical reacts with the rust (as a percentage), but every step it "
        f"spends there also etches the key. After {limit} etchings the key is ruined and will no longer fit the "
        "lock, which ends the task unsuccessfully. \n"
    )
_EASY_ETCHING = (
    "7. Rust removers are strong chemicals. While a rusted object sits in a chemical that does not remove its rust, "
    "its name shows how strongly that chemical reacts with the rust (as a percentage), but every step it spends "
    "there also etches it. The key is worn thin: a single etching ruins it and it will no longer fit the lock, which "
    "ends the task unsuccessfully. A rusted nail from the same batch of iron lies in the shed: it reacts to the "
    f"chemicals exactly as the key does, and it is ruined after {NAIL_ETCH_LIMIT} etchings. \n"
)
TASK_TEXT = {
    "easy": _INTRO
    + "You remember one of the other colonists mentioning that one of the chemicals in the shed is a rust remover, "
    "but unfortunately the chemicals you see are all unlabelled. You need to figure out which is a rust remover, "
    "and use it to remove the rust from the key.  Then, use the key to open the shed door, and make your way back "
    "to the colony. "
    + _OUTRO
    + "3. You can add chemicals to the jar. Just use a chemical dispenser on the jar to add chemicals to the jar. \n"
    "4. The solution is only a single chemical, and should not require mixing chemicals. If you add multiple "
    "chemicals into the same jar, they will automatically mix, having different properties than any single "
    "chemical. \n"
    "5. Placing the rusted key into the jar will automatically apply the chemical in that jar to the key.  If the "
    "chemical is correct, the rust will be removed, though it may take up to 2 steps for this to happen. \n"
    "6. If you need to clean the jar of chemicals to try a new chemical, use the bottle cleaner on the jar. \n"
    + _EASY_ETCHING
    + _LEAVE,
    "normal": _INTRO
    + "You remember one of the other colonists mentioning that some combination of the chemicals in the shed could "
    "make a rust remover, but you can't remember the details. You need to figure out a way to remove the rust from "
    "the key, and use it to open the shed door, and make your way back to the colony. "
    + _OUTRO
    + "3. You can mix chemicals in the jar. Just use a chemical dispenser on the jar to add chemicals to the jar. \n"
    "4. Chemicals placed in the same jar will automatically mix, though it may take up to 2 steps for this to "
    "happen. \n"
    "5. Placing the rusted key into the jar will automatically apply the chemicals to the key.  If the chemical "
    "mixture is correct (the exact proportions), the rust will be removed, though it may take up to 2 steps for "
    "this to happen. \n"
    "6. If you need to clean the jar of chemicals to try a new combination, use the bottle cleaner on the jar. \n"
    + _etching(ETCH_LIMITS["normal"])
    + _LEAVE,
}
TASK_TEXT["challenge"] = TASK_TEXT["normal"]
assert ETCH_LIMITS["challenge"] == ETCH_LIMITS["normal"]  # one text for both


@register
class CombinatorialChemistry(Scenario):
    """Discover which chemical (Easy) or which mixture in which proportions (Normal, Challenge)
    removes the rust from the key that opens the locked storage shed, then leave the shed.

    Description: the agent is locked in a small storage shed. On a row of tables stand a mixing
    jar, one chemical dispenser per substance (A-C in Normal, A-D in Easy and Challenge) and a
    bottle cleaner; the rusted key lies on the floor. Substances in the same container mix by
    themselves into one "mixture (2 parts Substance C, 1 part Substance A)". A key sitting in a
    jar with one substance reacts to it: the exact proportions of the remedy remove the rust;
    anything else shows how strongly it attacks the rust ("rust reacting at 45%": the cosine
    similarity of the proportions), lightens it ("heavily" -> "moderately" -> "lightly rusted",
    >= 0.33 / >= 0.66; rust never comes back) and etches the key once per step. The remedy is
    one substance (Easy) or 2-3 substances in 1-6 parts each (Normal, Challenge). Only a
    derusted key opens the door. Easy: a rusted nail on the floor reacts exactly as the key does
    but opens nothing; it is the probe, since the key is ruined by its first wrong soak.
    Actions: PICKUP, PUT (the key or the nail into the jar), USE dispenser ON jar, USE bottle cleaner ON jar,
    OPEN (the door, with the derusted key in the inventory), movement; teleport "shed".
    Observation: standard text observation; the key's rust shows in its name, the jar's
    contents by name (the mixture's proportions are in its name).
    Scoring: Take key /1, Take jar /1, Use each chemical dispenser /3 (Normal) or /4 (Easy,
    Challenge; successful USE on the mixing jar), Use bottle cleaner /1, Mix chemicals in jar /1
    (not in Easy), Place key in jar /1, Key is not rusted /3 (3 minus the rust level), Agent is
    outside /1 (outside the shed after its door was opened). Success: the key is derusted and the
    agent has left through the opened door (Easy and Normal max 12, Challenge 13). Failure: the
    key is etched ETCH_LIMITS times (1 in Easy, 8 otherwise; stated in the task text) and ruined.
    Difficulty knobs: Easy: a single-substance remedy (A-D, drawn per instance), 100 steps, the key is
    ruined by its first wrong soak, and a rusted nail (2 etchings, reacting as the key does) is the
    probe; Normal: 3 dispensers, 250 possible remedies; Challenge: 4 dispensers, 862.
    Registered ids: discoverylab/CombinatorialChemistry-Easy-v0,
    discoverylab/CombinatorialChemistry-Normal-v0, discoverylab/CombinatorialChemistry-Challenge-v0.
    """

    task_id = "CombinatorialChemistry"
    title = "Combinatorial Chemistry"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "RustedKeyTask{Easy,Normal,Challenge}"  # the scorecard carries the one of its difficulty

    def build(self) -> Agent:
        world = self.world
        self.scorecard.task_name = TASK_NAMES[self.difficulty]
        self.burn()
        layout.fill_grass(world)
        self.remedy = self._draw_remedy()
        count = 3 if self.difficulty == "normal" else 4
        width = count + 4
        self.shed = (SHED_X, SHED_Y, SHED_X + width - 1, SHED_Y + SHED_HEIGHT - 1)
        door = layout.building(world, SHED_X, SHED_Y, width, SHED_HEIGHT, "Storage Shed", key_id=DOOR_KEY_ID)
        assert door is not None
        self.door = door
        self.jar = layout.spawn(world, "jar")
        self.dispensers = [ChemicalDispenser(world, name) for name in SUBSTANCE_NAMES[:count]]
        self.cleaner = BottleCleaner(world)
        for i, item in enumerate([self.jar, *self.dispensers, self.cleaner]):
            layout.table_with(world, SHED_X + 1 + i, SHED_Y + 1, item)
        self.key = RustedKey(world, self.remedy, DOOR_KEY_ID, etch_limit=ETCH_LIMITS[self.difficulty])
        world.place(self.key, SHED_X + 1, SHED_Y + 2)
        self.nail: RustyNail | None = None
        if self.difficulty == "easy":  # the probe: the key itself takes no wrong soak (issue 21)
            self.nail = RustyNail(world, self.remedy)
            world.place(self.nail, SHED_X + 3, SHED_Y + 2)
        for x in range(17, world.size):
            layout.ground(world, "path", x, 15)
        for x, y in TREES:
            layout.tree(world, x, y)
        layout.place(world, "plant_generic", 15, 1)
        layout.scatter_plants(world)
        world.teleports["shed"] = START
        self._declare_scorecard(count)
        self.door_opened = False
        return Agent(world, "agent", *START)

    def _draw_remedy(self) -> Recipe:
        """Easy: one substance. Normal/Challenge: uniform over every distinct reduced recipe of
        2-3 substances with 1..6 parts each (250 / 862 of them; the original's 3-4 parts in
        all gave 19 / 46, few enough to try every one)."""
        if self.difficulty == "easy":
            return {self.seed_option(EASY_REMEDIES): 1}
        return dict(self.choice(_remedies(self.difficulty)))

    def _declare_scorecard(self, dispensers: int) -> None:
        card = self.scorecard
        self.take_key = card.add("Take key", "The key has been in an agent's inventory", 1)
        self.take_jar = card.add("Take jar", "The mixing jar has been in an agent's inventory", 1)
        self.use_dispensers = card.add(
            "Use each chemical dispenser", "Each chemical dispenser has been used", dispensers
        )
        self.use_cleaner = card.add("Use bottle cleaner", "The bottle cleaner has been used", 1)
        self.mix = None
        if self.difficulty != "easy":
            self.mix = card.add("Mix chemicals in jar", "The jar contains a mixture of chemicals", 1)
        self.key_in_jar = card.add("Place key in jar", "The key has been placed in the jar at least once", 1)
        self.not_rusted = card.add(
            "Key is not rusted", "The key is not rusted (includes levels for reduced amounts of rust)", 3
        )
        self.outside = card.add(
            "Agent is outside", "The agent is outside the shed, through its opened door", 1
        )
        if self.difficulty == "easy":
            (name,) = self.remedy
            card.critical_hypotheses.append(
                f"If the key is placed in a mixture of pure {name}, then the rust will be removed."
            )
            card.ask(
                f"Does it clearly state the rust remover compound is this compound: `{name}`?",
                f"The rust remover is {name} on its own (a single chemical, not a mixture).",
                f"Placing the rusted key in a jar holding only {name} removes the rust.",
            )
            return
        text = recipe_text(self.remedy)
        others = [n for n in SUBSTANCE_NAMES[:dispensers] if n not in self.remedy]
        card.critical_hypotheses.append(
            f"If the key is placed in a mixture of {text}, then the rust will be removed."
        )
        card.ask(
            "Does it clearly state the rust remover compound is a mixture of exactly these compounds in exactly these "
            f"proportions: `{text}`?",
            f"The rust remover is a mixture of {text}; any multiple of these proportions works as well.",
            f"The remedy contains no {' or '.join(others)}."
            if others
            else "The remedy uses every substance.",
        )

    def description(self) -> str:
        return TASK_TEXT[self.difficulty]

    def _inside_shed(self) -> bool:
        x0, y0, x1, y1 = self.shed
        return x0 <= self.player.x <= x1 and y0 <= self.player.y <= y1

    def update(self) -> None:
        jar, key = self.jar, self.key
        if key.held_by_agent:
            self.take_key.set(1)
        if jar.held_by_agent:
            self.take_jar.set(1)
        for record in self.new_actions():
            if record.action != "USE" or not record.success or record.arg2 is not jar:
                continue
            if record.arg1 in self.dispensers:
                self.use_dispensers.add_distinct([record.arg1.uuid])
            elif record.arg1 is self.cleaner:
                self.use_cleaner.set(1)
        mix = self.mix  # (once completed, `set` changes nothing: the jar is not searched again)
        if mix is not None and not mix.completed and any(isinstance(o, Substance) and len(o.recipe) > 1 for o in jar.contents):
            mix.set(1)
        if key.parent is jar:
            self.key_in_jar.set(1)
        self.not_rusted.set(3 - key.rust_level)
        self.door_opened = self.door_opened or self.door.is_open
        if self.door_opened and not self._inside_shed():
            self.outside.set(1)
        if self.not_rusted.completed and self.outside.completed:
            self.scorecard.finish(True)
        elif key.ruined:
            self.scorecard.finish(False)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        return (yield from solve_chemistry(obs))


@cache
def _remedies(difficulty: str) -> tuple[Recipe, ...]:
    return tuple(remedy_space(SUBSTANCE_NAMES[: 3 if difficulty == "normal" else 4]))
