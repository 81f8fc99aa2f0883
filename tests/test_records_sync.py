"""`records.sync_filesystem` on a libc without `syncfs`, and when `syncfs` fails.

The durable batches of the env server's stop (`DurableBatch`) rest on it: on Linux it is one
`syncfs` call; elsewhere (a libc without it) `os.sync`; a failing `syncfs` must surface as an
OSError naming the folder, so the batch is cut back and said, never taken as durable."""

from __future__ import annotations

import ctypes
import errno
import json
import os
from typing import Any

import pytest

from discoverylab.bench import records


class _Libc:
    """A C library as `ctypes.CDLL(None)` gives it, with or without `syncfs`."""

    def __init__(self, syncfs: Any = None) -> None:
        if syncfs is not None:
            self.syncfs = syncfs


def _use_libc(monkeypatch: pytest.MonkeyPatch, libc: _Libc) -> None:
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: libc)


def test_without_syncfs_the_whole_system_is_synced_and_a_batch_lands(tmp_path, monkeypatch):
    """No `syncfs` in the C library: `os.sync` makes the batch durable (once per sync), and the
    batch's files and lines are in place afterwards."""
    _use_libc(monkeypatch, _Libc())
    calls: list[str] = []
    monkeypatch.setattr(os, "sync", lambda: calls.append("sync"))
    batch = records.DurableBatch(tmp_path)
    batch.write_jsonl(tmp_path / "logs" / "a.jsonl", [{"type": "end", "n": 1}])
    batch.append_jsonl(tmp_path / "results.jsonl", {"seed": 1})
    batch.commit()
    assert calls == ["sync", "sync"]  # the temp files before their renames, then the lines
    assert json.loads((tmp_path / "logs" / "a.jsonl").read_text()) == {"type": "end", "n": 1}
    assert json.loads((tmp_path / "results.jsonl").read_text()) == {"seed": 1}
    assert [p.name for p in (tmp_path / "logs").iterdir()] == ["a.jsonl"]  # no temp file left


def test_a_failing_syncfs_is_an_os_error_naming_the_folder_and_the_batch_is_cut_back(tmp_path, monkeypatch):
    """`syncfs` returning -1 (EIO from the disk): an OSError with that errno and the folder's
    path, not silence; the appended lines are cut back so the batch can be given again."""
    seen: list[int] = []

    def failing(fd: int) -> int:
        seen.append(os.fstat(fd).st_ino)
        ctypes.set_errno(errno.EIO)
        return -1

    results = tmp_path / "results.jsonl"
    results.write_text('{"seed": 0}\n')
    _use_libc(monkeypatch, _Libc(failing))
    with pytest.raises(OSError) as caught:
        records.sync_filesystem(tmp_path)
    assert caught.value.errno == errno.EIO and caught.value.filename == str(tmp_path)
    assert seen == [tmp_path.stat().st_ino]  # the folder itself was opened and synced
    batch = records.DurableBatch(tmp_path)
    batch.append_jsonl(results, {"seed": 1})
    with pytest.raises(OSError) as caught:
        batch.commit()
    assert caught.value.errno == errno.EIO
    assert results.read_text() == '{"seed": 0}\n'  # the line that was not durable is gone


def test_the_real_syncfs_is_used_where_the_c_library_has_it(tmp_path, monkeypatch):
    """On this Linux the real `syncfs` runs (no fallback to `os.sync`, which flushes every
    filesystem)."""
    if getattr(ctypes.CDLL(None), "syncfs", None) is None:
        pytest.skip("this C library has no syncfs")
    monkeypatch.setattr(os, "sync", lambda: pytest.fail("os.sync used though syncfs exists"))
    records.sync_filesystem(tmp_path)
