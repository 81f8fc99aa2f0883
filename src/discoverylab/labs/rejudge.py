"""Judge a saved Tiny Labs run again (`discoverylab lab judge RUN_DIR [--unjudged-only]`).

An episode whose judge failed or ran out of time is recorded `ok` with `labels["judge_status"] =
"unjudged"` and its automatic score. Episodes are deterministic, so the protocol's state is rebuilt
exactly by replaying the agent's messages from the transcript on the same instance (every lab reply
is checked against the recorded one, so a changed lab or config is caught, never graded); then the
grader runs with the judge attached. The new grade is appended to `results.jsonl` (readers take the
last record of an episode, so the earlier one stays as history) and the score file is rewritten.
An episode that cannot be judged now is listed, never raised, and stays as it was. A run graded by
another version of a protocol's grader is refused as a whole (`GraderVersionMismatch`): judging it
would put grades of the new grader beside the old ones.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from discoverylab.bench import records
from discoverylab.bench.rundir import RunDirError, RunLock, saved_results, scan_results
from discoverylab.labs.judging import JUDGED, judge_status
from discoverylab.labs.protocol import Protocol, Score, UnknownProtocolError, grader_version, make_protocol
from discoverylab.labs.run_record import GraderVersionMismatch, LabRecord, lab_key, stale_grade

JudgeFactory = Callable[[], Any]


class NothingToJudge(Exception):
    """The episode gives the judge nothing to grade (e.g. no hypothesis was stated)."""


class ReplayMismatch(RuntimeError):
    """The transcript does not replay: the lab answers differently now (changed code or config)."""


@dataclass(slots=True)
class RejudgeRun:
    """What one pass did: records judged (new), episodes it could not judge (key, reason), skipped."""

    judged: list[LabRecord] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0


def _transcript_messages(path: Path) -> list[dict[str, Any]]:
    return [line for line in records.read_jsonl(path) if line.get("type") == "message"]


def replay(protocol: Protocol, seed: int, messages: list[dict[str, Any]]) -> None:
    """Rebuild the episode's state: reset on its seed, send the agent's messages, compare the replies."""
    lab = [m["text"] for m in messages if m.get("role") == "lab"]
    agent = [m["text"] for m in messages if m.get("role") == "agent"]
    replies = [protocol.reset(seed)]
    for text in agent:
        if protocol.done:
            break
        replies.append(protocol.step(text).text)
    if replies != lab[: len(replies)] or len(replies) != len(lab):
        turn = next((i for i, (a, b) in enumerate(zip(replies, lab, strict=False)) if a != b), min(len(replies), len(lab)))
        raise ReplayMismatch(f"the transcript does not replay (the lab's reply {turn} differs): the lab or its "
                             "config changed since the run")


def _seed_of(record: LabRecord, key: bytes | None) -> int:
    if record.seed is not None:
        return record.seed
    from discoverylab.instances import make_instance

    if key is None or record.index is None:
        raise ValueError("a sealed instance: judging it needs the evaluator's key (--eval-key-file or "
                         "$DISCOVERYLAB_EVAL_KEY)")
    return make_instance(record.protocol, "", record.split, record.index, key).seed


def _protocol_for(record: LabRecord, run_dir: Path, specs: dict[str, Any]) -> Protocol:
    if "@" in record.protocol:  # built from a lab spec (`lab run --spec`): the spec is not in the run dir
        spec = specs.get(record.protocol)
        if spec is None:
            raise ValueError("built from a lab spec: pass the same suite with --spec FILE")
        from discoverylab.labs.jobs import protocol_from_spec

        return protocol_from_spec(spec)
    config = dict(record.config)
    if record.lab == "macro":
        config.setdefault("cache_dir", str(run_dir / "cache"))
    return make_protocol(record.protocol, **config)


def rejudge_episode(record: LabRecord, run_dir: Path, judge: JudgeFactory, *, key: bytes | None = None,
                    specs: dict[str, Any] | None = None) -> tuple[LabRecord, Score]:
    """The record graded again with the judge (raises when the episode cannot be rebuilt or judged)."""
    from discoverylab.labs.runner import mark_judge_status

    if record.transcript is None:
        raise ValueError("no transcript recorded")
    protocol = _protocol_for(record, run_dir, specs or {})
    replay(protocol, _seed_of(record, key), _transcript_messages(run_dir / record.transcript))
    protocol.judge = judge()  # type: ignore[attr-defined]
    started = time.perf_counter()
    score = protocol.grade()
    mark_judge_status(score)
    if "judge_status" not in score.labels:
        raise NothingToJudge
    if score.labels["judge_status"] != JUDGED:
        raise RuntimeError(score.labels.get("judge_error", "the judge gave no valid judgement"))
    new = record.model_copy(update={"score": score.score, "parts": score.parts, "labels": score.labels})
    new.seconds = round(record.seconds + time.perf_counter() - started, 3)
    if record.score_file is not None:
        payload: dict[str, Any] = {**new.model_dump(mode="json"), "details": score.details}
        try:
            payload["ground_truth"] = protocol.ground_truth()
        except Exception:  # noqa: BLE001 - the truth is a convenience for offline analysis
            pass
        from discoverylab.labs.runner import write_json

        write_json(run_dir / record.score_file, payload)
    return new, score


def check_grader_versions(finished: list[LabRecord], run_dir: Path) -> None:
    """Raise `GraderVersionMismatch` when an episode was graded by another version of its grader."""
    stale = []
    for record in finished:
        try:
            current = grader_version(record.protocol)
        except UnknownProtocolError:  # judging it fails on its own, with the reason
            continue
        if (why := stale_grade(record, current)) is not None:
            stale.append(why)
    if stale:
        raise GraderVersionMismatch(
            f"cannot judge {run_dir}: {stale[0]} ({len(stale)} of {len(finished)} episodes graded by another "
            "version); judging would mix old and new grades in one run: run the episodes again in another "
            "--out directory")


def rejudge_run(run_dir: str | Path, judge: JudgeFactory, *, only_unjudged: bool = False, key: bytes | None = None,
                specs: dict[str, Any] | None = None) -> RejudgeRun:
    """Judge the `ok` episodes of a run directory (with `only_unjudged`: those not judged yet); raises
    `GraderVersionMismatch` before judging anything when some were graded by another grader version."""
    run_dir = Path(run_dir)
    try:
        results = saved_results(run_dir, "a `discoverylab lab run`")
    except RunDirError as exc:  # no such folder, a file, no results.jsonl: each said as it is
        raise FileNotFoundError(str(exc)) from None
    out = RejudgeRun()
    lock = RunLock(run_dir).acquire()
    try:
        scan = scan_results(results, LabRecord, lambda r: lab_key(r.protocol, r.agent, r.split, r.index, r.seed))
        check_grader_versions(list(scan.finished().values()), run_dir)
        for record in scan.finished().values():
            if only_unjudged and judge_status(record.labels) == JUDGED:
                out.skipped += 1
                continue
            name = " ".join(str(part) for part in lab_key(record.protocol, record.agent, record.split, record.index,
                                                          record.seed))
            try:
                new, _ = rejudge_episode(record, run_dir, judge, key=key, specs=specs)
            except NothingToJudge:
                out.skipped += 1
                continue
            except Exception as exc:  # noqa: BLE001 - one episode that cannot be judged stops nothing
                out.failed.append((name, f"{type(exc).__name__}: {str(exc)[:300]}"))
                continue
            records.append_jsonl(results, json.loads(new.model_dump_json()))
            out.judged.append(new)
    finally:
        lock.release()
    return out
