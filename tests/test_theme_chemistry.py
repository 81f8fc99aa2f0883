"""Combinatorial Chemistry: mixing and rust rules, the locked door, anti-gold trajectories and
the generated remedies. The tests peek at the scenario to know where things are."""

from __future__ import annotations

from collections import Counter

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES, CombinatorialChemistry
from discoverylab.scenarios.combinatorial_chemistry.things import (
    Substance,
    cosine,
    recipe_text,
    reduce_recipe,
    rust_level_for,
)
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver
from stats_kit import looks_uniform, shares

TASK = "CombinatorialChemistry"


def seed_with_remedy(difficulty: str, remedy: dict[str, int]) -> int:
    """The first seed whose remedy is `remedy` (tests that need a known recipe find one)."""
    for seed in range(200):
        env = DiscoveryWorldEnv(TASK, difficulty)
        env.reset(seed=seed)
        if getattr(env.scenario, "remedy", None) == remedy:
            return seed
    raise AssertionError(f"no seed below 200 has the remedy {remedy}")


A1C2 = {"Substance A": 1, "Substance C": 2}


class Driver(EnvDriver):
    def __init__(self, difficulty: str = "normal", seed: int = 0, max_steps: int = 300) -> None:
        super().__init__(TASK, difficulty, seed, max_steps=max_steps)
        assert isinstance(self.scenario, CombinatorialChemistry)

    def dispenser(self, letter: str) -> WorldObject:
        return next(d for d in self.scenario.dispensers if d.name == f"Dispenser (Substance {letter})")

    def take_key_and_jar(self) -> None:
        s = self.scenario
        self.go_to(s.key)
        assert self.do("PICKUP", s.key) == "I picked up the rusted key (heavily rusted)."
        self.go_to(s.jar)
        assert self.do("PICKUP", s.jar) == "I picked up the jar."
        assert self.do("PUT", s.key, s.jar) == "I put the rusted key (heavily rusted) into the jar."

    def dispense(self, *letters: str) -> None:
        for letter in letters:
            dispenser = self.dispenser(letter)
            self.go_to(dispenser)
            assert (
                self.do("USE", dispenser, self.scenario.jar)
                == f"You dispense Substance {letter} into the jar."
            )

    def clean(self) -> str:
        self.go_to(self.scenario.cleaner)
        return self.do("USE", self.scenario.cleaner, self.scenario.jar)

    def jar_substances(self) -> list[Substance]:
        return [o for o in self.scenario.jar.contents if isinstance(o, Substance)]

    def scores(self) -> dict[str, int]:
        return {item.name: item.score for item in self.scenario.scorecard.items}


# ---- pure rules -------------------------------------------------------------------------
def test_recipes_reduce_and_compare_by_proportion() -> None:
    assert reduce_recipe({"Substance A": 2, "Substance B": 2}) == {"Substance A": 1, "Substance B": 1}
    assert reduce_recipe({"Substance C": 4, "Substance A": 2, "Substance B": 0}) == {
        "Substance A": 1,
        "Substance C": 2,
    }
    assert cosine(
        {"Substance A": 1, "Substance C": 2}, {"Substance A": 2, "Substance C": 4}
    ) == pytest.approx(1.0)
    assert cosine({"Substance B": 1}, {"Substance A": 1}) == 0.0
    # 1:3 against 1:2 is the closest near miss among recipes of up to 4 measures: not a cure.
    assert (
        rust_level_for(cosine({"Substance A": 1, "Substance C": 3}, {"Substance A": 1, "Substance C": 2}))
        == 1
    )
    assert [rust_level_for(c) for c in (0.995, 0.7, 0.4, 0.2)] == [0, 1, 2, 3]
    assert recipe_text({"Substance C": 2, "Substance A": 1}) == "1 part Substance A, and 2 parts Substance C"
    text = recipe_text({"Substance C": 1, "Substance A": 1, "Substance B": 2})
    assert text == "1 part Substance A, 2 parts Substance B, and 1 part Substance C"


