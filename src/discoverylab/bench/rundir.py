"""A run directory: checked before any work, locked against a second runner, read back safely.

    out/results.jsonl   one record per finished episode (append + fsync)
    out/run.json        the exact config of the run; a resume with another config is refused
    out/.lock           held (flock) by the running runner; holds its pid for the message

A corrupted results.jsonl (a line that is not a JSON object, invalid UTF-8, an `ok` record
missing fields) never stops a resume: bad lines are skipped and reported, their episodes redone.
When an episode appears several times (a failure, then a redo), its last line counts.

Writers make files atomically through temp files (`*.<pid>.tmp`, `*.json.tmp`); a kill or a full
disk can leave one behind, so the lock's holder removes them when it takes the lock and when it
lets it go (no other runner can be writing then). `describe_io_error` turns a failed write
(ENOSPC, EDQUOT, EFBIG, EIO, EROFS, ...) into the one-line message the CLI prints.
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import json
import os
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from discoverylab.bench.records import atomic_file
from discoverylab.bench.schema import config_hash

R = TypeVar("R", bound=BaseModel)
# POSIX only; elsewhere the lock file still names its holder but does not exclude a second runner.
fcntl: Any = importlib.import_module("fcntl") if importlib.util.find_spec("fcntl") else None

RESULTS = "results.jsonl"
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
TORN = "torn last line (the writer was killed mid-line)"  # a resume holds the lock: no one is writing it
# Temp files of our atomic writers (records.write_jsonl, labs' write_json, run.json) and check_out's probe.
TEMP_NAME = re.compile(r"(\.json(l)?(\.\d+)?\.tmp|^\.write-test-\d+)$")


class RunDirError(ValueError):
    """`--out` cannot hold a run (a file, an unwritable folder, an unwritable results.jsonl)."""


class RunLocked(RuntimeError):
    """Another runner is using this run directory."""


class RunConfigMismatch(ValueError):
    """The run directory holds a run made with another config."""


DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


def is_disk_error(exc: BaseException) -> bool:
    """A write failed because of the disk (full, over quota, read-only, broken), not the episode."""
    return isinstance(exc, OSError) and exc.errno in DISK_ERRNOS


def describe_io_error(exc: OSError, path: Path | str | None = None) -> str:
    """One line for a failed write: which file, what happened, the errno's name (ENOSPC, ...)."""
    where = exc.filename or path or "the run directory"
    name = errno.errorcode.get(exc.errno or 0, "")
    reason = exc.strerror or str(exc)
    return f"cannot write {where}: {reason}" + (f" ({name})" if name else "")


def clean_temp_files(out: Path) -> int:
    """Remove temp files our writers left in `out` (after a kill or a full disk); returns how many."""
    removed = 0
    for root, _dirs, files in os.walk(out):
        for name in files:
            if TEMP_NAME.search(name):
                try:
                    os.unlink(os.path.join(root, name))
                    removed += 1
                except OSError:
                    pass  # gone already, or a read-only disk: harmless leftovers
    return removed


def check_out(out: Path) -> Path:
    """Make sure `out` can take a run before any work starts; returns the results path."""
    if out.exists() and not out.is_dir():
        raise RunDirError(f"--out {out} is a file, not a directory; give a directory for the run")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"cannot create the run directory --out {out}: {exc.strerror or exc}") from exc
    probe = out / f".write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise RunDirError(f"cannot write in the run directory --out {out}: {exc.strerror or exc}") from exc
    results = out / RESULTS
    if results.exists():
        if not results.is_file():
            raise RunDirError(f"{results} is not a file; remove it or use another --out")
        try:
            with results.open("ab"):
                pass
        except OSError as exc:
            raise RunDirError(f"cannot append to {results}: {exc.strerror or exc}") from exc
    return results


def saved_results(run_dir: Path, written_by: str = "a bench or run command") -> Path:
    """`run_dir/results.jsonl` of a saved run, for the commands that read one (report, judge, audit,
    lab judge); a RunDirError that says what is wrong: no such folder, a file, or a folder without
    results (before, all three said "no results.jsonl in ...", as if the folder existed)."""
    hint = f"give the --out directory of {written_by}"
    if not run_dir.exists():
        raise RunDirError(f"{run_dir}: no such folder; {hint}")
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir} is a file, not a folder; {hint}")
    results = run_dir / RESULTS
    if not results.exists() and (run_dir / RUN_FILE).is_file():  # a run's folder before its first episode ended
        raise RunDirError(f"no {RESULTS} in {run_dir}: no episode of the run has finished yet (each is written as it ends)")
    if not results.exists():
        raise RunDirError(f"no {RESULTS} in the folder {run_dir}; {hint}")
    if not results.is_file():
        raise RunDirError(f"{results} is not a file; {hint}")
    return results


class RunLock:
    """An exclusive `flock` on `out/.lock`; released when the holder exits, even by SIGKILL.

    The holder removes leftover temp files when it takes the lock and when it releases it."""

    def __init__(self, out: Path) -> None:
        self.path = out / LOCK_FILE
        self.fd: int | None = None

    def acquire(self) -> RunLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunLocked(
                f"another runner (pid {holder}) is using {self.path.parent}; wait for it to finish, "
                f"stop it, or use another --out") from None
        self.fd = fd
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # a full disk: the pid is only for the message of a second runner
        clean_temp_files(self.path.parent)
        return self

    def release(self) -> None:
        if self.fd is not None:
            clean_temp_files(self.path.parent)  # our workers are gone by now
            os.close(self.fd)  # closing drops the flock; the file stays (harmless, reused)
            self.fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass(frozen=True, slots=True)
