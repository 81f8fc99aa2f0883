"""sb3-contrib's MaskablePPO on DiscoveryWorld unit tests, as an RL researcher would call it.

Trains one policy per task ("MlpPolicy" on `OneHotObservation` features through
`discoverylab.rl.sb3.SB3VecEnv`, the batched env with masks) on the `train` split's levels, and
evaluates greedy success on held-out `dev` levels every `--eval-every` steps.
`--obs flatten` runs the naive route (Gymnasium's FlattenObservation of the raw uint8
symbolic observation, one env per process through SB3's DummyVecEnv) for the comparison in
docs/rl.md ("Why flatten + MLP learns nothing").

    pip install -e '.[rl]'        # torch (CPU), stable-baselines3, sb3-contrib
    python benchmarks/sb3.py --tasks DialogTest,PickAndPlaceTest --steps 300000 --out docs/images/sb3_curve

tests/test_sb3_smoke.py runs a few hundred steps of it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium.wrappers import FlattenObservation
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from discoverylab.instances import make_instance
from discoverylab.rl import make_rl_env, make_sb3_env, relax_gc
from discoverylab.rl.sb3 import SB3VecEnv
from discoverylab.rl.sb3_policy import SlotPolicy

UNIT = ("DialogTest", "PickAndPlaceTest", "PickAndGiveTest", "DoorsTest", "DoorsWithKeysTest", "SearchTest",
        "NavigationHouseTest", "MovingAgentsTest", "InstrumentMeasurementTest", "DiscoveryFeedTest")  # fmt: skip


def evaluate(model: Any, task: str, episodes: int, max_steps: int, obs: str = "onehot", difficulty: str = "normal") -> float:
    """Greedy success on `dev` levels 0..episodes-1 (never trained on: training draws `train`)."""
    env: Any = make_sb3_env(task, difficulty, max_steps=max_steps) if obs == "onehot" else \
        FlattenObservation(make_rl_env(task, difficulty, max_steps=max_steps))  # fmt: skip
    wins = 0
    for i in range(episodes):
        o, info = env.reset(options={"instance": make_instance(task, difficulty, "dev", i)})
        done = False
        while not done:
            mask = env.get_wrapper_attr("action_masks")()
            action, _ = model.predict(o, action_masks=mask, deterministic=True)
            o, _, term, trunc, info = env.step(int(action))
            done = term or trunc
        wins += int(info["scorecard"]["completedSuccessfully"])
    env.close()
    return wins / episodes


class _Curve(BaseCallback):  # type: ignore[misc]
    """Training success per rollout and greedy held-out success every `every` steps."""

    def __init__(self, task: str, every: int, episodes: int, max_steps: int, obs: str, difficulty: str) -> None:
        super().__init__()
        self.task, self.every, self.episodes, self.max_steps, self.obs, self.difficulty = task, every, episodes, max_steps, obs, difficulty
        self.next = every
        self.wins: list[int] = []
        self.curve: dict[str, Any] = {"steps": [], "train_success": [], "eval": []}
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"], strict=True):
            if done and "is_success" in info:
                self.wins.append(int(info["is_success"]))
        if self.every and self.num_timesteps >= self.next:
            self.next += self.every
            score = evaluate(self.model, self.task, self.episodes, self.max_steps, self.obs, self.difficulty)
            self.curve["eval"].append({"steps": self.num_timesteps, "success": score,
                                       "seconds": round(time.perf_counter() - self.start, 1)})  # fmt: skip
            print(json.dumps({"task": self.task, **self.curve["eval"][-1]}), flush=True)
        return True

    def _on_rollout_end(self) -> None:
        self.curve["steps"].append(self.num_timesteps)
        self.curve["train_success"].append(float(np.mean(self.wins[-50:])) if self.wins else 0.0)


def train(task: str, steps: int, num_envs: int = 8, workers: int = 2, max_steps: int = 50, reward: str = "success",
          obs: str = "onehot", seed: int = 0, eval_every: int = 0, eval_episodes: int = 50, num_levels: int | None = None,
          difficulty: str = "normal", n_steps: int = 256, ent_coef: float = 0.01, policy: str = "mlp") -> dict[str, Any]:  # fmt: skip
    """Train MaskablePPO on `task` for `steps` env steps; returns the curve (and the model)."""
    torch.set_num_threads(1)  # more threads than cores slows every update tenfold on a shared box
    torch.manual_seed(seed)
    kwargs: dict[str, Any] = {"max_steps": max_steps, "reward": reward, "levels": "train", "num_levels": num_levels}
    if obs == "onehot":
        venv: Any = SB3VecEnv(task, difficulty, num_envs=num_envs, workers=workers, seed=seed, **kwargs)
    elif obs == "flatten":
        venv = DummyVecEnv([lambda: FlattenObservation(make_rl_env(task, difficulty, **kwargs)) for _ in range(num_envs)])
        venv.seed(seed)
    else:
        raise ValueError(f"obs must be 'onehot' or 'flatten', not {obs!r}.")
    if policy not in ("mlp", "slot"):
        raise ValueError(f"policy must be 'mlp' or 'slot', not {policy!r}.")
    model = MaskablePPO("MlpPolicy" if policy == "mlp" else SlotPolicy, venv, n_steps=n_steps, batch_size=64, n_epochs=10, learning_rate=3e-4,
                        ent_coef=ent_coef, gamma=0.99, seed=seed, verbose=0, device="cpu")  # fmt: skip
    callback = _Curve(task, eval_every, eval_episodes, max_steps, obs, difficulty)
    model.learn(steps, callback=callback)
    curve = callback.curve
    curve["final"] = evaluate(model, task, eval_episodes, max_steps, obs, difficulty) if eval_episodes else None
    curve.update(task=task, obs=obs, reward=reward, policy=policy, total_steps=int(model.num_timesteps),
                 seconds_total=round(time.perf_counter() - callback.start, 1), model=model)  # fmt: skip
    venv.close()
    return curve


def plot(curves: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for c in curves:
        label = f"{c['task']} ({c['obs']}, {c.get('policy', 'mlp')})"
        ax.plot([e["steps"] for e in c["eval"]], [e["success"] for e in c["eval"]], marker="o", label=label)
    ax.set_xlabel("env steps")
    ax.set_ylabel("greedy success, held-out dev levels")
    ax.set_ylim(-0.05, 1.05)
    ax.axhline(0.9, color="grey", lw=0.5, ls="--")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(UNIT))
    parser.add_argument("--steps", type=int, default=300_000)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--reward", default="success", choices=("success", "explore", "procedure"))
    parser.add_argument("--obs", default="onehot", choices=("onehot", "flatten"))
    parser.add_argument("--policy", default="mlp", choices=("mlp", "slot"), help="slot: SlotPolicy's shared per-slot head")
    parser.add_argument("--num-levels", type=int, default=None)
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--eval-episodes", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/images/sb3_curve")
    args = parser.parse_args()
    relax_gc()
    out = Path(args.out)
    curves: list[dict[str, Any]] = []
    for task in args.tasks.split(","):
        curve = train(task, args.steps, args.num_envs, args.workers, args.max_steps, args.reward, args.obs, args.seed,
                      args.eval_every, args.eval_episodes, args.num_levels, policy=args.policy)  # fmt: skip
        curve.pop("model")
        curves.append(curve)
        out.with_suffix(".json").write_text(json.dumps(curves, indent=1))
        plot(curves, out.with_suffix(".png"))
        print(json.dumps({"task": task, "final": curve["final"], "steps": curve["total_steps"], "seconds": curve["seconds_total"]}))


if __name__ == "__main__":
    main()
