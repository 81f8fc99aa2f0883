"""Run Tiny Labs episodes in parallel processes, resumably, with transcripts, score files and plots.

Layout of a run directory `out` (the same conventions as the DiscoveryWorld benchmark runner):

    out/results.jsonl                              one `LabRecord` per finished episode (append + fsync)
    out/transcripts/<protocol>-<instance>-<agent>.jsonl  start line, one line per message, end line
    out/scores/<protocol>-<instance>-<agent>.json     the grade (score, parts, labels, details), truth
    out/plots/*.png                                per-episode figures and `scores.png`

`<protocol>` is the registry name with "/" replaced by "-"; `<instance>` is `s<seed>` for a raw
seed, `<split><index>` for a split's instance (`test3`). A re-run with the same `out` skips
(protocol, instance, agent) keys already recorded with status "ok"; failed episodes are redone. An
episode that fails is recorded with `status: "error"` (after `retries` fresh attempts when the
failure looks transient: connection errors, timeouts, an unreachable LLM endpoint).
"""

from __future__ import annotations

import importlib
import json
import logging
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from discoverylab.bench import records
from discoverylab.bench.pool import LocalPool
from discoverylab.bench.rundir import RUN_FILE, RunLock, Scan, check_out, scan_results
from discoverylab.bench.rundir import RunConfigMismatch as RunDirConfigMismatch
from discoverylab.bench.runs import BREAKER_DEFAULT, Outcome, execute
from discoverylab.bench.schema import classify, usage_of, usage_snapshot
from discoverylab.instances import Instance
from discoverylab.labs.agents import LabAgent, make_agent
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.jobs import LLM_AGENT_MODULE, LabJob, protocol_from_spec
from discoverylab.labs.protocol import (
    Protocol,
    Score,
    make_protocol,
)
from discoverylab.labs.run_record import GraderVersionMismatch, LabRecord, lab_key, stale_grade

logger = logging.getLogger(__name__)



class RunConfigMismatch(RunDirConfigMismatch):
    """`out/results.jsonl` holds episodes run with another protocol config than the one requested."""


# ---------------------------------------------------------------------- one episode
@dataclass(slots=True)
class _Trace:
    """Per-turn timing of an episode (act and step wall time), filled as the episode runs."""

    agent_seconds: list[float] = field(default_factory=list)
    lab_seconds: list[float] = field(default_factory=list)


def play(protocol: Protocol, agent: LabAgent, inst: Instance, trace: _Trace) -> Score:
    """Play one episode to its end (bounded by the protocol's `max_turns`) and grade it. The agent
    gets its own seed (`agent_seed`), never a sealed episode's seed."""
    play_turns(protocol, agent, inst, trace)
    return protocol.grade()


def play_turns(protocol: Protocol, agent: LabAgent, inst: Instance, trace: _Trace) -> None:
    """The episode's turns without the grade (the runner grades with the judge attached afterwards)."""
    agent.reset(inst.agent_seed)
    message = protocol.reset(inst.seed)
    while not protocol.done:
        start = time.perf_counter()
        text = agent.act(message)
        mid = time.perf_counter()
        reply = protocol.step(text)
        trace.agent_seconds.append(mid - start)
        trace.lab_seconds.append(time.perf_counter() - mid)
        message = reply.text


