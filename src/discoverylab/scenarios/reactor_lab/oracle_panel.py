"""The Reactor Lab oracle's hands and eyes: observation bookkeeping and the reactor panel
(reading its setting, pressing its buttons, hunting for the setting that makes a reactor run).
`oracle.ReactorOracle` adds the experiment on top."""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

from discoverylab.scenarios import oracle_tools as ot
from discoverylab.scenarios.explore import Explorer
from discoverylab.scenarios.reactor_lab.oracle_model import HIGH, LOW, Reactor, Search, plan_presses

Gen = Generator[ot.Action, ot.Obs, Any]


class PanelOracle:
    """What every step of the experiment needs: the explorer, the objects seen, the panel."""

    ex: Explorer
    entries: dict[int, dict[str, Any]]

    # ---- observation bookkeeping ------------------------------------------------------------
    def _note(self, obs: ot.Obs) -> None:
        for _, entry in ot.nearby_entries(obs):
            self.entries[entry["uuid"]] = entry
        for entry in obs["inventoryObjects"]:
            self.entries[entry["uuid"]] = entry

    def act(self, action: ot.Action) -> Gen:
        obs = yield from self.ex.checked(action)
        self._note(obs)
        return obs

    def say(self, option: str) -> Gen:
        box = self.ex.obs["dialog_box"]
        obs = yield from self.ex.act(
            {"chosen_dialog_option_int": ot.option_index(box["dialogOptions"], option)}
        )
        self._note(obs)
        return obs

    def reactor_state(self, uuid: int) -> str:
        for _, entry in ot.nearby_entries(self.ex.obs):
            if entry["uuid"] == uuid:
                return str(entry["name"])
        raise ot.OracleFailure(f"reactor {uuid} is out of view")

    def setting(self) -> tuple[float, bool]:
        """The panel's frequency and whether it is an exact crystal value (it has decimals)."""
        text = self.ex.obs["dialog_box"].get("dialogIn", "")
        match = ot.need(re.search(r"is: (\d+(?:\.\d+)?) Hertz", text), "the reactor's frequency")
        return float(match[1]), "." in match[1]

    def running(self, reactor: Reactor) -> bool:
        return "(activated)" in self.reactor_state(reactor.uuid)

    def press(self, step: int) -> Gen:
        verb = "Increase" if step > 0 else "Decrease"
        yield from self.say(f"{verb} frequency by {abs(step)} Hz")

    def move_to(self, reactor: Reactor, target: int, watch: bool = True, search: Search | None = None) -> Gen:
        """Press steps until the panel shows `target`; with `watch`, stop early if the reactor
        runs. Every setting passed on the way is a check (recorded in `search`)."""
        for _ in range(200):
            value, _ = self.setting()
            delta = target - round(value)
            if delta == 0 or (watch and self.running(reactor)):
                return
            step = next((s for s in plan_presses(delta) if LOW <= value + s <= HIGH), None)
            if step is None:
                break
            yield from self.press(step)
            if search is not None:
                search.visit(round(self.setting()[0]))
        raise ot.OracleFailure(f"the reactor panel does not reach {target}")

    def hunt(self, reactor: Reactor, search: Search) -> Gen:
        """Check settings, most probable per press first; True once the reactor runs, False
        when the predictions are exhausted."""
        while not self.running(reactor):
            target = search.next_setting(round(self.setting()[0]))
            if target is None:
                return False
            yield from self.move_to(reactor, target, search=search)
        return True

    def snap(self, reactor: Reactor) -> Gen:
        """The reactor runs at setting v, so the crystal lies in (v-2, v+2); the panel shows
        the exact frequency once the integer parts match: try v+1, v-1, v-2."""
        value, exact = self.setting()
        for step in (1, -1, -1, -1):  # v+1, (v), v-1, v-2
            if exact or self.ex.completed:
                break
            yield from self.press(step)
            value, exact = self.setting()
        if not exact:
            raise ot.OracleFailure("the reactor never showed the crystal's exact frequency")
        return value
