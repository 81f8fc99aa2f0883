"""Run records shared by the DiscoveryWorld benchmark and the Tiny Labs runner.

Both write one JSON object per line (JSONL). Appends are flushed and fsync'd line by line so a
killed run loses at most the episode in flight; `done_keys` lets a resumed run skip finished work.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel

# Lone surrogates (an agent's JSON "\ud800", a program's `chr(55296)`) cannot be UTF-8: written as
# `\ud800` instead, which inside a JSON string (where `ensure_ascii=False` leaves every non-ASCII
# character) is the same character's escape, so the file reads back unchanged. They once made the
# score file or transcript write fail and the whole episode end as an error.
JSON_SAFE = "backslashreplace"


def to_jsonable(record: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """Turn a pydantic model or a mapping into a plain JSON-ready dict."""
    if isinstance(record, BaseModel):
        return record.model_dump(mode="json")
    return dict(record)


def dumps(record: BaseModel | Mapping[str, Any]) -> str:
    """Compact, key-sorted JSON so identical runs give byte-identical logs."""
    return json.dumps(to_jsonable(record), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def repair_torn_tail(path: str | Path) -> bool:
    """Cut a torn last line (the writer was killed mid-line) so the next append starts on a
    fresh line. Returns whether anything was cut."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return False
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return False
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    with path.open("r+b") as fh:
        fh.truncate(keep)
    return True


def append_jsonl(path: str | Path, record: BaseModel | Mapping[str, Any]) -> None:
    """Append one record and make it durable before returning (a torn tail is cut first)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_torn_tail(path)
    with path.open("a", encoding="utf-8", errors=JSON_SAFE) as fh:
        fh.write(dumps(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def temp_name(path: Path) -> Path:
    """The per-process temp file beside `path` that `atomic_file` and `DurableBatch` write first
    (two writers never share one; a run folder's check clears such names after a kill)."""
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


@contextmanager
def _unless_failed(path: Path, tmp: Path) -> Iterator[None]:
    """On a failure inside, the temp file goes (a full disk must not leave a partial one behind)
    and an OSError names `path` (a failed write names no file; the message should)."""
    try:
        yield
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)
        raise


@contextmanager
def atomic_file(path: str | Path, tmp: Path | None = None) -> Iterator[TextIO]:
    """A text file that appears at `path` whole or not at all: written to `tmp` (default:
    `temp_name`), fsync'd, then renamed; a failure leaves no temp file (`_unless_failed`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmp or temp_name(path)
    with _unless_failed(path, tmp):
        with tmp.open("w", encoding="utf-8", errors=JSON_SAFE) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)


def write_jsonl(path: str | Path, records: Iterable[BaseModel | Mapping[str, Any]]) -> None:
    """Write a whole file atomically (`atomic_file`), e.g. one episode's log."""
    with atomic_file(path) as fh:
        for record in records:
            fh.write(dumps(record) + "\n")


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield the JSON objects of a file; torn, non-JSON, non-object and non-UTF-8 lines are skipped
    (`rundir.scan_results` reports them)."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as fh:
        for raw in fh:
            obj = parse_line(raw)
            if obj is not None:
                yield obj


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One line of a JSONL file as `read_jsonl` reads it: the JSON object, or None for a blank,
    torn, non-JSON, non-object or non-UTF-8 line."""
    try:
        obj = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return obj if isinstance(obj, dict) else None


def done_keys(path: str | Path, fields: tuple[str, ...]) -> set[tuple[Any, ...]]:
    """Keys (tuples of `fields`) of the records already in `path`, for resuming."""
    return {tuple(rec.get(f) for f in fields) for rec in read_jsonl(path)}


def sync_filesystem(path: str | Path) -> None:
    """Make everything written on `path`'s filesystem durable in one call: Linux's `syncfs`, else
    `os.sync` (POSIX, as the run folders' locks). One journal commit for hundreds of files, where
    an fsync each costs a commit each."""
    import ctypes

    syncfs = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(path))
    finally:
        os.close(fd)


class DurableBatch:
    """Whole files (temp + rename, as `atomic_file`) and appended lines made durable together by
    two filesystem syncs (`sync_filesystem`) instead of an fsync each: a server's stop with
    hundreds of records to write on a slow disk stays within its grace. The temp files are synced
    before any is renamed, so a name never points at a file whose data may not be on disk;
    `commit` returns once every file and line is durable."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._renames: dict[Path, Path] = {}  # final name -> its temp file, in the order given
        self._appends: dict[Path, list[str]] = {}

    def write_jsonl(self, path: str | Path, rows: Iterable[BaseModel | Mapping[str, Any]]) -> None:
        """A whole file, written to a temp file now (an OSError naming `path` if that fails) and
        renamed into place by `commit`; the same `path` again replaces it, as a second write would.
        The temp name is `atomic_file`'s, which a run folder's check clears after a kill."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temp_name(path)
        self._renames.pop(path, None)
        with _unless_failed(path, tmp), tmp.open("w", encoding="utf-8", errors=JSON_SAFE) as fh:
            for row in rows:
                fh.write(dumps(row) + "\n")
        self._renames[path] = tmp

    def append_jsonl(self, path: str | Path, record: BaseModel | Mapping[str, Any]) -> None:
        """A line appended to `path` by `commit`, after the files before it are in place."""
        self._appends.setdefault(Path(path), []).append(dumps(record) + "\n")

    def abort(self) -> None:
        """Drop what was given: the temp files go, no line is appended."""
        for tmp in self._renames.values():
            tmp.unlink(missing_ok=True)
        self._renames, self._appends = {}, {}

    def commit(self) -> None:
        """Sync the temp files, rename them, append the lines, sync again. On failure the OSError
        names the file, the temp files go and no line stays appended (the files cut back to their
        length before), so the same batch can be given again; files already renamed stay whole."""
        renames, appends = self._renames, self._appends
        try:
            if renames:
                sync_filesystem(self.root)
            for path, tmp in renames.items():
                tmp.replace(path)
        finally:
            self.abort()
        lengths: list[tuple[Path, int]] = []
        try:
            for path, lines in appends.items():
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.exists():
                    repair_torn_tail(path)
                lengths.append((path, path.stat().st_size if path.exists() else 0))
                with path.open("a", encoding="utf-8", errors=JSON_SAFE) as fh:
                    fh.write("".join(lines))
            if renames or appends:
                sync_filesystem(self.root)
        except BaseException as exc:
            for path, length in lengths:
                with contextlib.suppress(OSError), path.open("r+b") as fh:
                    fh.truncate(length)
            if isinstance(exc, OSError) and exc.filename is None and lengths:
                exc.filename = str(lengths[-1][0])
            raise
