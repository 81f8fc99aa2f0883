"""No shortcut passes a task (issue 7, part 3): each test plays one no-discovery strategy through
`env.step` and asserts it does not beat chance. Tests look up object uuids in the scenario to save
scripting the exploration (marking them seen); the attack itself uses only agent actions.
"""

from __future__ import annotations

from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.plant_nutrients.things import NUTRIENTS
from discoverylab.scenarios.proteomics.things import SPECIES
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.objects import WorldObject
from env_driver import EnvDriver


class Player(EnvDriver):
    """A lazy agent's hands: actions by object, dialog choices by option text."""

    def __init__(self, task: str, difficulty: str, seed: int) -> None:
        super().__init__(task, difficulty, seed, reveal=True, max_steps=5000)

    def try_choose(self, text: str) -> bool:
        """Pick the option with this text if it is offered (a lazy agent tries, and moves on)."""
        options = self.obs["dialog_box"].get("dialogOptions", {})
        numbers = [int(k) for k, v in options.items() if v == text]
        if numbers:
            self.send({"chosen_dialog_option_int": numbers[0]})
        return bool(numbers)

    def take(self, obj: WorldObject) -> None:
        if not self.do("PICKUP", obj).startswith("I picked up"):  # within reach already, or go there
            super().take(obj)

    def wait(self, ticks: int) -> None:
        for _ in range(ticks):
            if self.terminated:
                return
            self.do("WAIT")

    @property
    def success(self) -> bool:
        return bool(self.scenario.scorecard.completed and self.scenario.scorecard.success)


# ---- Plant Nutrients ----------------------------------------------------------------------------
def _imprint_all_five(p: Player, field: int, level: int) -> dict[str, int]:
    """Select every nutrient at `level` on a field's controller (as far as it lets us), imprint."""
    controller = p.scenario.controllers[field]
    p.do("TELEPORT_TO_OBJECT", controller)
    p.do("TALK", controller)
    word = {1: "low", 2: "medium", 3: "high"}[level]
    for n in NUTRIENTS:
        if p.try_choose(f"Set {n.capitalize()} Level (Current: Unset)"):
            p.try_choose(f"{n.capitalize()} level: {word}")
            p.try_choose("Back to main menu")
    p.try_choose("Imprint current selections on this field (Note: can't be changed)")
    p.wait(1)
    return dict(p.scenario.fields[field][0].props["soilNutrients"])


def _plant_two(p: Player, field: int) -> None:
    for tile in p.scenario.fields[field][:2]:
        shovel = next(o for o in p.scenario.world.objects.values() if o.name == "shovel")
        jar = next(o for o in p.scenario.world.objects.values() if o.name == "seed jar")
        if not p.scenario.player.contains(shovel):
            p.take(shovel)
        if not p.scenario.player.contains(jar):
            p.take(jar)
        p.scenario.player.world.place(p.scenario.player, tile.x, tile.y)  # stand on the plot
        p.do("USE", shovel, tile)
        seed = next(o for o in p.scenario.player.inventory() if o.type == "seed")
        p.do("PUT", seed, tile)
        dirt = next(o for o in p.scenario.player.inventory() if o.type == "dirt")
        p.do("PUT", dirt, tile)


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_shortcut_plant_all_five_nutrients_at_level_k(difficulty: str) -> None:
    """Field k with every nutrient at level k (and two seeds each) passed Normal 20/20 seeds:
    a controller now sets one nutrient (two in Challenge), so a field tests one guess."""
    wins = 0
    seeds = range(6)
    for seed in seeds:
        p = Player("PlantNutrients", difficulty, seed)
        for field in range(3):
            levels = _imprint_all_five(p, field, field + 1)
            assert sum(v > 0 for v in levels.values()) <= (2 if difficulty == "challenge" else 1)
            _plant_two(p, field)
        p.wait(15)
        wins += p.success
    assert wins <= 2, f"{wins}/{len(seeds)} seeds passed without measuring anything"


def test_shortcut_plant_not_rule_in_untouched_field() -> None:
    """A "not" rule (n1 != v1) used to hold on untouched, all-zero soil: planting there won."""
    tried = 0
    for seed in range(12):
        p = Player("PlantNutrients", "challenge", seed)
        if p.scenario.rule.kind != "not":
            continue
        tried += 1
        _plant_two(p, 0)
        p.wait(15)
        assert not p.success
    assert tried >= 2


