"""The round structure Protocol B (unknown dynamics) and the population lab share: experiments
for `config.rounds` rounds (a report ends them early), then a report phase in which experiments
are closed and a bad report may be sent again `config.final_retries` times."""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from discoverylab.labs.protocol import Protocol, Reply
from discoverylab.labs.sequence.parsing import ParseFailure


class RoundsThenReport(Protocol):
    """Subclasses set the two action types and the two texts, and implement `_parse`, `_run`,
    `_enter_report` and `_accept_report` (how a report combines with the draft sent early)."""

    experiment_type: ClassVar[type[Any]]
    report_type: ClassVar[type[Any]]
    final_round_note: ClassVar[str]
    closed_error: ClassVar[str]

    config: Any
    rounds_used: int
    phase: Literal["experiments", "report"]
    report_attempts: int
    draft: Any
    report: Any

    def _parse(self, message: str) -> Any:
        raise NotImplementedError

    def _run(self, action: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _enter_report(self, prefix: str, info: dict[str, Any]) -> Reply:
        raise NotImplementedError

    def _accept_report(self, action: Any) -> Any:
        raise NotImplementedError

    def _on_step(self, message: str) -> Reply:
        action = self._parse(message)
        if self.phase == "report":
            return self._report_step(action)
        cfg = self.config
        info: dict[str, Any] = {"action": action.as_info()}
        if isinstance(action, self.report_type):
            self.draft = action
            return self._enter_report("Report received.", info)
        if isinstance(action, ParseFailure):
            info["error"] = action.message
            if cfg.invalid_consumes_round:
                self.rounds_used += 1
            payload: dict[str, Any] = {"type": "error", "round": self.rounds_used, "error": action.message,
                                       "experiments_left": cfg.rounds - self.rounds_used}
        else:
            self.rounds_used += 1
            payload = self._run(action)
        info["round"] = self.rounds_used
        if self.rounds_used >= cfg.rounds:
            return self._enter_report(json.dumps(payload), info)
        if self.rounds_used == cfg.rounds - 1:
            payload["note"] = self.final_round_note
        return Reply(text=json.dumps(payload), info=info)

    def _report_step(self, action: Any) -> Reply:
        self.report_attempts += 1
        info: dict[str, Any] = {"action": action.as_info()}
        if isinstance(action, self.report_type):
            self.report = self._accept_report(action)
            notes = (" Notes: " + "; ".join(action.warnings)) if action.warnings else ""
            return Reply(text="Report recorded." + notes, done=True, info=info)
        error = self.closed_error if isinstance(action, self.experiment_type) else action.message
        info["error"] = error
        if self.report_attempts <= self.config.final_retries:
            return Reply(text=json.dumps({"type": "error", "error": error + " Please send the report again."}),
                         info=info)
        self.report = self.draft
        return Reply(text="No valid report; the episode is over.", done=True, info=info)
