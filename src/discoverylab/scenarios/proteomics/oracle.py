"""Proteomics oracle: read every species' proteins with the meter, then flag the outlier's statue."""

from __future__ import annotations

import math
import re
import statistics

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport, OracleGen
from discoverylab.scenarios.proteomics.things import (
    METER,
)

# Normal / Challenge: the fenced statue yard and the twelve places animals may live.
STATUE_SPOTS = ((12, 12), (12, 16), (18, 12), (18, 16), (15, 14))
ANIMAL_AREAS = ((4, 4), (12, 4), (20, 4), (28, 4), (4, 28), (12, 28), (20, 28), (28, 28),
                (4, 12), (4, 20), (28, 12), (28, 20))  # fmt: skip
YARD_TREES = ((12, 20), (18, 20), (12, 8), (18, 8), (8, 12), (8, 16), (22, 12), (22, 16),
              (10, 10), (10, 18), (20, 10), (20, 18))  # fmt: skip
# Easy: everything inside the locked research building.
EASY_STATUE_SPOTS = ((16, 13), (16, 14), (16, 15))
EASY_ANIMAL_SPOTS = ((14, 13), (14, 14), (14, 15))
START = (15, 16)
PLACE_RADIUS = 2.0  # Normal/Challenge: the flag must lie within this (Euclidean) of a statue

INTRO = (
    "You are in a biological preserve on Planet X, that has {n} different animal species. We suspect that one of "
    "these animal species is not native to the area, but migrated from an isolated island in the recent past. "
    "Your task is to use the proteomics meter to analyze the proteins of each of the {n} animal species, "
)
TASK_TEXT = {
    "normal": INTRO + "which can be found throughout the environment away from the central statue area, and "
    "determine which species is the anomaly. Once you have completed your task, return to the statue area and "
    "drop the flag directly beside the statue of the animal species that is the anomaly.",
    "easy": INTRO
    + "which can be found in the research building you're in, and determine which species is the "
    "anomaly. Once you have completed your task, drop the flag directly beside (i.e. one square left/to the west) "
    "the statue of the animal species that is the anomaly.",
}
QUESTION = (
    "Does it clearly state that the {name} has proteomics values that appear to be outliers compared to the other "
    "animals, whose proteomics values all cluster together?"
)
HYPOTHESIS = (
    "When performing a clustering analysis, the {name} has proteomics values that appear to be outliers compared "
    "to the other animals, whose proteomics values all cluster together."
)


_READING = re.compile(r"- Protein ([A-Z]): (\d+(?:\.\d+)?)")


def _statue_teleports(obs: ot.Obs) -> dict[str, str]:
    """species name -> teleport location name, from the "Statue of a(n) <species>" locations."""
    out = {}
    for name in obs.get("teleportLocations", []):
        found = re.fullmatch(r"Statue of an? (.+)", name)
        if found:
            out[found[1]] = name
    return out


def _area_order(obs: ot.Obs) -> list[str]:
    areas = [n for n in obs.get("teleportLocations", []) if "Animal Area" in n]
    return sorted(areas, key=lambda n: int(n.rsplit(" ", 1)[1]))


def outlier_species(readings: dict[str, tuple[float, ...]]) -> str:
    """The species whose median distance to the other species' readings is the largest: inliers
    lie within 0.2 of one another, the outlier at least 0.4 from every inlier."""

    def spread(name: str) -> float:
        return statistics.median(math.dist(readings[name], v) for k, v in readings.items() if k != name)

    return max(readings, key=spread)


def _grab(obs: ot.Obs, name: str) -> ot.Steps:
    """Pick up a visible object (teleporting beside it unless it is already within reach)."""
    entry = ot.find_accessible(obs, name)
    if entry is None:
        obs = yield from ot.go_to_object(obs, name)
        entry = ot.require(ot.find_accessible(obs, name), f"an accessible {name!r}")
    return (yield from ot.checked(ot.act("PICKUP", entry["uuid"])))


def solve(obs: ot.Obs) -> OracleGen:
    statues = _statue_teleports(obs)
    species = set(statues)
    obs = yield from _grab(obs, METER)
    obs = yield from _grab(obs, "flag")
    meter = ot.require(ot.find_inventory(obs, METER), "the meter in the inventory")["uuid"]
    readings: dict[str, tuple[float, ...]] = {}
    areas = _area_order(obs)
    unreachable: set[int] = set()
    for visit in range(4 * max(1, len(areas))):
        for uuid, name in ot.nearby_agents(obs).items():
            if name in species and name not in readings and uuid not in unreachable:
                for _ in range(8):  # animals wander: teleport beside until one is within reach
                    if ot.is_accessible(obs, uuid):
                        obs = yield from ot.checked(ot.act("USE", meter, uuid))
                        found = _READING.findall(obs["lastActionMessage"])
                        readings[name] = tuple(float(v) for _, v in sorted(found))
                        break
                    obs = yield ot.act("TELEPORT_TO_OBJECT", uuid)
                else:
                    unreachable.add(uuid)
        if len(readings) == len(species):
            break
        if not areas:
            raise ot.OracleFailure("no animal areas to search")
        obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", areas[visit % len(areas)]))
        if visit >= len(areas):  # later passes: also look around the area's centre
            obs = yield ot.act("WAIT")
    if len(readings) < len(species):
        raise ot.OracleFailure(f"measured only {sorted(readings)}")
    answer = outlier_species(readings)
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", statues[answer]))
    flag = ot.require(ot.find_inventory(obs, "flag"), "the flag in the inventory")["uuid"]
    yield from ot.checked(ot.act("DROP", flag))
    return _report(readings, answer)


def _report(readings: dict[str, tuple[float, ...]], answer: str) -> KnowledgeReport:
    """The outlier, the inliers' centre (their mean) and how far each side lies from it."""
    others = sorted(name for name in readings if name != answer)
    dims = len(readings[answer])
    centre = tuple(statistics.fmean(readings[name][i] for name in others) for i in range(dims))
    far = math.dist(readings[answer], centre)
    near = max(math.dist(readings[name], centre) for name in others)
    shown = ", ".join(f"Protein {chr(65 + i)} {v:.2f}" for i, v in enumerate(readings[answer]))
    text = (
        f"The {answer} is the outlier species: its protein values ({shown}) lie about {far:.1f} from the centre "
        f"({', '.join(f'{c:.2f}' for c in centre)}) of the cluster. The other species ({', '.join(others)}) all "
        f"have protein values within about {near:.2f} of that centre, so they cluster together."
    )
    facts = {"outlier": answer, "readings": {k: list(v) for k, v in readings.items()}, "centre": list(centre)}
    return KnowledgeReport(text, facts)
