"""Lazy-agent attacks on the Tutorial and the unit tests (Small Skills).

These tasks teach or check a skill; their "discovery" is small (what the elder wants, who asks
for what, which pot a reading decides) but a guess must still not pass. The Tutorial's map is
the same on every seed, so a scripted walkthrough solves all of them: that is its point (suite
"tutorial"), not an attack. What must not work is leaving Dr. House without serving the warm
meal. Unit tests: the order the observation lists people in must not point at the one who asks,
and a pot remembered from other seeds must not sort Instrument Measurement's object.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance
from env_driver import EnvDriver

SEEDS = range(40)


def _bound(chance: float, n: int) -> float:
    """Chance plus three standard errors and one seed (as tests/test_answer_sheet.py)."""
    return chance + 3 * math.sqrt(chance * (1 - chance) / n) + 1 / n


# ---- Tutorial ---------------------------------------------------------------------------------
def _tutorial(seed: int = 0) -> EnvDriver:
    return EnvDriver("Tutorial", "normal", seed, reveal=True)


def _left(p: EnvDriver) -> bool:
    return bool(p.scenario.scorecard.completed and p.scenario.scorecard.success)


def test_attack_tutorial_walk_out_without_the_key() -> None:
    """Open the locked front door bare-handed, teleport onto things outside the walls."""
    p = _tutorial()
    door = p.scenario.front_door
    p.do("TELEPORT_TO_LOCATION", "Front Door")
    assert not p.do("OPEN", door).startswith("I opened")
    outside = [o for o in p.world.objects.values()
               if o.type in ("sign", "tree", "key") and o.layer is not None and not (18 <= o.x <= 27 and 20 <= o.y <= 26)]  # fmt: skip
    for obj in outside[:5]:
        p.do("TELEPORT_TO_OBJECT", obj)
        p.do("MOVE_DIRECTION", "south")
    assert not _left(p) and _item(p, "Collect key") == 0


def _item(p: EnvDriver, name: str) -> int:
    return int(next(i.score for i in p.scenario.scorecard.items if i.name == name))


@pytest.mark.parametrize("serve", ["bed clutter", "cold meal"])
def test_attack_tutorial_serve_anything_then_ask(serve: str) -> None:
    """Hand the elder the object on the bed, or the meal straight from the fridge, and ask how
    it is: the elder hands it back and keeps the key."""
    p = _tutorial(3)
    elder = p.scenario.elder
    p.go_to(elder)
    p.do("TALK", elder)
    p.choose("Of course. What can I do?")
    if serve == "bed clutter":
        bed = next(o for o in p.world.objects.values() if o.type == "bed")
        thing = bed.contents[0]
    else:
        thing = next(o for o in p.world.objects.values() if o.type == "pot" and o.parent is not None
                     and o.parent.type == "fridge")  # fmt: skip
        p.go_to(thing.parent)
        p.do("OPEN", thing.parent)
    p.take(thing)
    p.go_to(elder)
    p.do("PUT", thing, elder)
    assert thing.parent is elder, p.obs["lastActionMessage"]
    p.do("TALK", elder)
    p.choose("How's your meal?")
    assert thing.parent is not elder  # handed back
    assert elder.key.parent is elder and _item(p, "Collect key") == 0 and not _left(p)


# ---- Unit tests -------------------------------------------------------------------------------
@pytest.mark.parametrize("difficulty", ["easy", "normal", "challenge"])
def test_attack_pick_and_give_to_the_first_or_last_listed_person(difficulty: str) -> None:
    """Give to whoever the first observation lists first (or last), without asking anyone."""
    first = last = chance = 0.0
    for seed in SEEDS:
        env = DiscoveryWorldEnv("PickAndGiveTest", difficulty)
        _, info = env.reset(seed=seed)
        listed = [int(m[1]) for k in info["observation"]["nearbyAgents"]["list_of_agents"]
                  if (m := re.search(r"uuid (\d+)", k))]  # fmt: skip
        recipient = env.scenario.recipient.uuid
        if listed:
            first += listed[0] == recipient
            last += listed[-1] == recipient
            chance += 1 / len(listed)
        env.close()
    share = chance / len(SEEDS)
    assert max(first, last) / len(SEEDS) <= _bound(share, len(SEEDS)), (first, last, share)


def _pot(difficulty: str, seed: int) -> Any:
    env = DiscoveryWorldEnv("InstrumentMeasurementTest", difficulty)
    env.reset(seed=seed)
    pot = env.scenario.pot.name
    env.close()
    return pot


@pytest.mark.parametrize("difficulty", ["normal", "challenge"])
def test_attack_instrument_measurement_remembered_pot(difficulty: str) -> None:
    """Put the object in the pot most often right on training seeds (values 1-10 in four bands:
    pot A's band is the narrowest), measure afterwards. One pot of four decides."""
    train = Counter(_pot(difficulty, make_instance("InstrumentMeasurementTest", difficulty, "train", i).seed)
                    for i in range(40))  # fmt: skip
    favourite = train.most_common(1)[0][0]
    hits = sum(_pot(difficulty, seed) == favourite for seed in SEEDS)
    assert hits / len(SEEDS) <= _bound(1 / 4, len(SEEDS)), (favourite, hits)
