"""Lazy-agent attacks on Archaeology Dating: pick the oldest dig site (or the dating channel)
without the discovery.

The discovery: Easy/Normal, date every artifact with the radiocarbon meter; Challenge, learn from
the known artifacts (stone > bronze > iron age) which radioisotope channel falls with age, then
read the unknown ones on it. The meter shows each artifact's stored readings
(`test_theme_archaeology.test_radioisotope_readings_match_the_generator`), so the attacks read
those; the flag at a site decides the task once (a wrong site fails it).

Challenge, before the fix (the three decoys were uniform noise): the dating channel's one low
reading among the unknown artifacts showed through any channel-blind statistic. "The unknown
artifact with the lowest mean reading" was the oldest on 72% of seeds, "the channel on which two
unknown artifacts read above 0.85" was the dating one on 96%, and "the channel on which every
known artifact reads above 0.75" on 100%, none of them using the ages of the eras. Two decoys
now read the unknown ages shifted (a Latin square) and the known ages in a wrong order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import pytest

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.instances import make_instance

TASK = "ArchaeologyDating"
SEEDS = range(60)


@cache
def scenario(difficulty: str, seed: int) -> Any:
    env = DiscoveryWorldEnv(TASK, difficulty)
    env.reset(seed=seed)
    return env.scenario


def _bound(chance: float, n: int) -> float:
    """Chance plus three standard errors and one seed (as tests/test_answer_sheet.py)."""
    return chance + 3 * math.sqrt(chance * (1 - chance) / n) + 1 / n


def _unknown_readings(sc: Any) -> dict[int, np.ndarray]:
    return {s.number: np.array(s.artifact.props["radioisotope_values"]) for s in sc.sites if not s.known}


def _oldest_share(pick: Callable[[Any], int], seeds: range = SEEDS) -> float:
    return float(np.mean([pick(scenario("challenge", seed)) == scenario("challenge", seed).target_site.number
                          for seed in seeds]))  # fmt: skip


def test_attack_lowest_mean_reading_over_all_channels() -> None:
    def pick(sc: Any) -> int:
        readings = _unknown_readings(sc)
        return min(readings, key=lambda n: float(readings[n].mean()))

    assert _oldest_share(pick) <= _bound(1 / 3, len(SEEDS))


def test_attack_lowest_single_reading() -> None:
    def pick(sc: Any) -> int:
        readings = _unknown_readings(sc)
        return min(readings, key=lambda n: float(readings[n].min()))

    assert _oldest_share(pick) <= _bound(1 / 3, len(SEEDS))


def _two_high_channel(sc: Any) -> int:
    """The first channel on which two unknown artifacts read above 0.85 (0-based; 0 if none)."""
    readings = list(_unknown_readings(sc).values())
    return next((ch for ch in range(4) if sum(r[ch] > 0.85 for r in readings) >= 2), 0)


def test_attack_channel_where_two_unknowns_read_high() -> None:
    """What the young artifacts read on a dating channel, learnt from public seeds."""

    def pick(sc: Any) -> int:
        readings = _unknown_readings(sc)
        channel = _two_high_channel(sc)
        return min(readings, key=lambda n: float(readings[n][channel]))

    assert _oldest_share(pick) <= _bound(1 / 3, len(SEEDS))
    hits = sum(_two_high_channel(scenario("challenge", s)) + 1 == scenario("challenge", s).channel for s in SEEDS)
    assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS))  # the sheet's stated chance (the noise channel is plain)


def test_attack_channel_where_every_known_artifact_reads_high() -> None:
    """Measures the known artifacts but ignores their eras: the channel where all read > 0.75."""
    hits = 0
    for seed in SEEDS:
        sc = scenario("challenge", seed)
        known = [a.props["radioisotope_values"] for a in sc.known]
        channel = next((ch for ch in range(4) if all(v[ch] > 0.75 for v in known)), 0)
        hits += channel + 1 == sc.channel
    assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS))


def test_attack_most_common_oldest_site_of_the_training_seeds() -> None:
    """Normal's sites stand at fixed spots, Challenge's unknown ones are sites 4-6: is one of
    them the oldest more often? Learnt on training instances, played on seeds 0-59."""
    for difficulty in ("normal", "challenge"):
        train = Counter(scenario(difficulty, make_instance(TASK, difficulty, "train", i).seed).target_site.number
                        for i in range(60))  # fmt: skip
        favourite = train.most_common(1)[0][0]
        hits = sum(scenario(difficulty, seed).target_site.number == favourite for seed in SEEDS)
        assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS)), difficulty


def test_attack_the_site_with_the_largest_or_smallest_dig() -> None:
    """The soil block's size (2 or 4 tiles) is visible before digging."""
    for difficulty in ("normal", "challenge"):
        for sign in (1, -1):
            hits = 0
            for seed in SEEDS:
                sc = scenario(difficulty, seed)
                sites = [s for s in sc.sites if not s.known]
                size = {s.number: sum(1 for t in sc.world.objects.values()
                                      if t.type == "soil" and 0 <= t.x - s.x <= 1 and 1 <= t.y - s.y <= 2)
                        for s in sites}  # fmt: skip
                best = max(sites, key=lambda s: (sign * size[s.number], -s.number))
                hits += best is sc.target_site
            assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS)), (difficulty, sign)


