"""Plant Nutrients (spec section 12.5): find the soil nutrient rule under which a seed grows,
from a pilot field of measured plots, then grow plants in test fields set up by controllers."""

from __future__ import annotations

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.plant_nutrients.oracle import solve
from discoverylab.scenarios.plant_nutrients.things import (
    LEVELS,
    NUTRIENTS,
    NutrientSeed,
    NutrientSoil,
    Rule,
    SeedJar,
    SoilController,
    SoilControllerEasy,
    make_meter,
    make_soil,
)
from discoverylab.scenarios.registry import register
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import spawn
from discoverylab.world.objects import Layer
from discoverylab.world.world import TileWatch

EASY_POSITIVE = ("potassium", "thorium", "titanium", "lithium", "barium")
EASY_NEGATIVE = ("titanium", "potassium", "barium", "lithium", "thorium")
RULE_KINDS = ("xor", "and", "or", "not")
TEST_FIELDS = ((12, 15), (17, 15), (22, 15))
TREES = ((2, 3), (28, 3), (2, 25), (28, 25), (9, 27), (22, 27), (1, 13), (29, 14))
PRE_TICKS = 10


@register
class PlantNutrients(Scenario):
    """Find which soil nutrients (and levels) a strange seed needs to grow, then grow it.

    Description: at a botanical research station, soil plots carry five nutrients (potassium,
    titanium, lithium, thorium, barium) at levels zero, low, medium or high. A pilot field was
    sown with a seed that grows only under a nutrient rule; mushrooms stand on the plots where
    it grew. The agent measures the plots with the soil nutrient meter, infers the rule, sets
    up test fields with their soil nutrient controllers (once each) and plants seeds there.
    Actions: PICKUP, USE soil nutrient meter ON soil, USE shovel ON soil (dig a hole; the dirt
    goes to the inventory), PUT seed / dirt INTO the hole, TALK to (or USE) a controller to open
    its menu (a field takes one nutrient in Normal, two in Challenge); teleports to "Storage Building", "Pilot Field", "Experimental Field #1..3"
    (Easy: "initial location").
    Observation: standard text observation; meter readings come in the action message.
    Scoring: Easy (max 4): Soil Nutrient Meter Present /1, Use Soil Nutrient Meter /2 (distinct
    pilot plots measured), Select Correct Nutrient /1; the first selection on the controller
    decides the task. Normal/Challenge (max 9): Soil Nutrient Meter Present, Shovel Present,
    Seed Jar Present /1 each (held at some tick), Use Soil Nutrient Meter /2, At Least 2 Seeds
    Planted /2 (new seeds buried in test-field soil), At Least Two New Plants /2; the task
    succeeds when two new plants have grown on test fields; there is no failure state.
    Difficulty knobs: Easy: 6 plots, one nutrient at high is needed (drawn per
    instance), pick it on a
    controller. Normal: 12 plots, one nutrient at one level, seed jar refills. Challenge: 18
    plots, a two-nutrient rule: and (both at their levels), or / xor (both present, either /
    exactly one at its level), not (n1 at its level, n2 present at another level); the kind
    drawn per instance; only
    10 seeds.
    Registered ids: discoverylab/PlantNutrients-Easy-v0, discoverylab/PlantNutrients-Normal-v0,
    discoverylab/PlantNutrients-Challenge-v0.
    """

    task_id = "PlantNutrients"
    title = "Plant Nutrients"
    suite = "discovery"
    difficulties = ("easy", "normal", "challenge")
    task_name = "SoilNutrientTask"

    # ---- building -----------------------------------------------------------------------
    def build(self) -> Agent:
        world = self.world
        layout.fill_grass(world)
        if self.difficulty == "easy":
            player = self._build_easy()
        else:
            player = self._build_station()
        self.player = player
        self._declare_scorecard()
        return player

    def _build_easy(self) -> Agent:
        world = self.world
        self.scorecard.task_name = "SoilNutrientTaskEasy"
        for x in range(12, 18):
            for y in range(12, 19):
                if x in (12, 17) or y in (12, 18):
                    layout.place(world, "fence", x, y)
        self.positive = self.seed_option(EASY_POSITIVE)
        negatives = [n for n in EASY_NEGATIVE if n != self.positive]
        spots = self.shuffled([(x, y) for x in (14, 15) for y in (14, 15, 16)])
        self.pilot: list[NutrientSoil] = []
        for i, (x, y) in enumerate(spots):
            nutrient = self.positive if i < 2 else negatives[i % 4]
            tile = make_soil(world, x, y, {nutrient: 3})
            self.pilot.append(tile)
            if i < 2:
                world.place(spawn(world, "mushroom", color="pink"), x, y)
        self.meter = make_meter(world)
        layout.table_with(world, 16, 16, self.meter)
        self.controller = SoilControllerEasy(world)
        layout.table_with(world, 16, 14, self.controller)
        layout.scatter_plants(world)
        world.teleports["initial location"] = (16, 15)
        agent = Agent(world, "agent", 16, 15)
        agent.facing = "south"
        return agent

    def _build_station(self) -> Agent:
        world = self.world
        challenge = self.difficulty == "challenge"
        self.scorecard.task_name = "SoilNutrientTaskChallenge" if challenge else "SoilNutrientTaskNormal"
        if challenge:
            self.rule = self._challenge_rule()
            columns, rows = range(6, 9), range(11, 17)
        else:
            self.rule = Rule("is", self.choice(NUTRIENTS), self.choice((1, 2, 3)))
            columns, rows = range(6, 10), range(14, 17)
        spots = [(x, y) for x in columns for y in rows]
        levels = [self._random_levels() for _ in spots]  # every plot first gets random levels
        order = self.shuffled(list(range(len(spots))))
        if challenge:
            for k, (pos, neg) in enumerate(
                zip(self._examples(True)[:9], self._examples(False)[:9], strict=True)
            ):
                levels[order[k]], levels[order[9 + k]] = pos, neg
        else:
            n, v = self.rule.n1, self.rule.v1
            for k in range(6):
                wrong = v
                if k >= 3:
                    while wrong == v:
                        wrong = self.randint(1, 3)
                levels[order[k]] = {**self._random_levels(), n: wrong}
        self.pilot = [make_soil(world, x, y, lv) for (x, y), lv in zip(spots, levels, strict=True)]
        self._station_layout()
        self.meter = make_meter(world)
        layout.table_with(world, 14, 9, self.meter)
        self.jar = SeedJar(world, self.rule, refill=not challenge)
        if challenge:
            for _ in range(10):
                self.jar.add(NutrientSeed(world, self.rule))
        layout.table_with(world, 15, 9, self.jar)
        self.shovel = layout.place(world, "shovel", 14, 10)
        layout.scatter_plants(world)
        self.pilot_seeds = set()
        for tile in self.pilot:
            seed = NutrientSeed(world, self.rule)
            tile.add(seed)
            self.pilot_seeds.add(seed.uuid)
        for _ in range(PRE_TICKS):  # the pilot field has grown before the agent arrives
            world.tick()
        world.step = 0
        self.old_mushrooms = {o.uuid for o in world.objects.values() if o.type == "mushroom"}
        self._field_watch: TileWatch | None = None  # the test-field tiles changed since `update`'s scan
        agent = Agent(world, "agent", 13, 14)
        agent.facing = "south"
        return agent

    def _random_levels(self) -> dict[str, int]:
        return {n: self.randint(1, 3) for n in NUTRIENTS}

    def _challenge_rule(self) -> Rule:
        """Two nutrients in every kind (see `Rule`): n1, v1, n2 != n1, v2, uniform."""
        kind = self.seed_option(RULE_KINDS)
        n1 = self.choice(NUTRIENTS)
        n2 = n1
        while n2 == n1:
            n2 = self.choice(NUTRIENTS)
        return Rule(kind, n1, self.choice((1, 2, 3)), n2, self.choice((1, 2, 3)))

    def _examples(self, positive: bool) -> list[dict[str, int]]:
        """Ten plots' levels on the positive (or negative) side of the rule."""
        rule, out = self.rule, []
        pattern = {
            ("xor", True): [(True, False), (False, True)], ("xor", False): [(True, True), (False, False)],
            ("and", True): [(True, True)], ("and", False): [(True, False), (False, True)],
            ("or", True): [(True, False), (False, True), (True, True)], ("or", False): [(False, False)],
            ("not", True): [(True, False)], ("not", False): [(True, True), (False, False), (False, True)],
        }[(rule.kind, positive)]  # fmt: skip
        for i in range(10):
            right1, right2 = pattern[i % len(pattern)]
            levels = {n: self.randint(1, 3) for n in NUTRIENTS if n not in (rule.n1, rule.n2)}
            levels[rule.n1] = rule.v1 if right1 else self._wrong(rule.v1)
            if rule.n2:
                levels[rule.n2] = rule.v2 if right2 else self._wrong(rule.v2)
            out.append({n: levels[n] for n in NUTRIENTS})
        return out

    def _wrong(self, value: int) -> int:
        wrong = value
        while wrong == value:
            wrong = self.randint(1, 3)
        return wrong

    def _station_layout(self) -> None:
        world = self.world
        layout.building(world, 13, 8, 4, 4, "Storage Building")
        layout.place(world, "sign", 6, 17, document="Pilot Field")
        self.fields: list[list[NutrientSoil]] = []
        self.controllers: list[SoilController] = []
        for k, (fx, fy) in enumerate(TEST_FIELDS, start=1):
            tiles = [make_soil(world, x, y, {}) for x in (fx, fx + 1) for y in (fy, fy + 1)]
            self.fields.append(tiles)
            layout.place(world, "sign", fx, 17, document=f"Soil Field #{k}")
            controller = SoilController(world, k, tiles, max_nutrients=2 if self.difficulty == "challenge" else 1)
            self.controllers.append(controller)
            layout.table_with(world, fx + 1, 17, controller)
        self.field_spots = {(t.x, t.y) for tiles in self.fields for t in tiles}
        for x in range(6, 24):
            if world.blocker_at(x, 18) is None:
                layout.ground(world, "path", x, 18)
        for y in range(12, 24):
            if y != 18:
                layout.ground(world, "path", 15, y)
        for x in range(4, 26):
            layout.place(world, "fence", x, 6)
        for y in range(7, 20):
            layout.place(world, "fence", 4, y)
        for y in range(7, 21):
            layout.place(world, "fence", 25, y)
        for x in [*range(4, 14), *range(17, 25)]:
            layout.place(world, "fence", x, 20)
        layout.place(world, "sign", 13, 21, document="Botanical Research Facility")
        for x, y in TREES:
            layout.tree(world, x, y)
        world.teleports.update({
            "Storage Building": (15, 10), "Pilot Field": (6, 16), "Experimental Field #1": (12, 16),
            "Experimental Field #2": (17, 16), "Experimental Field #3": (22, 16),
        })  # fmt: skip

    # ---- scorecard ----------------------------------------------------------------------
    def _declare_scorecard(self) -> None:
        card = self.scorecard
        self.meter_item = card.add(
            "Soil Nutrient Meter Present", "The soil nutrient meter has been taken.", 1
        )
        if self.difficulty == "easy":
            self.used = card.add(
                "Use Soil Nutrient Meter", "The meter has been used on pilot field plots.", 2
            )
            self.select = card.add(
                "Select Correct Nutrient", "The correct nutrient was entered on the controller.", 1
            )
            card.ask(
                f"Does it clearly state that if a seed is placed in soil with the `{self.positive}` nutrient present, "
                "then it will grow?",
                f"Seeds grow in soil with {self.positive} present (at a high level).",
            )
            card.critical_hypotheses = [f"Plants grow only where {self.positive} is present in the soil."]
            return
        self.shovel_item = card.add("Shovel Present", "The shovel has been taken.", 1)
        self.jar_item = card.add("Seed Jar Present", "The seed jar has been taken.", 1)
        self.used = card.add("Use Soil Nutrient Meter", "The meter has been used on pilot field plots.", 2)
        self.planted = card.add(
            "At Least 2 Seeds Planted", "New seeds have been buried in the test fields.", 2
        )
        self.grown = card.add("At Least Two New Plants", "New plants have grown in the test fields.", 2)
        rule = self.rule
        if rule.kind == "is":
            card.ask(
                f"Does it clearly state that if a seed is placed in soil with the `{rule.n1}` nutrient level of "
                f"`{LEVELS[rule.v1]}`, then it will grow?",
                f"Seeds grow iff the soil's {rule.n1} level is {LEVELS[rule.v1]}; the other nutrients do not matter.",
            )
        else:
            card.ask(
                f"Does it clearly state something equivalent to the following rule: `{rule.sentence()}`?",
                rule.sentence(),
            )
        card.critical_hypotheses = [rule.sentence()]

    def description(self) -> str:
        if self.difficulty == "easy":
            return (
                "You are at a small plant nutrient test pen on Planet X.  A native plant only grows in soil containing "
                "one specific nutrient (Potassium, Titanium, Lithium, Thorium or Barium).  The 6 soil plots in the pen "
                "each contain a randomly chosen nutrient, and plants have grown on some of them.  Your task is to find "
                "out which nutrient the plant requires, and enter it into the Soil Controller computer.  A soil "
                "nutrient meter is available on a table."
            )
        if self.difficulty == "challenge":
            what, plots = (
                "a combination of two nutrients at specific levels (low, medium or high)",
                18,
            )
        else:
            what = (
                "one unusual nutrient (Potassium, Titanium, Lithium, Thorium or Barium) at a specific level "
            )
            what, plots = what + "(low, medium or high)", 12
        return (
            "You are at the Botanical Research Facility on Planet X.  A newly discovered seed grows quickly into a "
            f"plant, but only in soil with {what}.  Your task is to find the rule, and grow at least 2 new plants.  "
            f"A {plots}-plot pilot field to the south-west was sown with these seeds; plants have grown on some "
            "plots.  Three test fields can each be configured once with their nearby soil nutrient controllers (the "
            f"settings can't be changed again; at most {'two nutrients' if plots == 18 else 'one nutrient'} per "
            "field).  The storage building has a soil nutrient meter, a jar of seeds and a "
            "shovel.  To plant a seed: dig a hole with the shovel, place a seed in the hole, and put the soil back."
        )

    # ---- scoring ------------------------------------------------------------------------
    def update(self) -> None:
        player = self.player
        if self.meter.parent is player:
            self.meter_item.set(1)
        records = self.new_actions()
        if records:  # (most ticks: none new)
            pilot = {t.uuid for t in self.pilot}
            for record in records:
                if record.action == "USE" and record.arg1 is self.meter and record.arg2 is not None:
                    if record.arg2.uuid in pilot:
                        self.used.add_distinct([record.arg2.uuid])
        if self.difficulty == "easy":
            chosen = self.controller.selected()
            if chosen:
                self.select.set(1 if self.positive in chosen else 0, completed=True)
                self.scorecard.finish(self.positive in chosen)
            return
        if self.shovel.parent is player:
            self.shovel_item.set(1)
        if self.jar.parent is player:
            self.jar_item.set(1)
        changed = self._field_watch
        if changed is None:  # the first scan reads every field tile, and starts the watch
            self._field_watch = self.world.watch_tiles()
            for tiles in self.fields:
                for tile in tiles:
                    self._scan(tile)
        elif changed:
            if not changed.isdisjoint(self.field_spots):  # (mostly the agent's steps elsewhere)
                for tiles in self.fields:
                    for tile in tiles:
                        if (tile.x, tile.y) in changed:
                            self._scan(tile)
            changed.clear()
        if self.grown.score >= 2:
            self.scorecard.finish(True)

    def _scan(self, tile: NutrientSoil) -> None:
        """Seeds buried in a covered test-field tile, plants grown on it. `update` reads only the
        tiles a `World.watch_tiles` watcher reported changed since its last scan (12 or 18 tiles
        every tick before): a tile's result depends on its own objects alone, and the items count
        distinct uuids, so a tile re-read unchanged adds nothing (tests/test_theme_plant_nutrients.py
        plays episodes both ways)."""
        if tile.has_hole():
            return
        if len(tile.contents) > 1:  # more than its dirt: maybe a seed
            seeds = [o.uuid for o in tile.contents if o.type == "seed" and o.uuid not in self.pilot_seeds]
            if seeds:
                self.planted.add_distinct(seeds)
        for obj in self.world.layer_at(tile.x, tile.y, Layer.OBJECTS):
            if obj.type == "mushroom" and obj.uuid not in self.old_mushrooms:
                if tuple(obj.props.get("locationGrown", ())) in self.field_spots:
                    self.grown.add_distinct([obj.uuid])

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        return solve(obs)
