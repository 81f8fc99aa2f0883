"""Named attacks on sealed evaluation (issue #20): each must fail against the test split.

Every attack also runs against a public instance (or a block-balanced answer sequence, the
scheme that was withdrawn) where it does win, so a test here can fail: if sealing broke, the
sealed half would start to look like the public half.

The test key is fixed, so every sample below is the same on every run (deterministic bounds).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import Instance, make_instance
from discoverylab.scenarios.base import Scenario
from discoverylab.scenarios.plant_nutrients.scenario import EASY_POSITIVE
from discoverylab.scenarios.proteomics.things import SPECIES
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import UUID_LIMIT
from stats_kit import looks_uniform

KEY = b"discoverylab-attack-tests-fixed-key"


def sealed(task: str, difficulty: str, index: int) -> Instance:
    return make_instance(task, difficulty, "test", index, KEY)


def play(inst: Instance) -> tuple[DiscoveryWorldEnv, dict[str, Any]]:
    env = DiscoveryWorldEnv(inst.task, inst.difficulty)
    _, info = env.reset(options={"instance": inst})
    return env, info


def scenario(inst: Instance) -> Scenario:
    env, _ = play(inst)
    assert env.scenario is not None
    return env.scenario


def public_values(obj: Any, depth: int = 4, seen: set[int] | None = None) -> Iterator[Any]:
    """Everything reachable from `obj` through public attributes, dict values and sequences
    (bounded depth): what an agent holding the env object reads without touching `_private`."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    if depth == 0 or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return
    if isinstance(obj, np.random.Generator):  # its SeedSequence is readable through a property
        yield obj.bit_generator.seed_seq.entropy  # type: ignore[attr-defined]
        return
    if isinstance(obj, dict):
        children: list[Any] = [*obj.keys(), *obj.values()]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = list(obj)[:200]
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        children = [v for k, v in vars(obj).items() if not k.startswith("_")]
    else:
        return
    for child in children:
        yield from public_values(child, depth - 1, seen)


def integers_in(obj: Any) -> set[int]:
    return {v for v in public_values(obj, depth=8) if isinstance(v, int) and not isinstance(v, bool) and v >= 0}


