"""Space Sick (spec section 12.6): find the food that makes people ill and feed the colony safely."""

from __future__ import annotations

from discoverylab.scenarios.base import Observation, OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.space_sick.colony import LAB_INSTRUMENTS, Colony, build_colony, new_mushroom
from discoverylab.scenarios.space_sick.easy import TEXT as EASY_TEXT
from discoverylab.scenarios.space_sick.easy import build_easy, declare_easy, update_easy
from discoverylab.scenarios.space_sick.oracle import SpaceSickOracle
from discoverylab.scenarios.space_sick.things import COLOURS, MOLD_SIGNAL, GlowingRock
from discoverylab.scenarios.space_sick.tickers import ColonyLedger
from discoverylab.scoring.scorecard import ScorecardItem
from discoverylab.world.agent import Agent
from discoverylab.world.materials import Material
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

WATCH_STEPS = 50  # a colonist who ate is watched this long for sickness
SAFE_MEALS = 10
TEXT = (
    "You are in a colony on Planet X. The colonists' only food is a local mushroom, and some of them get a mild "
    "upset stomach after eating. Find out why, and prevent it: the task is complete when the colonists have eaten "
    "10 mushrooms in a row without anyone getting sick. The Chef can collect mushrooms from the farm, serve the "
    "food in the cafeteria pot onto the tables, and call the colonists to a meal; the Farmer can plant more "
    "seeds; colonists post their status on the Discovery Feed, and you can also hand a colonist a mushroom. "
    "After eating, a colonist is watched for 50 steps (a second mushroom eaten within those 50 steps counts "
    "once). The colonists only eat fresh mushrooms, never cooked ones."
)


