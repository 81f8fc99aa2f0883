"""Space Sick: lazy strategies that must fail (the full seed sweeps are in tests/attacks/)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from space_sick_kit import Game, colonists


# ---- lazy strategies that must fail --------------------------------------------------------------
def _strategy_runs(difficulty: str, seeds: Iterator[int], play: Callable[[Game], None], steps: int) -> list[bool]:
    results = []
    for seed in seeds:
        game = Game(difficulty, seed, max_steps=steps)
        play(game)
        game.wait(steps)
        results.append(bool(game.card["completedSuccessfully"]))
    return results


def _give_everything(game: Game) -> None:
    game.grab_all("cafeteria")
    game.grab_all("farm field")
    people = colonists(game)
    for i, food in enumerate(game.held("mushroom")):
        if i == len(people):
            game.wait(52)
        game.give(food, people[i % len(people)])


def _heat_everything(game: Game, steps: int) -> None:
    """Every mushroom into the cafeteria's stove, `steps` ticks on, then out and to the colonists."""
    game.grab_all("cafeteria")
    game.grab_all("farm field")
    game.act("TELEPORT_TO_LOCATION", "cafeteria")
    stove = game.nearby("stove")[0]["uuid"]
    game.act("TELEPORT_TO_OBJECT", stove)
    game.act("OPEN", stove)
    foods = game.held("mushroom")
    for food in foods:
        game.act("PUT", food, stove)
    game.act("ACTIVATE", stove)
    game.wait(steps)
    game.act("DEACTIVATE", stove)
    for food in foods:
        game.act("PICKUP", food)
    _give_everything(game)


def _cook_everything(game: Game) -> None:
    _heat_everything(game, 8)


def _warm_everything(game: Game) -> None:
    """Normal's cure applied blindly in the Challenge: just past 60 C, not cooked."""
    _heat_everything(game, 1)


def _chef_feeds_the_colony(game: Game) -> None:
    chef = next(a for a in game.sc.world.agents if a.name == "Chef")
    game.act("TELEPORT_TO_LOCATION", "cafeteria")
    game.talk(chef, "Can you call the colonists for a meal?", "OK")
    game.wait(60)
    game.talk(chef, "Can you collect food from the farm and place it in the pot?", "OK")
    game.wait(100)
    game.talk(chef, "Can you serve the food in the pot onto the buffet so it's available for meals?", "OK")
    game.wait(40)
    game.talk(chef, "Can you call the colonists for a meal?", "OK")


def _do_nothing(game: Game) -> None:
    return None


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_doing_nothing_fails(difficulty: str) -> None:
    assert not any(_strategy_runs(difficulty, iter(range(2)), _do_nothing, 300))


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_giving_the_colonists_every_mushroom_fails(difficulty: str) -> None:
    assert not any(_strategy_runs(difficulty, iter(range(3)), _give_everything, 400))


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_cooking_everything_fails(difficulty: str) -> None:
    assert not any(_strategy_runs(difficulty, iter(range(3)), _cook_everything, 400))


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_warming_everything_fails(difficulty: str) -> None:
    """Warming every mushroom just past 60 C used to cure Normal on every seed: the mold's toxin
    is heat-stable now (the full 0-49 sweep is tests/attacks/test_attacks_space_sick.py)."""
    assert not any(_strategy_runs(difficulty, iter(range(3)), _warm_everything, 400))


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_letting_the_chef_feed_everyone_fails(difficulty: str) -> None:
    assert not any(_strategy_runs(difficulty, iter(range(2)), _chef_feeds_the_colony, 400))


def test_attack_jarring_the_first_mushroom_seen_is_no_better_than_chance() -> None:
    wins = 0
    for seed in range(15):
        game = Game("easy", seed)
        first = game.nearby("mushroom")[0]["uuid"]
        jar = game.nearby("jar")[0]["uuid"]
        game.act("TELEPORT_TO_OBJECT", first)
        game.act("PICKUP", first)
        game.act("TELEPORT_TO_OBJECT", jar)
        game.act("PUT", first, jar)
        assert game.card["completed"]
        wins += bool(game.card["completedSuccessfully"])
    assert wins <= 9  # chance is 5 of 15


def test_attack_reporting_every_instrument_is_not_the_gold_answer() -> None:
    """Using every instrument on every mushroom earns the procedure points, but the gold fact
    names one instrument: a report listing all five names states no single detector."""
    game = Game("easy", 0)
    gold = game.card["knowledgeQuestions"][1]["goldFacts"][0]
    others = [n for n in ("densitometer", "spectrometer", "PH meter", "microscope", "radiation meter")
              if n != game.sc.instrument_name]  # fmt: skip
    assert game.sc.instrument_name in gold and not any(f"The {n} detects" in gold for n in others)
