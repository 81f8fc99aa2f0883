"""The oracle agent: runs the scripted solver that each scenario ships.

The solver sees only observations (and the task text in them), so an oracle success proves
the task is solvable through the public API.
"""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.base import OracleGen
from discoverylab.scenarios.oracle_tools import OracleFailure, act
from discoverylab.scenarios.registry import get_task


class OracleAgent:
    name = "oracle"

    def __init__(self, task: str) -> None:
        self.scenario_cls = get_task(task)
        self._gen: OracleGen | None = None
        self._started = False
        self.finished = False
        self.error: str | None = None

    def reset(self, obs: dict[str, Any]) -> None:
        self._gen = self.scenario_cls.oracle(obs)
        self._started = False
        self.finished = False
        self.error = None

    def act(self, obs: dict[str, Any]) -> Any:
        if self._gen is None:
            self.reset(obs)
        assert self._gen is not None
        if self.finished:
            return act("WAIT")
        try:
            if not self._started:
                self._started = True
                return next(self._gen)
            return self._gen.send(obs)
        except StopIteration:
            self.finished = True
            return act("WAIT")
        except OracleFailure as exc:
            self.finished = True
            self.error = str(exc)
            return act("WAIT")
