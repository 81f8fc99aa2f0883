"""Oracle demonstrations as arrays for behaviour cloning (issue 27).

Each task's scripted solver (`Scenario.oracle`, which sees only what the agent sees) plays
`make_rl_env` episodes; every action it takes is translated to the discrete index whose
parser action is the same right now (`DiscreteActions.packet`), and the step is recorded as
(symbolic observation, action index, action mask). An episode whose oracle needs an action the
discrete layout cannot name (an object beyond the slots, a location beyond the list) is left
out and counted, so the arrays hold only steps a policy over `Discrete(N)` can imitate.

With `walk=True` (the default), a TELEPORT_TO_OBJECT the layout cannot name (the solver
teleports to an object it saw earlier that is not in the 12 slots now: Doors, Navigation House,
Moving Agents) is replaced by walking there: MOVE_DIRECTION steps along a shortest path over
the tiles passable now (opening each closed door on the way: the teleport jumps over doors
that are closed but not locked) to a tile beside the object, then ROTATE_DIRECTION to face it,
as the teleport would leave the agent. The path is planned on the world (a teacher's privilege, as the
solver's memory of where things are; never part of what a policy sees) and replanned every step,
so a character that walks away is followed. A teleport no walk can replace at all (no path
from here: a key still behind its locked door) is passed over as a teleport that failed, which
the solvers handle by choosing another goal.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

from discoverylab.rl.actions import FIXED, SINGLE, DiscreteActions

_SIDES = {"north": (0, -1), "east": (1, 0), "south": (0, 1), "west": (-1, 0)}
_MOVE = {d: FIXED.index({"action": "MOVE_DIRECTION", "arg1": d}) for d in _SIDES}
_TURN = {d: FIXED.index({"action": "ROTATE_DIRECTION", "arg1": d}) for d in _SIDES}
WALK_LIMIT = 80  # steps one walk may take before the episode is given up
UNREACHED_LIMIT = 8  # walks with no path at all an episode may pass over before it is given up


def _index_of(env: DiscreteActions, action: dict[str, Any], mask: np.ndarray) -> int | None:
    """The masked-in discrete index standing for the parser action `action`, or None."""
    want = {k: v for k, v in action.items() if v is not None}
    for i in np.flatnonzero(mask):
        if env.packet(int(i)) == want:
            return int(i)
    return None


def _door(world: Any, x: int, y: int) -> Any:
    """The closed door (no key needed) that alone blocks tile (x, y), or None."""
    blocker = world.blocker_at(x, y)
    if blocker is not None and blocker.is_passage and not blocker.is_open and not blocker.requires_key:
        return blocker
    return None


def _first_step(world: Any, start: tuple[int, int], goals: set[tuple[int, int]]) -> str | None:
    """The first direction of a shortest path from `start` to a goal over tiles passable now or
    closed by a door the walker can open."""
    seen = {start: ""}
    queue = deque([start])
    while queue:
        x, y = queue.popleft()
        if (x, y) in goals:
            return seen[(x, y)] or None
        for name, (dx, dy) in _SIDES.items():
            nxt = (x + dx, y + dy)
            if nxt not in seen and world.in_bounds(*nxt) and (world.is_passable(*nxt) or _door(world, *nxt)):
                seen[nxt] = seen[(x, y)] or name
                queue.append(nxt)
    return None


def _walk_step(env: DiscreteActions, base: Any, uuid: Any) -> int | None:
    """The next discrete index of a walk to beside object `uuid`, facing it (opening the doors
    on the way); -1 when there (nothing left to do); None when no path leads there."""
    world, agent = base.world, base.scenario.player
    obj = world.objects.get(uuid)
    if obj is None:
        return None
    ox, oy = obj.location()
    for name, (dx, dy) in _SIDES.items():
        if (agent.x, agent.y) == (ox - dx, oy - dy):  # beside it, on the side opposite `name`
            return -1 if agent.facing == name else _TURN[name]
    goals = {(ox - dx, oy - dy) for dx, dy in _SIDES.values()}
    goals = {g for g in goals if world.in_bounds(*g) and (world.is_passable(*g) or _door(world, *g))}
    step = _first_step(world, (agent.x, agent.y), goals)
    if step is None:
        return None
    dx, dy = _SIDES[step]
    door = _door(world, agent.x + dx, agent.y + dy)
    if door is None:
        return _MOVE[step]
    if agent.facing != step:
        return _TURN[step]
    for slot, data in enumerate(env.slot_data[: env.num_slots]):  # OPEN the door ahead (it is in reach)
        if data[0].uuid == door.uuid:
            return env.base_single + SINGLE.index("OPEN") * env.num_slots + slot
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
                          max_steps: int | None = None, walk: bool = True, **options: Any) -> dict[str, Any]:  # fmt: skip
    """Arrays over every step of the solved episodes: `obs/<key>` (n, ...) uint8, `action` (n,)
    int64, `mask` (n, N) bool, `episode` (n,) (the seed); plus `episodes`, `skipped` (seeds whose
    oracle left the discrete layout), `failed` (seeds it did not solve within the step limit) and
    `walked` (steps of the kept episodes taken walking in place of a teleport, `walk=True`)."""
    from discoverylab.rl import make_rl_env

    env = make_rl_env(task, difficulty, max_steps=max_steps, **options)
    base: Any = env.unwrapped
    rows: dict[str, list[Any]] = {"action": [], "mask": [], "episode": []}
    obs_rows: dict[str, list[np.ndarray]] = {}
    kept: list[int] = []
    skipped: list[int] = []
    failed: list[int] = []
    walked = 0
    for seed in seeds:
        obs, info = env.reset(seed=int(seed))
        solver = _Solver(base.scenario_cls.oracle(base.observation_dict()))
        episode: list[tuple[dict[str, np.ndarray], int, np.ndarray]] = []
        done, success, outside = False, False, False
        walking_steps = 0  # added to `walked` only if the episode is kept
        unreached = 0  # teleports no walk could replace (no path from here), passed over
        while not done:
            action = solver.next(base.observation_dict())
            if action is None:  # the solver stopped or gave up before the task ended
                break
            mask = np.asarray(info["action_mask"], dtype=bool)
            index = _index_of(env, action, mask)
            walking = index is None and walk and action.get("action") == "TELEPORT_TO_OBJECT"
            if index is None and not walking:
                outside = True
                break
            for walk_step in range(WALK_LIMIT if walking else 1):
                if walking:
                    index = _walk_step(env, base, action.get("arg1"))
                    if index == -1:  # beside the object, facing it: the teleport's work is done
                        break
                    if index is None and walk_step == 0 and unreached < UNREACHED_LIMIT:
                        unreached += 1  # no path (a key behind its locked door): to the solver, a
                        break  # teleport that failed; it sees the same place and picks another goal
                if index is None or not mask[index]:
                    outside = True
                    break
                episode.append(({k: v.copy() for k, v in obs.items()}, index, mask.copy()))
                obs, _, term, trunc, info = env.step(index)
                mask = np.asarray(info["action_mask"], dtype=bool)
                walking_steps += int(walking)
                done = term or trunc
                success = bool(term and base.scenario.scorecard.success)
                if done:
                    break
            else:
                outside = walking  # a walk that never arrived
            if outside:
                break
        if outside:
            skipped.append(int(seed))
            continue
        if not success:
            failed.append(int(seed))
            continue
        kept.append(int(seed))
        walked += walking_steps
        for o, index, mask in episode:
            for key, value in o.items():
                obs_rows.setdefault(key, []).append(value)
            rows["action"].append(index)
            rows["mask"].append(mask)
            rows["episode"].append(int(seed))
    env.close()
    n = env.n
    out: dict[str, Any] = {f"obs/{k}": np.stack(v) for k, v in obs_rows.items()}
    if not obs_rows:  # no episode kept: the same keys, with no rows (`demos["obs/tiles"]` still works)
        out = {f"obs/{k}": np.zeros((0, *s.shape), s.dtype) for k, s in env.observation_space.items()}  # type: ignore[attr-defined]
    out["action"] = np.asarray(rows["action"], dtype=np.int64)
    out["mask"] = np.stack(rows["mask"]) if rows["mask"] else np.zeros((0, n), dtype=bool)
    out["episode"] = np.asarray(rows["episode"], dtype=np.int64)
    out.update(episodes=kept, skipped=skipped, failed=failed, walked=walked)
    return out


def save_demonstrations(path: str, demos: dict[str, Any]) -> str:
    """Write `oracle_demonstrations` output to one `.npz` (lists as int64 arrays, empty ones too:
    numpy made [] a float array) and return the path written (numpy adds `.npz` when missing)."""
    if not isinstance(demos, dict):  # (demos, path), the other natural order, failed on str.items
        raise TypeError(f"save_demonstrations takes (path, demos), the dict oracle_demonstrations returns; got {type(demos).__name__} for demos.")
    arrays: dict[str, Any] = {k: np.asarray(v, dtype=np.int64) if isinstance(v, (list, int)) else np.asarray(v)
                              for k, v in demos.items()}  # fmt: skip
    written = str(path) if str(path).endswith(".npz") else f"{path}.npz"
    np.savez_compressed(written, **arrays)
    return written
