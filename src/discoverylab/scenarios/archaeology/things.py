"""Archaeology Dating things: the radio-dating instruments and the radioisotope data generator.

Importing this module registers the radiocarbon meter and radioisotope meter readers. Ages and
readings live in the artifacts' `props` ("radiocarbon_age", "radioisotope_values"), so the
instruments show exactly what the scenario generated.
"""

from __future__ import annotations

import numpy as np

from discoverylab.world import instruments
from discoverylab.world.instruments import Instrument
from discoverylab.world.objects import WorldObject


def _radiocarbon(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the radiocarbon meter to investigate the {obj.name}.\n"
    age = int(obj.props.get("radiocarbon_age", -1))
    if age <= 0:
        return head + "The results are inconclusive.\n"
    return head + f"The radiocarbon meter estimates an age of {age} years.\n"


def _radioisotope(inst: Instrument, obj: WorldObject) -> str:
    head = f"You use the radioisotope meter to view the {obj.name}.\n"
    values = obj.props.get("radioisotope_values") or []
    if not values:
        return head + "The results are inconclusive.\n"
    lines = "".join(f"- Radioisotope {i + 1}: {float(v):.3f}\n" for i, v in enumerate(values))
    return head + "The results are as follows:\n" + lines


instruments.READERS["radiocarbon meter"] = _radiocarbon
instruments.READERS["radioisotope meter"] = _radioisotope


def radioisotope_channels(
    rng: np.random.Generator, known_ages: list[int], unknown_ages: list[int]
) -> tuple[list[list[float]], int]:
    """Four radioisotope readings per artifact (known artifacts first) and the 1-based number of
    the channel that dates them: 1 - age/50000 (+-0.01 noise).

    Two decoys read like dating channels of the wrong ages: on the unknown artifacts they shift
    the ages by one and by two places (a Latin square: every unknown artifact reads each unknown
    age once over the three dating-like channels, so no reading of the unknowns alone, their
    lowest or mean value, says which is oldest); on the known ones each reads a wrong order of
    their ages, the two orders different (alike, they made the dating channel the odd one out to
    an agent that never thought about the eras). The third decoy is uniform noise, redrawn until
    |correlation with age| < 0.1 over the known artifacts (over all six, it held the oldest
    unknown's value near the middle). No decoy reads the known artifacts in the decay order
    (oldest lowest): only the dating channel validates. (Uniform decoys put the dating channel's
    one low unknown reading apart: the artifact with the lowest mean reading was the oldest on
    72% of seeds.) The four channels are then shuffled."""
    ages = [*known_ages, *unknown_ages]
    n_known = len(known_ages)

    def dating(order: list[int]) -> list[float]:
        return [round(1 - (ages[i] / 50000 + float(rng.uniform(-0.01, 0.01))), 3) for i in order]

    by_age = sorted(range(n_known), key=lambda i: -known_ages[i])
    unknown = list(range(n_known, len(ages)))

    wrong: list[list[int]] = []  # two different wrong orders of the known ages, one per decoy
    while len(wrong) < 2:
        order = [int(i) for i in rng.permutation(n_known)]
        if order != list(range(n_known)) and order not in wrong:
            wrong.append(order)

    def latin(shift: int) -> list[float]:
        return dating(wrong[shift - 1] + unknown[shift:] + unknown[:shift])

    def noise() -> list[float]:
        while True:
            values = [round(float(v), 3) for v in rng.uniform(0, 1, size=len(ages))]
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = float(np.corrcoef(known_ages, values[:n_known])[0][1])
            decays = all(values[a] < values[b] for a, b in zip(by_age, by_age[1:], strict=False))
            if abs(corr) < 0.1 and not decays:  # NaN (constant values) fails the test and is redrawn
                return values

    channels = [dating(list(range(len(ages)))), latin(1), latin(2), noise()]
    order = [int(i) for i in rng.permutation(len(channels))]  # the channels in the order shown
    readings = [[channels[k][i] for k in order] for i in range(len(ages))]
    return readings, order.index(0) + 1
