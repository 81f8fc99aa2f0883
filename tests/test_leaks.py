"""Nothing outside the observation gives the answer away (issue 7, part 2).

Each test reads only what an agent could read without measuring anything: uuids, the seed,
or another difficulty of the same seed, and checks that it tells nothing about the answer.
(The sealed split's attacks, replaying a seed and remembering earlier golds, are in
tests/attacks/test_sealed_attacks.py.)
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.combinatorial_chemistry.scenario import EASY_REMEDIES
from discoverylab.scenarios.lost_in_translation.scenario import NORMAL_ITEMS
from discoverylab.scenarios.plant_nutrients.scenario import EASY_POSITIVE, RULE_KINDS
from discoverylab.scenarios.proteomics.things import SPECIES
from discoverylab.scenarios.reactor_lab.scenario import KEY_BY_SEED
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.objects import WorldObject
from stats_kit import looks_uniform, shares

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


# ---- the seed: answers drawn per instance, no blocks of seeds ----------------------------------
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
}
OPTIONS: dict[tuple[str, str], tuple[Any, ...]] = {
    ("Proteomics", "easy"): tuple(sp.name for sp in SPECIES),
    ("Proteomics", "normal"): tuple(sp.name for sp in SPECIES),
    ("Proteomics", "challenge"): tuple(sp.name for sp in SPECIES),
    ("ReactorLab", "easy"): tuple(KEY_BY_SEED["easy"]),
    ("ReactorLab", "normal"): tuple(KEY_BY_SEED["normal"]),
    ("ReactorLab", "challenge"): tuple(KEY_BY_SEED["challenge"]),
    ("CombinatorialChemistry", "easy"): EASY_REMEDIES,  # A-D (the original's list held C twice)
    ("PlantNutrients", "easy"): EASY_POSITIVE,
    ("PlantNutrients", "challenge"): RULE_KINDS,
    ("LostInTranslation", "normal"): NORMAL_ITEMS,
}
DRAWS = range(40)


@pytest.mark.parametrize(("task", "difficulty"), list(ANSWERS), ids=lambda v: str(v))
def test_answers_are_drawn_per_instance_without_blocks(task: str, difficulty: str) -> None:
    """Each seed draws its answer on its own (the block-of-five balancing is withdrawn: it let
    an agent that remembers earlier golds eliminate answers). Over 40 seeds the answers follow
    the option list's shares, and neighbouring seeds share an answer about 1/n of the time
    (inside a balanced block they never did)."""
    answers = [ANSWERS[(task, difficulty)](build(task, difficulty, seed)) for seed in DRAWS]
    expected = shares(OPTIONS[(task, difficulty)])
    assert looks_uniform(answers, expected), Counter(answers)
    repeats = sum(a == b for a, b in zip(answers, answers[1:], strict=False))
    assert repeats >= 1, "no two neighbouring seeds ever share the answer: block structure?"


def test_difficulties_of_one_seed_draw_independently() -> None:
    """Rocket Science Normal presets the fuel on its terminal (the amount shown was the litres
    needed, a full tank now); seed k's Challenge answer used to be exactly that. Proteomics Normal/Challenge shared the outlier."""
    for seed in range(6):
        normal, challenge = build("RocketScience", "normal", seed), build("RocketScience", "challenge", seed)
        shown = (normal.answer, int(normal.litres))  # type: ignore[attr-defined]
        assert shown != (challenge.answer, int(challenge.litres))  # type: ignore[attr-defined]
    same = sum(
        build("Proteomics", "normal", s).answer is build("Proteomics", "challenge", s).answer  # type: ignore[attr-defined]
        for s in range(10)
    )
    assert same <= 5