def transient_errors() -> tuple[type[BaseException], ...]:
    """Failures worth a fresh attempt: the network, timeouts, an unreachable model endpoint."""
    from discoverylab.llm.errors import LLMUnavailable

    return (ConnectionError, TimeoutError, LLMUnavailable)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: a transient error, but not a missing package or model file (retrying cannot help)."""
    from discoverylab.llm.errors import EmbeddedServerError

    return isinstance(exc, transient_errors()) and not isinstance(exc, EmbeddedServerError)


def _transcript_lines(job: LabJob, protocol: Protocol | None, trace: _Trace, agent: Any,
                      end: dict[str, Any]) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = [{
        "type": "start", "lab": job.lab, "protocol": job.protocol, **job.instance.public(), "agent": job.agent,
        "config": job.config, "config_hash": job.config_hash, "grader_version": job.grader_version,
    }]
    for entry in protocol.transcript if protocol is not None else []:
        line: dict[str, Any] = {"type": "message", **entry.model_dump(mode="json")}
        timings = trace.agent_seconds if entry.role == "agent" else trace.lab_seconds
        if 1 <= entry.turn <= len(timings):
            line["seconds"] = round(timings[entry.turn - 1], 6)
        lines.append(line)
    turn_records = getattr(agent, "turn_records", None)
    if callable(turn_records):
        try:
            lines.append({"type": "agent_turns", "turns": turn_records()})
        except Exception as exc:  # noqa: BLE001 - optional diagnostics must not lose the transcript
            logger.warning("agent turn records unavailable: %s", exc)
    lines.append({"type": "end", **end})
    return lines


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write one JSON document atomically (`records.atomic_file`)."""
    with records.atomic_file(path, path.with_suffix(path.suffix + ".tmp")) as fh:
        fh.write(json.dumps(payload, indent=2, sort_keys=True, default=str, ensure_ascii=False) + "\n")


def _protocol_config(job: LabJob, out: Path | None) -> dict[str, Any]:
    """The job's config plus run-directory defaults (the macro lab caches its measured graph there)."""
    config = dict(job.config)
    if job.lab == "macro" and out is not None:
        config.setdefault("cache_dir", str(out / "cache"))
    return config


def _judge_margin(episode_timeout: float) -> float:
    """Seconds kept after the judge to write the record before the parent's deadline."""
    return max(0.2, min(2.0, 0.1 * episode_timeout))


def attach_judge(protocol: Protocol, judge: dict[str, str], deadline: float | None, margin: float = 0.0) -> None:
    """Give the protocol its judge client (every grader reads `protocol.judge`), bounded by `deadline`."""
    from discoverylab.labs.judging import DeadlineJudge, make_judge_client

    client = make_judge_client(judge.get("model"), judge.get("base_url"))
    protocol.judge = client if deadline is None else DeadlineJudge(client, deadline, margin)  # type: ignore[attr-defined]


def mark_judge_status(score: Score) -> None:
    """`labels["judge_status"]` (judged / unjudged) and, when unjudged, `labels["judge_error"]`."""
    from discoverylab.labs.judging import UNJUDGED, judge_status

    status = judge_status(score.labels)
    if status is None:
        return
    score.labels["judge_status"] = status
    if status == UNJUDGED:
        call = score.details.get("judge_call") or score.details.get("judge")
        error = call.get("error") if isinstance(call, dict) else None
        score.labels["judge_error"] = str(error or "the judge gave no valid judgement")[:300]


