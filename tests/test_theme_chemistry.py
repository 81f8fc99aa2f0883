"""Combinatorial Chemistry: mixing and rust rules, the locked door, anti-gold trajectories and
the generated remedies. The tests peek at the scenario to know where things are."""

from __future__ import annotations

from collections import Counter

import pytest

from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES, CombinatorialChemistry
from discoverylab.scenarios.combinatorial_chemistry.things import (
    ETCH_LIMITS,
    PARTS_MAX,
    Recipe,
    Substance,
    cosine,
    recipe_text,
    reduce_recipe,
    remedy_space,
    rust_level_for,
)
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver
from world_kit import moves_first

TASK = "CombinatorialChemistry"


A1C2 = {"Substance A": 1, "Substance C": 2}


class Driver(EnvDriver):
    def __init__(self, difficulty: str = "normal", seed: int = 0, max_steps: int = 300,
                 remedy: Recipe | None = None) -> None:  # fmt: skip
        super().__init__(TASK, difficulty, seed, max_steps=max_steps)
        assert isinstance(self.scenario, CombinatorialChemistry)
        if remedy is not None:  # a test that needs a known recipe sets it (seeds draw from 250)
            self.scenario.remedy = self.scenario.key.remedy = dict(remedy)
            if self.scenario.nail is not None:
                self.scenario.nail.remedy = dict(remedy)

    def dip(self) -> str:
        """Put the key into the jar for one step and take it out: its name while it soaked."""
        key = self.scenario.key
        assert self.do("PUT", key, self.scenario.jar).startswith("I put")
        name = key.name
        assert self.do("PICKUP", key).startswith("I picked up")
        return name

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

    def take_key_out_and(self, *letters: str) -> None:
        """Take the key out of the jar, then dispense (so the key etches only when dipped)."""
        if self.scenario.key.parent is self.scenario.jar:
            assert self.do("PICKUP", self.scenario.key).startswith("I picked up")
        self.dispense(*letters)

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
def test_the_key_shows_the_reaction_and_near_misses_lighten_the_rust_for_good() -> None:
    d = Driver(remedy=A1C2)  # 1 part A, 2 parts C
    d.take_key_and_jar()
    key = d.scenario.key
    d.dispense("A")  # cos 0.45
    assert key.name == "rusted key (moderately rusted, rust reacting at 45%)"
    assert d.scores()["Key is not rusted"] == 1
    d.dispense("C")  # 1:1, cos 0.95
    assert key.name == "rusted key (lightly rusted, rust reacting at 95%)"
    assert d.scores()["Key is not rusted"] == 2
    assert d.clean() == "You clean the jar of all substances."
    assert key.name == "rusted key (lightly rusted)"  # nothing to react with
    d.dispense("B")  # cos 0: no effect, and the rust stays light
    assert key.name == "rusted key (lightly rusted, rust reacting at 0%)" and key.props["rusted"]
    assert d.scores()["Key is not rusted"] == 2


def test_near_misses_do_not_derust_only_exact_proportions_do() -> None:
    """2:3 against 3:4 has cosine 0.9995 (the original's 0.99 threshold would derust it): with
    up to six parts per substance only the remedy's own proportions count."""
    d = Driver(remedy={"Substance A": 3, "Substance C": 4})
    d.take_key_and_jar()
    d.take_key_out_and("A", "A", "C", "C", "C")
    key = d.scenario.key
    assert d.dip() == "rusted key (lightly rusted, rust reacting at 100%)" and key.props["rusted"]
    d.take_key_out_and("A")  # 3:3
    assert d.dip() == "rusted key (lightly rusted, rust reacting at 99%)" and key.props["rusted"]
    assert d.clean() == "You clean the jar of all substances."
    d.take_key_out_and("A", "A", "A", "C", "C", "C", "C")
    assert d.dip() == "key (no rust)" and not key.props["rusted"]


def test_each_step_in_a_wrong_substance_etches_the_key_until_it_is_ruined() -> None:
    d = Driver(remedy=A1C2, max_steps=60)
    d.take_key_and_jar()
    key = d.scenario.key
    d.take_key_out_and("B")
    for n in range(1, ETCH_LIMITS["normal"]):
        assert d.dip() == "rusted key (heavily rusted, rust reacting at 0%)"
        assert key.etched == n and not d.terminated
    assert f"etched {n} of 8 times" in next(
        e["description"] for e in d.obs["inventoryObjects"] if e["uuid"] == key.uuid
    )
    d.do("PUT", key, d.scenario.jar)
    assert key.name == "ruined key (etched through)" and key.ruined
    assert d.terminated and d.scenario.scorecard.completed and not d.scenario.scorecard.success
    assert "After 8 etchings the key is ruined" in d.scenario.description()


