"""One driver for the tests that play a task through the env's public `step` (theme, unit-rule
and shortcut tests): actions name objects, dialog choices name option texts.

`tests/world_kit.py` is its engine-level sibling (hand-built worlds, no env).
"""

from __future__ import annotations

from typing import Any

from discoverylab.env import DiscoveryWorldEnv
from discoverylab.world.objects import WorldObject


class EnvDriver:
    """A task's env, reset to `seed`, played step by step.

    `reveal=True` marks every object an action names as seen first (the test knows where things
    are; the parser still checks reach), as `go_to` always does.
    """

    def __init__(self, task: str, difficulty: str = "normal", seed: int = 0, *, reveal: bool = False,
                 **env_options: Any) -> None:  # fmt: skip
        self.env = DiscoveryWorldEnv(task, difficulty, **env_options)
        _, info = self.env.reset(seed=seed)
        self.obs: dict[str, Any] = info["observation"]
        assert self.env.scenario is not None and self.env.world is not None
        self.scenario: Any = self.env.scenario
        self.world = self.env.world
        self.player = self.scenario.player
        self.reveal = reveal
        self.terminated = self.truncated = False

    def do(self, action: str, arg1: Any = None, arg2: Any = None) -> str:
        packet: dict[str, Any] = {"action": action}
        for key, arg in (("arg1", arg1), ("arg2", arg2)):
            if isinstance(arg, WorldObject):
                if self.reveal:
                    self.player.seen.add(arg.uuid)
                packet[key] = arg.uuid
            elif arg is not None:
                packet[key] = arg
        return self.send(packet)

    def send(self, packet: dict[str, Any]) -> str:
        _, _, self.terminated, self.truncated, info = self.env.step(packet)
        self.obs = info["observation"]
        return str(self.obs["lastActionMessage"])

    def options(self) -> list[str]:
        return list(self.obs["dialog_box"].get("dialogOptions", {}).values())

    def choose(self, text: str) -> str:
        """Pick the dialog option with exactly this text (it must be offered once)."""
        options = self.obs["dialog_box"]["dialogOptions"]
        (number,) = [int(k) for k, v in options.items() if v == text]
        return self.send({"chosen_dialog_option_int": number})

    def go_to(self, obj: WorldObject) -> None:
        self.player.seen.add(obj.uuid)  # the test knows where everything is
        assert self.do("TELEPORT_TO_OBJECT", obj).startswith("I teleported"), self.obs["lastActionMessage"]

    def take(self, obj: WorldObject) -> None:
        self.go_to(obj)
        assert self.do("PICKUP", obj).startswith("I picked up"), self.obs["lastActionMessage"]
