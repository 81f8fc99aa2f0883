"""Space Sick: the oracle and its knowledge report, the colony's rules, the scorer fixes, the
honesty of the generated answers (played through
`discoverylab.make`; lazy strategies: test_theme_space_sick_attacks.py)."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from discoverylab.scenarios.space_sick.characters import EAT_SIGNAL
from discoverylab.scenarios.space_sick.things import GlowingRock, poisonous_food
from discoverylab.scoring.knowledge import missing_gold_facts
from discoverylab.world.instruments import READERS
from discoverylab.world.objects import Layer, WorldObject
from space_sick_kit import Game, colonists, run_oracle
from stats_kit import looks_uniform, shares

Obs = dict[str, Any]


# ---- the oracle and its knowledge report -----------------------------------------------------
@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", range(5))
def test_oracle_succeeds_and_reports_every_gold_fact(difficulty: str, seed: int) -> None:
    game, report = run_oracle(difficulty, seed)
    assert game.card["completedSuccessfully"], game.card
    assert game.card["scoreNormalized"] == 1.0
    text, facts, sc = report["text"], report["facts"], game.sc
    if difficulty == "easy":
        assert facts["pathogen"] == sc.pathogen and facts["instrument"] == sc.instrument_name
        assert facts["contaminated_uuid"] == sc.target.uuid
        assert sc.pathogen in text and f"the {sc.instrument_name} detects" in text.replace("Only the", "the")
    elif difficulty == "normal":
        assert facts["moldy_colours"] == sorted(sc.moldy)
        channel = sc.mold_channel
        assert facts["channel"] == channel and facts["species"] == sc.mold_species
        assert facts["moldy_reading"] == pytest.approx(0.1 * channel + 0.5)
        assert facts["clean_reading"] == pytest.approx(0.1 * channel)
        assert all(c in text for c in sc.moldy) and "mold" in text and sc.mold_species in text
        assert "microscope" in text and f"Channel {channel}" in text and "heat-stable" in text
    else:
        assert facts["detector"] == "glowing rock" and facts["light"] == sc.rock_light
        assert "glowing rock" in text and "luminous" in text and "harmful" in text and sc.rock_light in text
    assert len(game.card["knowledgeQuestions"]) == (2 if difficulty == "easy" else 3 if difficulty == "normal" else 1)
    for question in game.card["knowledgeQuestions"]:
        assert not missing_gold_facts(question["goldFacts"], text), question


def test_anti_gold_reports_differ_where_the_answers_do() -> None:
    """The report follows the world, not a constant: seeds with different answers get different
    facts, and each report's facts are wrong for the other seed."""
    by_instrument: dict[str, int] = {}  # one seed per instrument
    for seed in range(20):
        by_instrument.setdefault(Game("easy", seed).sc.instrument_name, seed)
    assert len(by_instrument) >= 3
    reports = {seed: run_oracle("easy", seed)[1]["facts"] for seed in by_instrument.values()}
    assert {r["instrument"] for r in reports.values()} == set(by_instrument)


def test_anti_gold_the_wrong_mushroom_in_the_jar_fails() -> None:
    game = Game("easy", 3)
    wrong = next(f for f in game.sc.foods if f is not game.sc.target)
    game.act("TELEPORT_TO_OBJECT", wrong.uuid)
    game.act("PICKUP", wrong.uuid)
    game.act("TELEPORT_TO_OBJECT", game.sc.jar.uuid)
    game.act("PUT", wrong.uuid, game.sc.jar.uuid)
    assert game.card["completed"] and not game.card["completedSuccessfully"]


# ---- honesty of the generated answers ---------------------------------------------------------
def _answers(difficulty: str, seeds: range) -> list[Any]:
    out = []
    for seed in seeds:
        game = Game(difficulty, seed)
        out.append(game.sc.instrument_name if difficulty == "easy" else game.sc.moldy)
    return out


@pytest.mark.parametrize("difficulty", ["easy", "normal"])
def test_answers_are_drawn_per_seed_without_blocks(difficulty: str) -> None:
    """Each seed draws its answer on its own: over 30 seeds the five answers are about equally
    common and neighbouring seeds sometimes share one (no balanced blocks of five seeds)."""
    answers = [a if isinstance(a, str) else tuple(a) for a in _answers(difficulty, range(30))]
    assert len(set(answers)) == 5
    assert looks_uniform(answers, shares(sorted(set(answers)))), Counter(answers)
    assert any(a == b for a, b in zip(answers, answers[1:], strict=False))


def test_difficulties_of_one_seed_draw_independently() -> None:
    from discoverylab.scenarios.space_sick.colony import MOLD_OPTIONS
    from discoverylab.scenarios.space_sick.things import SIMPLE_INSTRUMENTS

    easy = [SIMPLE_INSTRUMENTS.index(a) for a in _answers("easy", range(10))]
    normal = [MOLD_OPTIONS.index(a) for a in _answers("normal", range(10))]
    assert easy != normal


