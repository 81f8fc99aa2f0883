"""The oracle agent: runs the scripted solver that each scenario ships.

The solver sees only observations (and the task text in them), so an oracle success proves
the task is solvable through the public API.
"""

from __future__ import annotations

from typing import Any

from discoverylab.scenarios.answer_forms import oracle_answers
from discoverylab.scenarios.base import KnowledgeReport, OracleGen
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
        self.knowledge_report: KnowledgeReport | None = None

    def reset(self, obs: dict[str, Any]) -> None:
        self._gen = self.scenario_cls.oracle(obs)
        self._started = False
        self.finished = False
        self.error = None
        self.knowledge_report = None

    def conclude(self, obs: dict[str, Any], tries: int = 20) -> KnowledgeReport | None:
        """After the episode: hand the final observation back so a solver whose last action
        ended the task can finish its reasoning and return its report (actions it still
        yields are not played)."""
        if self._gen is not None and self._started and not self.finished:
            for _ in range(tries):
                try:
                    if isinstance(self._gen.send(obs), KnowledgeReport):
                        continue
                except StopIteration as stop:
                    self._stopped(stop)
                    break
                except (OracleFailure, RuntimeError):  # tripped over the finished world: no report
                    break
            self.finished = True
            self._gen.close()
        return self.knowledge_report

    def answer_sheet(self, form: Any) -> dict[str, Any]:
        """Fill the task's answer sheet from the facts of the knowledge report (what the solver
        found out; call after `conclude`): no report, no answers."""
        facts = self.knowledge_report.facts if self.knowledge_report is not None else None
        return oracle_answers(self.scenario_cls.task_id, form, facts)

    def _stopped(self, stop: StopIteration) -> None:
        self.finished = True
        if isinstance(stop.value, KnowledgeReport):  # a returned report replaces an announced one
            self.knowledge_report = stop.value

    def act(self, obs: dict[str, Any]) -> Any:
        if self._gen is None:
            self.reset(obs)
        assert self._gen is not None
        if self.finished:
            return act("WAIT")
        try:
            if not self._started:
                self._started = True
                item = next(self._gen)
            else:
                item = self._gen.send(obs)
            while isinstance(item, KnowledgeReport):  # a report announced before the last action
                self.knowledge_report = item
                item = self._gen.send(obs)
            return item
        except StopIteration as stop:
            self._stopped(stop)
            return act("WAIT")
        except OracleFailure as exc:
            self.finished = True
            self.error = str(exc)
            return act("WAIT")