def run_lab_episode(job: LabJob, out: str | Path | None = None, *, retries: int = 2,
                    retry_delay: float = 1.0, plots: bool = True, episode_timeout: float | None = None) -> LabRecord:
    """Run one job (worker body). Never raises: a failure becomes a record with its status
    (`error`, `llm_error`, or `agent_error` when the agent could act on none of the model's replies).

    With `episode_timeout` the judge's requests end before the episode's deadline (the parent stops
    the worker then): a judge that hangs or runs late leaves the episode `ok` and unjudged
    (`labels["judge_status"]`), to be graded later by `lab judge RUN_DIR --unjudged-only`."""
    out_dir = Path(out) if out is not None else None
    started = time.perf_counter()
    deadline = None if episode_timeout is None else time.monotonic() + episode_timeout
    base: dict[str, Any] = {"lab": job.lab, "protocol": job.protocol, **job.instance.public(), "agent": job.agent,
                            "config": job.config, "config_hash": job.config_hash, "grader_version": job.grader_version}
    attempt = 0
    while True:
        attempt += 1
        trace, protocol, agent = _Trace(), None, None
        try:
            if job.spec is not None:
                protocol = protocol_from_spec(LabSpec.model_validate(job.spec))
            else:
                protocol = make_protocol(job.protocol, **_protocol_config(job, out_dir))
            if job.agent == "llm":  # registers the kind (a spawned worker has not imported it yet)
                importlib.import_module(LLM_AGENT_MODULE)
            agent = make_agent(protocol.name, job.agent, protocol, **job.agent_options)
            before = usage_snapshot(agent)
            play_turns(protocol, agent, job.instance, trace)
            if job.judge is not None:  # attached after the turns: the agent never reaches the judge
                _report_played(job, out_dir, protocol, agent, trace, base, attempt, usage_of(agent, before), started)
                attach_judge(protocol, job.judge, deadline, _judge_margin(episode_timeout or 0.0))
            score = protocol.grade()
            mark_judge_status(score)
        except Exception as exc:  # noqa: BLE001 - one bad episode must not stop a run
            if is_transient(exc) and attempt <= retries:
                logger.warning("%s: transient failure (%s), attempt %d of %d", job.stem, exc, attempt, retries + 1)
                time.sleep(retry_delay * 2 ** (attempt - 1))
                continue
            record = LabRecord(**base, status=classify(exc), error=f"{type(exc).__name__}: {exc}", attempts=attempt,
                               turns=protocol.turn if protocol is not None else 0,
                               usage=usage_of(agent) if agent is not None else None,
                               seconds=round(time.perf_counter() - started, 3))
            end: dict[str, Any] = {"status": record.status, "error": record.error,
                                   "traceback": traceback.format_exc(limit=8)}
            _write_outputs(job, out_dir, protocol, agent, trace, record, end, None, plots=False)
            return record
        failure = getattr(agent, "episode_failure", None)  # the LLM agent: no reply could be acted on
        found = failure() if callable(failure) else None
        if found is not None:
            record = LabRecord(**base, status=found[0], error=found[1], attempts=attempt, turns=protocol.turn,
                               usage=usage_of(agent, before), seconds=round(time.perf_counter() - started, 3))
            _write_outputs(job, out_dir, protocol, agent, trace, record, {"status": record.status, "error": record.error},
                           None, plots=False)  # fmt: skip
            return record
        record = LabRecord(**base, score=score.score, parts=score.parts, labels=score.labels,
                           turns=protocol.turn, attempts=attempt, usage=usage_of(agent, before),
                           seconds=round(time.perf_counter() - started, 3))
        end = {"status": "ok", "score": score.score, "parts": score.parts, "turns": protocol.turn,
               "seconds": record.seconds}
        if plots and deadline is not None and deadline - time.monotonic() < max(3.0, 0.25 * (episode_timeout or 0.0)):
            logger.warning("%s: no plots (too little time left before --episode-timeout)", job.stem)
            plots = False
        _write_outputs(job, out_dir, protocol, agent, trace, record, end, score, plots=plots)
        return record


def _report_played(job: LabJob, out: Path | None, protocol: Protocol, agent: Any, trace: _Trace,
                   base: dict[str, Any], attempt: int, usage: Any, started: float) -> None:
    """The episode is played and its judge about to start: hand the runner its record as a stop now
    would leave it (`bench.pool.report_played`), graded without the judge (`unjudged`, the same
    grade as a judge that failed) and with its transcript and score file written, so a Ctrl-C or
    SIGTERM during the judging keeps the finished episode, for `lab judge --unjudged-only` to
    grade, instead of dropping it to be played again on resume (and paid again)."""
    from discoverylab.bench.pool import in_worker, report_played
    from discoverylab.labs.judging import STOPPED_WHILE_JUDGING, UNJUDGED, StoppedJudge

    failure = getattr(agent, "episode_failure", None)
    if not in_worker() or (callable(failure) and failure() is not None):
        return  # nobody to hand it to; or a failed episode, whose record no judge changes
    protocol.judge = StoppedJudge()  # type: ignore[attr-defined]
    judge_log = logging.getLogger("discoverylab.labs.judge_rules")
    quiet, judge_log.disabled = judge_log.disabled, True  # its "judge request failed" is no news here
    try:
        score = protocol.grade()
    finally:
        judge_log.disabled = quiet
        protocol.judge = None  # type: ignore[attr-defined]
    mark_judge_status(score)
    if score.labels.get("judge_status") != UNJUDGED:
        return  # nothing for the judge to grade (no hypothesis stated): no request, nothing to wait for
    score.labels["judge_error"] = STOPPED_WHILE_JUDGING
    record = LabRecord(**base, score=score.score, parts=score.parts, labels=score.labels, turns=protocol.turn,
                       attempts=attempt, usage=usage, seconds=round(time.perf_counter() - started, 3))
    end = {"status": "ok", "score": score.score, "parts": score.parts, "turns": protocol.turn, "seconds": record.seconds}
    _write_outputs(job, out, protocol, agent, trace, record, end, score, plots=False)
    report_played(record)


