"""Proteomics: find the species whose protein profile is the outlier of a clustering."""

from __future__ import annotations

import math

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.proteomics.oracle import solve
from discoverylab.scenarios.proteomics.things import (
    SPECIES,
    Statue,
    clustering_data,
    make_animal,
    make_meter,
    make_statue,
    protein_values,
)
from discoverylab.scenarios.registry import register
from discoverylab.world.agent import Agent
from discoverylab.world.npc import NPC
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

# Normal / Challenge: the fenced statue yard and the twelve places animals may live.
STATUE_SPOTS = ((12, 12), (12, 16), (18, 12), (18, 16), (15, 14))
ANIMAL_AREAS = ((4, 4), (12, 4), (20, 4), (28, 4), (4, 28), (12, 28), (20, 28), (28, 28),
                (4, 12), (4, 20), (28, 12), (28, 20))  # fmt: skip
YARD_TREES = ((12, 20), (18, 20), (12, 8), (18, 8), (8, 12), (8, 16), (22, 12), (22, 16),
              (10, 10), (10, 18), (20, 10), (20, 18))  # fmt: skip
# Easy: everything inside the locked research building.
EASY_STATUE_SPOTS = ((16, 13), (16, 14), (16, 15))
EASY_ANIMAL_SPOTS = ((14, 13), (14, 14), (14, 15))
START = (15, 16)
PLACE_RADIUS = 2.0  # Normal/Challenge: the flag must lie within this (Euclidean) of a statue

INTRO = (
    "You are in a biological preserve on Planet X, that has {n} different animal species. We suspect that one of "
    "these animal species is not native to the area, but migrated from an isolated island in the recent past. "
    "Your task is to use the proteomics meter to analyze the proteins of each of the {n} animal species, "
)
TASK_TEXT = {
    "normal": INTRO + "which can be found throughout the environment away from the central statue area, and "
    "determine which species is the anomaly. Once you have completed your task, return to the statue area and "
    "drop the flag directly beside the statue of the animal species that is the anomaly.",
    "easy": INTRO
    + "which can be found in the research building you're in, and determine which species is the "
    "anomaly. Once you have completed your task, drop the flag directly beside (i.e. one square left/to the west) "
    "the statue of the animal species that is the anomaly.",
}
QUESTION = (
    "Does it clearly state that the {name} has proteomics values that appear to be outliers compared to the other "
    "animals, whose proteomics values all cluster together?"
)
HYPOTHESIS = (
    "When performing a clustering analysis, the {name} has proteomics values that appear to be outliers compared "
    "to the other animals, whose proteomics values all cluster together."
)


def _fence(world: World, points: list[tuple[int, int]]) -> None:
    for x, y in points:
        layout.place(world, "fence", x, y)