# ---- Lost in Translation ------------------------------------------------------------------------
def _store_items(p: Player) -> list[WorldObject]:
    objects = p.scenario.world.objects.values()
    out = []
    for kind in ("mushroom", "flower", "key", "shovel"):
        found = [o for o in objects if o.type == kind and o.parent is not None and o.parent.type == "table"]
        if found:
            out.append(found[0])
    return out


def test_shortcut_translation_carry_one_of_each_and_say_yes() -> None:
    """Carrying a mushroom, flower, key and shovel and saying Yes to the "interested" option
    passed 4/5 seeds: the option no longer tells anything, and unwanted items fail the task."""
    for seed in range(5):
        p = Player("LostInTranslation", "normal", seed)
        for item in _store_items(p):
            p.take(item)
        p.do("TELEPORT_TO_OBJECT", p.scenario.elder)
        p.do("TALK", p.scenario.elder)
        assert p.options() == ["The elder seems interested in what you carry."]
        p.try_choose("The elder seems interested in what you carry.")
        p.try_choose("Yes. You hand the elder everything you carry.")
        p.wait(2)
        assert not p.success


def test_shortcut_translation_give_items_one_by_one() -> None:
    """Handing candidate items over one at a time: the first wrong one fails the task, so this
    wins only when the first guess is right (chance: 1 in 5)."""
    wins = 0
    for seed in range(10):
        p = Player("LostInTranslation", "normal", seed)
        for item in _store_items(p):
            p.take(item)
            p.do("TELEPORT_TO_OBJECT", p.scenario.elder)
            p.do("PUT", item, p.scenario.elder)
            p.wait(1)
            if p.terminated:
                break
        wins += p.success
    assert wins <= 3


# ---- Archaeology --------------------------------------------------------------------------------
@pytest.mark.parametrize("artifact", [0, 1, 2])
def test_shortcut_archaeology_artifact_beside_untouched_flag(artifact: int) -> None:
    """Carrying an artifact onto the tile west of the untouched flag used to count as placing
    the flag beside it (the flag counted as placed whenever nobody held it)."""
    p = Player("ArchaeologyDating", "easy", 0)
    thing = p.scenario.artifacts[artifact]
    p.take(thing)
    flag = p.scenario.flag
    p.scenario.player.world.place(p.scenario.player, flag.x - 1, flag.y)
    p.do("DROP", thing)
    p.wait(2)
    assert thing.location() == (flag.x - 1, flag.y)
    assert not p.terminated and not p.scenario.scorecard.completed


# ---- Teleporting out of locked rooms -------------------------------------------------------------
@pytest.mark.parametrize("task", ["Proteomics", "ArchaeologyDating"])
def test_shortcut_teleport_to_door_of_locked_room(task: str) -> None:
    """TELEPORT_TO_OBJECT onto the locked door landed outside (south first); it now lands on
    the agent's side, and never across a locked door."""
    p = Player(task, "easy", 0)
    door = next(o for o in p.scenario.world.objects.values() if o.type == "door")
    assert door.requires_key and not door.is_open
    assert p.do("TELEPORT_TO_OBJECT", door).startswith("I teleported")
    assert p.scenario.player.y < door.y  # still inside (the door is in the bottom wall)
    tree = next(o for o in p.scenario.world.objects.values() if o.name == "tree trunk")
    assert not p.do("TELEPORT_TO_OBJECT", tree).startswith("I teleported")
    assert p.scenario.player.y < door.y


# ---- Proteomics ---------------------------------------------------------------------------------
def test_shortcut_proteomics_easy_middle_of_canonical_order() -> None:
    """Easy's three species were consecutive in the canonical order with the answer in the
    middle: picking that middle species (from the statue names) must not beat chance."""
    wins = 0
    for seed in range(20):
        p = Player("Proteomics", "easy", seed)
        names = [n.split(" ", 3)[3] for n in p.obs["teleportLocations"] if n.startswith("Statue of")]
        order = [sp.name for sp in SPECIES]
        picks = [n for n in names if {order[(order.index(n) + d) % 5] for d in (-1, 1)} == set(names) - {n}]
        guess = picks[0] if picks else names[0]
        wins += guess == p.scenario.answer.name
    assert wins <= 11, f"the middle species was the answer on {wins}/20 seeds"


