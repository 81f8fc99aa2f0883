"""The Space Sick oracle: finds the contaminated food with the right instrument, then feeds the
colony safely. It uses only observations (nearby objects, inventory, agents, action messages,
teleport names) and returns a knowledge report {"text": ..., "facts": {...}} when done.

Easy: measure the three mushrooms with all five instruments; the one whose reading mentions a
pathogen goes in the jar. Normal: look at every mushroom under the microscope (which carry mold,
and which mold), find the spectrometer channel the mold raises, ask the Farmer for more seeds
until ten mold-free mushrooms are at hand (heat does not help: the toxin is heat-stable), then
hand the colonists those ten in two rounds 50 steps apart. Challenge: carry a glowing rock from
the cave and hold each mushroom next to it, alone, in the quiet meadow below the cave; ask the
Farmer for more seeds until ten mushrooms are known safe; then feed.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import KnowledgeReport

Report = dict[str, Any]
Solve = Generator[ot.Action, ot.Obs, None]
LAB = ("microscope", "spectrometer", "PH meter", "radiation meter", "sampler", "thermometer", "NPK field test")
EASY_LAB = ("densitometer", "spectrometer", "PH meter", "microscope", "radiation meter")
_PATHOGEN = re.compile(r"contaminated with (.+?)\.\n")
_CHANNEL = re.compile(r"- Channel (\d+): (\d+\.\d+)")
_SPECIES = re.compile(r"an? (\w+) mold")
WATCH = 50
MEALS = 10


class SpaceSickOracle(Generator[ot.Action | KnowledgeReport, ot.Obs, None]):
    """The solver as a generator that also carries its knowledge report: `report` holds
    {"text": ..., "facts": {...}} from the moment the discovery is made (the episode may end
    on the very action that completes the task, before the solver could return anything).
    The report is announced once, as a `KnowledgeReport` yielded before the next action (the
    shared mechanism of `scenarios/base.py`)."""

    def __init__(self, obs: ot.Obs) -> None:
        self.report: Report = {}
        self._inner = solve(obs, self.report)
        self._announced = False
        self._held: ot.Action | None = None

    def send(self, value: ot.Obs | None) -> ot.Action | KnowledgeReport:
        if self._held is not None:
            action, self._held = self._held, None
            return action
        action = self._inner.send(value)  # type: ignore[arg-type]
        if self.report.get("text") and not self._announced:
            self._announced = True
            self._held = action
            return KnowledgeReport(self.report["text"], dict(self.report.get("facts", {})))
        return action

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> ot.Action:
        return self._inner.throw(typ, val, tb)


def solve(obs: ot.Obs, report: Report) -> Solve:
    """Yield the actions; fill `report` as soon as the discovery is made."""
    if "initial location" in obs.get("teleportLocations", []):
        yield from _solve_easy(obs, report)
    else:
        yield from Colony(obs, report).solve()


def _colour(entry: dict[str, Any]) -> str:
    return str(entry["description"]).split(" mushroom")[0].split()[-1]


# ---- Easy ------------------------------------------------------------------------------------
def _solve_easy(obs: ot.Obs, report: Report) -> Solve:
    foods = [e for _, e in ot.nearby_entries(obs) if e["name"] == "mushroom"]
    if len(foods) != 3:
        raise ot.OracleFailure(f"expected 3 mushrooms in view, saw {len(foods)}")
    tools = {name: ot.require(ot.find_nearby(obs, name), name)["uuid"] for name in EASY_LAB}
    jar = ot.require(ot.find_nearby(obs, "jar"), "the jar")["uuid"]
    for uuid in tools.values():
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", uuid))
        obs = yield from ot.checked(ot.act("PICKUP", uuid))
    found: list[tuple[dict[str, Any], str, str]] = []
    for food in foods:
        obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", food["uuid"]))
        for name, uuid in tools.items():
            obs = yield from ot.checked(ot.act("USE", uuid, food["uuid"]))
            match = _PATHOGEN.search(obs["lastActionMessage"])
            if match:
                found.append((food, name, match[1]))
    if len(found) != 1:
        raise ot.OracleFailure(f"expected one positive reading, got {len(found)}")
    food, instrument, pathogen = found[0]
    colour = _colour(food)
    report["text"] = (
        f"One of the three mushrooms (the {colour} one, uuid {food['uuid']}) is contaminated with the pathogen "
        f"{pathogen}. Only the {instrument} detects it; the other four instruments read normal on every mushroom. "
        "I put the contaminated mushroom in the jar."
    )
    report["facts"] = {"pathogen": pathogen, "instrument": instrument, "contaminated_uuid": food["uuid"]}
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", food["uuid"]))
    obs = yield from ot.checked(ot.act("PICKUP", food["uuid"]))
    obs = yield from ot.checked(ot.act("TELEPORT_TO_OBJECT", jar))
    yield from ot.checked(ot.act("PUT", food["uuid"], jar))


# ---- Normal and Challenge ---------------------------------------------------------------------
class Colony:
    """State shared by the colony phases: the latest observation and the characters seen."""

    def __init__(self, obs: ot.Obs, report: Report) -> None:
        self.obs = obs
        self.report = report
        self.people: dict[str, int] = {}
        self.fed_at: dict[str, int] = {}
        self.light = ""  # the colour a lit glowing rock shows (Challenge)
        self._note(obs)

    def _note(self, obs: ot.Obs) -> None:
        for uuid, name in ot.nearby_agents(obs).items():
            self.people[name] = uuid
        for _, entry in ot.nearby_entries(obs):
            if entry["name"].startswith(("Colonist ", "Farmer", "Chef")):
                self.people[entry["name"]] = entry["uuid"]

    def do(self, action: ot.Action, check: bool = True) -> ot.Steps:
        obs = yield action
        self.obs = obs
        self._note(obs)
        if check:
            ot.must_succeed(obs, action)
        return obs

    def go(self, place: str) -> ot.Steps:
        return (yield from self.do(ot.act("TELEPORT_TO_LOCATION", place)))

    def held(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.obs["inventoryObjects"] if e["name"] == name]

    def tool(self, name: str) -> int:
        return int(ot.require(ot.find_inventory(self.obs, name), name)["uuid"])

    def solve(self) -> Solve:
        for _ in range(2):  # the colonists walk off from beside the start: see them all first
            yield from self.do(ot.act("WAIT"))
        yield from self.go("science lab")
        tools = [ot.require(ot.find_nearby(self.obs, name), name)["uuid"] for name in LAB]
        for uuid in tools:
            yield from self.do(ot.act("TELEPORT_TO_OBJECT", uuid))
            yield from self.do(ot.act("PICKUP", uuid))
        yield from self.go("cave")
        rocks = [e for _, e in ot.nearby_entries(self.obs) if e["name"].startswith("rock (")]
        yield from self.gather()
        facts = yield from self.examine()
        if rocks and not facts["moldy_colours"]:
            yield from self.solve_challenge(rocks[0])
            return
        colours = " and ".join(facts["moldy_colours"])
        channel = facts["channel"]
        self.report["text"] = (
            f"The {colours} mushrooms make the colonists ill: they all carry a {facts['species']} mold, seen under "
            f"the microscope (a 'mold' part: {facts['species']}); its spores also reach some mushrooms of other "
            "colours (a 'mold spores' part), which make people ill too. The spectrometer shows it indirectly: moldy mushrooms "
            f"read {facts['moldy_reading']:.2f} on Channel {channel} against {facts['clean_reading']:.2f} for clean "
            "ones. Heating does not help: the mold's toxin is heat-stable "
            "(a warmed moldy mushroom still makes people ill), so I feed only mushrooms without mold."
        )
        self.report["facts"] = {k: v for k, v in facts.items() if k != "moldy"}
        clean = [e["uuid"] for e in self.held("mushroom") if e["uuid"] not in facts["moldy"]]
        first = clean[: MEALS // 2]  # a first round now: the Farmer's crops grow during its watch
        yield from self.feed(first, settle=False)
        for _ in range(10):  # the Farmer plants more until ten clean mushrooms are at hand
            if len(clean) >= MEALS:
                break
            yield from self.ask_farmer()
            yield from self.harvest()
            for entry in self.held("mushroom"):
                if entry["uuid"] in clean or entry["uuid"] in facts["moldy"]:
                    continue
                yield from self.do(ot.act("USE", self.tool("microscope"), entry["uuid"]))
                moldy = "parts: mold" in self.obs["lastActionMessage"]
                (facts["moldy"] if moldy else clean).append(entry["uuid"])
        if len(clean) < MEALS:
            raise ot.OracleFailure(f"only {len(clean)} clean mushrooms")
        yield from self.feed(clean[len(first) : MEALS])

    def gather(self) -> ot.Steps:
        """Pick up every mushroom on the cafeteria tables and in the field."""
        for place in ("cafeteria", "farm field"):
            yield from self.go(place)
            for entry in [e for _, e in ot.nearby_entries(self.obs) if e["name"] == "mushroom"]:
                yield from self.do(ot.act("TELEPORT_TO_OBJECT", entry["uuid"]))
                yield from self.do(ot.act("PICKUP", entry["uuid"]))
        return self.obs

    def examine(self) -> Generator[ot.Action, ot.Obs, Report]:
        """Microscope on every mushroom held (which ones carry mold, and which mold); all
        instruments on a moldy (or any) one; the spectrometer on a moldy and a clean one: the
        channel where they differ most is the mold's."""
        moldy: list[dict[str, Any]] = []
        clean: list[dict[str, Any]] = []
        species = ""
        hosts: set[str] = set()
        for entry in self.held("mushroom"):
            yield from self.do(ot.act("USE", self.tool("microscope"), entry["uuid"]))
            message = self.obs["lastActionMessage"]
            (moldy if "parts: mold" in message else clean).append(entry)
            if "parts: mold. " in message:  # a colony of the mold (not just its spores): its host
                hosts.add(_colour(entry))
            found = _SPECIES.search(message)
            species = found[1] if found and not species else species
        subject = (moldy or clean)[0]
        for name in LAB:
            yield from self.do(ot.act("USE", self.tool(name), subject["uuid"]))
        facts: Report = {
            "moldy_colours": sorted(hosts),
            "detecting_instrument": "microscope",
            "moldy": [e["uuid"] for e in moldy],
            "species": species,
        }
        if moldy and clean:
            spectra = []
            for entry in (moldy[0], clean[0]):
                yield from self.do(ot.act("USE", self.tool("spectrometer"), entry["uuid"]))
                spectra.append({int(c): float(v) for c, v in _CHANNEL.findall(self.obs["lastActionMessage"])})
            channel = max(spectra[0], key=lambda c: spectra[0][c] - spectra[1].get(c, 0.0))
            facts.update(channel=channel, moldy_reading=spectra[0][channel], clean_reading=spectra[1][channel])
        return facts

    def find(self, name: str) -> ot.Steps:
        """Teleport beside a character (it may have walked off by then: retry)."""
        for place in 3 * ("farm field", "town square", "science lab", "barracks", "cafeteria", "cave", "farm"):
            if name in self.people:
                break
            yield from self.go(place)
        uuid = self.people.get(name)
        if uuid is None:
            raise ot.OracleFailure(f"never saw {name}")
        for _ in range(20):
            yield from self.do(ot.act("TELEPORT_TO_OBJECT", uuid))
            if ot.is_accessible(self.obs, uuid):
                return self.obs
        raise ot.OracleFailure(f"could not get next to {name}")

    def feed(self, foods: list[int], settle: bool = True) -> ot.Steps:
        """Hand the colonists the mushrooms in turn; a colonist gets its next one only after
        its previous meal's 50 watched steps (a meal inside the watch would count once). With
        `settle`, wait out the last meal's watch."""
        names = [f"Colonist {i}" for i in range(5)]
        for i, food in enumerate(foods):
            name = names[i % len(names)]
            while self.obs["world_steps"] - self.fed_at.get(name, -WATCH) <= WATCH:
                yield from self.do(ot.act("WAIT"))
            yield from self.find(name)
            yield from self.do(ot.act("PUT", food, self.people[name]))
            self.fed_at[name] = self.obs["world_steps"]
        while settle and self.obs["world_steps"] - max(self.fed_at.values()) <= WATCH + 2:
            yield from self.do(ot.act("WAIT"))
        return self.obs

    # ---- Challenge ------------------------------------------------------------------------
    def solve_challenge(self, rock: dict[str, Any]) -> ot.Steps:
        yield from self.go("cave")
        yield from self.do(ot.act("TELEPORT_TO_OBJECT", rock["uuid"]))
        yield from self.do(ot.act("PICKUP", rock["uuid"]))
        safe: list[int] = []
        lit = False
        asked = 0
        first: int | None = None  # poisonous among the first batch: the colony's starting mushrooms
        while True:
            verdicts = yield from self.test_held()
            first = sum(1 for ok in verdicts.values() if not ok) if first is None else first
            lit = lit or any(not ok for ok in verdicts.values())
            safe += [uuid for uuid, ok in verdicts.items() if ok]
            if lit and safe and not self.report:
                self._challenge_report(first)
            if len(safe) >= MEALS:
                break
            if asked >= 8:
                raise ot.OracleFailure(f"only {len(safe)} safe mushrooms after {asked} plantings")
            asked += 1
            yield from self.ask_farmer()
            yield from self.harvest()
        yield from self.collect(safe[:MEALS])
        yield from self.feed(safe[:MEALS])
        return self.obs

    def _challenge_report(self, poisonous_at_start: int) -> None:
        self.report["text"] = (
            "The glowing rock from the cave works as an instrument that detects harmful mushrooms: it becomes "
            f"highly luminous, glowing {self.light}, when a poisonous mushroom is near it (within one tile), and "
            "stays merely glowing "
            "next to a safe one. No lab instrument reading or cooking tells them apart. I tested every mushroom "
            "alone next to the rock and fed the colonists only the safe ones."
        )
        self.report["facts"] = {"detector": "glowing rock", "luminous_near": "poisonous mushroom", "light": self.light,
                                "poisonous_at_start": poisonous_at_start}

    def test_held(self) -> Generator[ot.Action, ot.Obs, dict[int, bool]]:
        """In the meadow below the cave: drop the mushrooms on a stash tile, then carry each
        alone two tiles east and read the rock; safe ones go two tiles further east, bad
        ones four tiles west. Returns {uuid: safe}."""
        foods = [e["uuid"] for e in self.held("mushroom")]
        yield from self.go("cave")
        yield from self.moves("south", 2)  # the stash, two tiles east of the bad pile
        for uuid in foods:
            yield from self.do(ot.act("DROP", uuid))
        verdicts: dict[int, bool] = {}
        for uuid in foods:
            yield from self.do(ot.act("PICKUP", uuid))
            yield from self.moves("east", 2)
            rock = next(e for e in self.obs["inventoryObjects"] if e["name"].startswith("rock ("))
            ok = rock["name"] == "rock (glowing)"
            if not ok:
                self.light = rock["name"].rstrip(")").rsplit(", ", 1)[-1]
            verdicts[uuid] = ok
            yield from self.moves("east" if ok else "west", 2 if ok else 4)
            yield from self.do(ot.act("DROP", uuid))
            yield from self.moves("west" if ok else "east", 4 if ok else 2)
        return verdicts

    def moves(self, direction: str, count: int) -> ot.Steps:
        for _ in range(count):
            yield from self.do(ot.act("MOVE_DIRECTION", direction))
        return self.obs

    def ask_farmer(self) -> ot.Steps:
        yield from self.go("farm")
        for _ in range(200):  # the Farmer may still be planting the last batch
            yield from self.find("Farmer")
            yield from self.do(ot.act("TALK", self.people["Farmer"]), check=False)
            if self.obs["dialog_box"].get("is_in_dialog"):
                break
            yield from self.do(ot.act("WAIT"))
        while self.obs["dialog_box"].get("is_in_dialog"):
            options = self.obs["dialog_box"]["dialogOptions"]
            pick = next((k for k, v in options.items() if v.startswith("Can you plant") or v == "OK"), None)
            self.obs = yield {"chosen_dialog_option_int": int(ot.need(pick, "a planting option"))}
        return self.obs

    def harvest(self) -> ot.Steps:
        """Wait in the field until the new mushrooms have grown, and pick them up."""
        yield from self.go("farm field")
        for _ in range(250):
            yield from self.do(ot.act("WAIT"))
            grown = [e for _, e in ot.nearby_entries(self.obs) if e["name"] == "mushroom"]
            if len(grown) >= 3:
                break
        for entry in [e for _, e in ot.nearby_entries(self.obs) if e["name"] == "mushroom"]:
            yield from self.do(ot.act("TELEPORT_TO_OBJECT", entry["uuid"]))
            yield from self.do(ot.act("PICKUP", entry["uuid"]))
        return self.obs

    def collect(self, foods: list[int]) -> ot.Steps:
        """Pick the safe mushrooms back up from the meadow's safe pile."""
        yield from self.go("cave")
        yield from self.moves("south", 2)
        yield from self.moves("east", 4)  # the safe pile
        for uuid in foods:
            yield from self.do(ot.act("PICKUP", uuid))
        return self.obs
