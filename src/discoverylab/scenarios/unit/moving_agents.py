"""Small Skills: Moving Agents."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any

from discoverylab.scenarios import layout
from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.base import OracleGen, Scenario
from discoverylab.scenarios.registry import register
from discoverylab.scenarios.unit._levels import PEOPLE, draw_cell, inside
from discoverylab.world.agent import Agent
from discoverylab.world.catalog import place_each
from discoverylab.world.npc import NPC

LOTS = ((12, 5), (19, 5), (12, 12), (19, 12), (12, 20), (19, 20))  # top-left corners of 4x4 lots
NAMES = PEOPLE
SPRITES = ("character32_", "character17_", "character16_", "character35_", "character9_")
# What is coming (in the task) -> the warning line (a dialog option).
WEATHER = {
    "it's about to rain": "It looks like it's about to rain.  You might want to go home.",
    "a storm is coming": "It looks like a storm is coming.  You might want to go home.",
    "it's about to snow": "It looks like it's about to snow.  You might want to go home.",
    "hail is coming": "It looks like hail is coming.  You might want to go home.",
    "a heatwave is coming": "It looks like a heatwave is coming.  You might want to go home.",
    "fog is rolling in": "It looks like fog is rolling in.  You might want to go home.",
}
WARNING = WEATHER["it's about to rain"]
GO_HOME = "You might want to go home."
WARNED = ("completed0", "completed1", "completed2")  # the state a warned character gets
# A serpentine over the fenced village: 7x7 views centred here cover every lot.
SWEEP = ((13, 12), (13, 5), (21, 5), (21, 12), (21, 19), (13, 19), (13, 26), (21, 26))
VILLAGE = (10, 3, 24, 27)  # inside the fence
# The village's paths (x, y, w, h): `fill_grass` leaves them bare (`_village` lays them before
# anything reads those tiles), as the grass there would only be removed again.
PATHS = ((17, 2, 1, 28), (2, 17, 28, 1), (13, 9, 9, 1), (13, 24, 9, 1))
# The fence's top and bottom rows (laid first: the sides skip their corners).
FENCE_ROWS = frozenset((x0 + i, y) for x0 in (9, 19) for i in range(7) for y in (2, 28))
# The village's path tiles and fence posts in the order they are laid (each list one `place_each`).
PATH_TILES = [*(c for i in range(28) for c in ((17, 2 + i), (2 + i, 17))),
              *(c for i in range(9) for c in ((13 + i, 9), (13 + i, 24)))]  # fmt: skip
FENCE_TILES = [*(c for x0 in (9, 19) for i in range(7) for c in ((x0 + i, 2), (x0 + i, 28))),
               *((x, y) for x in (9, 25) for y in [*range(2, 15), *range(19, 28)] if (x, y) not in FENCE_ROWS)]  # fmt: skip
# Trees (x, its jitter, y, its jitter: 0 for none), in drawing order, each drawn x then y: beside
# the houses, near the fence gaps, below the village, outside the fence.
TREES = (
    *((x, 1, y, 1) for x in (10, 23) for y in (10, 4, 22)),
    *((x, 1, 3, 0) for x in (13, 19)),
    *((x, 1, 29, 1) for x in (13, 19)),
    *((x, 2, y, 2) for x in (2, 28) for y in (2, 12, 22)),
)
TREE_BOUNDS = [j + 1 for _, jx, _, jy in TREES for j in (jx, jy) if j]  # `integers(0, bound)` per jitter


@register
class MovingAgentsTest(Scenario):
    """Find three wandering characters and warn each of them that rain is coming.

    Description: a fenced village with three houses ("House 0".."House 2") on three of six
    lots; three characters wander around the other three lots. The task names them (from 24
    names) and what weather is coming (6 kinds). Warned ("It looks like it's about to
    rain...") a character walks home to its house and is busy (refuses to talk) until it
    arrives; warned again, it only says goodbye.
    Actions: movement or teleports to find them, TALK and dialog choices.
    Observation: standard text observation; characters appear in `nearbyAgents` and
    `nearbyObjects` while within 3 tiles, and keep moving between observations.
    Scoring: Talk to the other characters /3 (characters warned). No failure state.
    Difficulty knobs: the level draws the lots, names, the weather, trees and plants, the start
    cell (any free tile inside the fence outside the houses) and drives the wandering. Easy: two
    characters to warn. Challenge: two more characters wander the village (not named in the
    task; they live elsewhere): warning one of them ends the task unsuccessfully.
    Registered ids: discoverylab/MovingAgentsTest-Easy-v0, discoverylab/MovingAgentsTest-Normal-v0,
    discoverylab/MovingAgentsTest-Challenge-v0.
    """

    task_id = "MovingAgentsTest"
    title = "Small Skills: Moving Agents Test"
    suite = "unit"
    task_name = "SmallSkillsMovingAgentsTask"
    difficulties = ("easy", "normal", "challenge")

    def build(self) -> Agent:
        world = self.world
        self.burn()
        lots = self.shuffled(LOTS)
        count = 2 if self.difficulty == "easy" else 3
        layout.fill_grass(world, under=(*((x, y, 4, 4) for x, y in lots[:3]), *PATHS))
        for i, (x, y) in enumerate(lots[:3]):
            layout.building(world, x, y, 4, 4, f"House {i}")
        names = self.shuffled(NAMES)
        self.weather = self.choice(list(WEATHER))
        warning = WEATHER[self.weather]
        self.npcs: list[NPC] = []
        self.others: list[NPC] = []  # Challenge: characters not to warn
        wanderers = list(lots[3 : 3 + count]) + ([lots[3], lots[4]] if self.difficulty == "challenge" else [])
        for i, (x, y) in enumerate(wanderers):
            npc = NPC(world, names[i], x + (i >= count), y, sprite=self.choice(SPRITES))
            npc.enqueue("wander", priority=0, x=x + 2, y=y + 2, probability=0.5)
            hx, hy = lots[i % 3]
            self._build_dialog(npc, i, hx + 2, hy + 2, warning)
            (self.npcs if i < count else self.others).append(npc)
        self._village()
        homes = [(x, y, x + 3, y + 4) for x, y in lots[:3]]  # the houses and the tiles before their doors
        start = draw_cell(self, VILLAGE, lambda c: not any(inside(h, *c) for h in homes))
        world.teleports["initial location"] = start
        self.talk = self.scorecard.add(
            "Talk to the other characters", "The agent has talked to all other characters.", count
        )
        return Agent(world, "agent", *start)

    def _build_dialog(self, npc: NPC, index: int, home_x: int, home_y: int, warning: str = WARNING) -> None:
        """Warning an NPC sends it home: its wandering stops and a busy walk home starts."""
        tree = npc.dialog_tree
        assert tree is not None
        done = WARNED[index] if index < len(WARNED) else f"completed{index}"
        go_home = partial(_send_home, npc, home_x, home_y)  # not a closure: worlds pickle
        tree.add_node("root", "Hello, how can I help you?")
        tree.add_option("root", warning, "go_home", anti_states=(done,), callback=go_home)
        tree.add_option(
            "root",
            "Oh right, I already spoke to you about the rain. Nevermind.",
            "end",
            requires_states=(done,),
        )
        tree.add_option("root", "Nevermind", "end", anti_states=(done,))
        tree.add_node("go_home", "Thank you for letting me know.  I'll head home now.", states_to_add=(done,))
        tree.add_option("go_home", "Safe travels", "end")
        tree.add_node("end", "Goodbye.")

    def _village(self) -> None:
        """Paths, a fence with four gaps, trees (jittered by the seed) and plants."""
        world = self.world
        layout.ground_each(world, "path", PATH_TILES)
        place_each(world, "fence", FENCE_TILES)
        # Every tree's jitter in one draw: an array of bounds gives the values and stream state
        # of one scalar draw per bound (tests/test_reset_paths.py), at the cost of about one.
        draws = iter(world.rng_build.integers(0, TREE_BOUNDS).tolist())
        for x, _, y, jy in TREES:
            dx = next(draws)
            layout.tree(world, x + dx, y + (next(draws) if jy else 0))
        layout.place(world, "plant_generic", 15, 1)
        layout.scatter_plants(world)

    def description(self) -> str:
        names = [f"`{npc.name}`" for npc in self.npcs]
        listed = ", ".join(names[:-1]) + f" and {names[-1]}"
        return (
            f"Your task is to talk to each of the {len(names)} characters {listed} in this environment, "
            f"and warn each that {self.weather}.\n"
        )

    def update(self) -> None:
        warned = 0
        for i, npc in enumerate(self.npcs):  # plain loops: this runs every tick
            if WARNED[i] in npc.states:
                warned += 1
        for i, other in enumerate(self.others, start=len(self.npcs)):
            if (WARNED[i] if i < len(WARNED) else f"completed{i}") in other.states:
                self.scorecard.finish(False)
                return
        if warned != self.talk.score:  # (an equal count would store the same score and completion)
            self.talk.set(warned)
        if self.talk.completed:
            self.scorecard.finish(True)

    @staticmethod
    def oracle(obs: ot.Obs) -> OracleGen:
        named = set(ot.quoted(ot.task_text(obs)))
        people: dict[int, str] = {}
        warned: set[int] = set()
        route = itertools.cycle(SWEEP)
        goal, tries = next(route), 0

        def warn(box: dict[str, Any]) -> int:
            options = box["dialogOptions"]
            warning = next((text for text in options.values() if text.endswith(GO_HOME)), "Safe travels")
            return ot.option_index(options, warning)

        while len(warned) < len(named):
            people.update({uid: name for uid, name in ot.nearby_agents(obs).items() if name in named})
            todo = [uid for uid in people if uid not in warned]
            if todo:
                # Characters move between observations: talk only when one is within reach
                # right now, else teleport beside it (again) and look.
                uid = todo[0]
                if ot.is_accessible(obs, uid):
                    obs = yield from ot.converse(obs, uid, warn)
                    warned.add(uid)
                else:
                    obs = yield ot.act("TELEPORT_TO_OBJECT", uid)
                continue
            action = ot.hop_toward(obs, *goal)
            if action is None or tries >= 6:
                goal, tries = next(route), 0
                action = ot.hop_toward(obs, *goal) or ot.act("WAIT")
            tries += 1
            obs = yield action


def _send_home(npc: NPC, home_x: int, home_y: int) -> None:
    """The warning's effect: the NPC's wandering stops and a busy walk home starts."""
    npc.clear_queue()
    npc.enqueue("goto", priority=100, x=home_x, y=home_y)
