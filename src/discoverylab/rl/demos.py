"""Oracle demonstrations as arrays for behaviour cloning (issue 27).

Each task's scripted solver (`Scenario.oracle`, which sees only what the agent sees) plays
`make_rl_env` episodes; every action it takes is translated to the discrete index whose
parser action is the same right now (`DiscreteActions.packet`), and the step is recorded as
(symbolic observation, action index, action mask). An episode whose oracle needs an action the
discrete layout cannot name (an object beyond the slots, a location beyond the list) is left
out and counted, so the arrays hold only steps a policy over `Discrete(N)` can imitate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from discoverylab.rl.actions import DiscreteActions


def _index_of(env: DiscreteActions, action: dict[str, Any], mask: np.ndarray) -> int | None:
    """The masked-in discrete index standing for the parser action `action`, or None."""
    want = {k: v for k, v in action.items() if v is not None}
    for i in np.flatnonzero(mask):
        if env.packet(int(i)) == want:
            return int(i)
    return None


class _Solver:
    """Drives a scenario's oracle generator (as `agents.oracle.OracleAgent` does, which `rl`
    may not import): knowledge reports it yields are skipped (actions are dicts)."""

    def __init__(self, gen: Any) -> None:
        self.gen = gen
        self.started = False

    def next(self, obs: dict[str, Any]) -> dict[str, Any] | None:
        try:
            item = self.gen.send(obs) if self.started else next(self.gen)
            self.started = True
            while not isinstance(item, dict):  # a knowledge report announced mid-episode
                item = self.gen.send(obs)
            return item
        except StopIteration:
            return None
        except RuntimeError:  # OracleFailure: the solver gave up, so the episode is no demonstration
            return None


def oracle_demonstrations(task: str, difficulty: str = "normal", seeds: Iterable[int] = range(10),
                          max_steps: int | None = None, **options: Any) -> dict[str, Any]:  # fmt: skip
    """Arrays over every step of the solved episodes: `obs/<key>` (n, ...) uint8, `action` (n,)
    int64, `mask` (n, N) bool, `episode` (n,) (the seed); plus `episodes`, `skipped` (seeds whose
    oracle left the discrete layout) and `failed` (seeds it did not solve)."""
    from discoverylab.rl import make_rl_env

    env = make_rl_env(task, difficulty, max_steps=max_steps, **options)
    base: Any = env.unwrapped
    rows: dict[str, list[Any]] = {"action": [], "mask": [], "episode": []}
    obs_rows: dict[str, list[np.ndarray]] = {}
    kept: list[int] = []
    skipped: list[int] = []
    failed: list[int] = []
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        solver = _Solver(base.scenario_cls.oracle(base.observation_dict()))
        episode: list[tuple[dict[str, np.ndarray], int, np.ndarray]] = []
        done, success, outside = False, False, False
        while not done:
            action = solver.next(base.observation_dict())
            if action is None:  # the solver stopped or gave up before the task ended
                break
            mask = np.asarray(info["action_mask"], dtype=bool)
            index = _index_of(env, action, mask)
            if index is None:
                outside = True
                break
            episode.append(({k: v.copy() for k, v in obs.items()}, index, mask.copy()))
            obs, _, term, trunc, info = env.step(index)
            done = term or trunc
            success = bool(term and base.scenario.scorecard.success)
        if outside:
            skipped.append(int(seed))
            continue
        if not success:
            failed.append(int(seed))
            continue
        kept.append(int(seed))
        for o, index, mask in episode:
            for key, value in o.items():
                obs_rows.setdefault(key, []).append(value)
            rows["action"].append(index)
            rows["mask"].append(mask)
            rows["episode"].append(int(seed))
    env.close()
    n = env.n
    out: dict[str, Any] = {f"obs/{k}": np.stack(v) for k, v in obs_rows.items()}
    out["action"] = np.asarray(rows["action"], dtype=np.int64)
    out["mask"] = np.stack(rows["mask"]) if rows["mask"] else np.zeros((0, n), dtype=bool)
    out["episode"] = np.asarray(rows["episode"], dtype=np.int64)
    out.update(episodes=kept, skipped=skipped, failed=failed)
    return out


def save_demonstrations(path: str, demos: dict[str, Any]) -> None:
    """Write `oracle_demonstrations` output to one `.npz` (lists as int arrays)."""
    arrays: dict[str, Any] = {k: np.asarray(v) for k, v in demos.items()}
    np.savez_compressed(path, **arrays)
