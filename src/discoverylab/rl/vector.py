"""A batched async vector env for DiscoveryWorld RL: `workers` processes each step a block of
`make_rl_env` envs in a plain loop and write the results straight into shared memory.

Gymnasium's `AsyncVectorEnv` pays one pipe round trip and a pickled `info` per env step; our
env steps took ~170 us then (~30 us now), so that overhead ate the second core. Here the driver writes the
action batch into shared memory and releases one semaphore per worker (a pipe round trip
costs ~25 us here, a semaphore's under 1 us); each worker's envs write their
observations (every key of the `Dict` observation stacked) and action masks straight into it
(`SymbolicEncoder.write_into`, `DiscreteActions.mask_out`), the worker adds rewards,
terminations, truncations and the lean-info scalars (`success`, `step`) and releases a
semaphore back. Only resets, closing and the rare extra info keys (the scorecard on the step
that ends an episode) travel the pipe, pickled. The driver steps the first block itself meanwhile, and both sides poll for a
short while before sleeping: on two cores each wake-up costs about half an env step. On a
loaded machine the driver adopts the workers' envs and steps them itself (`vector_balance`).
See docs/rl.md.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing as mp
import pickle
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from discoverylab.instances import Instance
from discoverylab.rl.vector_balance import ADOPT, RELEASE, Balancer, IdleCpus, usable_cpus
from discoverylab.rl.vector_worker import (
    CLOSE,
    ERROR,
    GIVE,
    KEEP,
    OK,
    RAISED,
    RESET,
    TAKE,
    Block,
    await_message,
    await_release,
    reraise,
    serve,
    shared_layout,
    shared_views,
)
from discoverylab.world.action_input import brief, whole_option


class VectorEnvError(RuntimeError):
    """A worker of a `BatchedVectorEnv` failed or died; the vector env is closed."""


# Rounds after new envs that the balancer does not count: an episode's first steps fill caches
# (~5x a warm step's time in the first few, ~1.5x up to the 50th: `benchmarks/episode_steps.py`)
# at uneven paces on the two sides.
_WARMUP_ROUNDS = 50


class BatchedVectorEnv(VectorEnv[dict[str, np.ndarray], np.ndarray, np.ndarray]):
    """`num_envs` DiscoveryWorld RL envs (`make_rl_env`) stepped in `workers` processes.

    Args:
        task, difficulty: as for `make_rl_env`; `**env_kwargs` go to it too (max_steps, ...).
            A list of tasks mixes them: env i plays `task[i % len(task)]` (every task shares
            the symbolic spaces and the action layout, so one policy serves all).
        num_envs: number of envs, split into contiguous blocks, one per worker (`blocks`).
        workers: processes stepping envs (default: the CPUs this process may use, its affinity
            capped by a container's CPU quota: `vector_balance.usable_cpus`; at most `num_envs`).
        in_driver: the calling process is one of the workers and steps the first block itself
            while the others step theirs (default: it would otherwise sit idle, and on a small
            machine the wake-ups cost more than a step); False: `workers` child processes.
        spin: seconds a worker waiting for the next command, or the driver waiting for a
            reply, polls before it sleeps (default 2 ms; 0: sleep at once, kinder to a machine
            shared with other jobs).
        context: multiprocessing start method ("fork", the default where available, or "spawn").
        timeout: seconds to wait for a worker's reply (None: forever; a dead worker is still
            detected within 10 ms).
        copy: return copies of the shared arrays (True) or the arrays, overwritten next step.
        balance: with `in_driver`, step the workers' envs in the driver while that is faster (a
            loaded machine, where hand-overs wait for a scheduler slice), handing them back from
            time to time to measure again (`rl/vector_balance.py`). Results are the same
            either way; False: always spread.

    Autoreset is `AutoresetMode.NEXT_STEP`, as in Gymnasium's own vector envs.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}
    _spec: Any = None

    @property
    def spec(self) -> Any:
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        """`make_vec(id, n, task=...)` sets it: a task or difficulty that contradicts the id is
        refused (`discoverylab.env_ids`), never played under the id's name."""
        from discoverylab import gym_id
        from discoverylab.env_ids import check_spec

        plays = sorted(set(self._plays))
        ids = [gym_id(task, diff) for task, diff in plays]
        check_spec(self, value, ids[0] if len(ids) == 1 else None, " and ".join(f"{t} at {d}" for t, d in plays),
                   f"Pass {ids[0]!r} to make_vec instead." if len(ids) == 1 else
                   "A task mix has no id: build BatchedVectorEnv([...tasks], ...) directly.")  # fmt: skip
        self._spec = value

    def __init__(self, task: str | list[str], difficulty: str = "normal", num_envs: int = 2, workers: int | None = None,
                 in_driver: bool = True, spin: float = 0.002, context: str | None = None, timeout: float | None = None,
                 copy: bool = True, balance: bool = True, **env_kwargs: Any) -> None:  # fmt: skip
        from discoverylab.rl import make_rl_env

        num_envs = whole_option("num_envs", num_envs, 1)
        workers = None if workers is None else whole_option("workers", workers, 1)  # None: the usable CPUs
        if isinstance(spin, bool) or not isinstance(spin, (int, float)) or spin < 0:  # else a worker dies at its first wait
            raise ValueError(f"spin must be seconds from 0, got {spin!r}.")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
            raise ValueError(f"timeout must be seconds above 0 (or None: wait forever), got {timeout!r}.")
        if env_kwargs.get("info", "lean") != "lean":
            raise ValueError("BatchedVectorEnv serves lean info only; for info='full' pass "
                             "vectorization_mode='sync' or 'async' to gymnasium.make_vec.")  # fmt: skip
        if env_kwargs.get("observation", "symbolic") != "symbolic":
            raise ValueError("BatchedVectorEnv serves the symbolic observation only; for other observations pass "
                             "vectorization_mode='sync' or 'async' to gymnasium.make_vec.")  # fmt: skip
        if env_kwargs.get("render_mode") is not None:  # its envs live in other processes: nothing to draw here
            raise ValueError("BatchedVectorEnv does not render; for render_mode pass vectorization_mode='sync' or "
                             "'async' to gymnasium.make_vec, or render one env of make_rl_env.")  # fmt: skip
        env_kwargs.pop("observation", None)
        self._workers: list[Any] = []  # child processes, one per block of `_remote`
        self._conns: list[Connection] = []
        self._local: Block | None = None
        if not isinstance(task, str):  # task mixing: env i plays task[i % len(task)]
            task = list(task)
            if not task or not all(isinstance(t, str) for t in task):
                raise ValueError(f"task must be a task id or a non-empty list of task ids, got {task!r}.")
        plays: dict[str, tuple[str, str]] = {}  # task name -> (task id, difficulty) its envs play
        for name in [task] if isinstance(task, str) else task:  # validates each before any fork
            env: Any = make_rl_env(name, difficulty, **env_kwargs)
            plays[name] = (env.unwrapped.scenario_cls.task_id, env.unwrapped.difficulty)
            env.close()
        self.tasks = [task] if isinstance(task, str) else task
        self._plays = [plays[self.tasks[i % len(self.tasks)]] for i in range(int(num_envs))]
        probe = make_rl_env(self.tasks[0], difficulty, **env_kwargs)
        self.num_envs = num_envs
        self.single_observation_space = probe.observation_space
        self.single_action_space = probe.action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        probe.close()
        assert isinstance(self.single_action_space, spaces.Discrete)
        self.num_actions = int(self.single_action_space.n)
        self.metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
        self.copy = copy
        self.timeout = timeout
        self.spin = spin
        layout, size = shared_layout(self.single_observation_space, num_envs, self.num_actions)
        method = context or ("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        ctx: Any = mp.get_context(method)  # BaseContext lacks Process/RawArray in the stubs
        self._buffer = ctx.RawArray("B", size)
        views = self._views = shared_views(self._buffer, layout)
        self._obs = {name[4:]: v for name, v in views.items() if name.startswith("obs:")}
        self._actions, self._rewards = views["actions"], views["rewards"]
        self._terms, self._truncs = views["terminations"], views["truncations"]
        self._masks, self._success, self._steps = views["action_mask"], views["success"], views["step"]
        self._said = views["said"]
        self._all = np.ones(num_envs, dtype=bool)
        self._was_reset = np.zeros(num_envs, dtype=bool)
        self._ready = False  # open and every env reset once: `step`'s one check
        count = max(1, min(num_envs, workers or usable_cpus()))
        self.blocks = [(int(b[0]), int(b[-1]) + 1) for b in np.array_split(np.arange(num_envs), count)]
        self._remote = self.blocks[1:] if in_driver else list(self.blocks)
        self._go: list[Any] = []  # per worker: "step now" (released by the driver)
        self._done: list[Any] = []  # per worker: "stepped" (released by the worker)
        for lo, hi in self._remote:
            parent, child = ctx.Pipe()
            go, done = ctx.Semaphore(0), ctx.Semaphore(0)
            self._go.append(go)
            self._done.append(done)
            proc = ctx.Process(
                target=serve, daemon=True, name=f"discoverylab-vec-{lo}",
                args=(lo, hi, task, difficulty, env_kwargs, self._buffer, layout, child,
                      [*self._conns, parent] if method == "fork" else [], spin, go, done),
            )  # fmt: skip
            proc.start()
            child.close()
            self._workers.append(proc)
            self._conns.append(parent)
        self._make = (task, difficulty, env_kwargs)
        self._adopted: dict[int, Block] = {}  # worker index -> its envs, stepped here (`balance`)
        self._active = list(range(len(self._workers)))  # the workers stepping their own envs
        self.balancer = (Balancer(warmup=_WARMUP_ROUNDS, idle=IdleCpus(), free=0.5 * len(self._remote))
                         if balance and in_driver and self._remote else None)  # fmt: skip
        if in_driver:
            self._local = self._run_local("start", lambda: Block(*self.blocks[0], task, difficulty, env_kwargs, views))
        self._receive(range(len(self._workers)), "start")

    # ---- gymnasium API ----------------------------------------------------------------
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:  # fmt: skip
        """Reset every env (or those in `options["reset_mask"]`); `seed` int -> seed + i."""
        self._check_open()
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        elif isinstance(seed, (list, tuple)) or (isinstance(seed, np.ndarray) and seed.ndim == 1):
            seeds = list(seed)  # else True played seeds 1, 2 and b"ab" seeds 97, 98 (its bytes)
            if len(seeds) != self.num_envs:
                raise ValueError(f"Pass one seed per env: num_envs={self.num_envs}, got {len(seeds)} seeds.")
        else:
            raise ValueError(f"seed must be None, a whole number (env i gets seed + i) or one seed per env "
                             f"(a list, tuple or 1-D array), got {brief(seed)}.")  # fmt: skip
        # Checked here: a seed a worker's env refused would close the whole vector env.
        bad = [i for i, s in enumerate(seeds)
               if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < 2**32)]  # fmt: skip
        if bad:
            how = f" (env {bad[0]} gets seed + {bad[0]} = {seeds[bad[0]]})" if isinstance(seed, (int, np.integer)) else ""
            raise ValueError(f"Seeds are whole numbers in 0..{2**32 - 1} or None, got {seeds[bad[0]]!r}{how}.")
        if options is not None and not isinstance(options, dict):  # else dict()'s "update sequence element"
            raise TypeError(f"reset's options must be a dict or None, not {type(options).__name__}.")
        options = dict(options or {})
        mask = np.asarray(options.pop("reset_mask", np.ones(self.num_envs, dtype=bool)))
        if mask.shape != (self.num_envs,) or mask.dtype != np.bool_ or not mask.any():
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with a True value.")
        inst = options.get("instance")
        if inst is not None:  # checked here: an env refusing it would close the whole vector env
            reset = np.flatnonzero(mask)
            if any(seeds[i] is not None for i in reset):
                raise ValueError("reset takes a seed or options['instance'], not both.")
            if not isinstance(inst, Instance) or any((inst.task, inst.difficulty) != self._plays[i] for i in reset):
                raise ValueError(f"options['instance'] must be a discoverylab.instances.Instance of the task every reset "
                                 f"env plays ({sorted({self._plays[i] for i in reset})}), got {inst!r}.")  # fmt: skip
        chosen = [i for i in self._active if mask[self._remote[i][0] : self._remote[i][1]].any()]
        extras: dict[int, dict[str, Any]] = {}
        here = [(self._local, self.blocks[0])] if self._local is not None else []
        here += [(block, self._remote[i]) for i, block in self._adopted.items()]
        raised: list[Exception] = []  # what envs' resets raised: the processes are fine, the env stays open
        messages = {}
        for i in chosen:  # pickled before anything is sent: a failure halfway closed the whole env
            lo, hi = self._remote[i]
            try:
                messages[i] = RESET + pickle.dumps((seeds[lo:hi], options or None, mask[lo:hi].tolist()))
            except Exception as exc:
                raise ValueError(f"reset's options must pickle to reach the worker processes "
                                 f"({type(exc).__name__}: {exc}).") from None  # fmt: skip
        with self._closing_on_interrupt():
            for i in chosen:
                self._send(i, messages[i])
            for block, (lo, hi) in here:
                try:
                    block.reset(seeds[lo:hi], options or None, mask[lo:hi].tolist(), extras)
                except Exception as exc:
                    exc.add_note("In the driver's process; the vector env stays open, but the envs this reset chose "
                                 "need another reset before step().")  # fmt: skip
                    raised.append(exc)
            extras.update(self._receive(chosen, "reset", raised=raised))  # a dead worker still closes it
        if raised:
            self._was_reset &= ~mask
            self._ready = False
            if len(raised) > 1:
                raised[0].add_note(f"The resets of {len(raised) - 1} more block(s) of envs raised too.")
            raise raised[0]
        if self.balancer is not None and mask.all():
            self.balancer.restart(_WARMUP_ROUNDS)
        self._was_reset |= mask
        self._ready = bool(self._was_reset.all())
        return self._observations(), self._infos(extras, mask)

    def step(self, actions: Any) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env (an env that ended last step is reset instead: next-step autoreset)."""
        if not self._ready:  # closed, or an env never reset (its env would raise and close everything)
            self._check_open()
            raise RuntimeError(f"Call reset() before step(): envs {np.flatnonzero(~self._was_reset).tolist()} were never "
                               "reset or their last reset raised.")  # fmt: skip
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), got {acts.dtype} {acts.shape}.")
        values = acts.tolist()  # small: cheaper than two numpy reductions
        if values and (min(values) < 0 or max(values) >= self.num_actions):
            raise ValueError(f"actions must lie in 0..{self.num_actions - 1}, got {min(values)}..{max(values)}.")
        self._actions[:] = acts
        extras: dict[int, dict[str, Any]] = {}
        local = self._local
        active, clock = self._active, time.perf_counter
        with self._closing_on_interrupt():
            for i in active:
                self._go[i].release()
            start = clock()
            if local is not None:
                self._run_local("step", lambda: local.step(extras), active, stepping=True)
            for block in self._adopted.values():
                self._run_local("step", functools.partial(block.step, extras), active, stepping=True)
            stepped = clock()
            extras.update(self._receive(active, "step", stepping=True))
            if self.balancer is not None:
                here = self.blocks[0][1] - self.blocks[0][0] + sum(len(b.envs) for b in self._adopted.values())
                move = self.balancer.record(stepped - start, clock() - stepped, here, self.num_envs)
                if move == ADOPT:
                    self._adopt()
                elif move == RELEASE:
                    self._release()
        copy = np.copy if self.copy else np.asarray
        return self._observations(), copy(self._rewards), copy(self._terms), copy(self._truncs), self._infos(extras, None)

    def action_masks(self) -> np.ndarray:
        """The current masks, shape (num_envs, N) (sb3-contrib's MaskablePPO calls this)."""
        self._check_open()
        return self._masks.copy()

    def close_extras(self, **kwargs: Any) -> None:
        """Ask each worker to stop, then terminate whatever is still running."""
        self._ready = False
        for conn, proc in zip(self._conns, self._workers, strict=True):
            if proc.is_alive():
                try:
                    conn.send_bytes(CLOSE)
                except OSError:
                    pass
        if self._local is not None:
            self._local.close()
            self._local = None
        for block in self._adopted.values():
            block.close()
        self._adopted, self._active = {}, []
        for conn, proc in zip(self._conns, self._workers, strict=True):
            proc.join(timeout=2.0)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=2.0)
            if proc.is_alive():  # e.g. stopped (SIGSTOP): only SIGKILL ends it
                proc.kill()
                proc.join(timeout=2.0)
            conn.close()
        self._workers, self._conns = [], []

    def __getstate__(self) -> dict[str, Any]:
        """Refused clearly: the processes, pipes and shared memory cannot travel (pickle failed
        on a process's authentication key), while each env pickles on its own."""
        raise TypeError("A BatchedVectorEnv holds worker processes and shared memory and cannot be pickled or copied; "
                        "make one in each process, or pickle make_rl_env envs (they pickle and deep-copy).")  # fmt: skip

    def __del__(self) -> None:
        try:
            if not self.closed and (getattr(self, "_workers", None) or getattr(self, "_local", None)):
                self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass

    # ---- helpers ----------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise VectorEnvError("This BatchedVectorEnv is closed (after close() or a worker failure).")

    def _observations(self) -> dict[str, np.ndarray]:
        if not self.copy:
            return dict(self._obs)
        return {k: v.copy() for k, v in self._obs.items()}

    def _infos(self, extras: dict[int, dict[str, Any]], mask: np.ndarray | None) -> dict[str, Any]:
        have = self._all if mask is None else mask
        infos: dict[str, Any] = {
            "success": self._success.copy(), "_success": have.copy(),
            "step": self._steps.copy(), "_step": have.copy(),
            "action_mask": self._masks.copy(), "_action_mask": have.copy(),
        }  # fmt: skip
        for index in sorted(extras):
            infos = self._add_info(infos, extras[index], index)
        return infos

    @contextlib.contextmanager
    def _closing_on_interrupt(self) -> Iterator[None]:
        """A command cut short (Ctrl-C) would leave replies in the pipes: close instead."""
        try:
            yield
        except BaseException:
            if not self.closed:
                self.close()
            raise

    def _run_local(self, what: str, work: Any, pending: Any = (), stepping: bool = False) -> Any:
        """Run the driver's share of a command; if it raises, collect the workers' replies to
        the same command (`pending`), close, and raise like a worker failure."""
        try:
            return work()
        except Exception as exc:
            text = traceback.format_exc()
            try:
                self._receive(pending, what, stepping)
            except VectorEnvError:
                pass
            self.close()
            raise VectorEnvError(f"BatchedVectorEnv: the driver's block failed during {what}:\n{text}") from exc

    def _adopt(self) -> None:
        """Take every active worker's envs (pickled, with their autoreset flags) to step here;
        envs that do not pickle stay where they are, and balancing stops."""
        for i in list(self._active):
            lo, hi = self._remote[i]
            self._send(i, TAKE)
            moved = self._reply(i, "take")
            if moved[:1] == KEEP:
                self.balancer = None
                continue
            self._adopted[i] = self._run_local("take", functools.partial(Block, lo, hi, *self._make, self._views, moved=moved))
            self._active.remove(i)

    def _release(self) -> None:
        """Hand every adopted block back to its worker (if they no longer pickle, keep them)."""
        for i in sorted(self._adopted):
            try:
                moved = self._adopted[i].export()
            except Exception:
                self.balancer = None
                continue
            del self._adopted[i]
            self._send(i, GIVE + moved)
            self._reply(i, "give")
            self._active.append(i)
        self._active.sort()

    def _send(self, i: int, message: bytes) -> None:
        """Send worker `i` a pipe command. A dead worker's pipe raised a bare BrokenPipeError
        here; the reply's end-of-file then reports the death (exit code included) and closes."""
        try:
            self._conns[i].send_bytes(message)
        except OSError:
            pass

    def _reply(self, i: int, what: str) -> bytes:
        """Worker `i`'s answer to a pipe command (what follows OK); on an error, close and raise."""
        try:
            await_message(self._conns[i], self.spin)
            reply = self._conns[i].recv_bytes() if self._conns[i].poll(self.timeout) else b""
        except (EOFError, OSError):
            reply = b""
        if reply == KEEP:
            return KEEP
        if reply[:1] != OK:
            detail = reply[1:].decode(errors="replace") if reply[:1] == ERROR else "no reply (died or hung)"
            self._workers[i].kill()
            self.close()
            raise VectorEnvError(f"BatchedVectorEnv: the worker for envs {self._remote[i][0]}..{self._remote[i][1] - 1} failed during {what}: {detail}")
        return reply[1:]

    def _receive(self, indices: Any, what: str, stepping: bool = False,
                 raised: list[Exception] | None = None) -> dict[int, dict[str, Any]]:  # fmt: skip
        """Wait for one reply from each worker in `indices` (`stepping`: the release of its
        `done`, then a pipe message only if it has something to say); on an error or a death,
        close and raise. A worker's pipe end lives only in that worker, so its death reads as
        end-of-file. A reset an env raised in (`RAISED`) goes to `raised` instead, the worker
        being fine."""
        extras: dict[int, dict[str, Any]] = {}
        failure = ""
        for i in indices:
            conn, proc = self._conns[i], self._workers[i]
            name = f"worker for envs {self._remote[i][0]}..{self._remote[i][1] - 1} (pid {proc.pid})"
            try:
                if stepping:
                    state = await_release(self._done[i], proc, self.spin, self.timeout)
                    if state == "died":
                        raise EOFError
                    answered = state == "ok"
                else:
                    await_message(conn, self.spin)
                    answered = conn.poll(self.timeout)
                if not answered:
                    failure = failure or f"no reply to {what} from the {name} within {self.timeout} s"
                    proc.kill()  # hung: nothing it might still send can be trusted
                    continue
                if stepping:
                    lo = self._remote[i][0]
                    if not self._said[lo]:
                        continue  # stepped, nothing to add (a pipe poll is a system call: ~4 us)
                    self._said[lo] = False
                reply = conn.recv_bytes()
            except (EOFError, OSError):
                proc.join(timeout=1.0)
                failure = failure or f"the {name} died during {what} (exit code {proc.exitcode})"
                continue
            if reply[:1] == ERROR:
                failure = failure or f"the {name} failed during {what}:\n{reply[1:].decode(errors='replace')}"
            elif reply[:1] == RAISED and raised is not None:
                raised.append(reraise(reply, f"the {name}"))
            elif len(reply) > 1:
                extras.update(pickle.loads(reply[1:]))
        if failure:
            self.close()
            raise VectorEnvError(f"BatchedVectorEnv: {failure}")
        return extras


def make_batched(num_envs: int = 1, task: str = "", difficulty: str = "normal", **kwargs: Any) -> BatchedVectorEnv:
    """Gymnasium `vector_entry_point` of the DiscoveryWorld ids (`make_vec(..., "vector_entry_point")`)."""
    limit = kwargs.pop("max_episode_steps", None)
    if limit is not None:
        kwargs.setdefault("max_steps", limit)
    return BatchedVectorEnv(task, difficulty, num_envs=num_envs, **kwargs)