# ---- (a) uuid recomputation --------------------------------------------------------------------
def uuid_pool(seed: int, count: int = 6000) -> list[int]:
    """The public uuid scheme (world/uuids.py, session 10), rebuilt here from its description: the
    first `count` UUIDs a world of `seed` hands out in creation order, i.e. the first occurrences
    of uniform draws from 1..65535 on the seed's fifth stream, in blocks of 2,048 draws."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[4])
    order: dict[int, None] = {}
    while len(order) < count:  # `update` keeps a value where it first came
        order.update(dict.fromkeys(rng.integers(1, UUID_LIMIT + 1, 2048, dtype=np.uint16).tolist()))
    return list(order)[:count]


def recovered_permutation(env: DiscoveryWorldEnv, info: dict[str, Any]) -> bool:
    """Try every integer the agent can see (info, observation, env attributes) as the seed: does
    one of them reproduce the uuids on show? (Then the first-created answer object is known.)"""
    shown = {v["uuid"] for v in public_values(info["observation"], depth=12)
             if isinstance(v, dict) and isinstance(v.get("uuid"), int)}
    assert len(shown) >= 2
    candidates = sorted(integers_in(info) | integers_in(env))
    candidates = [c for c in candidates if c < 2**64][:400]
    for c in candidates:
        if shown <= set(uuid_pool(c)):
            return True
    return False


@pytest.mark.parametrize(("task", "difficulty"), [("ArchaeologyDating", "challenge"), ("Proteomics", "normal")])
def test_attack_uuid_recomputation_fails_on_the_test_split(task: str, difficulty: str) -> None:
    public = make_instance(task, difficulty, "dev", 3)
    assert recovered_permutation(*play(public))  # the public seed sits in info: the attack works there
    for index in range(3):
        assert not recovered_permutation(*play(sealed(task, difficulty, index)))


# ---- (b) replica rebuild -----------------------------------------------------------------------
REPLICAS = range(5, 45)  # the attacker rebuilds the dev split's first 40 worlds


def fingerprint(info: dict[str, Any]) -> str:
    return json.dumps(info["observation"], sort_keys=True)


def test_attack_replica_rebuild_finds_no_match_on_the_test_split() -> None:
    task, difficulty = "Proteomics", "normal"
    replicas: dict[str, int] = {}
    for seed in REPLICAS:
        env = DiscoveryWorldEnv(task, difficulty)
        _, info = env.reset(seed=seed)
        replicas[fingerprint(info)] = seed
    assert len(replicas) == len(REPLICAS)  # step-0 views tell the worlds apart: a match would be decisive
    public = make_instance(task, difficulty, "dev", 7)
    assert replicas.get(fingerprint(play(public)[1])) == public.seed  # public instance: found, gold readable
    for index in range(6):
        assert fingerprint(play(sealed(task, difficulty, index))[1]) not in replicas


# ---- (c) block elimination ---------------------------------------------------------------------
GOLD: dict[tuple[str, str], tuple[Callable[[Any], Any], tuple[Any, ...]]] = {
    ("Proteomics", "easy"): (lambda s: s.answer.name, tuple(sp.name for sp in SPECIES)),
    ("Proteomics", "normal"): (lambda s: s.answer.name, tuple(sp.name for sp in SPECIES)),
    ("Proteomics", "challenge"): (lambda s: s.answer.name, tuple(sp.name for sp in SPECIES)),
    ("PlantNutrients", "easy"): (lambda s: s.positive, EASY_POSITIVE),
}
EPISODES = 80


def memory_guesser_scores(golds: list[Any], options: tuple[Any, ...]) -> list[float]:
    """Expected success per episode of a guesser that remembers the golds revealed at the end of
    the earlier episodes of the current block of n, and guesses uniformly among the rest."""
    n = len(options)
    scores = []
    for i, gold in enumerate(golds):
        seen = set(golds[i - i % n : i])
        left = [o for o in options if o not in seen]
        scores.append(1 / len(left) if gold in left else 0.0)
    return scores


def balanced_blocks(options: tuple[Any, ...], count: int) -> list[Any]:
    """The withdrawn scheme: every block of n consecutive seeds used each answer once."""
    rng = np.random.default_rng(0)
    out: list[Any] = []
    while len(out) < count:
        out += [options[int(i)] for i in rng.permutation(len(options))]
    return out[:count]


@pytest.mark.parametrize(("task", "difficulty"), list(GOLD), ids=lambda v: str(v))
def test_attack_block_elimination_gains_nothing_on_the_test_split(task: str, difficulty: str) -> None:
    read, options = GOLD[(task, difficulty)]
    unique = tuple(dict.fromkeys(options))
    chance = 1 / len(unique)
    blocked = float(np.mean(memory_guesser_scores(balanced_blocks(unique, EPISODES), unique)))
    assert blocked > chance + 0.2  # on block-balanced answers the attack wins (~0.46 vs 0.2)
    golds = [read(scenario(sealed(task, difficulty, i))) for i in range(EPISODES)]
    scores = memory_guesser_scores(golds, unique)
    bound = 3 * float(np.std(scores)) / np.sqrt(EPISODES) + 1e-9
    assert float(np.mean(scores)) <= chance + bound, (np.mean(scores), chance, bound)


# ---- (d) uuid rank uniformity ------------------------------------------------------------------
def _proteomics_easy(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return next(a for a in s.animals if a.name == s.answer.name), list(s.animals)


def _proteomics_statue(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return s.statues[s.answer.name], list(s.statues.values())


def _archaeology(s: Any) -> tuple[WorldObject, list[WorldObject]]:
    return s.target_site.artifact, [site.artifact for site in s.sites]


ROLES: dict[tuple[str, str], Callable[[Any], tuple[WorldObject, list[WorldObject]]]] = {
    ("Proteomics", "easy"): _proteomics_easy,
    ("Proteomics", "normal"): _proteomics_statue,
    ("ArchaeologyDating", "challenge"): _archaeology,
}


@pytest.mark.parametrize(("task", "difficulty"), list(ROLES), ids=lambda v: str(v))
def test_answer_uuid_rank_among_candidates_is_uniform(task: str, difficulty: str) -> None:
    """Over 60 test instances the answer object's uuid rank among the candidates' uuids is
    uniform: neither creation order nor role shows through the uuids."""
    ranks, sizes = [], set()
    for index in range(60):
        answer, candidates = ROLES[(task, difficulty)](scenario(sealed(task, difficulty, index)))
        uuids = sorted(c.uuid for c in candidates)
        sizes.add(len(uuids))
        ranks.append(uuids.index(answer.uuid))
    (k,) = sizes  # a fixed candidate count, so ranks share one support
    assert looks_uniform(ranks, {r: 1 / k for r in range(k)}), ranks
    assert not looks_uniform([0] * 60, {r: 1 / k for r in range(k)})  # the check does reject "always first"


# ---- nothing an agent reads carries the seed -----------------------------------------------------
def _pairs() -> list[tuple[str, str]]:
    from discoverylab.scenarios.registry import all_tasks

    return [(t, d) for t, cls in all_tasks().items() for d in cls.difficulties]


@pytest.mark.parametrize(("task", "difficulty"), _pairs(), ids=lambda v: str(v))
def test_sealed_episode_carries_no_seed(task: str, difficulty: str) -> None:
    from discoverylab.bench.episode import run_episode

    inst = sealed(task, difficulty, 0)
    text = str(inst.seed)
    env, info = play(inst)
    assert "seed" not in info and info["instance"] == inst.public() and text not in json.dumps(info)
    assert inst.seed not in integers_in(env)
    assert not any(isinstance(v, str) and text in v for v in public_values(env, depth=6))
    record, log = run_episode(task, difficulty, inst, "random", max_steps=5)
    assert record.seed is None and (record.split, record.index, record.commitment) == ("test", 0, inst.commitment)
    assert text not in json.dumps(log) and text not in record.model_dump_json()


def test_no_scenario_reads_a_sealed_worlds_seed() -> None:
    """Every task builds on a sealed world (one that refuses `world.seed`): no seed arithmetic."""
    for task, difficulty in _pairs():
        play(sealed(task, difficulty, 1))


def test_the_seed_walk_would_see_a_public_seed() -> None:
    """Control for the walk above: a raw public seed is in info and reachable from the env."""
    env, info = play(make_instance("Proteomics", "normal", "dev", 11))
    assert info["seed"] == 16 and 16 in integers_in(env.instance)


def test_sealed_instance_replays_byte_identically_and_indices_differ() -> None:
    """The key holder's replay: same instance and actions, same bytes; another index, another world."""
    inst = sealed("Proteomics", "normal", 4)
    runs = []
    for _ in range(2):
        env = DiscoveryWorldEnv("Proteomics", "normal")
        obs, _ = env.reset(options={"instance": inst})
        frames = [obs]
        for action in ({"action": "MOVE_FORWARD"}, {"action": "ROTATE_CW"}, {"action": "MOVE_FORWARD"}):
            frames.append(env.step(action)[0])
        runs.append(frames)
    assert runs[0] == runs[1]
    other, _ = DiscoveryWorldEnv("Proteomics", "normal").reset(options={"instance": sealed("Proteomics", "normal", 5)})
    assert other != runs[0][0]


