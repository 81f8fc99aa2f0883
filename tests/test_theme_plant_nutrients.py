"""Plant Nutrients rules: generated plots, meter readings, the growth rule, controllers, scoring."""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.plant_nutrients.scenario import PlantNutrients
from discoverylab.scenarios.plant_nutrients.things import NUTRIENTS, NutrientSeed, Rule, levels_of
from discoverylab.world.instruments import READERS
from discoverylab.world.objects import Layer


def _env(difficulty: str, seed: int = 0) -> tuple[DiscoveryWorldEnv, PlantNutrients, dict[str, Any]]:
    env = DiscoveryWorldEnv("PlantNutrients", difficulty)
    _, info = env.reset(seed=seed)
    assert isinstance(env.scenario, PlantNutrients)
    return env, env.scenario, info


def _step(env: DiscoveryWorldEnv, action: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _, _, _, _, info = env.step(action)
    return info["observation"], env.scorecard(reveal=True)


def _grown(sc: PlantNutrients, tile: Any) -> bool:
    return any(o.type == "mushroom" for o in sc.world.layer_at(tile.x, tile.y, Layer.OBJECTS))


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
@pytest.mark.parametrize("seed", range(5))
def test_pilot_plots_grew_exactly_where_the_rule_holds(difficulty: str, seed: int) -> None:
    _, sc, _ = _env(difficulty, seed)
    assert sc.world.step == 0  # the ten growing ticks happen before the first observation
    assert len(sc.pilot) == (18 if difficulty == "challenge" else 12)
    labels = [sc.rule.holds(levels_of(t)) for t in sc.pilot]
    assert [_grown(sc, t) for t in sc.pilot] == labels
    if difficulty == "challenge":
        assert sum(labels) == 9  # nine positive and nine negative examples
    else:
        assert sum(labels) >= 3 and len(labels) - sum(labels) >= 3


def test_the_meter_reads_the_plot_levels() -> None:
    env, sc, _ = _env("easy", 0)
    for tile in sc.pilot:
        text = READERS["soil nutrient meter"](sc.meter, tile)
        assert text is not None
        for n in NUTRIENTS:
            word = {0: "zero", 1: "low", 2: "medium", 3: "high"}[levels_of(tile)[n]]
            assert f"- {n}: {word}\n" in text
    assert "inconclusive" in str(READERS["soil nutrient meter"](sc.meter, sc.meter))


def test_easy_plots_have_one_nutrient_each_and_plants_on_the_positive_ones() -> None:
    positives = set()
    for seed in range(15):
        _, sc, _ = _env("easy", seed)
        positives.add(sc.positive)
        highs = [[n for n, v in levels_of(t).items() if v == 3] for t in sc.pilot]
        assert all(len(h) == 1 for h in highs)
        assert sorted(h[0] == sc.positive for h in highs) == [False] * 4 + [True] * 2
        assert all(_grown(sc, t) == (h[0] == sc.positive) for t, h in zip(sc.pilot, highs, strict=True))
    assert len(positives) >= 4  # drawn per seed: 15 seeds see (almost surely) four or five


@pytest.mark.parametrize("right", [True, False])
def test_easy_controller_choice_decides_the_task(right: bool) -> None:
    env, sc, _ = _env("easy", 1)
    nutrient = sc.positive if right else next(n for n in NUTRIENTS if n != sc.positive)
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": sc.controller.uuid})
    obs, _ = _step(env, {"action": "TALK", "arg1": sc.controller.uuid})
    options = obs["dialog_box"]["dialogOptions"]
    assert list(options.values()) == ["Potassium", "Titanium", "Lithium", "Thorium", "Barium", "Cancel"]
    pick = next(k for k, v in options.items() if v == nutrient.capitalize())
    _step(env, {"chosen_dialog_option_int": int(pick)})
    _, card = _step(env, {"chosen_dialog_option_int": 1})
    assert card["completed"] is True
    assert card["completedSuccessfully"] is right


def _bury(sc: PlantNutrients, tile: Any) -> None:
    tile.add(NutrientSeed(sc.world, sc.rule))


@pytest.mark.parametrize("right", [True, False])
def test_test_fields_grow_only_under_the_rule(right: bool) -> None:
    env, sc, _ = _env("normal", 0)
    controller = sc.controllers[0]
    rule = sc.rule
    level = rule.v1 if right else rule.v1 % 3 + 1
    controller.states.add(f"{rule.n1}_{level}")
    controller._imprint()
    assert all(levels_of(t)[rule.n1] == level for t in sc.fields[0])
    for tile in sc.fields[0][:2]:
        _bury(sc, tile)
    card: dict[str, Any] = {}
    for _ in range(12):
        _, card = _step(env, {"action": "WAIT"})
        if card["completed"]:
            break
    assert card["completed"] is right
    assert card["completedSuccessfully"] is right
    planted = next(i for i in card["scoreCard"] if i["name"] == "At Least 2 Seeds Planted")
    assert planted["score"] == 2


def test_controller_menu_is_read_only_after_imprinting() -> None:
    env, sc, _ = _env("normal", 0)
    controller = sc.controllers[1]
    _step(env, {"action": "TELEPORT_TO_LOCATION", "arg1": "Experimental Field #2"})
    _step(env, {"action": "TELEPORT_TO_OBJECT", "arg1": controller.uuid})
    obs, _ = _step(env, {"action": "TALK", "arg1": controller.uuid})
    options = list(obs["dialog_box"]["dialogOptions"].values())
    assert options[0] == "Set Potassium Level (Current: Unset)" and len(options) == 7
    obs, _ = _step(env, {"chosen_dialog_option_int": 4})  # thorium
    obs, _ = _step(env, {"chosen_dialog_option_int": 3})  # high
    obs, _ = _step(env, {"chosen_dialog_option_int": 1})  # back
    # Normal fields take one nutrient: the other nutrients' Set options are gone.
    assert list(obs["dialog_box"]["dialogOptions"].values()) == [
        "Set Thorium Level (Current: High)",
        "Imprint current selections on this field (Note: can't be changed)",
        "Cancel and exit",
    ]
    assert "at most one nutrient per field" in obs["dialog_box"]["dialogIn"]
    obs, _ = _step(env, {"chosen_dialog_option_int": 2})  # imprint
    assert not obs["dialog_box"]["is_in_dialog"]
    assert all(levels_of(t) == {"potassium": 0, "titanium": 0, "lithium": 0, "thorium": 3, "barium": 0}
               for t in sc.fields[1])  # fmt: skip
    obs, _ = _step(env, {"action": "TALK", "arg1": controller.uuid})
    assert "can not be changed further" in obs["lastActionMessage"]
    assert "- thorium: high" in obs["lastActionMessage"]
    assert list(obs["dialog_box"]["dialogOptions"].values()) == ["Exit"]


def test_rule_semantics() -> None:
    levels = {"potassium": 3, "thorium": 2}
    assert Rule("xor", "thorium", 2, "potassium", 1).holds(levels)
    assert not Rule("xor", "thorium", 2, "potassium", 3).holds(levels)
    assert Rule("and", "thorium", 2, "potassium", 3).holds(levels)
    assert Rule("or", "thorium", 1, "potassium", 3).holds(levels)
    assert Rule("not", "thorium", 2, "potassium", 1).holds(levels)
    assert not Rule("not", "thorium", 2, "potassium", 3).holds(levels)  # n2 at v2 stops it
    assert not Rule("not", "thorium", 1, "potassium", 1).holds(levels)  # n1 at another level


@pytest.mark.parametrize("kind", ["or", "xor", "not"])
def test_challenge_rules_need_both_nutrients_present(kind: str) -> None:
    """One nutrient at its level and the other absent grew seeds under the original's or / xor
    (and any level but v1 under its one-nutrient not): a field set without measuring covered
    most rules. Every Challenge rule now needs both of its nutrients in the soil."""
    rule = Rule(kind, "thorium", 2, "potassium", 1)
    assert not rule.holds({"thorium": 2})
    assert not rule.holds({"potassium": 1})
    assert not rule.holds({"thorium": 2, "barium": 1, "lithium": 3})
    assert rule.holds({"thorium": 2, "potassium": 1 if kind == "or" else 3})


def test_challenge_draws_two_nutrient_rules_and_says_so() -> None:
    kinds: set[str] = set()
    for seed in range(60):
        _, sc, _ = _env("challenge", seed)
        kinds.add(sc.rule.kind)
        assert sc.rule.n2 and sc.rule.n2 != sc.rule.n1 and sc.rule.v2 in (1, 2, 3)
        assert "a combination of two nutrients" in sc.description()
        if len(kinds) == 4:
            break
    assert kinds == {"and", "or", "xor", "not"}


def _plain_field_scan(self: PlantNutrients) -> None:
    """`PlantNutrients.update` before session 12: every test-field tile read every tick."""
    player = self.player
    if self.meter.parent is player:
        self.meter_item.set(1)
    records = self.new_actions()
    if records:
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
    for tiles in self.fields:
        for tile in tiles:
            self._scan(tile)
    if self.grown.score >= 2:
        self.scorecard.finish(True)


def _field_play() -> list[object]:
    """Scorecards of oracle episodes and of seeds buried, dug up, moved and covered by hand on
    every test-field tile over many ticks (the field-scan and seed-tick equality tests)."""
    from discoverylab.bench.episode import run_episode

    out: list[object] = []
    for difficulty, seed in (("normal", 1), ("challenge", 2)):
        _, log = run_episode("PlantNutrients", difficulty, seed, "oracle")
        out += [*log[:-1], log[-1]["scorecard"]]
    for seed in (0, 3):
        env, sc, _ = _env("normal", seed)
        rule = sc.rule
        for controller in sc.controllers:  # every field grows plants
            controller.states.add(f"{rule.n1}_{rule.v1}")
            controller._imprint()
        tiles = [t for field in sc.fields for t in field]
        for i, tile in enumerate(tiles):
            if i % 3 == 0:  # a hole: the tile's dirt leaves, a seed drops in, the dirt comes back
                dirt = next(o for o in tile.contents if o.type == "dirt")
                sc.player.add(dirt)
                out.append(_step(env, {"action": "WAIT"})[1])
                _bury(sc, tile)
                for _ in range(i % 4):  # the seed ticks in the open hole (it must not grow there)
                    out.append(_step(env, {"action": "WAIT"})[1])
                tile.add(dirt)
            elif i % 3 == 1:
                _bury(sc, tile)
            else:  # a seed buried in another tile, then moved here
                seed_obj = NutrientSeed(sc.world, sc.rule)
                tiles[0].add(seed_obj)
                out.append(_step(env, {"action": "WAIT"})[1])
                tile.add(seed_obj)
            for _ in range(2):
                out.append(_step(env, {"action": "WAIT"})[1])
        for _ in range(8):
            out.append(_step(env, {"action": "WAIT"})[1])
    return out


def test_the_watched_field_scan_equals_reading_every_tile(monkeypatch: pytest.MonkeyPatch) -> None:
    """`update` reads only the test-field tiles reported changed since its last scan (session
    12). The oracle's episodes (seeds buried, plants grown), and seeds buried, dug up, moved and
    covered by hand on every field tile over many ticks, give the same scorecards every step as
    reading every tile each tick."""
    watched = _field_play()
    monkeypatch.setattr(PlantNutrients, "update", _plain_field_scan)
    assert _field_play() == watched
    assert len(watched) > 100


def test_a_seed_s_written_out_hole_check_equals_has_hole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A buried seed checks its nutrient soil's dirt itself instead of calling `has_hole`
    (session 12): the same episodes as with the check through `has_hole`."""
    from discoverylab.world.things import SoilTile

    def plain_tick(self: NutrientSeed, tick: Any = NutrientSeed.tick) -> None:
        tile = self.parent
        if isinstance(tile, SoilTile) and tile.has_hole():  # the check as before session 12
            return
        tick(self)

    fast = _field_play()
    monkeypatch.setattr(NutrientSeed, "tick", plain_tick)
    assert _field_play() == fast
    grown = [i["score"] for e in fast if isinstance(e, dict) and "scoreCard" in e for i in e["scoreCard"]
             if i["name"] == "At Least Two New Plants"]  # fmt: skip
    assert grown and max(grown) == 2
