"""The Archaeology Dating oracle: excavate, measure, reason about the readings, plant the flag.

It uses only the observation: teleport names, nearby objects (the tile faced is the pure direction
at distance 1), inventory and the instruments' messages.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport, OracleGen

_AGE = re.compile(r"estimates an age of (\d+) years")
_ISOTOPE = re.compile(r"- Radioisotope (\d+): (\d+(?:\.\d+)?)")
_SITE = re.compile(r"^dig site (\d+)$")
# Known artifacts from the oldest era to the youngest (stone age, bronze age, iron age).
Reading = tuple[str, str]  # (artifact name, meter message)
Excavation = Generator[ot.Action, ot.Obs, tuple[ot.Obs, Reading]]
Inspection = Generator[ot.Action, ot.Obs, tuple[ot.Obs, Reading | None, bool]]
ERAS = ("ancient stone hammer", "ancient bronze chisel", "ancient iron tongs")
UNKNOWN = "ancient artifact"


def solve(obs: ot.Obs) -> OracleGen:
    """Pick the strategy from what the world offers: dig sites to teleport to, or a store room."""
    sites = sorted(int(m[1]) for name in obs.get("teleportLocations", []) if (m := _SITE.match(name)))
    if sites:
        return (yield from _solve_field(obs, sites))
    return (yield from _solve_store_room(obs))


def _age(message: str) -> int:
    return int(ot.need(_AGE.search(message), f"an age in {message!r}")[1])


def _isotopes(message: str) -> dict[int, float]:
    found = {int(c): float(v) for c, v in _ISOTOPE.findall(message)}
    if not found:
        raise ot.OracleFailure(f"no radioisotope readings in {message!r}")
    return found


def _nearby_named(obs: ot.Obs, name: str) -> list[dict[str, Any]]:
    return [entry for _, entry in ot.nearby_entries(obs) if entry["name"] == name]


# ---- Easy: three artifacts on tables in a store room -------------------------------------------
def _solve_store_room(obs: ot.Obs) -> OracleGen:
    meter = ot.require(ot.find_nearby(obs, "radiocarbon meter"), "the radiocarbon meter")
    flag = ot.require(ot.find_nearby(obs, "flag"), "the flag")
    artifacts = _nearby_named(obs, UNKNOWN)
    if len(artifacts) != 3:
        raise ot.OracleFailure(f"expected 3 artifacts in view, saw {len(artifacts)}")
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", meter["uuid"]))
    obs = yield from ot.checked(ot.act("PICKUP", meter["uuid"]))
    ages: dict[int, int] = {}
    for artifact in artifacts:
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", artifact["uuid"]))
        obs = yield from ot.checked(ot.act("USE", meter["uuid"], artifact["uuid"]))
        ages[artifact["uuid"]] = _age(obs["lastActionMessage"])
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", flag["uuid"]))
    obs = yield from ot.checked(ot.act("PICKUP", flag["uuid"]))
    oldest = max(ages, key=lambda uuid: ages[uuid])
    # Teleporting to an artifact on its table lands on the free tile east of it, facing west:
    # exactly where the flag must go.
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", oldest))
    if obs["agentLocation"]["faceDirection"] != "west":
        raise ot.OracleFailure("could not stand on the east side of the oldest artifact")
    yield from ot.checked(ot.act("DROP", flag["uuid"]))
    return _age_report(ages[oldest], [age for uuid, age in ages.items() if uuid != oldest], None)


def _age_report(oldest: int, others: list[int], site: int | None) -> KnowledgeReport:
    where = f"The artifact at Dig Site #{site} is the oldest" if site is not None else "The oldest artifact is"
    rest = ", ".join(str(age) for age in sorted(others))
    text = (f"{where}: {oldest} years old (radiocarbon meter). The other younger artifacts are {rest} years old.")
    return KnowledgeReport(text, {"oldest_site": site, "oldest_age": oldest, "other_ages": sorted(others)})


# ---- Normal / Challenge: dig sites in the field ------------------------------------------------
def _solve_field(obs: ot.Obs, sites: list[int]) -> OracleGen:
    text = ot.task_text(obs)
    meter_name = "radioisotope meter" if "radioisotope meter" in text else "radiocarbon meter"
    obs = yield from ot.take(obs, "shovel")
    obs = yield from ot.take(obs, meter_name)
    obs = yield from ot.take(obs, "flag")
    tools = {
        name: ot.require(ot.find_inventory(obs, name), name)["uuid"]
        for name in ("shovel", meter_name, "flag")
    }
    readings: dict[int, Reading] = {}
    for site in sites:
        obs, readings[site] = yield from _excavate(obs, site, tools["shovel"], tools[meter_name])
    radioisotope = meter_name == "radioisotope meter"
    best = _oldest_site(readings, radioisotope=radioisotope)
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", f"dig site {best}"))
    yield from ot.checked(ot.act("DROP", tools["flag"]))
    if radioisotope:
        return _isotope_report(readings, best)
    others = [_age(m) for site, (name, m) in readings.items() if name == UNKNOWN and site != best]
    return _age_report(_age(readings[best][1]), others, best)


def _isotope_report(readings: dict[int, Reading], best: int) -> KnowledgeReport:
    known = {name: _isotopes(message) for name, message in readings.values() if name in ERAS}
    channel = _dating_channel(known)
    value = _isotopes(readings[best][1])[channel]
    values = " < ".join(f"{name.removeprefix('ancient ')} {known[name][channel]:.3f}" for name in ERAS)
    text = (
        "The stone hammer (stone age) is the oldest known artifact, the bronze chisel (bronze age) is in the "
        f"middle and the iron tongs (iron age) are the youngest; only Radioisotope Channel {channel} orders them so. "
        "Radioactive decay: the older an artifact, the lower its value on the dating radioisotope, Radioisotope "
        f"Channel {channel}: {values}; the other channels show no such pattern. The unknown artifact at Dig Site #{best} reads {value:.3f} on Radioisotope Channel "
        f"{channel}, the lowest of the three unknown artifacts, so it is the oldest."
    )
    facts = {"dating_channel": channel, "oldest_site": best, "oldest_reading": value,
             "known_readings": {name: known[name][channel] for name in ERAS}}  # fmt: skip
    return KnowledgeReport(text, facts)


def _oldest_site(readings: dict[int, Reading], radioisotope: bool) -> int:
    unknown = {site: message for site, (name, message) in readings.items() if name == UNKNOWN}
    if not unknown:
        raise ot.OracleFailure("no unknown artifact was found")
    if not radioisotope:
        return max(unknown, key=lambda site: _age(unknown[site]))
    # Validate the method on the known artifacts: the dating channel must fall with age
    # (stone < bronze < iron); decays leave older things with less of the isotope.
    known = {name: _isotopes(message) for name, message in readings.values() if name in ERAS}
    if len(known) != len(ERAS):
        raise ot.OracleFailure(f"known artifacts found: {sorted(known)}")
    channel = _dating_channel(known)
    return min(unknown, key=lambda site: _isotopes(unknown[site])[channel])


def _dating_channel(known: dict[str, dict[int, float]]) -> int:
    channels = [c for c in known[ERAS[0]] if known[ERAS[0]][c] < known[ERAS[1]][c] < known[ERAS[2]][c]]
    if len(channels) != 1:
        raise ot.OracleFailure(f"expected one dating channel, found {channels}")
    return channels[0]


def _excavate(obs: ot.Obs, site: int, shovel: int, meter: int) -> Excavation:
    """Go to a dig site (the teleport point is just west of its top-left soil tile) and walk its
    soil block (at most 2 x 2) in reading order, digging each tile until the artifact shows; then
    measure it. Returns (observation, (artifact name, meter message))."""
    obs = yield from ot.checked(ot.act("TELEPORT_TO_LOCATION", f"dig site {site}"))
    obs = yield from ot.checked(ot.act("ROTATE_DIRECTION", "east"))
    # Tiles: T1 east of the teleport point, T2 east of T1, T3 south of T1, T4 south of T2.
    obs, found, _ = yield from _inspect(obs, shovel, meter)  # T1
    if found:
        return obs, found
    obs = yield from ot.checked(ot.act("MOVE_DIRECTION", "east"))
    obs, found, wide = yield from _inspect(obs, shovel, meter)  # T2
    if found:
        return obs, found
    obs = yield from ot.checked(ot.act("ROTATE_DIRECTION", "south"))
    obs, found, tall = yield from _inspect(obs, shovel, meter)  # T3
    if found:
        return obs, found
    if wide and tall:
        obs = yield from ot.checked(ot.act("MOVE_DIRECTION", "east"))
        obs = yield from ot.checked(ot.act("ROTATE_DIRECTION", "south"))
        obs, found, _ = yield from _inspect(obs, shovel, meter)  # T4
        if found:
            return obs, found
    raise ot.OracleFailure(f"no artifact at dig site {site}")


def _facing(obs: ot.Obs) -> list[dict[str, Any]]:
    """Nearby entries on the tile the agent faces."""
    direction = obs["agentLocation"]["faceDirection"]
    return [entry for entry in obs["nearbyObjects"]["objects"][direction] if entry["distance"] == 1]


def _inspect(obs: ot.Obs, shovel: int, meter: int) -> Inspection:
    """Dig the soil tile faced (if it still holds its dirt) and measure an artifact that shows.
    Returns (observation, (name, message) or None, whether the faced tile is soil at all)."""
    soil = next((e for e in _facing(obs) if e["name"] == "soil"), None)
    if soil is None:
        return obs, None, False
    if soil["description"] == "soil":  # still covered; a dug tile reads "hole"
        obs = yield from ot.checked(ot.act("USE", shovel, soil["uuid"]))
    artifact = next((e for e in _facing(obs) if e["name"].startswith("ancient ")), None)
    if artifact is None:
        return obs, None, True
    obs = yield from ot.checked(ot.act("USE", meter, artifact["uuid"]))
    return obs, (artifact["name"], obs["lastActionMessage"]), True
