"""Nothing outside the observation gives the answer away (issue 7, part 2).

Each test reads only what an agent could read without measuring anything: uuids, the seed,
or another difficulty of the same seed, and checks that it tells nothing about the answer.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.registry import all_tasks
from discoverylab.scenarios.rocket_science.things import PLANETS
from discoverylab.world.objects import WorldObject

SEEDS = range(20)


@functools.lru_cache(maxsize=256)
def build(task: str, difficulty: str, seed: int) -> Scenario:
    """The scenario as built for (task, difficulty, seed) (cached: tests share the builds)."""
    env = DiscoveryWorldEnv(task, difficulty)
    env.reset(seed=seed)
    assert env.scenario is not None
    return env.scenario


def _proteomics_easy(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    answer = next(a for a in s.animals if a.name == s.answer.name)
    return answer, list(s.animals)


def _archaeology(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return s.target_site.artifact, [site.artifact for site in s.sites]


def _archaeology_easy(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return s.target, list(s.artifacts)


def _translation_easy(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    store = [o for o in s.world.objects.values() if o.parent is not None and o.parent.type == "table"]
    return s.target, store


def _proteomics_statue(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return s.statues[s.answer.name], list(s.statues.values())


ROLE_CASES: dict[tuple[str, str], Callable[[Any], tuple[WorldObject, list[WorldObject]]]] = {
    ("Proteomics", "easy"): _proteomics_easy,
    ("Proteomics", "normal"): _proteomics_statue,
    ("ArchaeologyDating", "easy"): _archaeology_easy,
    ("ArchaeologyDating", "normal"): _archaeology,
    ("ArchaeologyDating", "challenge"): _archaeology,
    ("LostInTranslation", "easy"): _translation_easy,
}


@pytest.mark.parametrize(("task", "difficulty"), list(ROLE_CASES), ids=lambda v: str(v))
def test_answer_uuid_has_no_fixed_value_or_rank(task: str, difficulty: str) -> None:
    """The answer object's uuid changes over seeds and its rank among the candidates' uuids is
    spread over the ranks (no "pick the first-created candidate")."""
    uuids, ranks = [], []
    for seed in SEEDS:
        answer, candidates = ROLE_CASES[(task, difficulty)](build(task, difficulty, seed))
        assert answer in candidates and len(candidates) >= 3
        uuids.append(answer.uuid)
        ranks.append(sorted(c.uuid for c in candidates).index(answer.uuid))
    assert len(set(uuids)) >= 18
    counts = Counter(ranks)
    assert len(counts) >= 3, counts
    assert max(counts.values()) <= 11, counts  # a uniform rank over >=3 candidates: ~7 of 20


@pytest.mark.parametrize("task", [name for name, cls in all_tasks().items() if cls.suite == "discovery"])
def test_uuids_do_not_follow_creation_order(task: str) -> None:
    """The n-th object created has a different uuid on (almost) every seed."""
    difficulty = all_tasks()[task].difficulties[-1]
    firsts: list[list[int]] = [list(build(task, difficulty, seed).world.objects)[:200] for seed in range(5)]
    for index in range(200):
        assert len({uuids[index] for uuids in firsts}) >= 4, index


# ---- the seed: blocks of balanced answers, no k / k+n repeats -----------------------------------
ANSWERS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("Proteomics", "easy"): lambda s: s.answer.name,
    ("Proteomics", "normal"): lambda s: s.answer.name,
    ("Proteomics", "challenge"): lambda s: s.answer.name,
    ("ReactorLab", "easy"): lambda s: s.key,
    ("ReactorLab", "normal"): lambda s: s.key,
    ("ReactorLab", "challenge"): lambda s: s.key,
    ("CombinatorialChemistry", "easy"): lambda s: next(iter(s.remedy)),
    ("PlantNutrients", "easy"): lambda s: s.positive,
    ("PlantNutrients", "challenge"): lambda s: s.rule.kind,
    ("LostInTranslation", "normal"): lambda s: s.item,
    ("RocketScience", "easy"): lambda s: s.planet,
}
BLOCK = {("PlantNutrients", "challenge"): 4, ("RocketScience", "easy"): len(PLANETS), ("CombinatorialChemistry", "easy"): 4}


@pytest.mark.parametrize(("task", "difficulty"), list(ANSWERS), ids=lambda v: str(v))
def test_seed_blocks_are_balanced_and_k_plus_n_differs(task: str, difficulty: str) -> None:
    """Every block of n consecutive seeds (n options, 5 for most) holds every answer once, in
    an order drawn per block: seeds k and k+n do not share the answer as seed mod n did."""
    n = BLOCK.get((task, difficulty), 5)
    answers = [ANSWERS[(task, difficulty)](build(task, difficulty, seed)) for seed in range(2 * n)]
    blocks = [answers[i : i + n] for i in range(0, 2 * n, n)]
    assert all(len(set(block)) == n for block in blocks), blocks
    assert all(Counter(block) == Counter(blocks[0]) for block in blocks), blocks
    same = sum(answers[k] == answers[k + n] for k in range(n))
    assert same < n - 1, f"seeds k and k+{n} share the answer {same}/{n} times"


def test_difficulties_of_one_seed_draw_independently() -> None:
    """Rocket Science Normal shows the fuel and amount on its terminal; seed k's Challenge
    answer used to be exactly that. Proteomics Normal/Challenge shared the outlier."""
    for seed in range(6):
        normal, challenge = build("RocketScience", "normal", seed), build("RocketScience", "challenge", seed)
        shown = (normal.answer, int(normal.litres))  # type: ignore[attr-defined]
        assert shown != (challenge.answer, int(challenge.litres))  # type: ignore[attr-defined]
    same = sum(
        build("Proteomics", "normal", s).answer is build("Proteomics", "challenge", s).answer  # type: ignore[attr-defined]
        for s in range(10)
    )
    assert same <= 5