@register
class SpaceSick(Scenario):
    """Find out which food makes the colonists ill, and feed the colony safely.

    Description: Easy: confined in a locked lab, the agent has five instruments (densitometer,
    spectrometer, PH meter, microscope, radiation meter), three mushrooms and a jar; one mushroom
    carries a pathogen that only one instrument detects; the agent puts it in the jar. Normal: a
    colony (science lab with microscope, spectrometer, PH meter, radiation meter, thermometer,
    sampler and NPK field test plus a radioactive source; cafeteria with pot, stove and five
    tables; farm with seed jar, shovel, fertilizer and a soil field; cave; infirmary; barracks)
    with a Chef, a Farmer and five colonists. Mushrooms of one colour (or red and pink) carry a
    mold: eaten, it makes a colonist ill 26-44 steps later for 101 steps. Each instance draws the
    mold's species (Aspergillus, Penicillium, Fusarium, Alternaria or Stachybotrys: the microscope
    shows and names it) and the spectrometer channel it raises (2-5: +0.5 over a clean mushroom's
    0.1 x channel); the PH meter reads 5.0 (6.0 clean); green mushrooms read a little radiation (a
    distractor). Heat above 60 C kills the mold (the microscope then shows it dead) but not the
    mycotoxin it has made, which is heat-stable: a warmed moldy mushroom still makes people ill, so
    only mold-free mushrooms (the Farmer plants more on request) feed the colony safely; colonists
    refuse cooked (>= 100 C) mushrooms. Challenge: every mushroom is poisonous with probability
    0.5, with no instrument signature and no cure by heat; two glowing rocks in the cave light up
    ("rock (highly luminous, <colour>)", the colour drawn per instance) while a poisonous mushroom
    is within one tile.
    Actions: PICKUP, PUT, DROP, USE instrument ON target, OPEN/ACTIVATE the stove, TALK to the
    Chef, Farmer and colonists, PUT a mushroom INTO a colonist (it eats it), READ the feed;
    teleports: Easy "initial location"; Normal/Challenge "science lab", "cafeteria", "farm",
    "farm field", "cave", "town square", "barracks", "infirmary".
    Observation: standard text observation; instrument readings come in the action message,
    colonists' meals and illnesses on the Discovery Feed.
    Scoring: Easy (max 8): Pick up infected food /1, Use measurement devices /5 (distinct
    instruments used on the mushrooms), Measure pathogen /1, Place the object /1; the first thing
    put in the jar decides the task. Normal (max 38): Collect different mushrooms /4 (colours
    held by the agent), Use instruments /7, Use instruments on mushrooms /7, Eat mushrooms /10
    (distinct mushrooms eaten by colonists), Eat mushrooms without sickness /10 (meals followed
    by 50 healthy steps; any sickness of a watched colonist resets the count); success at 10.
    Challenge (max 40): the same plus Collect glowing rock /1 and Glowing rock luminous /1.
    Knowledge questions: Easy: the pathogen and the instrument that detects it; Normal: the mold's
    species, its spectrometer channel and readings, the moldy colours; Challenge: the glowing rock
    as a detector, with its light colour.
    Difficulty knobs: which instrument detects (Easy), which colour is moldy (Normal), whether
    each mushroom is poisonous (Challenge); categorical answers are drawn per instance and
    per difficulty (no blocks of seeds).
    Registered ids: discoverylab/SpaceSick-Easy-v0, discoverylab/SpaceSick-Normal-v0,
    discoverylab/SpaceSick-Challenge-v0.
    """

    task_id = "SpaceSick"
    title = "Space Sick"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "SpaceSickTask"

    colony: Colony
    moldy: tuple[str, ...] = ()
    mold_species: str
    mold_channel: int
    mold_matter: Material
    rock_light: str
    # Easy
    pathogen: str
    instrument_name: str
    instruments: list[WorldObject]
    foods: list[WorldObject]
    target: WorldObject
    jar: WorldObject
    picked: ScorecardItem
    measured: ScorecardItem
    detected: ScorecardItem
    placed: ScorecardItem
    easy_used: set[str]

    def __init__(self, world: World, difficulty: str) -> None:
        super().__init__(world, difficulty)
        on_tick = world.on_tick
        if difficulty != "easy" and on_tick and on_tick[-1] == self._tick_score:
            # The colony's scorer runs through its ledger (compiled with the engine): the
            # update only on a tick with something new, no interpreted call on the others.
            self._ledger.score = self._tick_score
            on_tick[-1] = self._ledger

    def build(self) -> Agent:
        if self.difficulty == "easy":
            player = build_easy(self)
            self.player = player
            declare_easy(self)
            return player
        player = build_colony(self)
        self.player = player
        self._declare_colony()
        return player

    def description(self) -> str:
        return EASY_TEXT if self.difficulty == "easy" else TEXT

    def default_step_limit(self) -> int:
        return 100 if self.difficulty == "easy" else 1500

    def balanced(self, options: int, what: str) -> int:
        """The instance's answer for `what` (an index into `options` choices), drawn uniformly
        from a stream of its own keyed by the difficulty and `what`: no blocks of seeds, so
        earlier instances' answers say nothing about this one, and difficulties draw apart."""
        rng = self.world.child_rng(f"option/SpaceSick/{self.difficulty}/{what}")
        return int(rng.integers(0, options))

    def grow_mushroom(self, x: int, y: int) -> WorldObject:
        """A mushroom grown from a seed: colour (and, in the Challenge, poison and matter) drawn
        from the object stream."""
        rng = self.world.rng_objects
        colour = COLOURS[int(rng.integers(0, len(COLOURS)))]
        draw = float(rng.random())
        green = bool(rng.random() < 0.5) if self.difficulty == "challenge" else colour == "green"
        food = new_mushroom(self, colour, draw, green)
        food.props["grown_at"] = (x, y)
        return food

    # ---- the colony's scorecard ---------------------------------------------------------
    def _declare_colony(self) -> None:
        card = self.scorecard
        challenge = self.difficulty == "challenge"
        card.task_name = "SpaceSickTaskChallenge" if challenge else "SpaceSickTaskNormal"
        if challenge:
            light = self.rock_light
            card.critical_hypotheses.append(
                f"The glowing rocks from the cave become highly luminous ({light}) near a poisonous mushroom."
            )
            card.ask(
                "Does it clearly state that the glowing rock can be used as an instrument to detect harmful "
                f"mushrooms, by becoming highly luminous with a {light} light when it is near a harmful mushroom?",
                f"The glowing rock from the cave becomes highly luminous, glowing {light}, when a poisonous "
                "mushroom is within one tile of it, so it detects harmful mushrooms.",
            )
        else:
            colours = " and ".join(self.moldy)
            species, channel = self.mold_species, self.mold_channel
            clean = round(0.1 * channel, 1)  # mushroom matter reads 0.1 x n on channels 2-5 (white or green)
            card.critical_hypotheses.append(
                f"The {colours} mushrooms carry a {species} mold whose heat-stable toxin makes colonists ill."
            )
            card.ask(
                "Does it clearly state that the mushrooms that make people ill carry a mold, and that the microscope "
                f"shows it is a {species} mold?",
                f"The mushrooms that make colonists ill carry {species} mold, seen under the microscope.",
            )
            card.ask(
                "Does it clearly state that the mold can be detected with the spectrometer by an elevated reading "
                f"on Channel {channel} (about {clean + MOLD_SIGNAL:.1f} for moldy mushrooms against {clean:.1f} "
                "for clean ones)?",
                f"Moldy mushrooms read {clean + MOLD_SIGNAL:.1f} on Channel {channel} of the spectrometer, against "
                f"{clean:.1f} for clean ones.",
            )
            card.ask(
                f"Does it clearly state that the mushrooms that make people ill are mainly those of the following "
                f"color(s): `{colours}` (all of which carry the mold; its spores reach some others)?",
                f"The {colours} mushrooms all carry the mold; its spores also reach some mushrooms of other colours.",
            )
        self.collected = card.add("Collect different mushrooms", "Distinct mushroom colours held by the agent", 4)
        self.used = card.add("Use instruments", "Distinct lab instruments used", len(LAB_INSTRUMENTS))
        self.used_on = card.add(
            "Use instruments on mushrooms", "Distinct lab instruments used on mushrooms", len(LAB_INSTRUMENTS)
        )
        if challenge:
            self.rock_taken = card.add("Collect glowing rock", "A glowing rock has been held by the agent", 1)
            self.rock_lit = card.add("Glowing rock luminous", "A glowing rock has become luminous", 1)
        self.eaten = card.add("Eat mushrooms", "Distinct mushrooms eaten by colonists", SAFE_MEALS)
        self.safe = card.add(
            "Eat mushrooms without sickness", "Meals in a row followed by 50 steps without sickness", SAFE_MEALS
        )
        self._colours: set[str] = set()
        self._used: set[str] = set()
        self._used_on: set[str] = set()
        self._safe_shown: int | None = None
        self._watch: dict[int, int] = {}
        self._clean_meals = 0
        # What has been read (the agent's inventory and records, the colonists' records), and
        # the look that finds nothing new on most ticks (compiled with the engine).
        histories = [c.history for c in self.colony.colonists]
        colony = self.colony
        self._ledger = ColonyLedger(self.player, histories, self._watch, colony.instruments, list(colony.rocks))

    def update(self) -> None:
        if self.difficulty == "easy":
            update_easy(self)
            return
        ledger = self._ledger
        if ledger.quiet():  # nothing new (most ticks)
            return
        held = ledger.inventory()
        if held != ledger.held:  # (types and colours never change: the same things score the same)
            ledger.held = held
            self._score_held(held)
        instruments = self.colony.instruments
        for record in ledger.new_actions():
            if record.action == "USE" and record.success and record.arg1 in instruments:
                self._used.add(record.arg1.name)
                if isinstance(record.arg2, WorldObject) and "mushroom" in record.arg2.type:
                    self._used_on.add(record.arg1.name)
                self.used.set(len(self._used), note=", ".join(sorted(self._used)))
                self.used_on.set(len(self._used_on), note=", ".join(sorted(self._used_on)))
        if ledger.rocks:  # (Challenge, until a lit rock is scored)
            if any(rock.luminous for rock in ledger.rocks):
                self.rock_lit.set(1)
                ledger.rocks = []
        self._score_meals()

    def _score_held(self, held: list[WorldObject]) -> None:
        """The items about what the agent holds: mushroom colours, and (Challenge) a glowing rock."""
        colours = {str(getattr(o, "color", "")) for o in held if "mushroom" in o.type} - {""}
        if not colours <= self._colours:
            self._colours |= colours
            self.collected.set(len(self._colours), note=", ".join(sorted(self._colours)))
        if self.difficulty == "challenge" and any(isinstance(o, GlowingRock) for o in held):
            self.rock_taken.set(1)

    def _score_meals(self) -> None:
        """Watch each colonist for 50 steps after a meal: healthy throughout adds a clean meal,
        any sickness resets the count (and ends the watch, unlike the original)."""
        ledger = self._ledger
        marks = [*map(len, ledger.histories)]
        if marks != ledger.marks:  # someone did something: read the new records
            eaten: list[int] = []
            for colonist, start, end in zip(self.colony.colonists, ledger.marks, marks, strict=True):
                for record in colonist.history[start:end]:
                    if record.action == "EAT" and record.success and "mushroom" in record.arg1.type:
                        eaten.append(record.arg1.uuid)
                        self._watch[colonist.uuid] = record.step
            ledger.marks = marks
            if eaten:
                self.eaten.add_distinct(eaten)
        if not self._watch:
            return
        step = self.world.step
        for colonist in self.colony.colonists:
            since = self._watch.get(colonist.uuid)
            if since is None:
                continue
            if colonist.poisoned:
                self._clean_meals = 0
                del self._watch[colonist.uuid]
            elif step - since >= WATCH_STEPS:
                self._clean_meals += 1
                del self._watch[colonist.uuid]
        if self._clean_meals == self._safe_shown:  # the item already says so
            return
        self._safe_shown = self._clean_meals
        done = self._clean_meals >= SAFE_MEALS
        self.safe.set(self._clean_meals, completed=done, note=f"{self._clean_meals} clean meals in a row")
        if done:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: Observation) -> OracleGen:
        """The solver; its `report` attribute holds the knowledge report {"text", "facts"}."""
        return SpaceSickOracle(obs)
