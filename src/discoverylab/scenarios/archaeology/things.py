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
    the channel that dates them: 1 - age/50000 (+-0.01 noise). The three decoy channels are
    uniform noise redrawn until |correlation with age| < 0.1 (the first two over the known artifacts,
    the third over all six) and, unlike the original, until the known artifacts do not read in the
    decay order (oldest lowest) on them, so the dating channel is the only one that validates; the
    channel list is then rotated so the real one sits at a random position."""
    ages = [*known_ages, *unknown_ages]
    real = [round(1 - (age / 50000 + float(rng.uniform(-0.01, 0.01))), 3) for age in ages]
    n_known = len(known_ages)
    by_age = sorted(range(n_known), key=lambda i: -known_ages[i])

    def decoy(check: int) -> list[float]:
        while True:
            values = [round(float(v), 3) for v in rng.uniform(0, 1, size=len(ages))]
            with np.errstate(invalid="ignore", divide="ignore"):
                corr = float(np.corrcoef(ages[:check], values[:check])[0][1])
            decays = all(values[a] < values[b] for a, b in zip(by_age, by_age[1:], strict=False))
            if abs(corr) < 0.1 and not decays:  # NaN (constant values) fails the test and is redrawn
                return values

    channels = [real, decoy(n_known), decoy(n_known), decoy(len(ages))]
    shift = int(rng.integers(0, 4))
    channels = channels[len(channels) - shift :] + channels[: len(channels) - shift]
    readings = [[channel[i] for channel in channels] for i in range(len(ages))]
    return readings, shift + 1