def test_attack_uuid_order_of_the_unknown_artifacts() -> None:
    """The unknown artifacts are built oldest first; their UUIDs come from a shuffled pool."""
    for difficulty in ("easy", "normal", "challenge"):
        for pick in (min, max):
            hits = 0
            for seed in SEEDS:
                sc = scenario(difficulty, seed)
                artifacts = sc.artifacts if difficulty == "easy" else sc.unknown
                target = sc.target if difficulty == "easy" else sc.target_site.artifact
                hits += pick(artifacts, key=lambda a: a.uuid) is target
            assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS)), (difficulty, pick)


def test_attack_easy_table_position() -> None:
    """Easy's three tables stand in a column: is the oldest artifact's row skewed?"""
    rows = Counter(scenario("easy", seed).target.location()[1] for seed in SEEDS)
    assert rows.most_common(1)[0][1] / len(SEEDS) <= _bound(1 / 3, len(SEEDS)), rows


def _odd_one_out(sc: Any) -> int:
    """Ignore the eras: among the channels on which every known artifact reads high (dating-like),
    pick the one that orders the known artifacts unlike the other two (0-based; else the first)."""
    known = [a.props["radioisotope_values"] for a in sorted(sc.known, key=lambda a: a.name)]
    like = [ch for ch in range(4) if all(v[ch] > 0.75 for v in known)] or [0]
    ranks = {ch: tuple(sorted(range(len(known)), key=lambda i: known[i][ch])) for ch in like}
    counts = Counter(ranks.values())
    return next((ch for ch in like if counts[ranks[ch]] == 1 and len(counts) == 2), like[0])


def test_attack_the_channel_that_orders_the_known_artifacts_unlike_the_others() -> None:
    """Two decoys reading the known artifacts in the same wrong order left the dating channel the
    odd one out (about 1 seed in 5), with no thought about the eras: the two orders differ now."""
    hits = sum(_odd_one_out(scenario("challenge", s)) + 1 == scenario("challenge", s).channel for s in SEEDS)
    assert hits / len(SEEDS) <= _bound(1 / 3, len(SEEDS))


@pytest.mark.slow
def test_channel_blind_attacks_seeds_0_to_99() -> None:
    """The Challenge attacks above on seeds 0-99 (1 in 3 each, within three standard errors)."""
    seeds = range(100)
    bound = _bound(1 / 3, len(seeds))

    def lowest_mean(sc: Any) -> int:
        readings = _unknown_readings(sc)
        return min(readings, key=lambda n: float(readings[n].mean()))

    def two_high(sc: Any) -> int:
        readings = _unknown_readings(sc)
        return min(readings, key=lambda n: float(readings[n][_two_high_channel(sc)]))

    assert _oldest_share(lowest_mean, seeds) <= bound
    assert _oldest_share(two_high, seeds) <= bound
    for channel_of in (_two_high_channel, _odd_one_out):
        hits = sum(channel_of(scenario("challenge", s)) + 1 == scenario("challenge", s).channel for s in seeds)
        assert hits / len(seeds) <= bound, channel_of.__name__
