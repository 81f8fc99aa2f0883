"""The worker side of `BatchedVectorEnv` (`rl/vector.py`): the shared-memory layout, a block
of envs stepped in a plain loop, and the loop a worker process serves commands in."""

from __future__ import annotations

import gc
import pickle
import signal
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from gymnasium import spaces

# info keys every step carries, served from shared memory ("message" is left out: a string)
LEAN_KEYS = frozenset({"success", "step", "message", "action_mask"})
STEP, RESET, CLOSE = b"s", b"r", b"c"
TAKE, GIVE = b"t", b"g"  # the driver adopts a block's envs / hands them back (`vector_balance`)
KEEP = b"k"  # the answer to TAKE when the envs do not pickle: the worker keeps them
OK, ERROR = b"o", b"e"
RAISED = b"x"  # the answer to RESET when an env's reset raised: the worker is fine and keeps serving


GC_THRESHOLD = 50_000


def relax_gc(threshold: int = GC_THRESHOLD) -> tuple[int, int, int]:
    """Let Python's cyclic collector run less often in this process; returns the old thresholds
    (`gc.set_threshold(*old)` undoes it). The workers of `BatchedVectorEnv` call it; call it in
    a training process that steps many envs. Why: a reset builds ~12,000 objects the collector
    tracks (world objects, their lists, the tile lists). With the default first threshold (700)
    its full passes then come every few resets and walk every world the process holds; worlds
    free themselves by reference counting (`World.dispose`), so the passes find little. 16 envs
    in one process with 100-step episodes: ~350 -> ~170 us per step
    (docs/performance-history.md, "session 7")."""
    old = gc.get_threshold()
    gc.set_threshold(threshold, old[1], old[2])
    return old