def test_the_contaminated_mushroom_is_not_marked_by_creation_order() -> None:
    ranks = set()
    for seed in range(12):
        sc = Game("easy", seed).sc
        ranks.add(sorted(f.uuid for f in sc.foods).index(sc.target.uuid))
        ranks.add([f.uuid for f in sc.foods].index(sc.target.uuid))
    assert ranks == {0, 1, 2}


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_mushrooms_are_created_evenly_whatever_their_contamination(difficulty: str) -> None:
    """Every mushroom is followed by exactly one other object (its mold, kept or not): creation
    indices carry no trace of which ones are moldy (and uuids, drawn per episode, not even of the
    creation order)."""
    game = Game(difficulty, 4)
    pool = game.sc.world._uuids  # the pool as drawn so far (creation order)
    foods = [o for o in game.sc.world.objects.values() if o.type == "mushroom"]
    order = sorted(pool.index(f.uuid) for f in foods)
    assert {b - a for a, b in zip(order, order[1:], strict=False)} == {2}


def test_challenge_instruments_cannot_tell_poisonous_mushrooms_apart() -> None:
    """Readings depend on the matter only (white or green, drawn independently of the poison):
    mushrooms of one matter read the same on every lab instrument, poisonous or not."""
    for seed in range(5):
        game = Game("challenge", seed)
        foods = [o for o in game.sc.world.objects.values() if o.type == "mushroom"]
        assert {f.poisonous for f in foods} == {True, False}
        for inst in game.sc.colony.instruments:
            if inst.type in ("sampler", "radiation meter"):  # a copy; noise and surroundings
                continue
            readings: dict[str, set[str]] = {}
            for food in foods:
                text = str(READERS[inst.type](inst, food))  # type: ignore[arg-type]
                readings.setdefault(food.materials[0].key, set()).add(text)
            assert all(len(texts) == 1 for texts in readings.values()), inst.type


# ---- the colony's rules ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_mold_signals_and_heat(seed: int) -> None:
    """The instance's mold: named by its look under the microscope, a raised reading on its own
    spectrometer channel (the others as for clean mushrooms), a lower PH; heat kills it (the
    microscope then shows it dead) but its toxin is heat-stable: the mushroom stays poisonous."""
    game = Game("normal", seed)
    sc = game.sc
    foods = [o for o in sc.world.objects.values() if o.type == "mushroom"]
    moldy = next(f for f in foods if f.parts)
    clean = next(f for f in foods if not f.parts)
    spectro = next(i for i in sc.colony.instruments if i.type == "spectrometer")
    ph = next(i for i in sc.colony.instruments if i.type == "PH meter")
    scope = next(i for i in sc.colony.instruments if i.type == "microscope")
    k = sc.mold_channel
    bad, good = (str(READERS["spectrometer"](spectro, f)) for f in (moldy, clean))  # type: ignore[arg-type]
    assert f"- Channel {k}: {0.1 * k + 0.5:.2f}" in bad and f"- Channel {k}: {0.1 * k:.2f}" in good
    differ = {b.split(":")[0] for a, b in zip(bad.splitlines(), good.splitlines(), strict=True) if a != b}
    assert f"- Channel {k}" in differ and differ <= {f"- Channel {k}", "- Channel 1"}  # (green matter: 1)
    assert f"a{'n' if sc.mold_species[0] in 'AEIOU' else ''} {sc.mold_species} mold" in str(
        READERS["microscope"](scope, moldy)  # type: ignore[arg-type]
    )
    assert "PH of 5.0" in str(READERS["PH meter"](ph, moldy))  # type: ignore[arg-type]
    assert "PH of 6.0" in str(READERS["PH meter"](ph, clean))  # type: ignore[arg-type]
    assert poisonous_food(moldy) and not poisonous_food(clean)
    stove = next(o for o in sc.world.objects.values() if o.type == "stove")
    stove.add(moldy)
    stove.activated = True
    stove.tick()
    stove.tick()
    assert not moldy.parts[0].poisonous and not moldy.cooked  # 70 C: the mold is dead, not cooked
    assert "appears dead" in str(READERS["microscope"](scope, moldy))  # type: ignore[arg-type]
    assert poisonous_food(moldy)  # the mycotoxin survives
    stove.tick()
    stove.tick()
    assert moldy.cooked and poisonous_food(moldy)  # 120 C