@register
class Proteomics(Scenario):
    """Measure the proteins of every animal species and flag the one that is an outlier.

    Description: a biological preserve on Planet X. One of the animal species migrated from an
    isolated island: its protein concentrations lie far (0.5) from the centre around which every
    other species' values cluster (0.1). Normal/Challenge: five species, two animals each,
    wander slowly around ten of twelve "Possible Animal Area" spots around a fenced statue yard
    with one statue per species; the proteomics meter lies on a table at the yard's entrance,
    the flag on the ground beside it. Easy: three species, one unmoving animal each, with their
    statues, the meter and the flag inside a small locked research building.
    Actions: PICKUP, USE proteomics meter ON an animal (reports "Protein A", "Protein B"
    [, "Protein C"] to two decimals), TELEPORT_TO_LOCATION / TELEPORT_TO_OBJECT to get around,
    DROP the flag beside a statue; READ the statues' plaques.
    Observation: standard text observation; animals appear in `nearbyAgents`/`nearbyObjects`
    while within 3 tiles and keep moving (Normal/Challenge); readings come in the action
    message.
    Scoring: Take proteomics meter /1, Take flag /1, Use proteomics meter /5 (/3 Easy: distinct
    species measured), Move flag to correct location /1. The task ends when the flag lies on
    the ground within 2 tiles (Euclidean) of a statue (Easy: exactly one tile west of one):
    successfully iff it is the outlier species' statue. A wrong statue ends the task
    unsuccessfully. Knowledge: which species is the outlier (with its values and the centre),
    and that the other species cluster (they are not named: all five are in every instance).
    Difficulty knobs: Easy 3 species in one room, animals still, 2 proteins; Normal 5 species
    over the map, wandering, 2 proteins; Challenge as Normal with 3 proteins. The seed picks the
    outlier species, the data, and the statue and animal spots.
    Registered ids: discoverylab/Proteomics-Easy-v0, discoverylab/Proteomics-Normal-v0,
    discoverylab/Proteomics-Challenge-v0.
    """

    task_id = "Proteomics"
    title = "Proteomics"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "ProteomicsTask{Easy,Normal,Challenge}"  # the scorecard gets the difficulty's own

    def build(self) -> Agent:
        world = self.world
        easy = self.difficulty == "easy"
        self.scorecard.task_name = f"ProteomicsTask{self.difficulty.capitalize()}"
        self.answer = self.seed_option(SPECIES)
        if easy:  # two other species at random, in random order (not neighbours of the answer)
            others = [sp for sp in self.shuffled(SPECIES) if sp is not self.answer][:2]
            self.species = self.shuffled([self.answer, *others])
        else:
            self.species = list(SPECIES)
        layout.fill_grass(world)
        if easy:  # locked with a key that does not exist: the agent stays inside
            layout.building(world, 13, 12, 5, 6, "Research Building", key_id=123)
        self._yard()
        self.statues: dict[str, Statue] = {}
        self.animals: list[NPC] = []
        data = clustering_data(world.rng_build.spawn(1)[0], 3 if self.difficulty == "challenge" else 2)
        self.data = data
        self.values = {
            sp.name: protein_values(
                data.outliers[0] if sp is self.answer else data.inliers[SPECIES.index(sp)]
            )
            for sp in self.species
        }
        if easy:
            self._easy_room(self.values)
        else:
            self._preserve(self.values)
        self._plants()
        self._scorecard()
        return Agent(world, "agent", *START)

    # ---- map ----------------------------------------------------------------------------------
    def _yard(self) -> None:
        """The fence around the statue yard (gaps mid-side), its sign and its twelve trees."""
        world = self.world
        _fence(world, [(x, y) for y in (9, 19) for x in [*range(9, 14), *range(17, 22)]])
        _fence(world, [(x, y) for x in (9, 21) for y in [*range(9, 13), *range(16, 19)]])
        layout.place(world, "sign", 13, 20, document="Proteomics Research Facility")
        for x, y in YARD_TREES:
            layout.tree(world, x, y)

    def _place_statues(
        self, spots: list[tuple[int, int]], teleport_offset: tuple[int, int], paths: bool
    ) -> None:
        world = self.world
        for species, (x, y) in zip(self.species, spots, strict=True):
            if paths:
                for i in range(x - 1, x + 2):
                    for j in range(y - 1, y + 2):
                        layout.ground(world, "path", i, j)
            statue = make_statue(world, species)
            world.place(statue, x, y)
            self.statues[species.name] = statue
            name = species.statue_name
            world.teleports[name[0].upper() + name[1:]] = (x + teleport_offset[0], y + teleport_offset[1])

    def _meter_and_flag(
        self, table: tuple[int, int], flag: tuple[int, int], teleport: tuple[int, int]
    ) -> None:
        world = self.world
        self.meter = make_meter(world)
        layout.table_with(world, *table, self.meter)
        self.flag = layout.place(world, "flag", *flag)
        world.teleports["Instrument Table"] = teleport

    def _preserve(self, values: dict[str, dict[str, float]]) -> None:
        world = self.world
        self._place_statues(self.shuffled(STATUE_SPOTS), (0, 1), paths=True)
        self._meter_and_flag((14, 19), (14, 20), (15, 19))
        for i, spot in enumerate(ANIMAL_AREAS):
            world.teleports[f"Possible Animal Area {i + 1}"] = spot
        areas = self.shuffled(ANIMAL_AREAS)
        for i, (x, y) in enumerate(areas[:10]):
            species = self.species[i % 5]
            self.animals.append(make_animal(world, species, x, y, values[species.name], wander=True))
        for ax, ay in areas:  # two big trees near every area, never on its centre
            placed = 0
            while placed < 2:
                x = min(max(self.randint(ax - 3, ax + 3), 0), world.size - 1)
                y = min(max(self.randint(ay - 3, ay + 3), 0), world.size - 1)
                if (x, y) != (ax, ay):
                    layout.tree(world, x, y)
                    placed += 1

    def _easy_room(self, values: dict[str, dict[str, float]]) -> None:
        world = self.world
        self._place_statues(self.shuffled(EASY_STATUE_SPOTS), (-1, 0), paths=False)
        self._meter_and_flag((14, 16), (16, 16), (15, 16))
        for i, (x, y) in enumerate(EASY_ANIMAL_SPOTS):
            world.teleports[f"Animal Area {i + 1}"] = (x + 1, y)
        for species, (x, y) in zip(self.species, self.shuffled(EASY_ANIMAL_SPOTS), strict=True):
            self.animals.append(make_animal(world, species, x, y, values[species.name], wander=False))

    def _plants(self) -> None:
        """25 generic plants anywhere and 15 small ones away from the edge, on bare grass."""
        layout.scatter_plants(self.world, 25)
        placed = 0
        for _ in range(2000):
            if placed == 15:
                break
            x, y = self.randint(2, self.world.size - 2), self.randint(2, self.world.size - 2)
            objs = self.world.top_level_at(x, y)
            if objs and all(o.type == "grass" for o in objs):
                plant = layout.spawn(
                    self.world, "plant_generic", name="plant", props={"spectrum": [3, 2, 2, 3, 1]}
                )
                self.world.place(plant, x, y)
                placed += 1

    # ---- scoring ------------------------------------------------------------------------------
    def _scorecard(self) -> None:
        card = self.scorecard
        n = len(self.species)
        self.take_meter = card.add(
            "Take proteomics meter", "The proteomics meter has been in the agent's inventory", 1
        )
        self.take_flag = card.add("Take flag", "The flag has been in the agent's inventory", 1)
        self.use_meter = card.add(
            "Use proteomics meter",
            f"The proteomics meter has been used on each of the {n} different animal types",
            n,
        )
        self.flag_placed = card.add(
            "Move flag to correct location", "The flag has been moved to the correct location", 1
        )
        name = self.answer.name
        card.critical_hypotheses.append(HYPOTHESIS.format(name=name))
        shown = ", ".join(f"{k} {v:.2f}" for k, v in self.values[name].items())
        centre = ", ".join(f"{v:.2f}" for v in self.data.center)
        card.ask(
            QUESTION.format(name=name),
            f"The {name} is the outlier species: its protein values ({shown}) lie about 0.5 from the centre "
            f"({centre}) of the cluster.",
            # The others are not named: every Normal/Challenge instance has all five species, so
            # naming them made every gold fact share one bag of words whatever the outlier
            # (a fixed report beat chance, issue 21); the outlier's values and the centre are the
            # instance's own.
            "The other species all have protein values within about 0.1 of that centre, so they cluster together.",
        )
        self.measured: dict[str, int] = {}  # species -> uuid of the first individual measured
        self._beside: dict[tuple[int, int], Statue | None] = {}  # `_statue_beside_flag` per flag tile

    def description(self) -> str:
        text = TASK_TEXT["easy" if self.difficulty == "easy" else "normal"]
        return text.format(n=len(self.species))

    def update(self) -> None:
        if self.meter.parent is self.player:
            self.take_meter.set(1)
        if self.flag.parent is self.player:
            self.take_flag.set(1)
        records = self.new_actions()
        if records:  # (an RL step brings one; `measured` only grows, so an equal count is an equal item)
            known = len(self.measured)
            for record in records:
                target = record.arg2
                if (
                    record.action == "USE"
                    and record.success
                    and record.arg1 is self.meter
                    and target in self.animals
                ):
                    assert isinstance(target, WorldObject)
                    self.measured.setdefault(target.name, target.uuid)
            if len(self.measured) != known:
                self.use_meter.set(len(self.measured))
                self.use_meter.associated_uuids = sorted(self.measured.values())
        statue = self._statue_beside_flag()
        if statue is not None:
            right = statue is self.statues[self.answer.name]
            self.flag_placed.set(
                int(right), completed=True, note=f"The flag was placed beside the {statue.name}."
            )
            self.flag_placed.associated_uuids = [self.flag.uuid, statue.uuid]
            self.scorecard.finish(right)

    def _statue_beside_flag(self) -> Statue | None:
        """The first statue (species order) the dropped flag counts as placed beside, if any."""
        flag = self.flag
        if flag.parent is not None or flag.layer is None:
            return None
        fx, fy = flag.x, flag.y
        # Statues never move: the answer per flag tile is kept (the flag mostly lies still).
        beside = self._beside
        if (fx, fy) not in beside:
            beside[(fx, fy)] = self._statue_near(fx, fy)
        return beside[(fx, fy)]

    def _statue_near(self, fx: int, fy: int) -> Statue | None:
        for species in self.species:
            statue = self.statues[species.name]
            if self.difficulty == "easy":
                if (fx, fy) == (statue.x - 1, statue.y):
                    return statue
            elif math.hypot(fx - statue.x, fy - statue.y) <= PLACE_RADIUS:
                return statue
        return None

    # ---- oracle -------------------------------------------------------------------------------
    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        return solve(obs)
