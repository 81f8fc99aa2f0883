"""Archaeology Dating (spec section 12.3): date artifacts and flag the oldest one."""

from __future__ import annotations

import math
from dataclasses import dataclass

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.archaeology.answers import AGE_GRID, OLDEST_FROM
from discoverylab.scenarios.archaeology.knowledge import ask_channel_questions
from discoverylab.scenarios.archaeology.oracle import solve
from discoverylab.scenarios.archaeology.things import radioisotope_channels
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scoring.scorecard import ScorecardItem
from discoverylab.world.agent import Agent
from discoverylab.world.instruments import Instrument
from discoverylab.world.materials import material
from discoverylab.world.objects import WorldObject
from discoverylab.world.things import SoilTile

FIELD_SITES = ((10, 10), (20, 13), (12, 18))
CHALLENGE_EXTRA_SITES = ((16, 8), (18, 18), (8, 15))
EASY_TABLES = ((14, 13), (14, 14), (14, 15))
TREES = ((14, 7), (18, 8), (8, 12), (19, 15), (10, 20), (20, 19))
# The known ("seed") artifacts of the Challenge: name, material, age in years (stone > bronze > iron).
KNOWN_ARTIFACTS = (
    ("ancient stone hammer", "rock", 10000),
    ("ancient bronze chisel", "metal", 4000),
    ("ancient iron tongs", "metal", 1000),
)
OLD_AGES = (40000, 35000, 30000, 20000)
MEDIUM_AGES = (5000, 4000, 3000, 2000)
YOUNG_AGES = (1700, 1500, 1200)
TASK_NAMES = {
    "easy": "ArchaeologyDigTaskEasy",
    "normal": "ArchaeologyDigTaskNormal",
    "challenge": "ArchaeologyDigTaskGenericRadioisotope",
}
TEXTS = {
    "easy": (
        "You are in archaeological dig store room on Planet X.  3 ancient artifacts have been found. "
        "Your task is to date the artifacts with the radiocarbon meter.  Then, once completed, place the red flag "
        "directly beside (i.e. one square to the right, on the east side) of the artifact with the oldest age."
    ),
    "normal": (
        "You are on an archaeological dig on Planet X.  3 ancient sites have been found. "
        "Your task is to excavate the sites, and date any artifacts with the radiocarbon meter.  Then, once "
        "completed, place the red flag beside the sign of the dig site with the oldest artifact. "
    ),
    "challenge": (
        "You are on an archaeological dig on Planet X.  6 sites of suspected ancient artifacts have been found, 3 of "
        "which have already been uncovered. It's not clear how or if radioisotope dating works on Planet X, or how it "
        "would differ from Earth, but your task is to figure out if it can be used. Your task is to excavate the "
        "remaining sites, and figure out a way to use the radioisotope meter to approximately date the artifacts.  "
        "Then, once completed, place the red flag beside the sign of the dig site with the oldest artifact. "
    ),
}
# Normal/Challenge: a flag within this (Euclidean) distance of a dig-site sign is placed there.
FLAG_REACH = 2.0


# ---- the scenario ---------------------------------------------------------------------------
@dataclass(slots=True)
class DigSite:
    number: int
    x: int
    y: int
    sign: WorldObject
    artifact: WorldObject
    known: bool = False


