"""Space Sick played through `discoverylab.make`: one episode with the scenario at hand for
assertions, and the oracle run to its end (shared by the theme's test files)."""

from __future__ import annotations

from typing import Any

import discoverylab
from discoverylab.scenarios.base import KnowledgeReport
from discoverylab.scenarios.space_sick.oracle import SpaceSickOracle
from discoverylab.scenarios.space_sick.scenario import SpaceSick
from discoverylab.world.objects import WorldObject

Obs = dict[str, Any]


class Game:
    """One episode through the public API, with the scenario at hand for assertions."""

    def __init__(self, difficulty: str, seed: int = 0, max_steps: int | None = None) -> None:
        self.env = discoverylab.make("SpaceSick", difficulty=difficulty, max_steps=max_steps)
        _, info = self.env.reset(seed=seed)
        self.obs: Obs = info["observation"]
        self.card: dict[str, Any] = self.env.unwrapped.scorecard(reveal=True)  # the test looks at every item
        self.over = False
        sc = self.env.unwrapped.scenario
        assert isinstance(sc, SpaceSick)
        self.sc = sc

    def step(self, action: dict[str, Any]) -> Obs:
        _, _, terminated, truncated, info = self.env.step(action)
        self.obs, self.card = info["observation"], self.env.unwrapped.scorecard(reveal=True)
        self.over = bool(terminated or truncated)
        return self.obs

    def act(self, action: str, arg1: Any = None, arg2: Any = None) -> Obs:
        packet: dict[str, Any] = {"action": action}
        if arg1 is not None:
            packet["arg1"] = arg1
        if arg2 is not None:
            packet["arg2"] = arg2
        return self.step(packet)

    def wait(self, steps: int) -> None:
        for _ in range(steps):
            if self.over:
                return
            self.act("WAIT")

    def nearby(self, name: str) -> list[dict[str, Any]]:
        return [e for group in self.obs["nearbyObjects"]["objects"].values() for e in group if e["name"] == name]

    def held(self, name: str) -> list[int]:
        return [e["uuid"] for e in self.obs["inventoryObjects"] if e["name"] == name]

    def grab_all(self, place: str, name: str = "mushroom") -> None:
        self.act("TELEPORT_TO_LOCATION", place)
        for entry in self.nearby(name):
            self.act("TELEPORT_TO_OBJECT", entry["uuid"])
            self.act("PICKUP", entry["uuid"])

    def give(self, food: int, colonist: WorldObject) -> None:
        for _ in range(30):
            self.act("TELEPORT_TO_OBJECT", colonist.uuid)
            if any(e["uuid"] == colonist.uuid for e in self.obs["accessibleEnvironmentObjects"]):
                break
        self.act("PUT", food, colonist.uuid)

    def talk(self, npc: WorldObject, *choices: str) -> None:
        for _ in range(30):
            self.act("TELEPORT_TO_OBJECT", npc.uuid)
            self.act("TALK", npc.uuid)
            if self.obs["dialog_box"].get("is_in_dialog"):
                break
        for text in choices:
            options = self.obs["dialog_box"]["dialogOptions"]
            self.step({"chosen_dialog_option_int": int(next(k for k, v in options.items() if v == text))})


def run_oracle(difficulty: str, seed: int) -> tuple[Game, dict[str, Any]]:
    game = Game(difficulty, seed)
    oracle = SpaceSickOracle(game.obs)
    announced: list[KnowledgeReport] = []
    action = next(oracle)
    while not game.over:
        game.step(action)
        if game.over:
            break
        try:
            action = oracle.send(game.obs)
            while isinstance(action, KnowledgeReport):  # announced once, before the next action
                announced.append(action)
                action = oracle.send(game.obs)
        except StopIteration:
            game.wait(2000)
    assert len(announced) == 1 and announced[0].to_dict() == oracle.report
    return game, oracle.report


def colonists(game: Game) -> list[Any]:
    return list(game.sc.colony.colonists)
