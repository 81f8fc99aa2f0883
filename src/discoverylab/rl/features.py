"""Network-ready features of the symbolic observation, for off-the-shelf RL libraries.

The symbolic observation stores ids (object kinds, dialog text ids) and counts as raw uint8.
Libraries read those wrongly in two ways (docs/rl.md, "Why flatten + MLP learns nothing"):
Stable-Baselines3 takes any (H, W, C) uint8 box with C in {1, 3, 4} for pixels and sends
`tiles` (7, 7, 4) to its NatureCNN (an 8x8 kernel on a 7x7 input fails), and a flattened
observation hands an MLP kind ids as magnitudes 0..255 (kind 40 is not "twice" kind 20).
`features` turns a batch of symbolic observations into one float32 vector in [0, 1] per env:
kinds one-hot (multi-hot per tile), flags as 0/1, counts and coordinates scaled. It is pure
numpy over a leading batch axis, so one env (`OneHotObservation`) and the batched vector env
(`discoverylab.rl.sb3.SB3VecEnv`) share it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from discoverylab.rl.notes import LINES, MAP, TASK_WORDS, VISITS
from discoverylab.rl.view import _catalog
from discoverylab.world.unpickle import CopiedWhole

CATALOG = len(_catalog())  # catalog kinds keep their own bucket: 1..CATALOG
BUCKETS = 64  # kind buckets: 0 unused (nothing), 1..CATALOG catalog kinds, the rest shared by hashed kinds
GROUPS = 15 + 10 + 2 + 2  # the last action's kind: each argument-less action, each slot action, PUT/USE, location, dialog
STUCK = 3  # "the observation did not change for 1, 2, 3+ steps"
HISTORY = GROUPS + STUCK  # the length of `ActionHistory.vector`
NOTE_SLOT_WIDTH = LINES + 3  # per slot with notes: the naming task line one-hot, three flags


def _bucket_table(buckets: int) -> np.ndarray:
    """Kind id (0..255) -> bucket (0 = nothing); hashed kinds fold into the buckets left."""
    table = np.arange(256, dtype=np.int64)
    if buckets <= CATALOG + 1:
        raise ValueError(f"buckets must exceed {CATALOG + 1} (the catalog's kinds), got {buckets}.")
    spare = buckets - CATALOG - 1
    table[CATALOG + 1 :] = CATALOG + 1 + (table[CATALOG + 1 :] - CATALOG - 1) % spare
    return table


def layout_size(w: int, k: int, d: int, buckets: int = BUCKETS, notes: bool = False, history: bool = False) -> int:
    """Length of the feature vector: window W, K slots, D dialog options (`notes`: with the
    `note_*` keys, `history`: with `ActionHistory`'s features appended)."""
    size = w * w * buckets + w * w * 4 + k * (buckets + 16) + d * 3 + 11
    if notes:  # the visited plane, per slot, per dialog row, then the lines and the task's words
        size += w * w + k * NOTE_SLOT_WIDTH + d + LINES * 3 + TASK_WORDS + MAP * MAP
    return size + (HISTORY if history else 0)


def feature_size(space: spaces.Dict, buckets: int = BUCKETS, history: bool = False) -> int:
    """Length of the feature vector for a symbolic observation space (`history`: with
    `ActionHistory`'s features appended)."""
    w = space["tiles"].shape[0]  # type: ignore[index]
    k = space["slots"].shape[0]  # type: ignore[index]
    d = space["dialog"].shape[0]  # type: ignore[index]
    return layout_size(w, k, d, buckets, "note_slots" in space.spaces, history)


class ActionHistory:
    """What a memoryless policy needs to leave a loop: the kind of its last action (one-hot over
    `GROUPS`) and for how many steps the observation has not changed (1, 2, 3+).

    A greedy policy that takes an action which changes nothing (PICKUP of an object it already
    holds, a teleport to where it stands) sees the same observation again and repeats the same
    action until the episode ends; sampling escapes after a step or two, so greedy success lagged
    sampled success (docs/rl.md). Both features are the agent's own doings, the same whatever the
    instance's answer. Kept per env over a batch: `reset` rows at an episode's start, `step` after
    every action with that step's features.

    Args:
        num_actions, slots, dialog: the `DiscreteActions` layout (its size, object slots, dialog options).
    """

    def __init__(self, num_envs: int, num_actions: int, slots: int, dialog: int) -> None:
        locations = num_actions - 15 - 10 * slots - 2 * slots * slots - dialog
        if locations < 0:
            raise ValueError(f"{num_actions} actions cannot hold {slots} slots and {dialog} dialog options.")
        self.group = np.concatenate([np.arange(15), np.repeat(15 + np.arange(10), slots),
                                     np.repeat(25 + np.arange(2), slots * slots), np.full(locations, 27),
                                     np.full(dialog, 28)]).astype(np.int64)  # fmt: skip
        self.last = np.full(num_envs, -1, np.int64)
        self.stuck = np.zeros(num_envs, np.int64)
        self.prev: np.ndarray | None = None

    def reset(self, feats: np.ndarray, rows: np.ndarray | None = None) -> None:
        """Episodes start in `rows` (all when None), whose first features are `feats[rows]`."""
        if self.prev is None or rows is None:
            self.prev = feats.copy()
            self.last[:], self.stuck[:] = -1, 0
        else:
            self.prev[rows] = feats[rows]
            self.last[rows], self.stuck[rows] = -1, 0

    def step(self, actions: np.ndarray, feats: np.ndarray) -> None:
        """Every env took `actions` and now shows `feats`."""
        assert self.prev is not None, "reset first"
        same = (feats == self.prev).all(axis=1)
        self.stuck = np.where(same, self.stuck + 1, 0)
        self.last = self.group[np.asarray(actions, np.int64).reshape(-1)]
        self.prev = feats.copy()

    def vector(self) -> np.ndarray:
        """(num_envs, HISTORY) float32."""
        n = len(self.last)
        out = np.zeros((n, HISTORY), np.float32)
        rows = np.flatnonzero(self.last >= 0)
        out[rows, self.last[rows]] = 1.0
        stuck = np.flatnonzero(self.stuck > 0)
        out[stuck, GROUPS + np.minimum(self.stuck[stuck], STUCK) - 1] = 1.0
        return out


def features(obs: dict[str, np.ndarray], buckets: int = BUCKETS, table: np.ndarray | None = None) -> np.ndarray:
    """float32 features (n, feature_size) of a batch of symbolic observations (each key with a
    leading batch axis)."""
    table = _bucket_table(buckets) if table is None else table
    tiles = np.asarray(obs["tiles"])
    if tiles.ndim != 4:  # one observation read as a batch failed in a reshape, naming nothing
        raise ValueError(f"features takes a batch (obs['tiles'] of shape (n, W, W, 4), got {tiles.shape}); "
                         "for one observation pass {key: value[None]} or wrap the env in OneHotObservation.")  # fmt: skip
    n, w = tiles.shape[0], tiles.shape[1]
    r = (w - 1) / 2
    hot = np.zeros((n, w * w, buckets), np.float32)
    ids = table[tiles.reshape(n, w * w, -1)]
    rows = np.arange(n)[:, None, None]
    cells = np.arange(w * w)[None, :, None]
    hot[rows, cells, ids] = 1.0
    hot[:, :, 0] = 0.0  # "nothing" is no kind
    state = np.asarray(obs["tile_state"], np.float32).reshape(n, -1)
    slots = np.asarray(obs["slots"])
    k = slots.shape[1]
    kind = np.zeros((n, k, buckets), np.float32)
    kind[np.arange(n)[:, None], np.arange(k)[None, :], table[slots[:, :, 1]]] = 1.0
    kind[:, :, 0] = 0.0
    flags = slots[:, :, [0, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]].astype(np.float32)
    where = slots[:, :, 4:6].astype(np.float32) / max(1.0, 2 * r)
    contents = np.minimum(slots[:, :, 16:17], 4).astype(np.float32) / 4
    slot_part = np.concatenate([kind, flags, where, contents], axis=2).reshape(n, -1)
    dialog = np.asarray(obs["dialog"]).astype(np.float32)
    dialog[:, :, 1] /= 255.0  # a text id: a label, kept only as a weak tie-breaker
    agent = np.asarray(obs["agent"]).astype(np.float32)
    facing = np.zeros((n, 4), np.float32)
    facing[np.arange(n), np.minimum(agent[:, 2].astype(np.int64), 3)] = 1.0
    facts = np.stack([np.minimum(agent[:, 0], 64) / 64, np.minimum(agent[:, 1], 64) / 64, agent[:, 3] > 0,
                      np.minimum(agent[:, 4], 4) / 4, agent[:, 5] > 0, np.minimum(agent[:, 6], 8) / 8,
                      agent[:, 7] > 0], axis=1).astype(np.float32)  # fmt: skip
    if "note_slots" not in obs:
        return np.concatenate([hot.reshape(n, -1), state, slot_part, dialog.reshape(n, -1), facing, facts], axis=1)
    notes = np.asarray(obs["note_slots"])
    line = np.zeros((n, k, LINES + 1), np.float32)
    line[np.arange(n)[:, None], np.arange(k)[None, :], np.minimum(notes[:, :, 0], LINES)] = 1.0
    slot_notes = np.concatenate([line[:, :, 1:], (notes[:, :, 1:4] > 0).astype(np.float32)], axis=2)
    slot_part = np.concatenate([slot_part.reshape(n, k, -1), slot_notes], axis=2).reshape(n, -1)
    dialog = np.concatenate([dialog, np.asarray(obs["note_dialog"], np.float32) / 255.0], axis=2)
    state = np.concatenate([state, np.asarray(obs["note_visited"], np.float32).reshape(n, -1) / VISITS], axis=1)
    lines = np.asarray(obs["note_lines"], np.float32)
    lines = np.stack([lines[:, :, 0] > 0, np.minimum(lines[:, :, 1], 3) / 3, lines[:, :, 2] > 0], axis=2)
    task = np.asarray(obs["note_task"], np.float32)
    seen = np.asarray(obs["note_map"], np.float32).reshape(n, -1) / 255.0
    return np.concatenate([hot.reshape(n, -1), state, slot_part, dialog.reshape(n, -1), facing, facts,
                           lines.reshape(n, -1).astype(np.float32), task, seen], axis=1)  # fmt: skip


class OneHotObservation(gym.ObservationWrapper[np.ndarray, Any, Any], CopiedWhole):
    """The symbolic observation as one float32 vector in [0, 1] (`features`): what an MLP policy
    (Stable-Baselines3's "MlpPolicy", MaskablePPO's too) can learn from; no image extractor
    mistakes it for pixels. `action_masks()` passes through.

    Args:
        env: an env with the symbolic observation (e.g. `make_rl_env(...)`).
        buckets: kind buckets per tile and slot (catalog kinds each have their own).
        history: append `ActionHistory`'s features (the last action's kind, steps unchanged).
    """

    def __init__(self, env: gym.Env[Any, Any], buckets: int = BUCKETS, history: bool = False) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict) or "tiles" not in space.spaces:
            raise ValueError("OneHotObservation needs the symbolic observation (make_rl_env or observation='symbolic').")
        self.buckets = buckets
        self._table = _bucket_table(buckets)
        self.observation_space = spaces.Box(0.0, 1.0, (feature_size(space, buckets, history),), np.float32)
        self.history: ActionHistory | None = None
        if history:
            n = int(env.action_space.n)  # type: ignore[attr-defined]
            self.history = ActionHistory(1, n, space["slots"].shape[0], space["dialog"].shape[0])  # type: ignore[index]

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        batch = {key: value[None] for key, value in observation.items()}
        return features(batch, self.buckets, self._table)[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        if self.history is None:
            return obs, info
        self.history.reset(obs[None])
        return np.concatenate([obs, self.history.vector()[0]]), info

    def step(self, action: Any) -> tuple[np.ndarray, Any, bool, bool, dict[str, Any]]:
        obs, reward, term, trunc, info = super().step(action)
        if self.history is None:
            return obs, reward, term, trunc, info
        self.history.step(np.asarray([action]), obs[None])
        return np.concatenate([obs, self.history.vector()[0]]), reward, term, trunc, info

    def action_masks(self) -> np.ndarray:
        """The wrapped env's mask (sb3-contrib's MaskablePPO calls this)."""
        return np.asarray(self.env.get_wrapper_attr("action_masks")())


def make_sb3_env(task: str, difficulty: str = "normal", buckets: int = BUCKETS, history: bool = False,
                 notes: bool = True, **options: Any) -> OneHotObservation:  # fmt: skip
    """`make_rl_env` with `OneHotObservation`: pass it to `MaskablePPO("MlpPolicy", env)`.
    `notes` (default on) adds the notes of `rl/notes.py` (feed instructions, instrument
    readings, task words, where the agent has been) to the features."""
    from discoverylab.rl import make_rl_env

    return OneHotObservation(make_rl_env(task, difficulty, notes=notes, **options), buckets, history)