def shared_layout(obs_space: spaces.Space[Any], num_envs: int, num_actions: int) -> tuple[dict[str, tuple[int, tuple[int, ...], str]], int]:
    """Name -> (byte offset, shape, dtype) of every shared array, and the total size."""
    boxes: dict[str, spaces.Box] = {}
    for key, box in (obs_space.spaces if isinstance(obs_space, spaces.Dict) else {}).items():
        if isinstance(box, spaces.Box):
            boxes[key] = box
    if not boxes or len(boxes) != len(getattr(obs_space, "spaces", ())):
        raise TypeError(f"BatchedVectorEnv needs a Dict of Box observations (the symbolic one), got {obs_space}.")
    entries: list[tuple[str, tuple[int, ...], Any]] = []
    for key, box in boxes.items():
        entries.append((f"obs:{key}", (num_envs, *box.shape), box.dtype))
    entries += [
        ("actions", (num_envs,), np.int64),
        ("rewards", (num_envs,), np.float64),
        ("terminations", (num_envs,), np.bool_),
        ("truncations", (num_envs,), np.bool_),
        ("action_mask", (num_envs, num_actions), np.bool_),
        ("success", (num_envs,), np.bool_),
        ("step", (num_envs,), np.int64),
        ("said", (num_envs,), np.bool_),  # per block (its first row): "read the pipe", set before `done`
    ]
    out: dict[str, tuple[int, tuple[int, ...], str]] = {}
    offset = 0
    for name, shape, dtype in entries:
        dt = np.dtype(dtype)
        offset = -(-offset // 8) * 8  # 8-byte alignment
        out[name] = (offset, shape, dt.str)
        offset += int(np.prod(shape)) * dt.itemsize
    return out, max(offset, 1)


def shared_views(buffer: Any, layout: dict[str, tuple[int, tuple[int, ...], str]]) -> dict[str, np.ndarray]:
    raw = np.frombuffer(buffer, dtype=np.uint8)
    return {
        name: raw[off : off + int(np.prod(shape)) * np.dtype(dt).itemsize].view(dt).reshape(shape)
        for name, (off, shape, dt) in layout.items()
    }


class Block:
    """Envs lo..hi-1 and their rows of the shared arrays; stepped by a worker or the driver."""

    def __init__(self, lo: int, hi: int, task: str | list[str], difficulty: str, kwargs: dict[str, Any],
                 views: dict[str, np.ndarray], moved: bytes | None = None) -> None:  # fmt: skip
        from discoverylab.rl import make_rl_env

        self.lo = lo
        if moved is not None:  # envs handed over by another process (`export`), mid-episode
            self.envs, autoreset = pickle.loads(moved)
        else:
            tasks = [task] if isinstance(task, str) else task  # a task list: env i plays tasks[i % len]
            self.envs = [make_rl_env(tasks[i % len(tasks)], difficulty, **kwargs) for i in range(lo, hi)]
            autoreset = [False] * (hi - lo)
        rows = {name: view[lo:hi] for name, view in views.items()}
        self.obs = [(name[4:], view) for name, view in rows.items() if name.startswith("obs:")]
        self.actions, self.rewards = rows["actions"], rows["rewards"]
        self.terms, self.truncs = rows["terminations"], rows["truncations"]
        self.masks, self.success, self.steps = rows["action_mask"], rows["success"], rows["step"]
        self.said = rows["said"]
        self.autoreset: list[bool] = autoreset
        for j, env in enumerate(self.envs):  # observations and masks go straight into the shared rows
            env.unwrapped.symbolic.write_into({key: view[j] for key, view in self.obs})  # type: ignore[attr-defined]
            env.mask_out = self.masks[j]

    def step(self, extras: dict[int, dict[str, Any]]) -> None:
        """Step every env with its action (or reset it, if it ended last step)."""
        rewards, terms, truncs, actions, autoreset = self.rewards, self.terms, self.truncs, self.actions, self.autoreset
        for j, env in enumerate(self.envs):
            if autoreset[j]:
                obs, info = env.reset()
                reward, term, trunc = 0.0, False, False
            else:
                obs, reward, term, trunc, info = env.step(int(actions[j]))
            rewards[j], terms[j], truncs[j] = reward, term, trunc
            autoreset[j] = term or trunc
            self._write(j, obs, info, extras)

    def reset(self, seeds: list[int | None], options: dict[str, Any] | None, mask: list[bool],
              extras: dict[int, dict[str, Any]]) -> None:  # fmt: skip
        """Reset the masked envs; an env's exception propagates with a note naming the env."""
        for j, env in enumerate(self.envs):
            if mask[j]:
                try:
                    obs, info = env.reset(seed=seeds[j], options=options)
                except Exception as exc:
                    exc.add_note(f"(raised by the reset of env {self.lo + j} of the BatchedVectorEnv)")
                    raise
                self.rewards[j], self.terms[j], self.truncs[j], self.autoreset[j] = 0.0, False, False, False
                self._write(j, obs, info, extras)

    def close(self) -> None:
        for env in self.envs:
            env.close()

    def export(self) -> bytes:
        """The envs (and which of them reset next step), pickled for another process's `Block`
        (`moved`); this block is spent afterwards. Their rows of shared memory stay: the
        other side attaches its own views of them."""
        saved = [(env.unwrapped.symbolic.out, env.unwrapped.symbolic.out_arrays, env.mask_out) for env in self.envs]  # type: ignore[attr-defined]
        for env in self.envs:
            env.unwrapped.symbolic.out, env.unwrapped.symbolic.out_arrays = None, {}  # type: ignore[attr-defined]
            env.mask_out = None  # type: ignore[attr-defined]
        try:
            moved = pickle.dumps((self.envs, self.autoreset), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # e.g. a wrapper of the caller's that does not pickle: the block stays usable
            for env, (out, arrays, mask) in zip(self.envs, saved, strict=True):
                env.unwrapped.symbolic.out, env.unwrapped.symbolic.out_arrays = out, arrays  # type: ignore[attr-defined]
                env.mask_out = mask  # type: ignore[attr-defined]
            raise
        self.envs = []
        return moved

    def _write(self, j: int, obs: Any, info: dict[str, Any], extras: dict[int, dict[str, Any]]) -> None:
        """The scalars and rare info keys: the env wrote its observation and mask already."""
        self.success[j] = info["success"]
        self.steps[j] = info["step"]
        if len(info) > 4 or not LEAN_KEYS.issuperset(info):
            extras[self.lo + j] = {k: v for k, v in info.items() if k not in LEAN_KEYS}


def raised_reply(exc: Exception) -> bytes:
    """`RAISED` and the exception with its traceback's text, pickled for the driver to raise
    again (as itself when it survives the trip, else as a RuntimeError quoting it)."""
    text = traceback.format_exc()
    try:
        exc_bytes = pickle.dumps(exc)
        pickle.loads(exc_bytes)  # some exceptions pickle but cannot be rebuilt (required keywords)
    except Exception:
        exc_bytes = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
    return RAISED + pickle.dumps((exc_bytes, text))


def reraise(reply: bytes, where: str) -> Exception:
    """The exception a `raised_reply` carries, with a note saying where it came from."""
    exc_bytes, text = pickle.loads(reply[1:])
    try:
        exc = pickle.loads(exc_bytes)
    except Exception:  # its class is unknown here (a spawned worker's own module)
        exc = RuntimeError(text.strip().splitlines()[-1])
    exc.add_note(f"In {where}; the vector env stays open, but the envs this reset chose need another "
                 f"reset before step(). The worker's traceback:\n{text}")  # fmt: skip
    return exc


def await_message(conn: Connection, spin: float) -> None:
    """Poll `conn` without sleeping for up to `spin` seconds: waking a sleeping process costs
    ~100 us here, about half an env step, and the next message usually comes sooner."""
    if spin > 0 and not conn.poll():
        clock = time.perf_counter
        deadline = clock() + spin
        while not conn.poll() and clock() < deadline:
            pass


def await_release(done: Any, proc: Any, spin: float, timeout: float | None) -> str:
    """Wait for a worker (process `proc`) to release its `done` semaphore: "ok", "died" or
    "hung" (past `timeout`). Polls for `spin` seconds first, as `await_message` does."""
    clock = time.perf_counter
    deadline = clock() + spin
    while clock() < deadline:
        if done.acquire(False):
            return "ok"
    limit = None if timeout is None else clock() + timeout
    while not done.acquire(timeout=0.01):
        if not proc.is_alive():
            return "died"
        if limit is not None and clock() > limit:
            return "hung"
    return "ok"


def next_command(go: Any, conn: Connection, spin: float) -> bytes | None:
    """The worker's next command: `STEP` when the driver released `go` (a semaphore: a
    round trip costs well under a microsecond, a pipe's ~25 us here), else a message from the
    pipe (reset, close); None once the driver is gone. Polls for `spin` seconds, then sleeps in
    short slices (a pipe message then waits up to 2 ms)."""
    clock = time.perf_counter
    deadline = clock() + spin
    while True:
        if clock() < deadline:
            glance = min(clock() + 0.0005, deadline)  # the pipe is a system call (~10 us here): every 0.5 ms
            while clock() < glance:
                if go.acquire(False):
                    return STEP
        elif go.acquire(timeout=0.002):  # asleep, woken by the release (an idle worker uses no CPU)
            return STEP
        if conn.poll():
            try:
                return conn.recv_bytes()
            except (EOFError, OSError):
                return None


def serve(lo: int, hi: int, task: str | list[str], difficulty: str, kwargs: dict[str, Any], buffer: Any,
          layout: dict[str, tuple[int, tuple[int, ...], str]], conn: Connection, inherited: list[Connection],
          spin: float, go: Any, done: Any) -> None:  # fmt: skip
    """A worker process: build the block of envs lo..hi-1, then serve step/reset/close commands.
    A step comes as a release of `go` and is answered by releasing `done`, after sending
    anything to say (the extra infos, an error) on the pipe and raising the block's `said`
    flag (so the driver reads the pipe only then); reset and close travel the pipe."""
    for end in inherited:  # a forked worker holds the driver's pipe ends: drop them, so EOF means "driver gone"
        end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the driver handles it
    relax_gc()  # our own process: its garbage is our worlds'
    block: Block | None
    try:
        block = Block(lo, hi, task, difficulty, kwargs, shared_views(buffer, layout))
        conn.send_bytes(OK)
    except BaseException:
        conn.send_bytes(ERROR + traceback.format_exc().encode())
        return
    while True:
        if block is None:  # adopted by the driver: only GIVE or CLOSE come, by the pipe; sleep until then
            try:
                message: bytes | None = conn.recv_bytes()
            except (EOFError, OSError):
                message = None
        else:
            message = next_command(go, conn, spin)
        if message is None:  # the driver is gone
            return
        command = message[:1]
        try:
            extras: dict[int, dict[str, Any]] = {}
            if command == STEP:
                assert block is not None
                block.step(extras)
                if extras:
                    block.said[0] = True
                    conn.send_bytes(OK + pickle.dumps(extras))
                done.release()
                continue
            if command == RESET:
                assert block is not None
                seeds, options, mask = pickle.loads(message[1:])
                try:
                    block.reset(seeds, options, mask, extras)
                except Exception as exc:  # the env raised, not this process: report it and serve on
                    conn.send_bytes(raised_reply(exc))
                    continue
            elif command == CLOSE:
                if block is not None:
                    block.close()
                conn.send_bytes(OK)
                return
            elif command == TAKE:  # the driver steps these envs itself until it hands them back
                assert block is not None
                try:
                    moved = block.export()
                except Exception:  # they do not pickle: keep stepping them here
                    conn.send_bytes(KEEP)
                    continue
                conn.send_bytes(OK + moved)
                block = None
                continue
            elif command == GIVE:
                block = Block(lo, hi, task, difficulty, kwargs, shared_views(buffer, layout), moved=message[1:])
            else:
                raise ValueError(f"unknown command {command!r}")
            conn.send_bytes(OK + pickle.dumps(extras) if extras else OK)
        except BaseException:
            if command == STEP and block is not None:
                block.said[0] = True
            conn.send_bytes(ERROR + traceback.format_exc().encode())
            if command == STEP:
                done.release()
