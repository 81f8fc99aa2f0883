"""Scripted solver for Lost in Translation, working only from what an agent observes.

Easy: hear the wanted alien word, read the table signs until one matches, give its object.
Normal/Challenge: hear the elder's sentence; read signed tables and pair each alien word with
the one English word that is in the names of exactly the items under the signs using it (a
word means X iff the signs that use it are the ones whose items are X); learn the numbers in
the school by experiment (reset the flag, run a disk, measure the flag's height); if no word
names an item, listen to the trainer and watch what the dog fetches. Then collect the wanted
items (exploring the farm and the outskirts if needed) and let the elder take them.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.explore import Explorer, Tile, grid_path, manhattan
from discoverylab.scenarios.oracle_tools import (
    Action,
    Obs,
    OracleFailure,
    act,
    nearby_entries,
    need,
    quoted,
    task_text,
)

Steps = Generator[Action, Obs, Any]

# What an agent can tell is solid by looking at it (doors are entered by teleport, never walked).
SOLID = frozenset({"wall", "fence", "table", "table with a sign", "desk", "bookcase", "flag pole", "statue",
                   "village sign", "tree trunk", "sign", "door", "closed door"})  # fmt: skip
# Viewpoints covering the farm and the ground outside the fence (7x7 views).
TOUR = ((23, 4), (2, 1), (9, 1), (16, 1), (23, 1), (30, 1), (30, 7), (30, 13), (30, 19), (30, 25), (30, 30), (23, 30),
        (16, 30), (9, 30), (2, 30), (2, 25), (2, 19), (2, 13), (2, 7))  # fmt: skip
_HEIGHT = re.compile(r"The flag is (\d+) meters? from the ground")
_STEP_LIMIT = 400
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


class Lexicon:
    """Signs read so far: (alien words on the sign, English words in its items' names)."""

    def __init__(self) -> None:
        self.signs: list[tuple[frozenset[str], frozenset[str]]] = []
        self.numbers: dict[str, int] = {}

    def add(self, sign_text: str, item_names: list[str]) -> None:
        english = frozenset(w for name in item_names for w in words(name))
        if english:
            self.signs.append((frozenset(words(sign_text)), english))

    def meaning(self, token: str) -> str | None:
        using = [eng for alien, eng in self.signs if token in alien]
        if not using:
            return None
        candidates = set.intersection(*(set(e) for e in using))
        for alien, eng in self.signs:
            if token not in alien:
                candidates -= eng
        return next(iter(candidates)) if len(candidates) == 1 else None


class Solver:
    def __init__(self, obs: Obs) -> None:
        self.ex = Explorer(obs, max_hops=60)
        self.blocked: set[Tile] = set()
        self.read: set[int] = set()
        self.unreachable: set[Tile] = set()
        self.lex = Lexicon()

    # ---- observation helpers ----------------------------------------------------------
    def agent_uuid(self, name: str) -> int | None:
        for key in self.ex.obs["nearbyAgents"]["list_of_agents"]:
            who, _, uid = key.rpartition(" uuid ")
            if who == name and uid.isdigit():
                return int(uid)
        found = self.ex.map.named(name)
        return found[0].uuid if found else None

    def accessible(self, uuid: int) -> bool:
        return any(e["uuid"] == uuid for e in self.ex.obs["accessibleEnvironmentObjects"])

    def holding(self) -> list[dict[str, Any]]:
        return list(self.ex.obs["inventoryObjects"])

    def reach(self, uuid: int) -> Steps:
        if not self.accessible(uuid):
            yield from self.ex.teleport(uuid)
        return self.ex.obs

    def talk(self, uuid: int, choose: Any) -> Steps:
        """TALK, answering each dialog box with `choose(box) -> option text`; returns the texts heard."""
        obs = yield from self.ex.checked(act("TALK", uuid))
        heard = []
        while obs["dialog_box"].get("is_in_dialog"):
            box = obs["dialog_box"]
            heard.append(box["dialogIn"])
            wanted = choose(box)
            options = {v: int(k) for k, v in box["dialogOptions"].items()}
            if wanted not in options:
                raise OracleFailure(f"dialog option {wanted!r} not offered: {box}")
            obs = yield from self.ex.act({"chosen_dialog_option_int": options[wanted]})
        return heard

    # ---- walking ----------------------------------------------------------------------
    def solid(self) -> set[Tile]:
        tiles = set(self.blocked)
        for sighting in self.ex.map.objects.values():
            if sighting.name in SOLID and len(sighting.tiles) == 1:
                tiles.update(sighting.tiles)
        return tiles

    def walk(self, goal: Tile, tolerance: int = 0) -> Steps:
        """Walk (breadth-first over what is known to be solid) to within `tolerance` of goal."""
        for _ in range(200):
            if manhattan(self.ex.here, goal) <= tolerance:
                return self.ex.obs
            path = grid_path(self.ex.here, goal, tolerance, self.solid())
            if not path:
                raise OracleFailure(f"no known way from {self.ex.here} to {goal}")
            nxt = path[0]
            dx, dy = nxt[0] - self.ex.here[0], nxt[1] - self.ex.here[1]
            direction = {(0, -1): "north", (0, 1): "south", (1, 0): "east", (-1, 0): "west"}[(dx, dy)]
            yield from self.ex.act(act("MOVE_DIRECTION", direction))
            if self.ex.here != nxt:
                self.blocked.add(nxt)
        raise OracleFailure(f"walking to {goal} took too long")

    # ---- reading signs ----------------------------------------------------------------
    def read_room(self) -> Steps:
        """Read every signed table in the building the agent stands in, exploring it as needed."""
        for _ in range(_STEP_LIMIT):
            room = self.room()
            unread = [
                s
                for s in self.ex.map.named("table with a sign")
                if s.uuid not in self.read and s.tile in room
            ]
            if unread:
                table = unread[0]
                yield from self.reach(table.uuid)
                obs = yield from self.ex.checked(act("READ", table.uuid))
                self.read.add(table.uuid)
                text = obs["lastActionMessage"].split("reads:\n", 1)[-1]
                tag = f"[uuid: {table.uuid}])"
                items = [s.name for s in self.ex.map.objects.values() if s.description.endswith(tag)]
                self.lex.add(text, items)
                continue
            frontier = [t for t in self.room_frontier() if t not in self.unreachable]
            if not frontier:
                return self.ex.obs
            # Within two tiles of a frontier tile its unseen neighbours come into view.
            if grid_path(self.ex.here, frontier[0], 2, self.solid()) is None:
                self.unreachable.add(frontier[0])
                continue
            yield from self.walk(frontier[0], tolerance=2)
        raise OracleFailure("reading the room's signs took too long")

    def room(self) -> set[Tile]:
        """The floor tiles (tables included) connected through known floor to the agent's tile."""
        floors = self.ex.map.tiles_with(["floor"])
        start = self.ex.here
        seen, queue = {start}, deque([start])
        while queue:
            x, y = queue.popleft()
            for nxt in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                if nxt in floors and nxt not in seen:
                    seen.add(nxt)
                    queue.append(nxt)
        return seen

    def room_frontier(self) -> list[Tile]:
        """Free tiles of the agent's room next to tiles never seen."""
        start = self.ex.here
        out = []
        for x, y in self.room() - self.solid():
            if any(0 <= nx < 32 and 0 <= ny < 32 and (nx, ny) not in self.ex.map.observed
                   for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))):  # fmt: skip
                out.append((x, y))
        return sorted(out, key=lambda t: (manhattan(t, start), t))

    def visit(self, place: str) -> Steps:
        yield from self.ex.checked(act("TELEPORT_TO_LOCATION", place))
        return (yield from self.read_room())

    # ---- the school experiment ----------------------------------------------------------
    def learn_numbers(self) -> Steps:
        yield from self.visit("school")
        tape = need(_first(self.ex.map.named("measuring tape")), "a measuring tape")
        computer = need(_first(self.ex.map.named("computer")), "a computer")
        pole = need(_first(self.ex.map.named("flag pole")), "a flag pole")
        disks = [s for s in self.ex.map.objects.values() if s.name.startswith("floppy disk (")]
        for thing in (tape, computer, *disks):
            yield from self.reach(thing.uuid)
            yield from self.ex.checked(act("PICKUP", thing.uuid))
        yield from self.ex.teleport(pole.uuid)
        programs = {d.uuid: words(d.name.split("(", 1)[1]) for d in disks}
        verbs = [p[0] for p in programs.values() if len(p) > 1]
        add_verb = max(set(verbs), key=verbs.count)
        odd = [u for u, p in programs.items() if p[0] != add_verb]
        reset = None
        for uuid in odd:  # the program that isn't "<add> <n>" should bring the flag down to 0
            yield from self.ex.checked(act("USE", computer.uuid, uuid))
            if (yield from self.measure(tape.uuid, pole.uuid)) == 0:
                reset = uuid
        reset = need(reset, "a disk that resets the flag")
        for uuid, program in programs.items():
            if uuid == reset or program[0] != add_verb:
                continue
            yield from self.ex.checked(act("USE", computer.uuid, reset))
            yield from self.ex.checked(act("USE", computer.uuid, uuid))
            self.lex.numbers[program[-1]] = yield from self.measure(tape.uuid, pole.uuid)
        return self.ex.obs

    def measure(self, tape: int, pole: int) -> Steps:
        obs = yield from self.ex.checked(act("USE", tape, pole))
        return int(need(_HEIGHT.search(obs["lastActionMessage"]), "a flag height")[1])

    # ---- the stick --------------------------------------------------------------------
    def fetch_thrown(self, elder_words: list[str]) -> Steps:
        """Listen to the trainer; if they say what the elder says, catch what the dog fetches."""
        trainer = need(self.agent_uuid("Trainer"), "the trainer")
        yield from self.ex.teleport(trainer)
        heard = yield from self.talk(trainer, lambda box: next(iter(box["dialogOptions"].values())))
        said = words(need(re.search(r"'(.+)'", heard[0]), "the trainer's words")[1])
        if said != elder_words:
            raise OracleFailure(f"the trainer says {said}, the elder {elder_words}")
        tx, ty = self.ex.here
        yield from self.walk((tx + 3, max(0, ty - 1)))
        fetched = -1  # the UUID of what someone nearby picks up (the dog fetching), once seen
        for _ in range(80):
            if fetched < 0:
                picked = [
                    int(entry["arg1"])
                    for history in self.ex.obs["nearbyAgents"]["list_of_agents"].values()
                    for entry in history
                    if entry["actionType"] == "PICKUP"
                ]
                fetched = picked[0] if picked else -1
            if any(e["uuid"] == fetched for e in self.holding()):
                return fetched
            # Lying on the ground: a top-level entry, whose description has no "(held by ...)".
            on_ground = any(
                e["uuid"] == fetched and "(" not in e["description"] for _, e in nearby_entries(self.ex.obs)
            )
            if on_ground and self.accessible(fetched):
                yield from self.ex.act(act("PICKUP", fetched))
            elif on_ground:
                yield from self.ex.teleport(fetched)
            else:
                yield from self.ex.act(act("WAIT"))
        raise OracleFailure("never caught what the dog fetches")

    # ---- collecting ---------------------------------------------------------------------
    def collect(self, wanted: set[str], count: int) -> Steps:
        def matches() -> list[int]:
            mine = {e["uuid"] for e in self.holding()}
            found = [
                s
                for s in self.ex.map.objects.values()
                if all(w in s.name for w in wanted) and wanted <= set(words(s.name)) and s.uuid not in mine
            ]
            return [s.uuid for s in sorted(found, key=lambda s: (manhattan(s.near(), self.ex.here), s.uuid))]

        def held() -> int:
            return sum(1 for e in self.holding() if wanted <= set(words(e["name"])))

        places = ["key shop", "general store", "paint shop"]
        tour = list(TOUR)
        for _ in range(_STEP_LIMIT):
            if held() >= count:
                return self.ex.obs
            known = matches()
            if len(known) + held() >= count:
                uuid = known[0]
                yield from self.reach(uuid)
                if self.accessible(uuid):
                    yield from self.ex.checked(act("PICKUP", uuid))
                else:
                    self.ex.map.objects.pop(uuid, None)  # could not get there: forget it
            elif places:
                yield from self.ex.checked(act("TELEPORT_TO_LOCATION", places.pop(0)))
            elif tour:
                tour.sort(key=lambda t: manhattan(t, self.ex.here))
                goal = tour.pop(0)
                if grid_path(self.ex.here, goal, 1, self.solid()) is None:
                    # Indoors (doors are never walked): step outside by teleport first.
                    yield from self.ex.checked(act("TELEPORT_TO_LOCATION", "town square"))
                if grid_path(self.ex.here, goal, 1, self.solid()) is not None:
                    yield from self.walk(goal, tolerance=1)
            else:
                raise OracleFailure(f"could not find {count} x {wanted}")
        raise OracleFailure("collecting took too long")


