"""When `BatchedVectorEnv` should step its workers' envs in the driver (`Balancer`).

On an idle machine the driver and its workers step their blocks side by side. On a loaded one
(other jobs on the cores) a worker may wait a whole scheduler slice before it runs, and each
hand-over costs more than the steps it saves: the batched env then ran at a tenth of one env.
The driver measures every round: the time it stepped its own block and the time it then waited
for the workers. When two windows in a row (each at least 50 ms of rounds) took over 1.25x what
its own envs' pace says stepping every env here would, it adopts the workers' envs (they travel
pickled, once) and steps them all itself: one env's speed at worst. From time to time it hands
them back to measure again (at growing intervals while the machine stays loaded). Only
wall-clock pace decides where envs are stepped, never what they compute: their observations do
not depend on it.

Windows of time, not of 24 rounds: on an idle VM a round now and then takes 5-30x its usual
time (an episode's first steps fill caches; a vCPU stalls), and 24 rounds of small blocks (under
a millisecond) holding a few such made the driver adopt on an idle 2-core VM, halving the
batched env's pace (session 17: 2 x 2 envs of DoorsTest ran 0.8x one env instead of 1.3x).
Measured there, 50 ms windows read 0.53-0.80 idle, and 1.1-29 (median 4-6) with a busy process
on a worker's CPU. Load shows as a tail of rounds that wait a scheduler slice, so sums, not
medians, weigh it.

A probe that loses costs more than its rounds: the envs travel pickled both ways (~0.1-0.8 s for
4 envs under load). Where the system reports idle CPU time (Linux `/proc/stat`, `IdleCpus`), a
probe waits until, over the last interval, at least half a CPU per worker sat idle: a machine
whose every CPU is busy keeps the envs here without paying for probes (session 18: 2 x 4 envs
of DoorsTest with a busy process spent 2.7 s of 8.4 s in probes that lost).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

SPREAD, ADOPT, RELEASE = "spread", "adopt", "release"


def usable_cpus(root: str = "/sys/fs/cgroup", cgroup: str = "/proc/self/cgroup") -> int:
    """CPUs this process may use: its affinity mask (a cpuset), capped by its cgroup's CPU quota
    rounded up (a container limited to 2 CPUs of a 64-core host: 2, where `os.cpu_count()` says
    64 and as many workers would wait for each other's scheduler slices); at least 1."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        count = os.cpu_count() or 1
    quota = cgroup_quota(Path(root), Path(cgroup))
    if quota is not None:
        count = min(count, math.ceil(quota))
    return max(1, count)


def cgroup_quota(root: Path, cgroup: Path) -> float | None:
    """The CPU quota (in CPUs) of this process's cgroup: v2 `cpu.max` ("200000 100000"; "max ..."
    is none), v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us` (-1 is none); None where there is no
    quota or it cannot be read. Inside a container the cgroup's own files sit at `root` itself."""
    try:
        lines = cgroup.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        rel = path.strip().lstrip("/")
        try:
            if hierarchy == "0" and not controllers:  # v2, unified
                for base in (root / rel, root):
                    if (base / "cpu.max").is_file():
                        quota, period = (base / "cpu.max").read_text().split()[:2]
                        return None if quota == "max" else int(quota) / int(period)
            elif "cpu" in controllers.split(","):  # v1
                for base in (root / controllers / rel, root / "cpu" / rel, root / "cpu,cpuacct" / rel, root / "cpu"):
                    if (base / "cpu.cfs_quota_us").is_file():
                        quota_us = int((base / "cpu.cfs_quota_us").read_text())
                        period_us = int((base / "cpu.cfs_period_us").read_text())
                        return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us
        except (OSError, ValueError):
            return None
    return None


class IdleCpus:
    """How many CPUs sat idle, on average, since the last call (Linux `/proc/stat`: idle and
    iowait time over all time counted); None on the first call and where the file cannot be
    read. Whole-machine figures: in a container with a CPU quota they promise more than it
    gets, and a probe then decides as it would without them."""

    def __init__(self, path: str = "/proc/stat") -> None:
        self.path = Path(path)
        self._last: tuple[int, int] | None = None
        self.cpus = 0

    def __call__(self) -> float | None:
        try:
            lines = self.path.read_bytes().splitlines()
            fields = [int(v) for v in lines[0].split()[1:9]]  # user nice system idle iowait irq softirq steal
            now = (sum(fields), fields[3] + fields[4])
            self.cpus = sum(1 for line in lines[1:] if line[:3] == b"cpu") or 1
        except (OSError, ValueError, IndexError):
            return None
        last, self._last = self._last, now
        if last is None or now[0] <= last[0]:
            return None
        return self.cpus * (now[1] - last[1]) / (now[0] - last[0])


class Balancer:
    """Decides, round by round, where the envs are stepped (`record` -> ADOPT / RELEASE / None).

    Args:
        window, span: a decision follows a window of at least `window` counted rounds lasting
            at least `span` seconds together (the first `skip` rounds of a window are not
            counted: the first hand-over after a change wakes sleeping workers).
        margin: a window is lost when its rounds spread out took over 1/margin times what all
            its envs here would have (0.8: 25% longer).
        patience: consecutive lost windows before adopting (a probe that loses re-adopts at
            once): a wrong adoption on an idle machine halves the pace until the next probe.
        probe: seconds stepping all envs in the driver before handing them back to measure
            again; doubled after each probe that lost, up to `max_probe`, reset by a win.
        warmup: rounds not counted at all after the envs were built (their first steps fill
            caches at uneven paces on the two sides).
        memory: seconds a measured pace of all envs here (while adopted) stands in for the
            estimate from the driver's own block. Under load the driver is slowed too, and the
            estimate can promise more than adopting gives: a probe that finds spreading faster
            than the measured pace keeps the envs spread.
        idle, free: `idle()` says how many CPUs sat idle since its last call (`IdleCpus`, None
            when unknown); a due probe waits another `probe` seconds while that is under
            `free` (the batched env: half a CPU per worker). None: probe whenever due.
    """

    def __init__(self, window: int = 24, margin: float = 0.8, probe: float = 2.0, max_probe: float = 60.0,
                 skip: int = 2, clock: Callable[[], float] = time.monotonic, warmup: int = 0,
                 patience: int = 2, span: float = 0.05, memory: float = 30.0,
                 idle: Callable[[], float | None] | None = None, free: float = 0.5) -> None:  # fmt: skip
        self.window, self.margin, self.skip, self.patience, self.span = window, margin, skip, patience, span
        self.idle, self.free = idle, free
        self.postponed = 0  # probes put off because no CPU was free: for tests and benchmarks
        self._lost = 0  # consecutive lost windows
        self.memory = memory
        self._held_rounds, self._held_s = 0, 0.0  # rounds and seconds with all envs here, this adoption (after `skip`)
        self.held_pace: float | None = None  # seconds a round took with all envs here, measured
        self._held_at = 0.0  # when `held_pace` was measured
        self.base_probe, self.max_probe = probe, max_probe
        self.probe = probe
        self.clock = clock
        self.mode = SPREAD
        self.adopted_at = 0.0
        self.switches = 0  # how often the envs moved (either way): for tests and benchmarks
        self._rounds = -warmup
        self._counted = 0  # rounds counted in this window
        self._spread = 0.0  # seconds the counted rounds took, spread out
        self._alone = 0.0  # what they would have taken in the driver alone (its pace per env)
        self._probing = False  # the current spread window follows a hand-back

    def record(self, local_s: float, wait_s: float, local_envs: int, all_envs: int) -> str | None:
        """One round: `local_s` stepping the driver's envs, `wait_s` waiting for the workers
        afterwards. Returns ADOPT or RELEASE when the envs should move now, else None."""
        if self.mode != SPREAD:
            self._held_rounds += 1
            if self._held_rounds > self.skip:
                self._held_s += local_s + wait_s
            now = self.clock()
            if now - self.adopted_at >= self.probe:
                idle = self.idle() if self.idle is not None else None
                if idle is not None and idle < self.free:  # every CPU busy: spreading cannot win now
                    self.adopted_at = now
                    self.postponed += 1
                    return None
                counted = self._held_rounds - self.skip
                if counted >= self.window:
                    self.held_pace, self._held_at = self._held_s / counted, now
                self.mode, self._probing = SPREAD, True
                self._reset_window()
                self.switches += 1
                return RELEASE
            return None
        self._rounds += 1
        if self._rounds <= self.skip or local_envs <= 0 or local_s <= 0.0:
            return None
        self._spread += local_s + wait_s
        pace = self.held_pace
        if pace is not None and self.clock() - self._held_at < self.memory:
            self._alone += pace  # measured: all envs here, under this load
        else:
            self._alone += local_s * all_envs / local_envs  # estimated from the driver's own block
        self._counted += 1
        if self._counted < self.window or self._spread < self.span:
            if not self._probing or self._counted < 4 or self._spread * self.margin <= 2 * self._alone:
                return None  # else a probe cut short: spreading loses twice over
        lost = self._spread * self.margin > self._alone
        self._reset_window()
        self._lost = self._lost + 1 if lost else 0
        if lost and (self._probing or self._lost >= self.patience):
            self._lost = 0
            if self._probing:  # handed back, lost again: wait longer before the next probe
                self.probe = min(self.probe * 2, self.max_probe)
            self.mode, self.adopted_at, self._probing = ADOPT, self.clock(), False
            if self.idle is not None:
                self.idle()  # idle time counts from here
            self._held_rounds, self._held_s = 0, 0.0
            self.switches += 1
            return ADOPT
        if self._probing:
            self.probe, self._probing = self.base_probe, False
        return None

    def restart(self, warmup: int) -> None:
        """New envs (a reset): a new window, its first `warmup` rounds not counted."""
        if self.mode == SPREAD:
            self._reset_window()
            self._rounds = -warmup

    def _reset_window(self) -> None:
        self._rounds, self._counted, self._spread, self._alone = 0, 0, 0.0, 0.0
