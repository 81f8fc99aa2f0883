"""The sealed instances an env server has played, kept in a file so that a restart forgets none.

`SealedLedger` (session.py) refuses a second reset of a sealed test instance, whose end reveals its
gold. Held in memory, it was emptied by a restart of `env-serve`, and the instance played again.
`FileLedger` appends each claim to a JSONL file (one line, fsync'd before the reset is answered) and
reads the file back at start. It touches the disk only on a sealed reset, never on a step. The file
is locked (flock) while a server uses it: two servers each reading it once at start would not see
each other's claims. Each line names the key's fingerprint (`key_id`), never the key or a seed.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from discoverylab.bench.records import repair_torn_tail
from discoverylab.server.session import SealedLedger, SessionError

ENV_STATE_HOME = "XDG_STATE_HOME"


class LedgerError(ValueError):
    """A ledger file the server cannot use (in use, another key's, not a ledger): a start-up error."""


class LedgerWriteFailed(SessionError):
    """The claim could not be made durable (a full disk): the instance is not played."""

    status = 503


def default_ledger_path(key_id: str) -> Path:
    """$XDG_STATE_HOME/discoverylab/env-serve-played-KEYID.jsonl (~/.local/state without it): one
    ledger per test set, found again by every server started with that key on this machine."""
    state = os.environ.get(ENV_STATE_HOME) or str(Path.home() / ".local" / "state")
    return Path(state) / "discoverylab" / f"env-serve-played-{key_id}.jsonl"


def ledger_path(key_id: str | None, path: Path | None, option: str, key_option: str) -> Path | None:
    """Where a server with this key keeps its played sealed instances: `path`, else the key's
    default; None without a key. `path` without a key is refused (LedgerError): the file lists the
    sealed instances of one key (`option`, `key_option`: how the caller's user names the two)."""
    if key_id is None:
        if path is not None:
            raise LedgerError(f"{option} goes with an evaluation key ({key_option} or $DISCOVERYLAB_EVAL_KEY): it "
                              "lists the sealed instances played")  # fmt: skip
        return None
    return Path(path) if path is not None else default_ledger_path(key_id)


class FileLedger(SealedLedger):
    """A `SealedLedger` kept in an append-only file, held (flock) until `close` or the process ends."""

    def __init__(self, path: Path, key_id: str) -> None:
        super().__init__()
        self.path, self.key_id = Path(path), key_id
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise LedgerError(f"cannot open the played-instances ledger {self.path}: {exc.strerror or exc} "
                              "(pass --ledger FILE, a file this server may write)") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.close()
            raise LedgerError(f"the played-instances ledger {self.path} is in use by another env-serve: one server "
                              "per ledger (pass --ledger FILE for another test set's server)") from None
        try:
            repair_torn_tail(self.path)  # a kill mid-append: that reset was never answered, nothing played
            self._read()
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        with self.path.open("rb") as fh:
            for number, raw in enumerate(fh, 1):
                try:
                    row = json.loads(raw)
                    entry = (row["task"], row["difficulty"], row["index"])
                    ok = all(isinstance(v, str) for v in entry[:2]) and type(entry[2]) is int
                except (ValueError, TypeError, KeyError):
                    ok = False
                if not ok:
                    raise LedgerError(f"line {number} of the played-instances ledger {self.path} is not a ledger "
                                      "entry: repair or move the file (a missing ledger lets played instances play "
                                      "again)")  # fmt: skip
                if row.get("key_id") != self.key_id:
                    raise LedgerError(f"{self.path} is the ledger of another key ({row.get('key_id')}), not of this "
                                      f"server's ({self.key_id}): pass --ledger FILE for this test set")  # fmt: skip
                self.started.add(entry)

    def claim_name(self, task: str, difficulty: str, index: int) -> bool:
        with self._lock:
            if (task, difficulty, index) in self.started:
                return False
            self._append(task, difficulty, index)
            self.started.add((task, difficulty, index))
            return True

    def _append(self, task: str, difficulty: str, index: int) -> None:
        """One line, durable before the reset is answered; a failed write is cut back off."""
        assert self._fd is not None, "the ledger is closed"
        line = json.dumps({"task": task, "difficulty": difficulty, "index": index, "key_id": self.key_id})
        data = (line + "\n").encode()
        size = os.fstat(self._fd).st_size
        try:
            while data:
                data = data[os.write(self._fd, data):]
            os.fsync(self._fd)
        except OSError as exc:
            try:
                os.ftruncate(self._fd, size)
            except OSError:
                pass  # a torn line is cut at the next start
            name = " ".join(filter(None, (task, difficulty)))
            raise LedgerWriteFailed(f"the server could not record {name} test#{index} as played in {self.path} "
                                    f"({exc.strerror or exc}), so it does not play it; try again later") from None

    def __len__(self) -> int:
        return len(self.started)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the flock goes with it
            self._fd = None
