"""A seeded random agent: the baseline every solver must beat.

It picks uniformly among the advertised actions, with arguments drawn from what the
observation shows (accessible and inventory UUIDs, directions, teleport names), and answers
dialogs with a random offered option.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from discoverylab.world.action_specs import ACTION_SPECS, DIRECTION, LOCATION, OBJECT, POST_ID

_DIRECTIONS = ("north", "east", "south", "west")


class RandomAgent:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, obs: dict[str, Any]) -> None:
        self.rng = np.random.default_rng(self.seed)

    def answer_sheet(self, form: Any) -> dict[str, Any]:
        """A uniformly random valid answer sheet: the chance baseline (its own stream, so the
        actions of an episode do not change with it)."""
        from discoverylab.scoring.answer_sheet import random_answers

        return random_answers(form, np.random.default_rng([self.seed, 0x5EE7]))

    def _pick(self, seq: list[Any]) -> Any:
        return seq[int(self.rng.integers(0, len(seq)))] if seq else None

    def act(self, obs: dict[str, Any]) -> Any:
        dialog = obs.get("dialog_box", {})
        if dialog.get("is_in_dialog") and dialog.get("dialogOptions"):
            return {"chosen_dialog_option_int": int(self._pick(sorted(dialog["dialogOptions"])))}
        names = [a["name"] for a in obs["availableActions"]]
        name = self._pick(names)
        uuids = [e["uuid"] for e in obs["inventoryObjects"] + obs["accessibleEnvironmentObjects"]]
        packet: dict[str, Any] = {"action": name}
        for i, kind in enumerate(ACTION_SPECS[name].args):
            if kind == OBJECT:
                value = self._pick(uuids)
            elif kind == DIRECTION:
                value = self._pick(list(_DIRECTIONS))
            elif kind == LOCATION:
                value = self._pick(obs.get("teleportLocations", []))
            elif kind == POST_ID:
                value = int(self.rng.integers(1, 8))
            else:
                value = None
            if value is not None:
                packet[f"arg{i + 1}"] = value
        return packet