# ---- Reactor Lab --------------------------------------------------------------------------------
def _sweep_reactor(p: Player, reactor: Any, low: int) -> None:
    """Tune `reactor` blind: down to `low`, then +10 Hz presses in passes offset by 3 Hz."""
    p.do("TELEPORT_TO_OBJECT", reactor)
    p.do("TALK", reactor)
    for step in (1000, 100, 10):
        while reactor.frequency - step >= low and not p.terminated:
            p.try_choose(f"Decrease frequency by {step} Hz")
    for offset in (0, 3, 6):
        while reactor.frequency > low + offset and not p.terminated:
            step = 1 if reactor.frequency - low - offset < 10 else 10
            p.try_choose(f"Decrease frequency by {step} Hz")
        while reactor.frequency < low + offset + 1200 and not p.terminated and not reactor.activated:
            p.try_choose("Increase frequency by 10 Hz")
        if reactor.activated or p.terminated:
            break
    p.try_choose("Exit")


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_reactor_lab_blind_sweep_fails(difficulty: str) -> None:
    """Each unknown crystal into an empty reactor, then a blind sweep starting 600 Hz below the
    lowest known frequency, no measuring: before the press limit it activated every reactor on
    about 3 in 20 Normal and 2 in 20 Challenge seeds; now a reactor burns out first."""
    outcomes = []
    for seed in range(10):
        p = Player("ReactorLab", difficulty, seed)
        assert "burns it out" in p.obs["taskProgress"][0]["description"]
        known = [r for r in p.scenario.reactors if r.crystal() is not None]
        low = int(min(r.frequency for r in known)) - 600
        loose = [c for c in p.scenario.crystals if not any(r.crystal() is c for r in known)]
        empty = [r for r in p.scenario.reactors if r.crystal() is None]
        for crystal, reactor in zip(loose, empty, strict=True):
            if p.terminated:
                break
            p.take(crystal)
            p.do("TELEPORT_TO_OBJECT", reactor)
            p.do("PUT", crystal, reactor)
            _sweep_reactor(p, reactor, low)
        outcomes.append(p.success)
        assert p.terminated and any(r.burnt_out for r in p.scenario.reactors), f"seed {seed}"
    assert not any(outcomes)


# ---- Unit tests: the Dialog test ---------------------------------------------------------------
def test_shortcut_dialog_try_every_option() -> None:
    """Never read Sally's line: try the options in turn, talking again after each wrong one.
    In the original a new TALK restarted the dialog, so this passed every seed; a wrong choice
    now fails the task, leaving only luck ((1/8)^3 per seed)."""
    wins = 0
    for seed in range(20):
        p = Player("DialogTest", "normal", seed)
        sally = p.scenario.sally
        p.do("TELEPORT_TO_OBJECT", sally)
        tried: set[tuple[str, str]] = set()
        good: dict[str, str] = {}  # line -> the option that led on (remembered, not read)
        for _ in range(60):
            if p.terminated:
                break
            p.do("TALK", sally)
            while p.options() and not p.terminated:
                line = p.obs["dialog_box"]["dialogIn"]
                fresh = [o for o in p.options() if o != "Exit" and (line, o) not in tried]
                choice = good.get(line) or (fresh[0] if fresh else "Exit")
                tried.add((line, choice))
                p.try_choose(choice)
                if choice == "Exit" or "not the correct answer" in p.obs["dialog_box"].get("dialogIn", ""):
                    break
                good[line] = choice
        wins += p.success
    assert wins <= 1, f"trying every option passed {wins}/20 seeds"


# ---- Every task: doing nothing ------------------------------------------------------------------
@pytest.mark.parametrize(("task", "difficulty"), [(t, d) for t, c in all_tasks().items() for d in c.difficulties])
def test_shortcut_do_nothing_until_the_step_limit(task: str, difficulty: str) -> None:
    """WAIT every step until the default step limit: no task may succeed by itself (characters,
    ticks and scheduled events must not do the agent's work)."""
    env = DiscoveryWorldEnv(task, difficulty)
    env.reset(seed=0)
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env.step({"action": "WAIT"})
    assert not info["scorecard"]["completedSuccessfully"], (task, difficulty)