def test_glowing_rock_lights_up_only_near_a_poisonous_mushroom() -> None:
    game = Game("challenge", 1)
    world = game.sc.world
    rock = game.sc.colony.rocks[0]
    foods = [o for o in world.objects.values() if o.type == "mushroom"]
    bad = next(f for f in foods if f.poisonous)
    good = next(f for f in foods if not f.poisonous)
    for food, lit in ((good, False), (bad, True)):
        world.place(rock, 5, 8, Layer.OBJECTS)
        world.place(food, 6, 9, Layer.OBJECTS)
        rock.tick()
        lit_name = f"rock (highly luminous, {game.sc.rock_light})"
        assert rock.luminous is lit and rock.name == (lit_name if lit else "rock (glowing)")
        world.place(food, 8, 8, Layer.OBJECTS)  # two tiles away: out of reach
        rock.tick()
        assert not rock.luminous
    assert isinstance(rock, GlowingRock)


def test_chef_collects_serves_and_calls_a_meal() -> None:
    game = Game("normal", 2, max_steps=2000)
    sc = game.sc
    chef = next(a for a in sc.world.agents if a.name == "Chef")
    for table in sc.colony.tables:  # clear the tables so the Chef's serving shows
        for food in list(table.contents):
            food.remove_from_world()
    game.act("TELEPORT_TO_LOCATION", "cafeteria")
    game.talk(chef, "Can you collect food from the farm and place it in the pot?", "OK")
    pot = sc.colony.pot
    for _ in range(300):  # (the field holds ten mushrooms: the Chef's round takes a while)
        game.wait(1)
        if pot is not None and pot.parent is sc.colony.prep_table and pot.contents:
            break
    assert pot is not None and pot.parent is sc.colony.prep_table
    in_field = [o for o in sc.world.objects.values() if o.type == "mushroom" and o.parent is None]
    assert sum(1 for o in pot.contents if o.type == "mushroom") == 10 and not in_field  # the whole field
    assert game.card["scoreCard"][0]["score"] == 0  # the Chef's pot is not the agent's
    game.talk(chef, "Can you serve the food in the pot onto the buffet so it's available for meals?", "OK")
    game.wait(40)
    assert all(len(t.contents) == 1 for t in sc.colony.tables)
    game.talk(chef, "Can you call the colonists for a meal?", "OK")
    game.wait(60)
    assert game.card["scoreCard"][3]["score"] == 5  # every colonist ate one
    assert not any(t.contents for t in sc.colony.tables)


def test_farmer_plants_seeds_that_grow_into_mushrooms() -> None:
    game = Game("normal", 1, max_steps=2000)
    sc = game.sc
    farmer = next(a for a in sc.world.agents if a.name == "Farmer")
    game.act("TELEPORT_TO_LOCATION", "farm")
    game.talk(farmer, "Can you plant more seeds", "OK")
    game.wait(60)
    planted = [t for t in sc.colony.soil if any(o.type == "seed" for o in t.contents)]
    grown = [o for o in sc.world.objects.values() if "grown_at" in o.props]
    assert len(planted) + len(grown) == 5 and all(not t.has_hole() for t in planted)
    assert sc.colony.shovel is not None and sc.colony.shovel.location() == sc.colony.shovel_spot
    game.wait(250)
    grown = [o for o in sc.world.objects.values() if "grown_at" in o.props]
    assert len(grown) >= 4


def test_a_cooked_mushroom_is_refused() -> None:
    game = Game("normal", 0)
    food = next(o for o in game.sc.world.objects.values() if o.type == "mushroom" and not o.parts)
    food.cooked = True
    colonist = colonists(game)[0]
    game.sc.player.add(food)
    game.act("WAIT")
    game.give(food.uuid, colonist)
    game.act("WAIT")
    assert food.alive and food.parent is not colonist
    assert game.card["scoreCard"][3]["score"] == 0


# ---- scorer fixes ------------------------------------------------------------------------------
def _feed_directly(game: Game, colonist: Any, food: WorldObject) -> None:
    colonist.add(food)


def test_a_sick_colonist_is_unregistered_and_never_counts_later() -> None:
    game = Game("normal", 0, max_steps=400)
    foods = [o for o in game.sc.world.objects.values() if o.type == "mushroom"]
    moldy = next(f for f in foods if f.parts)
    _feed_directly(game, colonists(game)[0], moldy)
    game.wait(300)  # ill after 26-44 steps, well again 101 steps later
    assert not colonists(game)[0].poisoned
    assert game.card["scoreCard"][4]["score"] == 0
    assert game.card["scoreCard"][3]["score"] == 1


def test_a_sick_colonist_walks_to_the_infirmary_once() -> None:
    game = Game("normal", 0, max_steps=400)
    colonist = colonists(game)[1]
    colonist.eat_poison()
    game.wait(60)
    assert colonist.poisoned
    sizes = []
    for _ in range(40):
        game.act("WAIT")
        sizes.append(len(colonist.jobs) + len(colonist.queue))
    assert max(sizes) <= 2
    assert (colonist.x, colonist.y) == game.sc.colony.infirmary