def _first(items: list[Any]) -> Any:
    return items[0] if items else None


def solve(obs: Obs) -> Generator[Action, Obs, KnowledgeReport | None]:
    text = task_text(obs)
    person = re.match(r"Your task is to talk to (.+?) and follow their instructions", text)
    if person:
        return (yield from _solve_easy(Solver(obs), person[1]))
    return (yield from _solve_village(Solver(obs)))


def _solve_easy(solver: Solver, name: str) -> Steps:
    npc = need(solver.agent_uuid(name), name)
    yield from solver.reach(npc)
    heard = yield from solver.talk(npc, lambda box: next(iter(box["dialogOptions"].values())))
    (word,) = quoted(heard[0])
    for table in solver.ex.map.named("table with a sign"):
        yield from solver.reach(table.uuid)
        obs = yield from solver.ex.checked(act("READ", table.uuid))
        if obs["lastActionMessage"].split("reads:\n", 1)[-1].strip() == word:
            tag = f"[uuid: {table.uuid}])"
            item = need(
                _first([s for s in solver.ex.map.objects.values() if s.description.endswith(tag)]), word
            )
            yield from solver.ex.checked(act("PICKUP", item.uuid))
            yield from solver.reach(npc)
            yield from solver.ex.checked(act("PUT", item.uuid, npc))
            text = f"The alien word '{word}' means '{item.name}'."
            return KnowledgeReport(text, {"word": word, "meaning": item.name})
    raise OracleFailure(f"no sign reads {word!r}")