@register
class ArchaeologyDating(Scenario):
    """Date ancient artifacts with a radio-dating instrument and mark the oldest with a flag.

    Description: Easy: in a locked store room three artifacts lie on tables next to a radiocarbon
    meter and a flag. Normal: three dig sites (a sign "Dig Site N" above a block of 2-4 soil tiles) each
    hide one ancient artifact under the soil of one tile; a radiocarbon meter, a shovel and a flag wait
    at the base camp, and a stray empty hole lies somewhere in the field. Challenge: six dig sites; three
    hold exposed known artifacts (an ancient stone hammer, bronze chisel and iron tongs), three hold
    buried unknown ones, and the only instrument is a radioisotope meter with four channels, one of
    which dates artifacts (older = lower value) while two read wrong ages and one is noise. The agent must learn which
    channel works from the known artifacts (stone age > bronze age > iron age) before dating the
    unknown ones.
    Actions: PICKUP, USE shovel ON soil (dig: the dirt goes to the inventory and the tile becomes a
    hole showing its contents), USE meter ON artifact, DROP; READ signs; teleports to "base camp" and
    "dig site N" (Easy: "starting location").
    Observation: standard text observation; readings come in the action message ("The radiocarbon
    meter estimates an age of N years." / "- Radioisotope c: v" for c = 1..4).
    Scoring: Easy (max 6): Take radiocarbon meter /1, Take flag /1, Artifacts dated /3, Flag placed /1.
    Normal (max 10): Take radiocarbon meter /1, Take shovel /1, Take flag /1, Artifacts uncovered /3,
    Artifacts dated /3, Flag placed /1. Challenge (max 13): Take radioisotope meter /1, Take shovel /1,
    Take flag /1, Uncover 3 unknown artifacts /3, Use radioisotope meter (seed) /3, Use radioisotope
    meter on (unknown) /3, Move flag to correct location /1. The task ends when the flag is put down
    (not carried by the agent) beside an artifact (Easy: exactly one tile east of it) or within 2 tiles
    of a dig-site sign (Normal/Challenge), once the agent has taken it (an untouched flag never
    counts): successful iff that is the oldest (unknown) artifact's.
    Knowledge questions: which artifact is oldest and its age, the other ages (Easy/Normal); the
    stone/bronze/iron ordering, decay meaning lower values for older artifacts, which channel works
    and which unknown artifact reads lowest on it (Challenge).
    Difficulty knobs: easy = store room, radiocarbon meter, 3 artifacts on tables; normal = 3 buried
    dig sites, radiocarbon meter, shovel; challenge = 6 dig sites (3 known exposed, 3 unknown buried),
    4-channel radioisotope meter. The seed draws ages, site sizes, artifact tiles, site order, readings
    and the real channel.
    Registered ids: discoverylab/ArchaeologyDating-Easy-v0, discoverylab/ArchaeologyDating-Normal-v0,
    discoverylab/ArchaeologyDating-Challenge-v0.
    """

    task_id = "ArchaeologyDating"
    title = "Archaeology Dating"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "ArchaeologyDigTaskEasy / ArchaeologyDigTaskNormal / ArchaeologyDigTaskGenericRadioisotope"

    def build(self) -> Agent:
        self.scorecard.task_name = TASK_NAMES[self.difficulty]
        self.burn()
        layout.fill_grass(self.world)
        if self.difficulty == "easy":
            return self._build_easy()
        return self._build_field()

    def description(self) -> str:
        return TEXTS[self.difficulty]

    # ---- world building ---------------------------------------------------------------------
    def _artifact(self, name: str, age: int, mat: str | None = None) -> WorldObject:
        obj = WorldObject(self.world, name, name, [material(mat)] if mat else [])
        obj.props["radiocarbon_age"] = age
        return obj

    def _meter(self, name: str) -> Instrument:
        return Instrument(self.world, name, name, [material("metal")])

    def unknown_ages(self) -> list[int]:
        """The unknown artifacts' ages (Easy, Normal), in drawn order: the oldest uniform over the
        top of `AGE_GRID`, two distinct younger ones below it. The original drew three of ten fixed
        ages; the oldest was then 1,000,000 years on 30% of instances, so a fixed report naming
        it beat a blind guess (1/8): docs/differences.md."""
        oldest = self.choice(AGE_GRID[OLDEST_FROM:])
        younger = self.shuffled([age for age in AGE_GRID if age < oldest])[:2]
        return self.shuffled([oldest, *younger])

    def _build_easy(self) -> Agent:
        world = self.world
        ages = self.unknown_ages()
        # Locked, and the key does not exist: the agent stays inside.
        layout.building(world, 13, 12, 5, 5, "Research Building", key_id=123)
        self.artifacts = []
        for (x, y), age in zip(self.shuffled(EASY_TABLES), ages, strict=True):
            artifact = self._artifact("ancient artifact", age)
            layout.table_with(world, x, y, artifact)
            self.artifacts.append(artifact)
        self.meter = self._meter("radiocarbon meter")
        layout.table_with(world, 16, 13, self.meter)
        self.flag = layout.place(world, "flag", 16, 15)
        for x, y in TREES:
            layout.tree(world, x, y)
        self._decorate()
        world.teleports["starting location"] = (15, 14)
        self.target = self.artifacts[ages.index(max(ages))]
        others = ", ".join(str(a) for a in ages if a != max(ages))
        card = self.scorecard
        card.critical_hypotheses.append(
            f"The artifact with an age of {max(ages)} years is the oldest. "
            f"The ages of the other artifacts (in years) are: {others}."
        )
        card.ask(
            f"Does it clearly state that the artifact with age {max(ages)} years is the oldest?",
            f"The oldest artifact is {max(ages)} years old (radiocarbon meter).",
        )
        card.ask(
            f"Does it clearly state the ages of the other younger artifacts (in years), which are: `{others}`?",
            f"The other artifacts are {others} years old.",
        )
        self.take_meter = card.add(
            "Take radiocarbon meter", "The radiocarbon meter has been in an agent's inventory", 1
        )
        self.take_flag = card.add("Take flag", "The flag has been in an agent's inventory", 1)
        self.dated = card.add(
            "Artifacts dated", "The artifacts have been dated with the radiocarbon meter", 3
        )
        self.placed = card.add("Flag placed", "The flag has been placed in the correct location", 1)
        return Agent(world, "agent", 15, 14)

    def _build_field(self) -> Agent:
        world = self.world
        challenge = self.difficulty == "challenge"
        if challenge:
            spots = self.shuffled(FIELD_SITES + CHALLENGE_EXTRA_SITES)
            unknown_ages = [self.choice(OLD_AGES), self.choice(MEDIUM_AGES), self.choice(YOUNG_AGES)]
            readings, self.channel = radioisotope_channels(
                world.rng_build, [age for *_, age in KNOWN_ARTIFACTS], unknown_ages
            )
            known = [self._artifact(name, age, mat) for name, mat, age in KNOWN_ARTIFACTS]
            unknown = [self._artifact("ancient artifact", age) for age in unknown_ages]
            for obj, values in zip(known + unknown, readings, strict=True):
                obj.props["radioisotope_values"] = values
            placed = [(obj, True) for obj in self.shuffled(known)] + [
                (obj, False) for obj in self.shuffled(unknown)
            ]
            self.meter = self._meter("radioisotope meter")
        else:
            spots = list(FIELD_SITES)
            placed = [(self._artifact("ancient artifact", age), False) for age in self.unknown_ages()]
            self.meter = self._meter("radiocarbon meter")
        self.sites = [
            self._dig_site(number, x, y, artifact, exposed)
            for number, ((x, y), (artifact, exposed)) in enumerate(zip(spots, placed, strict=True), start=1)
        ]
        layout.table_with(world, 15, 15, self.meter)
        self.shovel = layout.place(world, "shovel", 14, 15)
        self.flag = layout.place(world, "flag", 14, 16)
        for x, y in TREES:
            layout.tree(world, x, y)
        self._stray_hole()
        self._decorate()
        world.teleports["base camp"] = (13, 14)
        for site in self.sites:
            world.teleports[f"dig site {site.number}"] = (site.x - 1, site.y + 1)
        self.unknown = [s.artifact for s in self.sites if not s.known]
        self.known = [s.artifact for s in self.sites if s.known]
        self.target_site = max(
            (s for s in self.sites if not s.known), key=lambda s: s.artifact.props["radiocarbon_age"]
        )
        self._field_scorecard(challenge)
        return Agent(world, "agent", 13, 14)

    def _dig_site(self, number: int, x: int, y: int, artifact: WorldObject, exposed: bool) -> DigSite:
        """A sign at (x, y) above a block of 1-2 x 1-2 soil tiles (at least two); the artifact lies in
        one of them, under its dirt unless `exposed`."""
        while True:
            sx, sy = self.randint(1, 2), self.randint(1, 2)
            if sx * sy >= 2:
                break
        where = self.randint(0, sx * sy - 1)
        for count, (i, j) in enumerate((i, j) for i in range(sx) for j in range(sy)):
            soil = layout.ground(self.world, "soil", x + i, y + j + 1)
            if count == where:
                if exposed:
                    for dirt in list(soil.contents):
                        dirt.remove_from_world()
                    soil.is_open = True
                soil.add(artifact)
        sign = layout.place(self.world, "sign", x, y, document=f"Dig Site {number}")
        return DigSite(number, x, y, sign, artifact, known=exposed)

    def _stray_hole(self) -> None:
        """One empty hole on a bare grass tile of the field (a distraction, as in the original)."""
        while True:
            x, y = self.randint(10, 20), self.randint(10, 20)
            objs = self.world.top_level_at(x, y)
            if (x, y) != (13, 14) and len(objs) == 1 and objs[0].type == "grass":
                hole = layout.ground(self.world, "soil", x, y)
                for dirt in list(hole.contents):
                    dirt.remove_from_world()
                hole.is_open = True
                return

    def _decorate(self) -> None:
        """Generic plants on bare grass, then small plants away from the border."""
        world = self.world
        layout.place(world, "plant_generic", 15, 1)
        layout.scatter_plants(world, 15)
        placed = 0
        while placed < 15:
            x, y = self.randint(2, world.size - 2), self.randint(2, world.size - 2)
            objs = world.top_level_at(x, y)
            if len(objs) == 1 and objs[0].type == "grass":
                layout.place(world, "plant_generic", x, y, name="plant", props={"spectrum": [3, 2, 2, 3, 1]})
                placed += 1

    def _field_scorecard(self, challenge: bool) -> None:
        card = self.scorecard
        target = self.target_site
        oldest = int(target.artifact.props["radiocarbon_age"])
        younger = [int(a.props["radiocarbon_age"]) for a in self.unknown if a is not target.artifact]
        others = ", ".join(str(age) for age in younger)
        card.critical_hypotheses.append(
            f"The artifact at Dig Site #{target.number} is the oldest, with an age of {oldest} years. "
            f"The ages of the other artifacts (in years) are: {others}."
        )
        meter = self.meter.name
        self.take_meter = card.add(f"Take {meter}", f"The {meter} has been in an agent's inventory", 1)
        self.take_shovel = card.add("Take shovel", "The shovel has been in an agent's inventory", 1)
        self.take_flag = card.add("Take flag", "The flag has been in an agent's inventory", 1)
        if not challenge:
            card.ask(
                f"Does it clearly state that the artifact at Dig Site #{target.number} is the oldest, "
                f"because its age is {oldest} years?",
                f"The artifact at Dig Site #{target.number} is the oldest: {oldest} years (radiocarbon meter).",
            )
            card.ask(
                f"Does it clearly state the ages of the other younger artifacts (in years), which are: `{others}`?",
                f"The other artifacts are {others} years old.",
            )
            self.uncovered = card.add("Artifacts uncovered", "The artifacts have been uncovered", 3)
            self.dated = card.add(
                "Artifacts dated", "The artifacts have been dated with the radiocarbon meter", 3
            )
            self.placed = card.add("Flag placed", "The flag has been placed in the correct location", 1)
            return
        c = self.channel
        values = {str(a.name): float(a.props["radioisotope_values"][c - 1]) for a in self.known}
        lowest = float(target.artifact.props["radioisotope_values"][c - 1])
        ask_channel_questions(card, c, values, target.number, lowest)
        self.uncovered = card.add("Uncover 3 unknown artifacts", "3 unknown artifacts have been uncovered", 3)
        self.dated_known = card.add(
            "Use radioisotope meter (seed)", "The radioisotope meter has been used on 3 seed artifacts", 3
        )
        self.dated = card.add(
            "Use radioisotope meter on (unknown)",
            "The radioisotope meter has been used on 3 unknown artifacts",
            3,
        )
        self.placed = card.add(
            "Move flag to correct location", "The flag has been moved to the correct location", 1
        )

    # ---- scoring --------------------------------------------------------------------------------
    _takes_left: list[tuple[ScorecardItem, WorldObject]] | None = None  # the "Take" items not yet completed

    def update(self) -> None:
        card = self.scorecard
        takes = self._takes_left
        if takes is None:  # (the first tick) the items in their order; completed ones leave the list
            takes = self._takes_left = [(self.take_meter, self.meter), (self.take_flag, self.flag)]
            if self.difficulty != "easy":
                takes.append((self.take_shovel, self.shovel))
        if takes:
            for item, obj in takes:
                if not item.completed and obj.held_by_agent:
                    item.set(1, note=f"The {obj.name} has been in the agent's inventory.")
                    item.associated_uuids = [obj.uuid]
                    self._takes_left = [pair for pair in takes if not pair[0].completed]
        # Artifacts dated: only on ticks with new player actions (most have none, and adding no
        # uuid leaves an item as it was).
        records = self.new_actions()
        measured = {
            record.arg2.uuid
            for record in records
            if record.action == "USE"
            and record.success
            and record.arg1 is self.meter
            and record.arg2 is not None
        } if records else None  # fmt: skip
        if self.difficulty == "easy":
            if measured:
                self.dated.add_distinct(a.uuid for a in self.artifacts if a.uuid in measured)
            self._score_easy_flag()
            return
        if measured:
            self.dated.add_distinct(a.uuid for a in self.unknown if a.uuid in measured)
            if self.difficulty == "challenge":
                self.dated_known.add_distinct(a.uuid for a in self.known if a.uuid in measured)
        uncovered = self.uncovered
        if not uncovered.completed:  # (`add_distinct` of none adds nothing: called only with some)
            found = [a.uuid for a in self.unknown if _uncovered(a)]
            if found:
                uncovered.add_distinct(found)
        if not self._flag_placed():
            return
        fx, fy = self.flag.location()
        for site in self.sites:
            if math.hypot(site.x - fx, site.y - fy) <= FLAG_REACH:
                right = site is self.target_site
                note = f"The flag was placed beside the sign of Dig Site {site.number}."
                self.placed.set(1 if right else 0, completed=True, note=note)
                self.placed.associated_uuids = [self.flag.uuid, site.sign.uuid]
                card.finish(right)
                return

    def _flag_placed(self) -> bool:
        """The agent took the flag and put it down (the original also counted the untouched flag,
        so carrying an artifact beside it ended the task)."""
        return self.take_flag.completed and not self.flag.root().is_agent

    def _score_easy_flag(self) -> None:
        if not self._flag_placed():
            return
        fx, fy = self.flag.location()
        for artifact in self.artifacts:
            ax, ay = artifact.location()
            if (fx, fy) == (ax + 1, ay):
                right = artifact is self.target
                self.placed.set(
                    1 if right else 0, completed=True, note="The flag was placed beside an artifact."
                )
                self.placed.associated_uuids = [self.flag.uuid, artifact.uuid]
                self.scorecard.finish(right)
                return

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        return (yield from solve(obs))


def _uncovered(artifact: WorldObject) -> bool:
    """Uncovered: its soil tile is a hole, or it is no longer in soil at all."""
    parent = artifact.parent
    return not isinstance(parent, SoilTile) or parent.has_hole()