def test_reset_rejects_bad_instances_clearly() -> None:
    env = DiscoveryWorldEnv("Proteomics", "normal")
    with pytest.raises(ValueError, match="not both"):
        env.reset(seed=1, options={"instance": sealed("Proteomics", "normal", 0)})
    with pytest.raises(TypeError, match="Instance"):
        env.reset(options={"instance": {"split": "test", "index": 0}})
    with pytest.raises(ValueError, match="Proteomics easy"):
        env.reset(options={"instance": sealed("Proteomics", "easy", 0)})
    with pytest.raises(ValueError, match="public seed"):
        env.reset(seed=2**40)


def test_world_streams_spawn_children_of_their_own_instance() -> None:
    """`Generator.spawn` on a world stream: children differ between instances and repeat for the
    same one, and the stream's SeedSequence (readable by anyone holding the env) is not the seed.
    (Session 8's blank placeholder gave every instance the same children: Proteomics' cluster
    values were the same everywhere, so remembering the outlier's values named the answer.)"""
    from discoverylab.world.world import World

    draws = {seed: World(seed).rng_build.spawn(1)[0].random() for seed in (1, 2, 3, 2**40 + 7)}
    assert len(set(draws.values())) == 4
    assert World(2).rng_build.spawn(1)[0].random() == draws[2]
    for seed in (2, 2**40 + 7):
        world = World(seed)
        for stream in (world.rng_build, world.rng_npc, world.rng_noise, world.rng_objects, world.child_rng("x")):
            entropy = stream.bit_generator.seed_seq.entropy  # type: ignore[attr-defined]
            assert seed not in np.atleast_1d(entropy).tolist()