class BadLine:
    line: int
    reason: str


@dataclass(slots=True)
class Scan(Generic[R]):
    """Records of a results file, last line per key, plus the lines that had to be skipped."""

    latest: dict[Hashable, R] = field(default_factory=dict)
    bad: list[BadLine] = field(default_factory=list)
    objects: int = 0  # lines that are JSON objects, valid records or not (e.g. another runner's)

    def finished(self) -> dict[Hashable, R]:
        """Records with status ok: the episodes a resume does not redo."""
        return {k: r for k, r in self.latest.items() if getattr(r, "status", None) == "ok"}

    def describe_bad(self, limit: int = 3) -> str:
        return f"skipped {len(self.bad)} bad line{'s' if len(self.bad) != 1 else ''} ({bad_lines_text(self.bad, limit)})"


def bad_lines_text(bad: list[BadLine], limit: int = 3) -> str:
    """'line 3: not JSON (...); line 9: torn last line (...) (+2 more)': which lines, and why."""
    shown = "; ".join(f"line {b.line}: {b.reason}" for b in bad[:limit])
    return shown + (f" (+{len(bad) - limit} more)" if len(bad) > limit else "")


def scan_results(path: Path, model: type[R], key: Callable[[R], Hashable], *,
                 config_hash: str | None = None) -> Scan[R]:  # fmt: skip
    """Read `path` line by line from bytes; never raises on content.

    With `config_hash` (the run's, from run.json), a record made with another config (pasted in
    from another run, or left by an edited run.json) is a bad line: reported and redone, never
    taken as this run's result (issue 23.8)."""
    scan: Scan[R] = Scan()
    if not path.exists():
        return scan
    data = path.read_bytes()
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if number == len(lines) and not data.endswith(b"\n"):
            scan.bad.append(BadLine(number, TORN))
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            scan.bad.append(BadLine(number, "invalid UTF-8"))
            continue
        except json.JSONDecodeError as exc:
            scan.bad.append(BadLine(number, f"not JSON ({exc.msg})"))
            continue
        if not isinstance(obj, dict):
            scan.bad.append(BadLine(number, f"not a JSON object ({type(obj).__name__})"))
            continue
        scan.objects += 1
        try:
            record = model.model_validate(obj)
        except ValidationError as exc:
            names = ", ".join(".".join(map(str, e["loc"])) or "record" for e in exc.errors()[:3])
            scan.bad.append(BadLine(number, f"invalid record ({names})"))
            continue
        theirs = getattr(record, "config_hash", None)
        if config_hash is not None and theirs != config_hash:
            scan.bad.append(BadLine(number, f"made with another config (config_hash {theirs or 'missing'!r}, "
                                            f"this run's is {config_hash!r})"))
            continue
        scan.latest[key(record)] = record
    return scan


def _what_changed(old: Any, new: Mapping[str, Any]) -> str:
    """The difference said first, before two configs of a dozen settings each: above all another
    evaluation key (its fingerprints differ only in 16 hex digits; its test#N are other worlds)."""
    if not isinstance(old, dict):
        return "a config this version cannot read"
    if old.get("eval_key_id") and new.get("eval_key_id") and old["eval_key_id"] != new["eval_key_id"]:
        return "another evaluation key (eval_key_id; its test instances are other worlds)"
    changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    return f"other settings ({', '.join(changed) or 'the runner'})"


def stored_config_hash(run_dir: Path) -> str | None:
    """The config hash in `run_dir/run.json`, or None when there is none to read (runs made before
    run.json, or an unreadable one): then no record can be told apart by its config."""
    try:
        stored = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = stored.get("config_hash") if isinstance(stored, dict) else None
    return value if isinstance(value, str) else None


def check_config(out: Path, runner: str, config: Mapping[str, Any], *, has_records: bool) -> None:
    """Store the run's exact config in `out/run.json`, or refuse a resume with another one."""
    path = out / RUN_FILE
    wanted = {"runner": runner, "config": dict(config), "config_hash": config_hash(config)}
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RunConfigMismatch(f"{path} is unreadable ({exc}); use another --out") from exc
        if not isinstance(stored, dict) or stored.get("config_hash") != wanted["config_hash"] \
                or stored.get("runner") != runner:
            old = stored.get("config") if isinstance(stored, dict) else stored
            raise RunConfigMismatch(
                f"{out} was made with {_what_changed(old, config)}: it holds a run with config "
                f"{json.dumps(old, sort_keys=True)}, but this run asks for "
                f"{json.dumps(dict(config), sort_keys=True)}; use another --out (or the same options) "
                "so that results made with different settings never mix")
        return
    if has_records:
        raise RunConfigMismatch(
            f"{out} holds results but no {RUN_FILE} saying how they were made; use another --out")
    try:
        with atomic_file(path) as fh:
            fh.write(json.dumps(wanted, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise RunDirError(f"{describe_io_error(exc, path)}; nothing ran") from exc
