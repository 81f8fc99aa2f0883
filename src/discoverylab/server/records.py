"""`env-serve --out DIR`: the evaluator's own records of the episodes a server plays.

An evaluator serving the sealed test split to a submitter's remote agent must not have to trust
the submitter's numbers: with `--out`, every episode that ends becomes a record in the runner's
format, written by the server itself (`bench.records.append_jsonl`: appended and fsync'd line by
line), so `discoverylab report DIR`, `audit DIR` and `judge DIR` read it as a runner's folder:

    DIR/results.jsonl        DiscoveryWorld episodes (`EpisodeRecord`, as `bench --out` writes)
    DIR/logs/<task>-<difficulty>-<instance>-<agent>.jsonl   their logs (start, steps, end)
    DIR/run.json             the server's config (runner "env-serve", eval_key_id)
    DIR/labs/results.jsonl   Tiny Labs episodes (`LabRecord`, as `lab run --out` writes): a lab
                             run has a folder of its own (`lab run` refuses one with a run.json)

Both folders are held with the runner's lock (`RunLock`) while the server runs, so a second
server or a runner on the same DIR is refused at start. The records are written when an
episode ends, never per step. A discovery task's record is written at its end with the answer
sheet still pending (it counts 0, like a sheet an agent failed to hand in), and again, its last
line being the one that counts, when the sheet is handed in or when the session goes without it
(expired, deleted, replaced by a new reset, the server stopped). An episode the client abandons
(its session goes before the end) is recorded where it stands, as the runner records an agent
that stopped early; one still playing when the server stops is not (the runner's `interrupted`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from discoverylab.bench import records
from discoverylab.bench.episode import EpisodeRecord
from discoverylab.bench.rundir import (
    RESULTS,
    RunLock,
    check_config,
    check_out,
    describe_io_error,
    scan_results,
)
from discoverylab.bench.runner import episode_log_name
from discoverylab.bench.schema import config_hash
from discoverylab.instances import SEALED_SPLIT
from discoverylab.labs.protocol import grader_version
from discoverylab.labs.run_record import LabRecord
from discoverylab.labs.run_record import config_hash as lab_config_hash
from discoverylab.server.session import SessionError

if TYPE_CHECKING:
    from discoverylab.server.session import EpisodeSession

logger = logging.getLogger(__name__)
RUNNER = "env-serve"
LABS = "labs"
SHEET_PENDING = "not handed in yet (the episode ended; the server waits for its answer sheet)"


class RecordWriteError(SessionError):
    """A record could not be written (a full or failed disk): the request gets 507."""

    status = 507


def write_failure(exc: BaseException) -> str:
    """Why a record could not be written, in one line: a disk error as `describe_io_error` says it
    (the file, the errno's name), anything else by its type and message."""
    return describe_io_error(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"


class RecordKept(Exception):
    """A record its writer could not write yet but keeps, in order, and writes again (the Ray
    pool's session actors, `ray_hosts.RemoteRecords`): not pending on its session, which would
    write it a second time. `cause`: why the records actor refused; `waiting`: records kept."""

    def __init__(self, cause: Exception, waiting: int) -> None:
        super().__init__(str(cause))
        self.cause, self.waiting = cause, waiting


def records_config(key_id: str | None) -> dict[str, Any]:
    """The config every record of a server's folder carries (run.json's, hashed into each record)."""
    return {"runner": RUNNER, "eval_key_id": key_id}


class EpisodeRecords:
    """When a session's records are made and what they hold; where their lines go is the
    subclass's (`ServerRecords`: DIR itself; the Ray pool's session actors: its records actor)."""

    def __init__(self, out: Path, config: dict[str, Any]) -> None:
        self.out = Path(out)
        self.labs = self.out / LABS
        self.config = dict(config)
        self.config_hash = config_hash(self.config)
        self._lock = threading.Lock()  # lines of two sessions must never interleave or tear
        self.failed = 0  # records the disk refused (each also said in a 507 or the server's log)

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        """Write a DiscoveryWorld episode's log file `name` and append its record, durably."""
        raise NotImplementedError

    def append_lab(self, record: LabRecord) -> None:
        """Append a Tiny Labs episode's record, durably."""
        raise NotImplementedError

    def batched(self) -> AbstractContextManager[None]:
        """A context in which this thread's records may be written together when it ends (the
        server's stop, `SessionPool.close_all`); here each is written at once."""
        return nullcontext()

    def episode_ended(self, session: EpisodeSession) -> None:
        """The end step (or `finish`): its record, the sheet pending if the task has one."""
        self._write(session, None if session.answer_sheet() is None else SHEET_PENDING, raising=True)

    def sheet_in(self, session: EpisodeSession) -> None:
        self._write(session, None, raising=True)

    def closing(self, session: EpisodeSession, why: str, *, stopping: bool = False) -> None:
        """The session goes (`why`): an ended episode whose sheet never came, or whose record the
        disk refused, is written now; an unfinished one is recorded where it stands, unless the
        server is stopping (not the agent's doing: the runner's `interrupted`, never recorded).
        Never raises: it runs in the reaper, DELETE and the server's shutdown."""
        if session.env is None or session.instance is None:
            return
        if not session.done:
            if stopping:
                return
            session.ended_at = time.perf_counter()
            self._write(session, f"abandoned: {why} before the episode ended", raising=False)
        elif session.handed_in is None and session.answer_sheet() is not None:
            self._write(session, f"not handed in: {why}", raising=False)
        elif session.record_pending:
            self._write(session, None, raising=False)

    def _write(self, session: EpisodeSession, note: str | None, *, raising: bool) -> None:
        try:
            if session.kind == "lab":
                self.append_lab(lab_record(session, self.config, note))
            else:
                record = dw_record(session, self.config, self.config_hash, note)
                log = [*session.log, {"type": "end", "scorecard": record.scorecard,
                                      "record": record.model_dump(mode="json", exclude={"seconds", "usage"})}]  # fmt: skip
                self.append_dw(log_name(session), log, record)
            session.record_pending = False
        except Exception as failure:  # noqa: BLE001 - the reaper and the shutdown must go on; a request gets 5xx
            self.failed += 1
            # tried again when the session goes, unless its writer keeps it and tries again itself
            session.record_pending = not isinstance(failure, RecordKept)
            exc = failure.cause if isinstance(failure, RecordKept) else failure
            disk = isinstance(exc, OSError)
            reason = write_failure(exc)
            text = f"The episode's record could not be written to the evaluator's --out {self.out}: {reason}."
            if isinstance(failure, RecordKept):
                text += (f" It waits, with {failure.waiting - 1} other record(s), in the Ray pool's session actor, "
                         "which writes them in order once the disk takes them (or hands them to the pool's shutdown).")  # fmt: skip
            if disk:
                logger.error("%s", text)
            else:
                logger.exception("%s", text)
            if raising:
                error = RecordWriteError(text + " The episode itself has ended: GET /sessions/ID/state shows "
                                         "its scorecard.")  # fmt: skip
                error.status = 507 if disk else 500
                raise error from None


class ServerRecords(EpisodeRecords):
    """The server's run folder: checked and locked at start (`RunDirError`, `RunLocked`,
    `RunConfigMismatch` there), then one record per ended episode, written one at a time."""

    def __init__(self, out: Path, key_id: str | None) -> None:
        super().__init__(out, records_config(key_id))
        self._batch: records.DurableBatch | None = None  # the stop's records (`batched`), else None
        self._batch_thread = 0
        self._batched = 0
        results = check_out(self.out)
        check_out(self.labs)
        self._locks = [RunLock(self.out).acquire()]
        try:
            self._locks.append(RunLock(self.labs).acquire())
            scan = scan_results(results, EpisodeRecord, lambda r: r.key)
            check_config(self.out, RUNNER, self.config, has_records=bool(scan.latest) or scan.objects > 0)
        except BaseException:
            self.close()
            raise

    def sealed_played(self) -> set[tuple[str, str, int]]:
        """The sealed instances DIR already holds a record of (task, difficulty, index): a server
        restarted on DIR refuses them too, or a replay's record (the gold seen) would replace the first."""
        seen = set()
        for row in [*records.read_jsonl(self.out / RESULTS), *records.read_jsonl(self.labs / RESULTS)]:
            if row.get("split") == SEALED_SPLIT and isinstance(row.get("index"), int):
                task, difficulty = (row.get("task"), row.get("difficulty")) if "task" in row else (row.get("protocol"), "")
                if isinstance(task, str) and isinstance(difficulty, str):
                    seen.add((task, difficulty, int(row["index"])))
        return seen

    @contextmanager
    def batched(self, *, raising: bool = False) -> Iterator[None]:
        """This thread's records meanwhile are written as they come but made durable together
        when it ends (`records.DurableBatch`: two syncs of the filesystem, not two fsyncs each):
        the server's stop records every pending sheet, hundreds on a slow disk, within its grace.
        Other threads' records are written one by one as ever (a request is answered only once
        its record is durable). A disk that refuses them is said and counted; `raising`: all of
        them or none is written, and the error raised (the Ray pool keeps them to write again)."""
        with self._lock:
            batch = self._batch = records.DurableBatch(self.out)
            self._batch_thread, self._batched = threading.get_ident(), 0
        done = False
        try:
            yield
            done = True
        finally:
            with self._lock:
                self._batch, count = None, self._batched
                if raising and not done:
                    batch.abort()
                else:
                    try:
                        batch.commit()
                    except Exception as exc:
                        if raising:
                            raise
                        self.failed += count
                        logger.error("%d record(s) of the server's stop could not be written to the evaluator's "
                                     "--out %s: %s", count, self.out, write_failure(exc))  # fmt: skip

    def append_many(self, items: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Several records (`(method, args)`: `append_dw` or `append_lab` and its arguments, in
        order) made durable together, all or none written (`batched(raising=True)`): the Ray
        pool's records actor and its driver write a stop's records so, and keep them all on an error."""
        with self.batched(raising=True):
            for method, args in items:
                getattr(self, method)(*args)

    def _batch_here(self) -> records.DurableBatch | None:
        """The batch this thread opened, if any (under `_lock`)."""
        return self._batch if self._batch is not None and self._batch_thread == threading.get_ident() else None

    def append_dw(self, name: str, log: list[dict[str, Any]], record: EpisodeRecord) -> None:
        with self._lock:
            batch = self._batch_here()
            if batch is not None:
                batch.write_jsonl(self.out / "logs" / name, log)
                batch.append_jsonl(self.out / RESULTS, record)
                self._batched += 1
                return
            records.write_jsonl(self.out / "logs" / name, log)
            records.append_jsonl(self.out / RESULTS, record)

    def append_lab(self, record: LabRecord) -> None:
        with self._lock:
            batch = self._batch_here()
            if batch is not None:
                batch.append_jsonl(self.labs / RESULTS, record)
                self._batched += 1
                return
            records.append_jsonl(self.labs / RESULTS, record)

    def close(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks = []


def log_name(session: EpisodeSession) -> str:
    """The runner's log file name for the session's episode."""
    assert session.instance is not None
    return episode_log_name(session.task, session.difficulty, session.instance, session.agent)


def _seconds(session: EpisodeSession) -> float:
    return round((session.ended_at or time.perf_counter()) - session.started_at, 3)


def dw_record(session: EpisodeSession, config: dict[str, Any], hashed: str, note: str | None) -> EpisodeRecord:
    """The runner's record of a DiscoveryWorld episode played by a remote agent: the full card
    (gold included: the evaluator's file), the sheet's exact grade once handed in; no usage, no
    LLM details; the knowledge report if the client handed one in with the sheet (`judge` grades it)."""
    assert session.instance is not None
    card = session.final_card()
    sheet = session.handed_in
    pending = sheet is None and session.answer_sheet() is not None
    return EpisodeRecord(
        task=session.task, difficulty=session.difficulty, **session.instance.public(), agent=session.agent,
        status="ok", steps=session.steps, completed=bool(card.get("completed")),
        success=bool(card.get("completedSuccessfully")),
        procedure_score=min(1.0, max(0.0, float(card.get("scoreNormalized") or 0.0))),
        scorecard=card, error=note, seconds=_seconds(session), config=dict(config), config_hash=hashed,
        answers=session.answers_in, knowledge=session.knowledge_in,
        answers_score=sheet.get("score") if sheet is not None else None,
        answers_grade=({k: v for k, v in sheet.items() if k != "score"} if sheet is not None
                       else {"fields": [], "errors": {"(agent)": note or SHEET_PENDING}} if pending else None),
    )  # fmt: skip


def lab_record(session: EpisodeSession, config: dict[str, Any], note: str | None) -> LabRecord:
    """The Tiny Labs runner's record of a protocol played by a remote agent (no transcript file)."""
    assert session.instance is not None
    grade = session.final_card()
    protocol = getattr(session.env, "protocol", None)
    return LabRecord(
        lab=session.task.split("/", 1)[0], protocol=session.task, **session.instance.public(), agent=session.agent,
        status="ok", score=float(grade.get("score", 0.0)), parts=dict(grade.get("parts") or {}),
        labels=dict(grade.get("labels") or {}), turns=int(getattr(protocol, "turn", session.steps)),
        seconds=_seconds(session), config=dict(config), config_hash=lab_config_hash(session.task, config),
        grader_version=grader_version(session.task), error=note,
    )  # fmt: skip