# ---- mixing in the world ------------------------------------------------------------------
def test_substances_mix_into_one_named_mixture_within_the_step() -> None:
    d = Driver()
    d.take_key_and_jar()
    d.dispense("A")
    assert [s.name for s in d.jar_substances()] == ["Substance A"]
    d.dispense("A")
    (both,) = d.jar_substances()
    assert both.name == "Substance A (2 measures)" and both.recipe == {"Substance A": 1}
    d.dispense("C", "C")
    (mixture,) = d.jar_substances()
    assert mixture.name == "mixture (2 parts Substance A, 2 parts Substance C)"
    assert mixture.recipe == {"Substance A": 1, "Substance C": 1}
    names = [e["name"] for e in d.obs["inventoryObjects"]]
    assert mixture.name in names and "Substance A" not in names  # the measures inside are hidden
    assert d.scores()["Mix chemicals in jar"] == 1


def test_dispensers_refill_and_refuse_non_containers() -> None:
    d = Driver()
    d.take_key_and_jar()
    dispenser = d.dispenser("B")
    d.go_to(dispenser)
    for _ in range(3):
        assert d.do("USE", dispenser, d.scenario.jar) == "You dispense Substance B into the jar."
    assert d.jar_substances()[0].name == "Substance B (3 measures)"
    assert len(dispenser.contents) == 1 and dispenser.contents[0].name == "Substance B"
    key = d.scenario.key
    message = d.do("USE", dispenser, key)
    assert (
        message == f"You can't use the chemical dispenser on something that isn't a container ({key.name})."
    )
    assert d.scores()["Use each chemical dispenser"] == 1


def test_bottle_cleaner_empties_the_jar_but_keeps_the_key() -> None:
    d = Driver()
    d.take_key_and_jar()
    assert d.clean() == "The jar has no substances to remove."
    assert d.scores()["Use bottle cleaner"] == 0  # only a cleaning that ran counts
    d.dispense("A", "B")
    assert d.clean() == "You clean the jar of all substances."
    assert d.jar_substances() == [] and d.scenario.key.parent is d.scenario.jar
    assert d.scores()["Use bottle cleaner"] == 1


# ---- the key --------------------------------------------------------------------------------
def test_near_misses_lighten_the_rust_which_never_comes_back() -> None:
    d = Driver(seed=seed_with_remedy("normal", A1C2))  # 1 part A, 2 parts C
    d.take_key_and_jar()
    key = d.scenario.key
    d.dispense("A")  # cos 0.45
    assert key.name == "rusted key (moderately rusted)" and d.scores()["Key is not rusted"] == 1
    d.dispense("C")  # 1:1, cos 0.95
    assert key.name == "rusted key (lightly rusted)" and d.scores()["Key is not rusted"] == 2
    assert d.clean() == "You clean the jar of all substances."
    d.dispense("B")  # cos 0: no effect, and the rust stays light
    assert key.name == "rusted key (lightly rusted)" and key.props["rusted"]
    assert d.scores()["Key is not rusted"] == 2


def test_only_the_derusted_key_opens_the_door_and_leaving_wins() -> None:
    d = Driver(seed=seed_with_remedy("normal", A1C2))
    s = d.scenario
    d.take_key_and_jar()
    inside = (s.door.x, s.door.y - 1)
    s.player.world.place(s.player, *inside)
    assert d.do("ROTATE_DIRECTION", "south") == "I rotated to face south."
    assert d.do("OPEN", s.door) == "The key is rusted and doesn't work."
    d.dispense("A", "C", "C")
    assert s.key.name == "key (no rust)" and d.scores()["Key is not rusted"] == 3
    s.player.world.place(s.player, *inside)
    d.do("ROTATE_DIRECTION", "south")
    assert d.do("OPEN", s.door) == "I opened the door."  # the key is still in the carried jar
    assert not d.terminated
    d.do("MOVE_DIRECTION", "south")
    assert not d.terminated  # on the door tile: still in the shed
    d.do("MOVE_DIRECTION", "south")
    assert d.terminated and s.scorecard.success


# ---- anti-gold ------------------------------------------------------------------------------
def test_wrong_remedy_never_completes_the_task() -> None:
    d = Driver(max_steps=40)
    d.take_key_and_jar()
    d.dispense("A", "A", "C")  # 2:1 instead of 1:2
    assert d.scenario.key.props["rusted"]
    while not (d.terminated or d.truncated):
        d.do("WAIT")
    assert d.truncated and not d.scenario.scorecard.completed and not d.scenario.scorecard.success


