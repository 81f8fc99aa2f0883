"""A Stable-Baselines3 `VecEnv` over the batched multi-process env, with action masks.

SB3 wants its own `VecEnv` (not Gymnasium's vector API): `step_async`/`step_wait`, one `done`
per env with the episode's last observation in `infos[i]["terminal_observation"]`, the reset
observation returned on the step that ended an episode, and masks through
`env_method("action_masks")` (what sb3-contrib's `get_action_masks` calls). `SB3VecEnv` adapts
`BatchedVectorEnv` to that and serves `OneHotObservation`'s features, so

    from sb3_contrib import MaskablePPO
    from discoverylab.rl.sb3 import SB3VecEnv
    model = MaskablePPO("MlpPolicy", SB3VecEnv("DialogTest", num_envs=8, workers=2)).learn(50_000)

This module imports stable_baselines3 (the `rl` extra); the rest of `discoverylab.rl` does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from discoverylab.rl.features import BUCKETS, ActionHistory, _bucket_table, feature_size, features
from discoverylab.rl.vector import BatchedVectorEnv


class SB3VecEnv(VecEnv):  # type: ignore[misc]  # untyped base where SB3's stubs are absent
    """`BatchedVectorEnv` as an SB3 `VecEnv`: one-hot float features, masks, SB3 autoreset.

    Args:
        task, difficulty, num_envs, workers: as `BatchedVectorEnv` (default 2 workers); a list
            of tasks mixes them (env i plays `task[i % len(task)]`).
        seed: the first env's seed (env i gets seed + i) for the first reset; later resets
            draw from each env's own generator, or from `levels` when given.
        buckets: kind buckets of the features (`OneHotObservation`).
        history: append `ActionHistory`'s features (as `OneHotObservation(history=True)`).
        notes: the symbolic observation's notes (`rl/notes.py`; default on: without them Discovery
            Feed, Instrument Measurement and Navigation House cannot be learned).
        **env_kwargs: any `make_rl_env` / `BatchedVectorEnv` keyword (`max_steps`, `reward`,
            `levels`, `num_levels`, `spin`, ...).
    """

    def __init__(self, task: str | list[str], difficulty: str = "normal", num_envs: int = 8, workers: int = 2, seed: int = 0,
                 buckets: int = BUCKETS, history: bool = False, notes: bool = True, **env_kwargs: Any) -> None:  # fmt: skip
        self.venv = BatchedVectorEnv(task, difficulty, num_envs=num_envs, workers=workers, notes=notes, **env_kwargs)
        symbolic = self.venv.single_observation_space
        assert isinstance(symbolic, spaces.Dict)
        self.buckets = buckets
        self._table = _bucket_table(buckets)
        space = spaces.Box(0.0, 1.0, (feature_size(symbolic, buckets, history),), np.float32)
        self.history = None if not history else ActionHistory(
            num_envs, self.venv.num_actions, symbolic["slots"].shape[0], symbolic["dialog"].shape[0])  # type: ignore[index]  # fmt: skip
        self.render_mode = None  # SB3 warns when a VecEnv lacks it
        super().__init__(num_envs, space, self.venv.single_action_space)
        self.task, self.difficulty = task, difficulty
        self._seed: int | None = seed
        self._actions: np.ndarray | None = None
        self._masks = np.zeros((num_envs, self.venv.num_actions), dtype=bool)

    # ---- SB3 VecEnv API ---------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed, self._seed = self._seed, None  # SB3's `seed()` sets the next reset's seed
        obs, info = self.venv.reset(seed=seed)
        self._masks = np.asarray(info["action_mask"], dtype=bool).copy()
        feats = features(obs, self.buckets, self._table)
        if self.history is None:
            return feats
        self.history.reset(feats)
        return np.concatenate([feats, self.history.vector()], axis=1)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait called before step_async.")
        actions, self._actions = self._actions, None
        obs, rewards, terms, truncs, info = self.venv.step(actions)
        dones = np.logical_or(terms, truncs)
        feats = features(obs, self.buckets, self._table)
        history = self.history
        if history is not None:
            history.step(actions, feats)
            feats = np.concatenate([feats, history.vector()], axis=1)
        masks = np.asarray(info["action_mask"], dtype=bool).copy()
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            ended = np.flatnonzero(dones)
            card = info.get("scorecard", {})
            for i in ended:
                infos[i]["terminal_observation"] = feats[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
                won = np.asarray(card["completedSuccessfully"])[i] if card else None
                if won is not None:  # None: a sealed level, whose outcome the learner is never told
                    infos[i]["is_success"] = bool(won)
            # SB3 autoresets on the step that ended: reset those envs now (their own generators).
            new_obs, new_info = self.venv.reset(options={"reset_mask": dones})
            fresh = features(new_obs, self.buckets, self._table)
            if history is not None:
                history.reset(fresh, ended)
                fresh = np.concatenate([fresh, history.vector()], axis=1)
            feats[ended] = fresh[ended]
            masks[ended] = np.asarray(new_info["action_mask"], dtype=bool)[ended]
        self._masks = masks
        return feats, np.asarray(rewards, np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, N) bool: the masks for the observations last returned."""
        return self._masks.copy()

    def close(self) -> None:
        self.venv.close()

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":  # sb3-contrib's get_action_masks
            return list(self._masks[rows])
        raise AttributeError(f"SB3VecEnv has no per-env method {method_name!r} (only action_masks).")

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self, attr_name)

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)
