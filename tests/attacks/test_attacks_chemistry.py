"""Lazy-agent attacks on Combinatorial Chemistry (issue 21): each plays through `env.step`.

The issue's row: "try every remedy the generator can draw (at most 46), ignore the rust hints"
won 10/10 seeds at every difficulty. Remedies now come from 250 (Normal) / 862 (Challenge)
recipes, and every soak in a wrong one etches the key (8 etchings ruin it; 1 in Easy, whose
experiment is a rusted nail that reacts as the key does). So trying candidates wins only when the
remedy is among the first few tried: the bound is that share of the candidates, the random
agent's 0 in Normal and Challenge (plus a small margin), and one guess of four in Easy. The
informed path (one probe per dispenser, or Easy's one mixture on the nail, then the computed
remedy) is the oracle, which wins every seed (tests/test_oracle_sweep.py).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES, _remedies
from discoverylab.scenarios.combinatorial_chemistry.things import ETCH_LIMITS, Recipe
from env_driver import EnvDriver

TASK = "CombinatorialChemistry"


def candidates(difficulty: str) -> list[Recipe]:
    """What the generator can draw, simplest (fewest measures) first: the cheapest to try."""
    if difficulty == "easy":
        return [{name: 1} for name in EASY_REMEDIES]
    return sorted(_remedies(difficulty), key=lambda r: (sum(r.values()), sorted(r.items())))


class Chemist(EnvDriver):
    def __init__(self, difficulty: str, seed: int) -> None:
        super().__init__(TASK, difficulty, seed, reveal=True)
        s = self.scenario
        self.take(s.key)
        self.take(s.jar)

    def dip(self, recipe: Recipe) -> bool:
        """Make `recipe` in a clean jar, dip the key for one step, take it out: derusted?"""
        s = self.scenario
        if any(o.type == "substance" for o in s.jar.contents):
            self.go_to(s.cleaner)
            self.do("USE", s.cleaner, s.jar)
        for name, parts in sorted(recipe.items()):
            dispenser = next(d for d in s.dispensers if d.substance_name == name)
            self.go_to(dispenser)
            for _ in range(parts):
                self.do("USE", dispenser, s.jar)
        self.do("PUT", s.key, s.jar)
        self.do("PICKUP", s.key)
        return not s.key.rusted

    def leave(self) -> None:
        s = self.scenario
        s.player.world.place(s.player, s.door.x, s.door.y - 1)  # stand inside the door (saves a walk)
        self.do("ROTATE_DIRECTION", "south")
        self.do("OPEN", s.door)
        self.do("MOVE_DIRECTION", "south")
        self.do("MOVE_DIRECTION", "south")

    @property
    def success(self) -> bool:
        return bool(self.scenario.scorecard.completed and self.scenario.scorecard.success)


def try_in_order(difficulty: str, seed: int, order: list[Recipe]) -> tuple[bool, int]:
    """Dip candidates in `order` until the key is clean, ruined or the steps run out; leave if
    clean. Returns (success, candidates tried)."""
    c = Chemist(difficulty, seed)
    tried = 0
    for recipe in order:
        if c.terminated or c.truncated:
            break
        tried += 1
        if c.dip(recipe):
            c.leave()
            break
    return c.success, tried


def remedy_of(difficulty: str, seed: int) -> Recipe:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    remedy = dict(env.scenario.remedy)  # type: ignore[union-attr]
    env.close()
    return remedy


def bound(difficulty: str, seeds: int) -> float:
    """What blind trying may win: Easy, the one guess the key survives of four; otherwise the
    random agent's 0, plus a margin."""
    base = ETCH_LIMITS["easy"] / len(EASY_REMEDIES) if difficulty == "easy" else 0.0
    return base + 2 * math.sqrt(max(base, 0.02) * (1 - base) / seeds) + 0.05


def _enumerate(difficulty: str, seeds: range) -> None:
    order = candidates(difficulty)
    results = [try_in_order(difficulty, seed, order) for seed in seeds]
    wins = sum(ok for ok, _ in results)
    assert wins / len(seeds) <= bound(difficulty, len(seeds)), (difficulty, wins, results)
    assert max(tried for _, tried in results) <= ETCH_LIMITS[difficulty] + 1  # the key, not the list, ran out


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_attack_chemistry_try_every_remedy_the_generator_draws(difficulty: str) -> None:
    _enumerate(difficulty, range(20))


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_attack_chemistry_try_every_remedy_seeds_0_to_49(difficulty: str) -> None:
    _enumerate(difficulty, range(50))


@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_attack_chemistry_training_seeds_commonest_remedies_first(difficulty: str) -> None:
    """Reuse training-seed knowledge: the remedies seen most often on 60 training instances,
    commonest first, then the rest (a prior learnt from public answers)."""
    seen = Counter(
        tuple(sorted(remedy_of(difficulty, make_instance(TASK, difficulty, "train", i).seed).items()))
        for i in range(60)
    )
    order = [dict(r) for r, _ in seen.most_common()]
    order += [r for r in candidates(difficulty) if r not in order]
    wins = sum(try_in_order(difficulty, seed, order)[0] for seed in range(12))
    assert wins / 12 <= bound(difficulty, 12), (difficulty, wins)


def test_the_enumeration_attack_can_win_without_the_etching_limit() -> None:
    """The attack is real: with a key that never wears out it cleans the key on Easy every time
    (four candidates), as it did on every difficulty before."""
    c = Chemist("easy", 0)
    c.scenario.key.etch_limit = 10**6
    for recipe in candidates("easy"):
        if c.dip(recipe):
            break
    c.leave()
    assert c.success


def test_attack_chemistry_easy_nail_as_a_yes_no_probe() -> None:
    """Use Easy's nail only as derusted-or-not (ignore the reaction percentages): dip it in pure
    substances until it derusts or is ruined, then soak the key in the first substance not ruled
    out. The nail survives one wrong soak, so this rules out at most two of four: it wins at most
    3/4 (and the blind key guess 1/4), where the reading of one mixture wins every seed (the
    oracle). Measured here on 20 seeds."""
    wins = 0
    for seed in range(20):
        c = Chemist("easy", seed)
        s = c.scenario
        nail = s.nail
        assert nail is not None
        c.go_to(nail)
        c.do("PICKUP", nail)
        ruled_out: list[Recipe] = []
        answer = None
        for recipe in candidates("easy"):
            if nail.ruined:
                break
            if any(o.type == "substance" for o in s.jar.contents):
                c.go_to(s.cleaner)
                c.do("USE", s.cleaner, s.jar)
            ((name, _),) = recipe.items()
            dispenser = next(d for d in s.dispensers if d.substance_name == name)
            c.go_to(dispenser)
            c.do("USE", dispenser, s.jar)
            c.do("PUT", nail, s.jar)
            c.do("PICKUP", nail)
            if not nail.rusted:
                answer = recipe
                break
            ruled_out.append(recipe)
        guess = answer or next(r for r in candidates("easy") if r not in ruled_out)
        if c.dip(guess):
            c.leave()
        wins += c.success
    assert wins / 20 <= 0.75 + 2 * math.sqrt(0.75 * 0.25 / 20) + 0.05, wins
