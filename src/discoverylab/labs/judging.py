"""The LLM judge of `lab run --judge-model/--judge-base-url`, and the paper's judged tables.

The judge is any OpenAI-compatible model; with no base URL it is the embedded offline model. The
graders take any object with `complete_json(messages, schema)`: the hidden-property grader asks it
to label the ranked hypotheses (paper Table 3, with the anti-hedging, injection-proof rubric of
`sequence.judge`), the dynamics grader scores the judged Table 5 items, the macro grader the judged
parts of Table 7. `paper_tables` lays the results out like those three tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from discoverylab.labs.run_record import LabRecord

HIDDEN, DYNAMICS, MACRO = "sequence/hidden-property", "sequence/unknown-dynamics", "macro/causal-discovery"
TABLE5_ITEMS = ("experimental_coverage", "attractor_identification", "objective_inference", "use_of_evidence",
                "overall")
TABLE7_ITEMS = ("workflow", "coverage", "hypothesis", "data_analysis", "goal_progress")


def make_judge_client(model: str | None = None, base_url: str | None = None) -> Any:
    """An OpenAI-compatible judge client; no base URL: the embedded model (started once per process)."""
    from discoverylab.llm.client import LLMClient

    if base_url:
        return LLMClient(base_url=base_url, model=model or None)
    from discoverylab.llm.local_server import default_client

    return default_client()


def _base(protocol: str) -> str:
    return protocol.split("@", 1)[0]


def paper_tables(records: Sequence[LabRecord]) -> dict[str, list[dict[str, Any]]]:
    """Rows of Tables 3, 5 and 7 (per agent): program and judge labels per hidden property; the
    Table 5 rubric (0-5; coverage and attractor identification computed, the rest judged); the
    Table 7 criteria (0-5) and Net. Judged columns are None when no judge ran or it failed."""
    ok = [r for r in records if r.status == "ok"]
    t3: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"n": 0, "label": Counter(), "judge": Counter()})
    t5: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    t7: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in ok:
        base, labels, parts = _base(r.protocol), r.labels or {}, r.parts or {}
        if base == HIDDEN:
            row = t3[(r.agent, str(labels.get("property", "?")))]
            row["n"] += 1
            row["label"][str(labels.get("label", "fail"))] += 1
            row["judge"][str(labels.get("judge", "none"))] += 1
        elif base == DYNAMICS:
            for item in TABLE5_ITEMS:
                key = f"rubric_{item}"
                if key in labels:
                    t5[r.agent][item].append(float(labels[key]))
        elif base == MACRO:
            for item in TABLE7_ITEMS:
                if item in parts:
                    t7[r.agent][item].append(5.0 * float(parts[item]))
            t7[r.agent]["judge_ok"].append(float(labels.get("judge") == "ok"))

    def mean(values: list[float]) -> float | None:
        return round(sum(values) / len(values), 2) if values else None

    table3 = [{"agent": a, "property": p, "n": row["n"], **{f"label_{k}": row["label"][k] for k in
                                                            ("pass", "partial", "fail")},
               **{f"judge_{k}": row["judge"][k] for k in ("exact", "partial", "wrong", "invalid")}}
              for (a, p), row in sorted(t3.items())]
    table5 = [{"agent": a, **{item: mean(items.get(item, [])) for item in TABLE5_ITEMS}} for a, items in sorted(t5.items())]
    table7 = []
    for a, items in sorted(t7.items()):
        row = {"agent": a, **{item: mean(items.get(item, [])) for item in TABLE7_ITEMS}}
        present = [v for k, v in row.items() if k in TABLE7_ITEMS and v is not None]
        row["net"] = round(sum(present) / len(present), 2) if present else None
        row["judged_share"] = mean(items.get("judge_ok", []))
        table7.append(row)
    return {"table3": table3, "table5": table5, "table7": table7}


# ---------------------------------------------------------------------- judge status and deadline
JUDGED, UNJUDGED = "judged", "unjudged"
_FAILED_JUDGE_LABELS = frozenset({"invalid", "failed", UNJUDGED})


def judge_status(labels: dict[str, str]) -> str | None:
    """`judged`, `unjudged` (a judge was asked and gave no valid judgement: `lab judge --unjudged-only`
    grades it later) or None (no judge was asked, or there was nothing to judge), from a grade's labels."""
    label = labels.get("judge")
    if label in (None, "none"):
        return None
    return UNJUDGED if label in _FAILED_JUDGE_LABELS else JUDGED


STOPPED_WHILE_JUDGING = ("the run was stopped (Ctrl-C or SIGTERM) while the judge graded this finished episode; "
                         "grade it with `discoverylab lab judge RUN_DIR --unjudged-only`")


class StoppedJudge:
    """A judge with no answer: grading with it gives the grade that a stop during the judging
    leaves (`labs.runner`'s record for `bench.pool.report_played`)."""

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        from discoverylab.llm.errors import LLMRequestError

        raise LLMRequestError(STOPPED_WHILE_JUDGING)  # refused as such: `ask_judge` does not ask again


class DeadlineJudge:
    """A judge client whose every request ends by an absolute deadline (`time.monotonic()`).

    Each request gets the time left (less `margin`, kept to write the episode's record) as the
    client's total request deadline, so HTTP retries and backoff stop in time (`llm.deadline`); with
    no time left a request fails at once with `LLMDeadlineExceeded`, which the graders record as an
    unjudged episode, never a crash or a lost one.
    """

    def __init__(self, client: Any, deadline: float, margin: float = 0.0) -> None:
        self.client = client
        self.deadline = deadline
        self.margin = margin
        self._request_timeout = getattr(client, "request_timeout", None)

    def complete_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        import time

        from discoverylab.llm.errors import LLMDeadlineExceeded

        left = self.deadline - self.margin - time.monotonic()
        if left <= 0.05:
            raise LLMDeadlineExceeded("no time left to judge before --episode-timeout; "
                                      "grade it later with `discoverylab lab judge RUN_DIR --unjudged-only`")
        if self._request_timeout is None:  # a client without a total deadline (a test fake)
            reply: dict[str, Any] = self.client.complete_json(messages, schema)
            return reply
        self.client.request_timeout = min(self._request_timeout, left)
        try:
            reply = self.client.complete_json(messages, schema)
        finally:  # the client may be shared (the embedded model's): leave its own deadline as it was
            self.client.request_timeout = self._request_timeout
        return reply
