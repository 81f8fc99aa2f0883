"""Gymnasium adapter of the macro lab: a numeric policy-control environment (spec §1.7, §3.4).

Description: each step is one quarter. The agent sets the three policy levers (policy rate `r0`,
income-tax rate `tau0`, transfer ratio `g0`) and observes the 64-number window of 16 indicators
over the last 4 quarters. Everything else follows the parameters given at reset.

Actions: `Box(3,)` = (r0 in [0, 0.5], tau0 in [0, 0.6], g0 in [0, 0.6]).
Observation: `Box(64,)` float32, raw values (default) or, with `normalize=True`, the [0, 1] form.
Reward: the paper defines none; we use a stabilisation objective, −(unemployment + |inflation|).
Episode: truncated after `number_of_steps` quarters (default 100); never terminated.
Registered ids: `discoverylab/MacroEcon-v0`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from discoverylab.labs.macroecon.model import MacroEconomy
from discoverylab.labs.macroecon.observation import (
    INDICATOR_INDEX,
    INDICATORS,
    OBS_SIZE,
    normalise_observation,
)
from discoverylab.labs.macroecon.params import (
    DEFAULT_STEPS,
    MAX_STEPS,
    TUNABLE_BY_KEY,
    MacroParams,
    MacroStructure,
)

POLICY_LEVERS: tuple[str, ...] = ("r0", "tau0", "g0")
GYM_ID = "discoverylab/MacroEcon-v0"


class MacroEconEnv(gymnasium.Env[np.ndarray, np.ndarray]):
    """One economy per episode; the action sets this quarter's policy levers.

    Args:
        params: starting parameters (dict or `MacroParams`); levers are overwritten by actions.
        structure: hidden constants (population sizes, ...).
        number_of_steps: quarters per episode.
        normalize: observe the [0, 1] normalised window instead of raw values.
    """

    metadata = {"render_modes": []}

    def __init__(self, params: MacroParams | dict[str, float] | None = None,
                 structure: MacroStructure | dict[str, Any] | None = None,
                 number_of_steps: int = DEFAULT_STEPS, normalize: bool = False) -> None:
        self.params = params if isinstance(params, MacroParams) else MacroParams(**(params or {}))
        self.structure = (structure if isinstance(structure, MacroStructure)
                          else MacroStructure(**(structure or {})))
        if not 1 <= number_of_steps <= MAX_STEPS * 10:
            raise ValueError(f"number_of_steps must be in 1..{MAX_STEPS * 10}, got {number_of_steps}")
        self.number_of_steps = int(number_of_steps)
        self.normalize = normalize
        self._low = np.array([TUNABLE_BY_KEY[k].low for k in POLICY_LEVERS], dtype=np.float64)
        self._high = np.array([TUNABLE_BY_KEY[k].high for k in POLICY_LEVERS], dtype=np.float64)
        self.action_space = spaces.Box(self._low.astype(np.float32), self._high.astype(np.float32),
                                       dtype=np.float32)
        if normalize:
            self.observation_space = spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32)
        else:
            big = float(np.finfo(np.float32).max)  # finite bounds: raw levels are unbounded in principle
            self.observation_space = spaces.Box(-big, big, shape=(OBS_SIZE,), dtype=np.float32)
        self.economy: MacroEconomy | None = None

    def _observe(self) -> np.ndarray:
        assert self.economy is not None
        obs = self.economy.observation()
        return normalise_observation(obs, self.structure.n_households) if self.normalize else obs

    def _info(self) -> dict[str, Any]:
        assert self.economy is not None
        row = self.economy.indicators[-1]
        return {"quarter": self.economy.quarter, "indicators": dict(zip(INDICATORS, map(float, row), strict=True))}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new economy; `options={"params": {...}}` overrides parameters for this episode."""
        super().reset(seed=seed)
        params = self.params
        if options and options.get("params"):
            params = params.with_changes(**options["params"])
        economy_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.economy = MacroEconomy(params, economy_seed, self.structure)
        return self._observe(), self._info()

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the levers for this quarter, advance one quarter, return the new window."""
        if self.economy is None:
            raise RuntimeError("call reset() before step()")
        raw = np.asarray(action, dtype=np.float64).reshape(-1)
        if raw.shape != (len(POLICY_LEVERS),) or not np.all(np.isfinite(raw)):
            raise ValueError(f"action must be {len(POLICY_LEVERS)} finite numbers (r0, tau0, g0), got {action!r}")
        levers = np.clip(raw, self._low, self._high)
        self.economy.set_policy(**{k: float(v) for k, v in zip(POLICY_LEVERS, levers, strict=True)})
        row = self.economy.step()
        reward = -float(row[INDICATOR_INDEX["unemployment"]]) - abs(float(row[INDICATOR_INDEX["inflation"]]))
        truncated = self.economy.quarter >= self.number_of_steps
        return self._observe(), reward, False, truncated, self._info()


def register_macro_env() -> str:
    """Register the Gymnasium id (idempotent) and return it."""
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point="discoverylab.labs.macroecon.gym_env:MacroEconEnv")
    return GYM_ID


register_macro_env()
