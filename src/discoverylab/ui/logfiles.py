"""Reading a logs folder that strangers may have filled: only regular files count.

A folder or a dangling symlink named `*.jsonl`, a FIFO (opening it blocks the reader forever),
a link out of the folder, a NaN or null score: each is skipped or read as "no value", never a
500 and never a blocked worker thread. Every reader of the logs folder (the log list, the
leaderboard, the replay marking, resume) goes through here.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_LINE_BYTES = 4_000_000
TAIL_BYTES = 262_144


def regular_file(path: Path, root: Path | None = None) -> bool:
    """`path` is a regular file (symlinks followed), inside `root` when given."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        return root is None or path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def log_files(root: Path, skip: tuple[str, ...] = ("results.jsonl", "knowledge.jsonl")) -> Iterator[Path]:
    """Every regular `*.jsonl` file under `root` (any depth, symlinked folders not followed,
    nothing outside `root`), in sorted order."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in files:
            path = Path(folder) / name
            if name.endswith(".jsonl") and name not in skip and not name.startswith(".") and regular_file(path, root):
                found.append(path)
    yield from sorted(found)


def folder_stamp(root: Path) -> tuple[tuple[str, int], ...]:
    """(folder, mtime in ns) for `root` and every folder below it (symlinks and hidden folders not
    followed, as `log_files`): a log created or removed anywhere changes one of them."""
    out: list[tuple[str, int]] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            out.append((folder, os.stat(folder).st_mtime_ns))
            with os.scandir(folder) as entries:
                stack.extend(e.path for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    return tuple(sorted(out))


def young(path: Path, seconds: float = 10.0) -> bool:
    """Modified in the last `seconds`: a log another process is starting to write."""
    try:
        return time.time() - path.stat().st_mtime < seconds
    except OSError:
        return False


def _open_regular(path: Path) -> Any:
    """Open for reading without blocking on a FIFO swapped in after the check."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def first_line(path: Path) -> dict[str, Any] | None:
    """The log's first line as a dict, or None when it is not a readable JSON object."""
    try:
        with _open_regular(path) as fh:
            entry = json.loads(fh.readline(MAX_LINE_BYTES))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def last_entry(path: Path, kind: str = "end", max_bytes: int = 50_000_000) -> dict[str, Any] | None:
    """The log's last line of type `kind`, read from the file's tail (logs end with it)."""
    try:
        with _open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                return None
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    needle = f'"type":"{kind}"'
    for line in reversed(tail.splitlines()):
        if needle in line.replace(" ", ""):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            return entry if isinstance(entry, dict) and entry.get("type") == kind else None
    return None


def finite(value: Any) -> float | None:
    """A score as a finite float, or None (null, NaN, infinite, a string, a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None