def test_the_easy_key_takes_no_wrong_soak_and_the_nail_reads_the_reaction() -> None:
    """Easy (issue 21): the nail is the instrument (one reading, a second wrong soak ruins it, the
    task goes on); the key's first wrong soak ruins it and ends the task."""
    d = Driver("easy", remedy={"Substance C": 1}, max_steps=80)
    s = d.scenario
    nail = s.nail
    assert nail is not None and nail.name == "rusted nail (heavily rusted)" and nail.type == "nail"
    d.go_to(nail)
    assert d.do("PICKUP", nail) == "I picked up the rusted nail (heavily rusted)."
    d.go_to(s.jar)
    d.do("PICKUP", s.jar)
    d.dispense("A", "B", "B", "C", "C", "C")
    assert d.do("PUT", nail, s.jar).startswith("I put")
    assert "rust reacting at 80%" in nail.name and not d.terminated  # C: 3 / sqrt(14)
    d.do("PICKUP", nail)
    d.clean()
    d.dispense("A")
    d.do("PUT", nail, s.jar)
    assert nail.name == "ruined nail (etched through)" and not d.terminated
    d.do("PICKUP", nail)
    d.go_to(s.key)
    d.do("PICKUP", s.key)
    d.dip()
    assert d.terminated and not s.scorecard.success and s.key.name == "ruined key (etched through)"
    assert "a single etching ruins it" in s.description() and "ruined after 2 etchings" in s.description()


def test_a_derusted_nail_opens_nothing() -> None:
    d = Driver("easy", remedy={"Substance B": 1}, max_steps=80)
    s = d.scenario
    assert s.nail is not None
    d.go_to(s.nail)
    d.do("PICKUP", s.nail)
    d.go_to(s.jar)
    d.do("PICKUP", s.jar)
    d.dispense("B")
    d.do("PUT", s.nail, s.jar)
    d.do("PICKUP", s.nail)
    assert s.nail.name == "nail (no rust)" and s.key.rusted
    s.player.world.place(s.player, s.door.x, s.door.y - 1)
    d.do("ROTATE_DIRECTION", "south")
    assert d.do("OPEN", s.door) != "I opened the door."


def test_only_the_derusted_key_opens_the_door_and_leaving_wins() -> None:
    d = Driver(remedy=A1C2)
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
def test_wrong_remedy_never_completes_the_task_successfully() -> None:
    d = Driver(remedy=A1C2, max_steps=40)
    d.take_key_and_jar()
    d.dispense("A", "A", "C")  # 2:1 instead of 1:2
    assert d.scenario.key.props["rusted"]
    while not (d.terminated or d.truncated):
        d.do("WAIT")
    assert d.terminated and d.scenario.key.ruined  # left soaking, the key etched through
    assert d.scenario.scorecard.completed and not d.scenario.scorecard.success


def test_teleporting_out_of_the_locked_shed_does_not_count_as_leaving() -> None:
    d = Driver(remedy=A1C2)
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


@pytest.mark.parametrize(("difficulty", "count"), [("normal", 250), ("challenge", 862)])
def test_generated_remedies_are_two_or_three_substances_in_up_to_six_parts(difficulty: str, count: int) -> None:
    allowed = {f"Substance {letter}" for letter in ("ABCD" if difficulty == "challenge" else "ABC")}
    space = remedy_space(tuple(sorted(allowed)))
    assert len(space) == count and len({tuple(sorted(r.items())) for r in space}) == count
    seen = set()
    for seed in range(1, 40):
        remedy = Driver(difficulty, seed).scenario.remedy
        assert 2 <= len(remedy) <= 3 and set(remedy) <= allowed and remedy in space
        assert max(remedy.values()) <= PARTS_MAX and reduce_recipe(remedy) == remedy
        seen.add(tuple(sorted(remedy.items())))
    assert len(seen) > 30  # drawn from hundreds: few repeats