def test_teleporting_out_of_the_locked_shed_does_not_count_as_leaving() -> None:
    d = Driver(seed=seed_with_remedy("normal", A1C2))
    s = d.scenario
    d.take_key_and_jar()
    d.go_to(s.door)  # lands on the agent's side of the locked door: still inside
    assert s._inside_shed()
    assert d.scores()["Agent is outside"] == 0 and not d.terminated
    d.do("TELEPORT_TO_LOCATION", "shed")
    d.dispense("A", "C", "C")
    d.go_to(s.door)
    assert d.scores()["Agent is outside"] == 0 and not d.terminated
    assert d.do("OPEN", s.door) == "I opened the door."
    assert not d.terminated  # still inside: walk out through the opened door
    d.do("MOVE_FORWARD")
    d.do("MOVE_FORWARD")
    assert d.terminated and s.scorecard.success  # outside, through the opened door


# ---- layout, remedies, scorecards -------------------------------------------------------------
LAYOUTS = [("easy", 4, (20, 13), 12), ("normal", 3, (19, 13), 12), ("challenge", 4, (20, 13), 13)]


@pytest.mark.parametrize(("difficulty", "dispensers", "door", "max_score"), LAYOUTS)
def test_layout_and_scorecard(
    difficulty: str, dispensers: int, door: tuple[int, int], max_score: int
) -> None:
    d = Driver(difficulty)
    s = d.scenario
    assert [x.name for x in s.dispensers] == [f"Dispenser (Substance {c})" for c in "ABCD"[:dispensers]]
    assert (s.door.x, s.door.y) == door and s.door.requires_key == 123 and s.key.key_id == 123
    assert (s.key.x, s.key.y) == (17, 12) and s.jar.location() == (17, 11)
    assert s.cleaner.location() == (18 + dispensers, 11)
    assert (s.player.x, s.player.y) == (18, 12) and d.obs["teleportLocations"] == ["shed"]
    assert s.scorecard.max_score == max_score
    assert s.scorecard.task_name == f"RustedKeyTask{difficulty.capitalize()}"
    assert (s.mix is None) == (difficulty == "easy")


def test_seed_zero_has_no_fixed_recipe_and_questions_name_the_drawn_one() -> None:
    """Seed 0 used the original's fixed recipes (known from the paper): now drawn like any seed."""
    normals = {tuple(sorted(Driver("normal", seed).scenario.remedy.items())) for seed in range(6)}
    assert len(normals) > 1
    normal = Driver("normal").scenario
    assert normal.scorecard.critical_questions == [
        "Does it clearly state the rust remover compound is a mixture of exactly these compounds in exactly these "
        f"proportions: `{recipe_text(normal.remedy)}`?"
    ]
    easy = Driver("easy").scenario
    (name,) = easy.remedy
    assert easy.scorecard.critical_questions == [
        f"Does it clearly state the rust remover compound is this compound: `{name}`?"
    ]


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_generated_remedies_are_two_or_three_substances_in_small_proportions(difficulty: str) -> None:
    allowed = {f"Substance {letter}" for letter in ("ABCD" if difficulty == "challenge" else "ABC")}
    seen = set()
    for seed in range(1, 40):
        remedy = Driver(difficulty, seed).scenario.remedy
        assert 2 <= len(remedy) <= 3 and set(remedy) <= allowed
        assert sum(remedy.values()) <= 4 and reduce_recipe(remedy) == remedy
        seen.add(tuple(sorted(remedy.items())))
    assert len(seen) > 5


def test_easy_remedies_follow_the_papers_shares() -> None:
    """Each seed draws one of the paper's five remedies (B, D, C, A, C) on its own: over 30
    seeds every remedy appears, C about twice as often (no blocks of five seeds)."""
    drawn = [next(iter(Driver("easy", seed).scenario.remedy)) for seed in range(30)]
    assert set(drawn) == set(EASY_REMEDIES)
    assert looks_uniform(drawn, shares(EASY_REMEDIES)), Counter(drawn)


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_key_reacts_to_the_generated_remedy_only(difficulty: str, seed: int) -> None:
    d = Driver(difficulty, seed)
    d.take_key_and_jar()
    remedy = d.scenario.remedy
    letters = [name[-1] for name, n in remedy.items() for _ in range(n)]
    if difficulty == "easy":
        near_miss = [next(c for c in "ABCD" if c not in letters)]
    else:  # one measure too many of one ingredient, added first so no step passes through the remedy
        near_miss = [letters[0], *letters]
    d.dispense(*near_miss)
    assert d.scenario.key.props["rusted"]
    assert d.clean() == "You clean the jar of all substances."
    d.dispense(*letters)
    assert d.scenario.key.name == "key (no rust)" and not d.scenario.key.props["rusted"]
