"""Lazy-agent attacks on Proteomics: flag a statue without measuring every species.

The discovery: the proteomics meter's readings of every species, and the one species far from
the others' cluster. The flag beside a statue decides the task once (a wrong statue fails it),
so each attack is one pick per instance, compared with chance (1 in 3 Easy, 1 in 5
Normal/Challenge) plus three standard errors. Every attack here loses; they guard the layout and
draws (the Easy species used to be consecutive with the answer in the middle,
`test_shortcuts.test_shortcut_proteomics_easy_middle_of_canonical_order`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance

TASK = "Proteomics"
SEEDS = range(40)
DIFFICULTIES = ("easy", "normal", "challenge")


@cache
def scenario(difficulty: str, seed: int) -> Any:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    return env.scenario


def _chance(difficulty: str) -> float:
    return 1 / 3 if difficulty == "easy" else 1 / 5


def _bound(chance: float, n: int) -> float:
    """Chance plus three standard errors and one seed (as tests/test_answer_sheet.py)."""
    return chance + 3 * math.sqrt(chance * (1 - chance) / n) + 1 / n


def _share(difficulty: str, pick: Callable[[Any], str], seeds: range = SEEDS) -> float:
    hits = sum(pick(scenario(difficulty, seed)) == scenario(difficulty, seed).answer.name for seed in seeds)
    return hits / len(seeds)


def _train(difficulty: str, index: int) -> Any:
    return scenario(difficulty, make_instance(TASK, difficulty, "train", index).seed)


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_attack_the_most_common_outlier_of_the_training_seeds(difficulty: str) -> None:
    """Remember which species was the outlier most often on public instances; flag it (Easy: the
    favourite among the instance's three)."""
    seen = Counter(_train(difficulty, i).answer.name for i in range(40))

    def pick(sc: Any) -> str:
        return max((sp.name for sp in sc.species), key=lambda name: (seen[name], name))

    assert _share(difficulty, pick) <= _bound(_chance(difficulty), len(SEEDS))


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("which", ["first", "last"])
def test_attack_creation_order_of_statues_and_animals(difficulty: str, which: str) -> None:
    """The first or last statue / animal built, read through the smallest or largest UUID."""
    for things in ("statues", "animals"):
        def pick(sc: Any, things: str = things) -> str:
            objs = list(sc.statues.values()) if things == "statues" else sc.animals
            chosen = (min if which == "first" else max)(objs, key=lambda o: o.uuid)
            return str(chosen.name.removeprefix("statue of a ").removeprefix("statue of an "))

        assert _share(difficulty, pick) <= _bound(_chance(difficulty), len(SEEDS)), things


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_attack_the_statue_spot_that_held_the_outlier_most_often(difficulty: str) -> None:
    """Learn on training instances which statue spot (the yard's centre, a corner; Easy: a row)
    was the outlier's most often, then flag whatever statue stands there."""
    spots = Counter(_train(difficulty, i).statues[_train(difficulty, i).answer.name].location() for i in range(40))
    favourite = spots.most_common(1)[0][0]

    def pick(sc: Any) -> str:
        return next(name for name, statue in sc.statues.items() if statue.location() == favourite)

    assert _share(difficulty, pick) <= _bound(_chance(difficulty), len(SEEDS))


def test_attack_one_flag_tile_near_two_statues() -> None:
    """Normal/Challenge: a tile within 2 of two statues (e.g. between two corners) counts for one
    of them only, so no drop covers two candidates. The best tile learnt on training seeds."""
    for difficulty in ("normal", "challenge"):
        tiles = [(x, y) for x in range(9, 22) for y in range(9, 20)]

        def wins(sc: Any, tile: tuple[int, int]) -> bool:
            statue = sc._statue_near(*tile)
            return statue is not None and statue is sc.statues[sc.answer.name]

        train = [_train(difficulty, i) for i in range(40)]
        best = max(tiles, key=lambda t: sum(wins(sc, t) for sc in train))
        hits = sum(wins(scenario(difficulty, seed), best) for seed in SEEDS)
        assert hits / len(SEEDS) <= _bound(1 / 5, len(SEEDS)), best


def test_attack_easy_animal_next_to_its_statue() -> None:
    """Easy: animals and statues stand in two columns of three. Is the outlier's animal in the
    row of its own statue (a layout tell), or the middle row, more often than the others'?"""
    same_row = sum(
        next(a for a in sc.animals if a.name == sc.answer.name).y == sc.statues[sc.answer.name].y
        for sc in (scenario("easy", seed) for seed in SEEDS)
    )
    assert same_row / len(SEEDS) <= _bound(1 / 3, len(SEEDS))
    middle = _share("easy", lambda sc: next(a.name for a in sc.animals if a.y == 14))
    assert middle <= _bound(1 / 3, len(SEEDS))


def test_the_readings_are_only_in_the_meter_s_message() -> None:
    """No observation before a measurement carries a protein value (an answer readable from the
    observation would skip the meter)."""
    env = DiscoveryWorldEnv(TASK, "easy")
    _, info = env.reset(seed=3)
    assert "Protein" not in repr(info["observation"])
    for sp_values in env.scenario.values.values():
        assert all(f"{v:.2f}" not in repr(info["observation"]) for v in sp_values.values())
