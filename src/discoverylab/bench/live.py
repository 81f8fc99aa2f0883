"""Live progress of running episodes, for the progress bar: steps, requests, tokens and cost.

Episodes run in worker processes; each writes its running counts to a small JSON file (one per
worker process, replaced atomically, at most every `PERIOD_S` seconds and at the episode's end)
in the folder named by `$DISCOVERYLAB_LIVE_DIR`, which the parent creates and workers inherit.
The parent (`LiveBoard`) adds the counts of finished episodes (from their records) to those of
the episodes still running. Without the variable nothing is written. Workers on other machines
(a remote Ray cluster) cannot reach the folder: their episodes show up when they finish.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discoverylab.native import pid_alive

ENV_LIVE_DIR = "DISCOVERYLAB_LIVE_DIR"
PERIOD_S = 0.5


@dataclass(slots=True)
class Counts:
    steps: int = 0
    requests: int = 0
    tokens: int = 0
    cost_usd: float | None = 0.0  # None once some episode's price is unknown

    def add(self, steps: int, requests: int, tokens: int, cost: float | None) -> None:
        self.steps += steps
        self.requests += requests
        self.tokens += tokens
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost

    def describe(self, llm: bool) -> str:
        text = f"{self.steps:,} steps"
        if llm:
            cost = "$?" if self.cost_usd is None else f"${self.cost_usd:,.4f}"
            text += f", {self.requests:,} requests, {self.tokens:,} tokens, {cost}"
        return text


def agent_counts(agent: Any) -> tuple[int, int, float | None] | None:
    """(requests, tokens, cost) of an LLM agent so far; None for agents that use no LLM."""
    if not hasattr(agent, "requests") or not callable(getattr(agent, "cost_usd", None)):
        return None
    cost = agent.cost_usd()
    return int(agent.requests), int(agent.prompt_tokens + agent.completion_tokens), None if cost is None else float(cost)


class LiveReporter:
    """The worker side: the running counts of this process's current episode."""

    def __init__(self, folder: Path, episode: str) -> None:
        self.path = folder / f"{os.getpid()}.json"
        self.episode = episode
        self._last = 0.0

    @classmethod
    def from_env(cls, episode: str) -> LiveReporter | None:
        folder = os.environ.get(ENV_LIVE_DIR)
        return cls(Path(folder), episode) if folder and Path(folder).is_dir() else None

    def update(self, steps: int, agent: Any, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self._last < PERIOD_S:
            return
        self._last = now
        counts = agent_counts(agent)
        data = {"episode": self.episode, "steps": steps, "final": final, "llm": counts is not None}
        if counts is not None:
            data.update(requests=counts[0], tokens=counts[1], cost_usd=counts[2])
        try:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass  # the progress bar is a convenience: never fail an episode over it


LIVE_PREFIX = "discoverylab-live-"


def sweep_dead_boards(root: Path | None = None) -> int:
    """Remove the live folders of runners that are gone (a SIGKILLed runner cannot remove its own;
    its pid is in the name). Returns how many went."""
    removed = 0
    for folder in Path(root or tempfile.gettempdir()).glob(f"{LIVE_PREFIX}*-*"):
        pid = folder.name[len(LIVE_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or pid_alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


class LiveBoard:
    """The parent side: sets `$DISCOVERYLAB_LIVE_DIR` for workers forked from now on."""

    def __init__(self) -> None:
        sweep_dead_boards()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{LIVE_PREFIX}{os.getpid()}-"))
        self._previous = os.environ.get(ENV_LIVE_DIR)
        os.environ[ENV_LIVE_DIR] = str(self.folder)
        self.finished = Counts()
        self.llm = False

    def add_record(self, record: Any) -> None:
        """A finished episode's counts (from its record: the usage it reports)."""
        usage = getattr(record, "usage", None)
        if usage is None:
            self.finished.add(int(record.steps), 0, 0, 0.0)
            return
        self.llm = True
        self.finished.add(int(record.steps), usage.requests, usage.total_tokens, usage.cost_usd)

    def totals(self) -> Counts:
        total = Counts(self.finished.steps, self.finished.requests, self.finished.tokens, self.finished.cost_usd)
        for path in self.folder.glob("*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # replaced while read: next refresh
            if not isinstance(data, dict) or data.get("final"):
                continue  # a finished episode counts through its record
            self.llm = self.llm or bool(data.get("llm"))
            total.add(int(data.get("steps", 0)), int(data.get("requests", 0)), int(data.get("tokens", 0)),
                      data.get("cost_usd", 0.0) if data.get("llm") else 0.0)  # fmt: skip
        return total

    def describe(self) -> str:
        return self.totals().describe(self.llm)

    def close(self) -> None:
        if self._previous is None:
            os.environ.pop(ENV_LIVE_DIR, None)
        else:
            os.environ[ENV_LIVE_DIR] = self._previous
        shutil.rmtree(self.folder, ignore_errors=True)

    @contextmanager
    def refreshing(self, show: Callable[[str], None], period_s: float = 1.0) -> Iterator[None]:
        """Call `show(self.describe())` every `period_s` seconds on a thread, while inside."""
        stop = threading.Event()

        def loop() -> None:
            while not stop.wait(period_s):
                try:
                    show(self.describe())
                except Exception:  # noqa: BLE001 - a display glitch must not stop the run
                    pass

        thread = threading.Thread(target=loop, name="live-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=2 * period_s)