def _write_outputs(job: LabJob, out: Path | None, protocol: Protocol | None, agent: Any, trace: _Trace,
                   record: LabRecord, end: dict[str, Any], score: Score | None, *, plots: bool) -> None:
    """Transcript, score file and episode plots; paths are stored relative to `out` in the record."""
    if out is None:
        return
    transcript = out / "transcripts" / f"{job.stem}.jsonl"
    records.write_jsonl(transcript, _transcript_lines(job, protocol, trace, agent, end))
    record.transcript = str(transcript.relative_to(out))
    if score is None or protocol is None:
        return
    if plots:
        from discoverylab.labs.plots import plot_episode

        try:
            record.plots = [str(p.relative_to(out)) for p in plot_episode(protocol, out / "plots", job.stem)]
        except Exception as exc:  # noqa: BLE001 - a figure must never cost the episode's result
            logger.warning("%s: plotting failed: %s", job.stem, exc)
    payload: dict[str, Any] = {**record.model_dump(mode="json"), "details": score.details}
    try:
        payload["ground_truth"] = protocol.ground_truth()
    except Exception as exc:  # noqa: BLE001 - the truth is a convenience for offline analysis
        logger.warning("%s: ground truth unavailable: %s", job.stem, exc)
    score_file = out / "scores" / f"{job.stem}.json"
    write_json(score_file, payload)
    record.score_file = str(score_file.relative_to(out))


# ---------------------------------------------------------------------- many episodes
def repair_torn_tail(path: Path) -> bool:
    """Cut a torn last line (a kill mid-write) so the next append starts on a fresh line."""
    cut = records.repair_torn_tail(path)
    if cut:
        logger.warning("dropped a torn last line of %s", path)
    return cut


def load_finished(scan: Scan[LabRecord], jobs: Sequence[LabJob]) -> dict[Any, LabRecord]:
    """Records with status "ok" read back for these jobs; raises `RunConfigMismatch` on a config change
    (`GraderVersionMismatch` when the grader changed since: old and new grades are never mixed)."""
    wanted = {job.key: job.config_hash for job in jobs}
    jobs_by_key = {job.key: job for job in jobs}
    finished: dict[Any, LabRecord] = {}
    for key, record in scan.finished().items():
        if key not in wanted:
            continue
        job = jobs_by_key[key]
        stale = stale_grade(record, job.grader_version)
        if stale is not None:
            raise GraderVersionMismatch(
                f"{stale} ({job.instance.label}, {job.agent}): resuming would mix old and new grades in one run; "
                "use another --out directory (the records here stay as they were)")
        if record.config_hash != wanted[key]:
            if record.split == "test" and record.commitment != job.instance.commitment:
                raise RunConfigMismatch(
                    f"{job.protocol} {job.instance.label} ({job.agent}) was already run in this directory with "
                    "another evaluation key (its test instances are other worlds); use the run's key, or "
                    "another --out directory for this key")
            raise RunConfigMismatch(
                f"{key} was already run in this directory with config {record.config} (its protocol config, "
                "agent options, judge or key differ from this run's); use another --out directory for a "
                "different config")
        finished[key] = record
    return finished


def _set_environment(env: dict[str, str]) -> None:
    os.environ.update(env)


def _shared_llm_environment(jobs: Sequence[LabJob], workers: int) -> dict[str, str]:
    """Start the embedded model once in this process so worker processes share one server."""
    embedded_judge = any(job.judge is not None and not job.judge.get("base_url") for job in jobs)
    if workers <= 1 or not any(job.agent == "llm" for job in jobs) and not embedded_judge:
        return {}
    from discoverylab.llm.client import ENV_BASE_URL, ENV_MODEL

    if os.environ.get(ENV_BASE_URL):
        return {}
    from discoverylab.llm.local_server import shared_server

    server = shared_server()
    return {ENV_BASE_URL: server.base_url, ENV_MODEL: server.model_id}


