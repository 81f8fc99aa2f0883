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
