"""Proteomics oracle: read every species' proteins with the meter, then flag the outlier's statue."""

from __future__ import annotations

import math
import re
import statistics

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport, OracleGen
from discoverylab.scenarios.proteomics.things import METER

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
