"""When `BatchedVectorEnv` should step its workers' envs in the driver (`Balancer`).

On an idle machine the driver and its workers step their blocks side by side. On a loaded one
(other jobs on the cores) a worker may wait a whole scheduler slice before it runs, and each
hand-over costs more than the steps it saves: the batched env then ran at a tenth of one env.
The driver measures every round: the time it stepped its own block and the time it then waited
for the workers. When a window of rounds took longer than its own envs' pace says stepping
every env here would, it adopts the workers' envs (they travel pickled, once) and steps them
all itself: one env's speed at worst. From time to time it hands them back to measure again
(at growing intervals while the machine stays loaded). Only wall-clock pace decides where
envs are stepped, never what they compute: their observations do not depend on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SPREAD, ADOPT, RELEASE = "spread", "adopt", "release"


class Balancer:
    """Decides, round by round, where the envs are stepped (`record` -> ADOPT / RELEASE / None).

    Args:
        window: rounds measured before a decision (the first `skip` of a window are not
            counted: the first hand-over after a change wakes sleeping workers).
        margin: spread out only while it is at least this much faster than all in the driver.
        probe: seconds stepping all envs in the driver before handing them back to measure
            again; doubled after each probe that lost, up to `max_probe`, reset by a win.
    """

    def __init__(self, window: int = 24, margin: float = 1.1, probe: float = 2.0, max_probe: float = 60.0,
                 skip: int = 2, clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.window, self.margin, self.skip = window, margin, skip
        self.base_probe, self.max_probe = probe, max_probe
        self.probe = probe
        self.clock = clock
        self.mode = SPREAD
        self.adopted_at = 0.0
        self.switches = 0  # how often the envs moved (either way): for tests and benchmarks
        self._rounds = 0
        self._spread = 0.0  # seconds the counted rounds took, spread out
        self._alone = 0.0  # what they would have taken in the driver alone (its pace per env)
        self._probing = False  # the current spread window follows a hand-back

    def record(self, local_s: float, wait_s: float, local_envs: int, all_envs: int) -> str | None:
        """One round: `local_s` stepping the driver's envs, `wait_s` waiting for the workers
        afterwards. Returns ADOPT or RELEASE when the envs should move now, else None."""
        if self.mode != SPREAD:
            if self.clock() - self.adopted_at >= self.probe:
                self.mode, self._probing = SPREAD, True
                self._reset_window()
                self.switches += 1
                return RELEASE
            return None
        self._rounds += 1
        if self._rounds <= self.skip or local_envs <= 0:
            return None
        self._spread += local_s + wait_s
        self._alone += local_s * all_envs / local_envs
        counted = self._rounds - self.skip
        clearly = self._probing and counted >= 4 and self._spread > 2 * self._alone  # a probe cut short
        if counted < self.window and not clearly:
            return None
        lost = self._spread * self.margin > self._alone
        self._reset_window()
        if lost:
            if self._probing:  # handed back, lost again: wait longer before the next probe
                self.probe = min(self.probe * 2, self.max_probe)
            self.mode, self.adopted_at, self._probing = ADOPT, self.clock(), False
            self.switches += 1
            return ADOPT
        if self._probing:
            self.probe, self._probing = self.base_probe, False
        return None

    def _reset_window(self) -> None:
        self._rounds, self._spread, self._alone = 0, 0.0, 0.0