def _solve_village(solver: Solver) -> Steps:
    ex = solver.ex
    yield from ex.checked(act("TELEPORT_TO_LOCATION", "town square"))
    elder = need(solver.agent_uuid("Elder"), "the elder")
    yield from solver.reach(elder)
    heard = yield from solver.talk(elder, lambda box: next(iter(box["dialogOptions"].values())))
    sentence = words(heard[0].split(":", 1)[1])
    yield from solver.visit("general store")
    if len(sentence) > 2:  # more than "<verb> <thing>": colours and numbers are in play
        yield from solver.visit("paint shop")
        yield from solver.learn_numbers()
    meanings = {t: m for t in sentence if (m := solver.lex.meaning(t)) is not None}
    count = max([solver.lex.numbers[t] for t in sentence if t in solver.lex.numbers] or [1])
    if meanings:
        wanted = set(meanings.values())
        yield from solver.collect(wanted, count)
        keep = {e["uuid"] for e in solver.holding() if wanted <= set(words(e["name"]))}
    else:
        keep = {(yield from solver.fetch_thrown(sentence))}
        meanings = {sentence[-1]: next(e["name"] for e in solver.holding() if e["uuid"] in keep)}
    yield from ex.checked(act("TELEPORT_TO_LOCATION", "town square"))
    for entry in solver.holding():  # the elder gets everything carried: keep only what it asked for
        if entry["uuid"] not in keep and entry["uuid"] in {e["uuid"] for e in solver.holding()}:
            yield from ex.checked(act("DROP", entry["uuid"]))
    yield from solver.reach(elder)
    yield from solver.talk(elder, _hand_over)
    return _village_report(sentence, meanings, solver.lex.numbers)


def _village_report(sentence: list[str], meanings: dict[str, str], numbers: dict[str, int]) -> KnowledgeReport:
    """The elder's words: a request verb, then an optional count and colour, then the item."""
    lines = [f"'{sentence[0]}' means 'bring me' (a request to bring something)."]
    facts: dict[str, Any] = {sentence[0]: "bring me"}
    for token in sentence[1:]:
        if token in numbers:
            n = numbers[token]
            lines.append(f"'{token}' means the number {n} ({NUMBER_WORDS.get(n, n)}).")
            facts[token] = n
        elif token == sentence[-1] and token in meanings:
            lines.append(f"'{token}' means '{meanings[token]}'.")
            facts[token] = meanings[token]
        elif token in meanings:
            lines.append(f"'{token}' means the colour {meanings[token]}.")
            facts[token] = meanings[token]
    return KnowledgeReport(" ".join(lines), facts)


def _hand_over(box: dict[str, Any]) -> str:
    if box["dialogIn"].startswith("Elder:"):
        return "The elder seems interested in what you carry."
    return "Yes. You hand the elder everything you carry."