def run_lab_jobs(jobs: Sequence[LabJob], out: str | Path | None = None, workers: int = 1, *,
                 on_done: Callable[[LabRecord], None] | None = None, retries: int = 2,
                 retry_delay: float = 1.0, plots: bool = True) -> list[LabRecord]:
    """Run jobs (resuming from `out/results.jsonl`); returns their records in job order."""
    return run_lab(jobs, out, workers, on_done=on_done, retries=retries, retry_delay=retry_delay,
                   plots=plots).results


def run_lab(jobs: Sequence[LabJob], out: str | Path | None = None, workers: int = 1, *,
            on_done: Callable[[LabRecord], None] | None = None, on_resume: Callable[[Scan[LabRecord]], None] | None = None,
            retries: int = 2, retry_delay: float = 1.0, plots: bool = True, episode_timeout: float | None = None,
            breaker: int = BREAKER_DEFAULT) -> Outcome[LabRecord]:
    """Run jobs in worker processes with the shared executor (`bench.runs.execute`): the run
    directory is checked and locked first, signals stop it cleanly, deadlines and the LLM circuit
    breaker apply. With `plots`, per-episode figures and `out/plots/scores.png` are written."""
    out_dir = Path(out) if out is not None else None
    results_path: Path | None = None
    lock: RunLock | None = None
    finished: dict[Any, LabRecord] = {}
    if out_dir is not None:
        results_path = check_out(out_dir)
        if (out_dir / RUN_FILE).exists():  # only DiscoveryWorld's runner writes one: its records are no lab's
            raise RunConfigMismatch(f"{out_dir} holds a DiscoveryWorld run ({RUN_FILE}); a lab run goes in a "
                                    "folder of its own: use another --out")
        lock = RunLock(out_dir).acquire()
    try:
        if results_path is not None:
            repair_torn_tail(results_path)
            scan = scan_results(results_path, LabRecord, _record_key)
            finished = load_finished(scan, jobs)
            if on_resume is not None:
                on_resume(scan)
        todo = [job for job in jobs if job.key not in finished]
        env = _shared_llm_environment(todo, workers) if len(todo) > 1 else {}
        # Forking a process that runs the model server's threads is unsafe: spawn fresh workers then.
        context = multiprocessing.get_context("spawn") if env else None
        run_one = partial(run_lab_episode, out=out_dir, retries=retries, retry_delay=retry_delay, plots=plots,
                          episode_timeout=episode_timeout)
        pool = LocalPool(run_one, max(1, min(workers, len(todo))), context=context, initializer=_set_environment,
                         initargs=(env,), close_fds=(lock.fd,) if lock is not None and lock.fd is not None else ())
        outcome = execute(jobs, _job_key, run_one, _failed_record, finished, results_path, on_done=on_done,
                          pool=pool, episode_timeout=episode_timeout, breaker=breaker)
    finally:
        if lock is not None:
            lock.release()
    if plots and out_dir is not None and outcome.results:
        from discoverylab.labs.plots import plot_scores

        try:
            plot_scores(outcome.results, out_dir / "plots" / "scores.png")
        except Exception as exc:  # noqa: BLE001 - the summary chart is optional
            logger.warning("score chart failed: %s", exc)
    return outcome


def _failed_record(job: LabJob, status: str, message: str) -> LabRecord:
    return LabRecord(lab=job.lab, protocol=job.protocol, **job.instance.public(), agent=job.agent, status=status,  # type: ignore[arg-type]
                     config=job.config, config_hash=job.config_hash, grader_version=job.grader_version, error=message)


def _job_key(job: LabJob) -> tuple[Any, ...]:
    return job.key


def _record_key(record: LabRecord) -> tuple[Any, ...]:
    return lab_key(record.protocol, record.agent, record.split, record.index, record.seed)