def test_a_second_bad_meal_does_not_restart_the_incubation() -> None:
    game = Game("normal", 0)
    colonist = colonists(game)[2]
    colonist.eat_poison()
    for _ in range(10):
        colonist.tick()
    before = colonist.poison_counter
    colonist.eat_poison()
    assert colonist.poison_counter == before


def test_eating_past_ten_clean_meals_neither_crashes_nor_overflows() -> None:
    game = Game("normal", 5, max_steps=1000)
    sc = game.sc
    clean = [o for o in sc.world.objects.values() if o.type == "mushroom" and not o.parts]
    for colonist, food in zip(colonists(game), clean, strict=False):
        _feed_directly(game, colonist, food)
    sc._clean_meals = 9  # one short: the next watched meals take it past ten in one tick
    game.wait(55)
    assert game.card["completedSuccessfully"]
    safe = game.card["scoreCard"][4]
    assert safe["score"] == 10 and safe["completed"]


def test_success_is_latched() -> None:
    game, _ = run_oracle("normal", 1)
    assert game.card["completedSuccessfully"]
    colonists(game)[0].eat_poison()
    for _ in range(80):
        game.sc.world.tick()
    assert game.sc.scorecard.success and game.sc.scorecard.completed


def test_illness_starts_26_to_44_steps_after_a_bad_meal_and_lasts_101() -> None:
    for seed in range(3):
        game = Game("normal", seed, max_steps=300)
        moldy = next(o for o in game.sc.world.objects.values() if o.type == "mushroom" and o.parts)
        colonist = colonists(game)[3]
        _feed_directly(game, colonist, moldy)
        game.wait(200)
        posts = {p.content: p.step for p in game.sc.world.feed.updates if p.author == colonist.name}
        eaten = next(r.step for r in colonist.history if r.action == "EAT")
        assert 26 <= posts["I'm not feeling well."] - eaten <= 44
        assert posts["I'm feeling better."] - posts["I'm not feeling well."] == 101


def test_same_seed_same_oracle_episode() -> None:
    first, _ = run_oracle("normal", 7)
    second, _ = run_oracle("normal", 7)
    assert first.card == second.card and first.obs == second.obs


def test_the_mold_colonises_its_hosts_and_its_spores_reach_other_colours() -> None:
    """Every mushroom of the host colour(s) carries a colony ("mold"); about a third of the
    others carry its spores ("mold spores"), as toxic; the rest are clean."""
    spread = other = 0
    for seed in range(6):
        sc = Game("normal", seed).sc
        for food in (o for o in sc.world.objects.values() if o.type == "mushroom"):
            parts = [p.name for p in food.parts]
            if food.color in sc.moldy:
                assert parts == ["mold"] and poisonous_food(food)
            else:
                other += 1
                spread += parts == ["mold spores"]
                assert parts in ([], ["mold spores"]) and poisonous_food(food) == bool(parts)
    assert 0.2 < spread / other < 0.5, (spread, other)


def test_a_clone_plays_on_with_its_own_characters() -> None:
    # `copy.copy` of an env is a deep copy (`CopiedWhole`). Its characters' jobs and dialog
    # callbacks must be its own: bound methods of the compiled characters, `partial`s of them
    # and `set.add` are builtins, which `copy.deepcopy` keeps as they are (a clone's Chef
    # queued its walk on the original's; a compiled `say` job could not be copied at all).
    game = Game("normal", 2, max_steps=2000)
    chef = next(a for a in game.sc.world.agents if a.name == "Chef")
    game.act("TELEPORT_TO_LOCATION", "cafeteria")
    game.talk(chef, "Can you collect food from the farm and place it in the pot?", "OK")
    clone = copy.copy(game.env)
    twin = clone.unwrapped.scenario
    twin_chef = next(a for a in twin.world.agents if a.name == "Chef")
    assert twin_chef.jobs and all(job.owner is twin_chef for job in twin_chef.jobs)
    for _ in range(40):  # both play on alike, each with its own Chef
        want = game.act("WAIT")
        got = clone.step({"action": "WAIT"})[4]["observation"]
        assert got == want
    assert (twin_chef.x, twin_chef.y) == (chef.x, chef.y) and len(twin_chef.jobs) == len(chef.jobs)
    colonist, twin_colonist = game.sc.colony.colonists[0], twin.colony.colonists[0]
    option = next(o for node in twin_colonist.dialog_tree.nodes.values() for o in node.options if o.callback)
    option.callback()  # "there is food in the cafeteria": the clone's colonist is told, not the original
    assert EAT_SIGNAL in twin_colonist.states and EAT_SIGNAL not in colonist.states