def test_easy_remedies_are_the_four_substances() -> None:
    """The original's list (B, D, C, A, C) made C right 40% of the time for a report that never
    played; each of A-D is now one of four."""
    assert EASY_REMEDIES == ("Substance A", "Substance B", "Substance C", "Substance D")
    drawn = Counter(next(iter(Driver("easy", seed).scenario.remedy)) for seed in range(40))
    assert set(drawn) == set(EASY_REMEDIES) and min(drawn.values()) >= 3, drawn


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_key_reacts_to_the_generated_remedy_only(difficulty: str, seed: int) -> None:
    d = Driver(difficulty, seed)
    d.take_key_and_jar()
    remedy = d.scenario.remedy
    letters = [name[-1] for name, n in remedy.items() for _ in range(n)]
    if difficulty == "easy":
        near_miss = [next(c for c in "ABCD" if c not in letters)]
    else:  # one measure too many of one ingredient
        near_miss = [letters[0], *letters]
    d.take_key_out_and(*near_miss)
    if difficulty == "easy":  # the key takes no wrong soak: the nail shows the reaction
        nail = d.scenario.nail
        assert nail is not None
        d.go_to(nail)
        d.do("PICKUP", nail)
        d.do("PUT", nail, d.scenario.jar)
        assert "rust reacting at 0%" in nail.name and nail.props["rusted"]
        d.do("PICKUP", nail)
    else:
        assert "rust reacting at" in d.dip() and d.scenario.key.props["rusted"]
    assert d.clean() == "You clean the jar of all substances."
    d.take_key_out_and(*letters)
    assert d.dip() == "key (no rust)" and not d.scenario.key.props["rusted"]


def test_measures_skipping_react_with_fewer_than_two_neighbours_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A substance's tick calls `react` only when its holder holds two things or more, and the
    scorer stops searching the jar for a mixture once "Mix" is completed (session 16). Played
    against the previous tick and update: scripted mixing (one measure, two, a mixture, the
    cleaner, the key dipped), a second measure put into a dispenser by other code (it must
    react there), the oracle's episodes and random RL episodes at Normal and Challenge; every
    step's observation and scorecard must match."""
    import numpy as np

    from discoverylab.bench.episode import run_episode
    from discoverylab.rl import make_rl_env
    from discoverylab.scenarios.combinatorial_chemistry import things

    def old_tick(self: Substance) -> None:  # before session 16
        if self.parent is not None:
            things.react(self.parent)

    def old_update(self: CombinatorialChemistry) -> None:  # before session 16
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
        if self.mix is not None and any(isinstance(o, Substance) and len(o.recipe) > 1 for o in jar.contents):
            self.mix.set(1)
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

    def play() -> list[object]:
        d = Driver("normal", 2, max_steps=400)
        out: list[object] = []
        d.take_key_and_jar()
        for letters in (("A",), ("B",), ("A", "C"), ("C",)):
            d.take_key_out_and(*letters)
            out += [d.obs, d.scores()]
            if d.scenario.key.parent is not d.scenario.jar:
                d.do("PUT", d.scenario.key, d.scenario.jar)
            out += [d.obs, d.scores()]
        out += [d.clean(), d.obs, d.scores()]
        dispenser = d.dispenser("B")
        dispenser.add(Substance(d.world, "Substance B"))  # other code: two measures in a dispenser
        out += [d.do("WAIT"), d.obs, d.scores(), [s.name for s in dispenser.contents]]
        out += [d.do("WAIT"), d.obs, d.scores()]
        for difficulty in ("normal", "challenge"):
            _, log = run_episode(TASK, difficulty, 1, "oracle")
            out += [*log[:-1], log[-1]["scorecard"]]
            env = make_rl_env(TASK, difficulty, max_steps=400, info="full")
            _, info = env.reset(seed=4)
            rng = np.random.default_rng(4)
            for i in range(400):
                obs, reward, term, trunc, info = env.step(moves_first(rng, info["action_mask"], i))
                out.append((reward, {k: v.tobytes() for k, v in obs.items()}, info["observation"],
                            env.unwrapped.scenario.scorecard.to_dict()))  # fmt: skip
                if term or trunc:
                    break
        return out

    lean = play()
    monkeypatch.setattr(Substance, "tick", old_tick)
    monkeypatch.setattr(CombinatorialChemistry, "update", old_update)
    assert play() == lean
    assert any(isinstance(e, list) and e and e[0].startswith("Substance B (2") for e in lean)  # the dispenser's pair reacted
    assert any(isinstance(e, dict) and e.get("Mix chemicals in jar") == 1 for e in lean)
