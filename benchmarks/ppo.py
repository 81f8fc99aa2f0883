"""A small masked PPO baseline (CleanRL style, torch on CPU) on DiscoveryWorld unit tests.

One policy learns several tasks at once from the symbolic observation and the discrete,
masked actions (`discoverylab.rl.make_rl_env`). The policy scores actions per object slot
with shared weights (a pointer-style head), so what it learns about "the object named in
the task" carries over to every slot. It trains on `reward="procedure"` (the shaped,
answer-revealing reward: fine for training a skill, never for scoring discovery); it logs
task success of the sampled policy (each episode a fresh seed) and of greedy actions on held-out seeds.

    pip install -e '.[rl]'        # torch==2.13.0 (CPU)
    python benchmarks/ppo.py --steps 200000 --out docs/images/ppo_curve   # .json + .png

Each evaluation writes the curve so far to `<out>-partial.json` and `.png` (removed once the complete
curve is written), so a run cut short never leaves a partial curve over a complete one.

Not part of `make test`; tests/test_ppo_smoke.py runs a few hundred steps of it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from torch import nn

from discoverylab.rl import DiscreteActions, make_rl_env, relax_gc
from discoverylab.rl.view import NUM_KINDS
from discoverylab.scenarios.registry import get_task

TASKS = ("DialogTest", "PickAndPlaceTest", "PickAndGiveTest")
SLOTS, DIALOG, LOCATIONS = 12, 10, 8


def make_env(task: str, max_steps: int, reward: str = "procedure") -> DiscreteActions:
    return make_rl_env(task, max_steps=max_steps, reward=reward, object_slots=SLOTS)


def to_tensors(obs: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v)) for k, v in obs.items()}


class Policy(nn.Module):
    """Global context from the agent, tile states and pooled slots; per-slot and per-option
    embeddings score the slot actions, slot pairs (PUT, USE) and dialog choices."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.kind = nn.Embedding(NUM_KINDS, 8)
        slot_in = 8 + 16
        self.slot = nn.Sequential(nn.Linear(slot_in, hidden), nn.Tanh())
        glob_in = 4 + 5 + 7 * 7 * 4 + hidden + 2
        self.glob = nn.Sequential(nn.Linear(glob_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.slot2 = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        self.single = nn.Linear(hidden, 10)
        self.pair_a = nn.Linear(hidden, 2 * hidden)
        self.pair_b = nn.Linear(hidden, 2 * hidden)
        self.dialog = nn.Sequential(nn.Linear(2 + hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.fixed = nn.Linear(hidden, 15 + LOCATIONS)
        self.value = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.hidden = hidden

    def forward(self, obs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        slots = obs["slots"].float()  # (B, K, 17)
        b, k, _ = slots.shape
        flags = torch.cat([slots[..., :1], slots[..., 2:4], (slots[..., 4:6] - 3) / 3, slots[..., 6:16],
                           slots[..., 16:17].clamp(max=4) / 4], dim=-1)  # fmt: skip
        s = self.slot(torch.cat([self.kind(obs["slots"][..., 1].long()), flags], dim=-1)) * slots[..., :1]
        agent = obs["agent"].float()
        facing = nn.functional.one_hot(obs["agent"][:, 2].long().clamp(max=3), 4).float()
        extra = torch.stack([agent[:, 3], agent[:, 4].clamp(max=4) / 4, agent[:, 5], agent[:, 7], agent[:, 6] / 8], 1)
        dialog = obs["dialog"].float()
        pooled = s.sum(1) / slots[..., 0].sum(1, keepdim=True).clamp(min=1)
        dial = torch.stack([dialog[..., 0].sum(1) / DIALOG, dialog[..., 2].sum(1)], 1)
        g = self.glob(torch.cat([facing, extra, obs["tile_state"].float().flatten(1), pooled, dial], 1))
        e = self.slot2(torch.cat([s, g[:, None].expand(b, k, self.hidden)], -1))  # (B, K, H)
        single = self.single(e).transpose(1, 2).reshape(b, -1)  # (B, 10 * K), kind-major
        qa = self.pair_a(e).view(b, k, 2, self.hidden)
        qb = self.pair_b(e).view(b, k, 2, self.hidden)
        pair = torch.einsum("bikh,bjkh->bkij", qa, qb).reshape(b, -1) / self.hidden**0.5  # (B, 2 * K * K)
        fixed = self.fixed(g)
        opt = torch.cat([dialog[..., :1], dialog[..., 2:3], g[:, None].expand(b, DIALOG, self.hidden)], -1)
        dlog = self.dialog(opt).squeeze(-1)
        logits = torch.cat([fixed[:, :15], single, pair, fixed[:, 15:], dlog], 1)
        return logits, self.value(g).squeeze(-1)


def masked_dist(logits: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
    return torch.distributions.Categorical(logits=logits.masked_fill(~mask, -1e9))


def evaluate(policy: Policy, task: str, episodes: int, max_steps: int, seed0: int = 10**6, sample: bool = False) -> float:
    """Success rate on held-out seeds, with greedy (argmax) or sampled actions (a fixed
    generator, so the figure is reproducible)."""
    env = make_env(task, max_steps)
    gen = torch.Generator().manual_seed(seed0)
    wins = 0
    for ep in range(episodes):
        obs, info = env.reset(seed=seed0 + ep)
        done = False
        while not done:
            with torch.no_grad():
                logits, _ = policy(to_tensors({k: v[None] for k, v in obs.items()}))
            probs = masked_dist(logits, torch.as_tensor(info["action_mask"])[None]).probs[0]
            action = int(torch.multinomial(probs, 1, generator=gen)) if sample else int(probs.argmax())
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
        wins += int(info["scorecard"]["completedSuccessfully"])
    return wins / episodes


def lr_at(steps: int, total_steps: int, lr: float = 5e-4) -> float:
    """The learning rate after `steps` env steps: linear decay to 5% of `lr` at `total_steps`."""
    return lr * max(0.05, 1.0 - steps / max(1, total_steps))


def train(total_steps: int, minutes: float, envs_per_task: int = 3, rollout: int = 64, max_steps: int = 50,
          seed: int = 0, eval_every: int = 0, eval_episodes: int = 20, tasks: tuple[str, ...] = TASKS,
          log: Any = None, reward: str = "procedure") -> dict[str, Any]:  # fmt: skip
    """Train for `total_steps` env steps (the schedule's length); `minutes` is only a safety stop
    that cuts the run short. Returns the curve."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    fns = [(lambda t=t: make_env(t, max_steps, reward)) for t in tasks for _ in range(envs_per_task)]
    envs = gymnasium.vector.SyncVectorEnv(fns, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    task_of = [t for t in tasks for _ in range(envs_per_task)]
    n = len(fns)
    policy = Policy()
    opt = torch.optim.Adam(policy.parameters(), lr=5e-4, eps=1e-5)
    obs, info = envs.reset(seed=[seed * 1000 + i for i in range(n)])
    mask = np.asarray(info["action_mask"])
    curve: dict[str, Any] = {"steps": [], "seconds": [], "train_success": {t: [] for t in tasks}, "eval": []}
    recent: dict[str, list[int]] = {t: [] for t in tasks}
    start, steps, next_eval = time.perf_counter(), 0, eval_every
    while steps < total_steps and time.perf_counter() - start < 60 * minutes:
        # Anneal the learning rate over the step budget (CleanRL's default): the policy sharpens
        # late, which steadies its greedy behaviour. By steps only, never by wall clock, so a
        # seed gives the same run on a busy machine and an idle one (`minutes` only stops it).
        for group in opt.param_groups:
            group["lr"] = lr_at(steps, total_steps)
        buf: dict[str, list[Any]] = {k: [] for k in ("obs", "mask", "act", "logp", "val", "rew", "done")}
        for _ in range(rollout):
            t_obs = to_tensors(obs)
            t_mask = torch.as_tensor(mask)
            with torch.no_grad():
                logits, value = policy(t_obs)
                dist = masked_dist(logits, t_mask)
                action = dist.sample()
            obs, reward, term, trunc, info = envs.step(action.numpy())
            done = np.logical_or(term, trunc)
            for i in np.flatnonzero(done):
                final = info["final_info"]["scorecard"]  # same-step autoreset: info is the new episode's
                recent[task_of[i]].append(int(final["completedSuccessfully"][i]))
            for key, val in (("obs", t_obs), ("mask", t_mask), ("act", action), ("logp", dist.log_prob(action)),
                             ("val", value), ("rew", torch.as_tensor(reward, dtype=torch.float32)),
                             ("done", torch.as_tensor(done, dtype=torch.float32))):  # fmt: skip
                buf[key].append(val)
            mask = np.asarray(info["action_mask"])
            steps += n
        with torch.no_grad():
            _, last_value = policy(to_tensors(obs))
        _update(policy, opt, buf, last_value)
        curve["steps"].append(steps)
        curve["seconds"].append(round(time.perf_counter() - start, 1))
        for t in tasks:
            curve["train_success"][t].append(float(np.mean(recent[t][-30:])) if recent[t] else 0.0)
        if eval_every and steps >= next_eval:
            next_eval += eval_every
            curve["eval"].append({"steps": steps, **_evaluate_all(policy, tasks, eval_episodes, max_steps)})
            if log:
                log(curve)
    curve["final"] = _evaluate_all(policy, tasks, eval_episodes, max_steps) if eval_episodes else {}
    curve["policy"] = policy
    curve["total_steps"] = steps
    curve["seconds_total"] = round(time.perf_counter() - start, 1)
    envs.close()
    return curve


def _evaluate_all(policy: Policy, tasks: tuple[str, ...], episodes: int, max_steps: int) -> dict[str, float]:
    """Greedy success per task (`Task`) and sampled-action success (`Task (sampled)`)."""
    out = {t: evaluate(policy, t, episodes, max_steps) for t in tasks}
    out.update({f"{t} (sampled)": evaluate(policy, t, episodes, max_steps, sample=True) for t in tasks})
    return out


def _update(policy: Policy, opt: torch.optim.Optimizer, buf: dict[str, list[Any]], last_value: torch.Tensor,
            gamma: float = 0.99, lam: float = 0.95, epochs: int = 4, minibatches: int = 4) -> None:  # fmt: skip
    rew, done, val = torch.stack(buf["rew"]), torch.stack(buf["done"]), torch.stack(buf["val"])
    adv = torch.zeros_like(rew)
    gae = torch.zeros_like(last_value)
    for t in reversed(range(len(rew))):
        nxt = last_value if t == len(rew) - 1 else val[t + 1]
        delta = rew[t] + gamma * nxt * (1 - done[t]) - val[t]
        gae = delta + gamma * lam * (1 - done[t]) * gae
        adv[t] = gae
    ret = (adv + val).flatten()
    obs = {k: torch.cat([o[k] for o in buf["obs"]]) for k in buf["obs"][0]}
    mask, act = torch.cat(buf["mask"]), torch.cat(buf["act"])
    logp, adv = torch.cat(buf["logp"]), adv.flatten()
    size = len(act)
    for _ in range(epochs):
        order = torch.randperm(size)
        for mb in order.chunk(minibatches):
            logits, value = policy({k: v[mb] for k, v in obs.items()})
            dist = masked_dist(logits, mask[mb])
            ratio = (dist.log_prob(act[mb]) - logp[mb]).exp()
            a = (adv[mb] - adv[mb].mean()) / (adv[mb].std() + 1e-8)
            pg = torch.max(-a * ratio, -a * ratio.clamp(0.8, 1.2)).mean()
            loss = pg + 0.5 * ((value - ret[mb]) ** 2).mean() - 0.01 * dist.entropy().mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()


def plot(curve: dict[str, Any], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for task, values in curve["train_success"].items():
        ax.plot(curve["steps"], values, label=f"{task} (train, last 30 episodes)")
    for task in curve["train_success"]:
        for key, style, what in ((task, "o--", "greedy"), (f"{task} (sampled)", "x:", "sampled")):
            pts = [(e["steps"], e[key]) for e in curve["eval"] if key in e]
            if pts:
                ax.plot(*zip(*pts, strict=True), style, label=f"{task} ({what}, held-out seeds)")
    ax.axhline(0.8, color="grey", lw=0.8, ls=":")
    within = [st for st, sec in zip(curve["steps"], curve["seconds"], strict=True) if sec <= 1800]
    if within and within[-1] < curve["steps"][-1]:
        ax.axvline(within[-1], color="grey", lw=0.8, ls="--")
        ax.text(within[-1], 0.02, " 30 min", fontsize=7, color="grey")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Masked PPO on DiscoveryWorld unit tests (symbolic observation)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="the budget the schedule decays over")
    parser.add_argument("--minutes", type=float, default=120.0, help="safety stop only (the schedule is by steps)")
    parser.add_argument("--eval-every", type=int, default=20_000)
    parser.add_argument("--eval-episodes", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--envs-per-task", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--tasks", default=",".join(TASKS), help="one policy for all of them (comma-separated)")
    parser.add_argument("--reward", default="procedure", choices=("success", "explore", "procedure"))
    parser.add_argument("--out", default="runs/ppo_curve", help="names <out>.json, .png and .pt (default runs/ppo_curve, "
                        "git-ignored; the docs' figure is regenerated with --out docs/images/ppo_curve)")
    args = parser.parse_args()
    tasks = tuple(t for t in args.tasks.split(",") if t)
    try:  # a wrong name or count: a usage error now, not a traceback from inside the first env
        [get_task(t) for t in tasks]
    except ValueError as exc:
        parser.error(str(exc))
    if not tasks or args.envs_per_task < 1:
        parser.error("--tasks needs a task and --envs-per-task at least 1.")
    relax_gc()  # many resets of short episodes: see its docstring
    out = Path(args.out)
    if out.is_dir():
        parser.error(f"--out {args.out!r} is a folder: it is the path the .json, .png and .pt are named after (e.g. runs/ppo_curve)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)  # as sb3.py does: a missing folder lost the whole run at the end
    except OSError as exc:  # e.g. a file where a folder should be: a usage error, not a traceback
        parser.error(f"--out {args.out!r}: cannot make its folder {out.parent} ({exc.strerror or exc})")

    partial = out.with_name(out.name + "-partial")  # the curve so far: never over a complete <out>.json

    def log(curve: dict[str, Any]) -> None:  # keep what we have, should the run be cut short
        print(json.dumps(curve["eval"][-1]), flush=True)
        partial.with_suffix(".json").write_text(json.dumps(curve, indent=1))
        plot(curve, partial.with_suffix(".png"))

    try:
        curve = train(args.steps, args.minutes, envs_per_task=args.envs_per_task, max_steps=args.max_steps,
                      seed=args.seed, eval_every=args.eval_every, eval_episodes=args.eval_episodes, log=log,
                      tasks=tasks, reward=args.reward)  # fmt: skip
    except KeyboardInterrupt:
        kept = f"the curve up to the last evaluation is in {partial}.json and .png; " if partial.with_suffix(".json").exists() else ""
        print(f"Interrupted (Ctrl-C): {kept}{out.with_suffix('.json')} was left as it was.", file=sys.stderr)
        raise SystemExit(130) from None
    torch.save(curve.pop("policy").state_dict(), out.with_suffix(".pt"))  # re-evaluate later without retraining
    out.with_suffix(".json").write_text(json.dumps(curve, indent=1))
    plot(curve, out.with_suffix(".png"))
    for suffix in (".json", ".png"):
        partial.with_suffix(suffix).unlink(missing_ok=True)  # the complete curve is in place
    print(json.dumps({"final": curve["final"], "steps": curve["total_steps"], "seconds": curve["seconds_total"]}))


if __name__ == "__main__":
    main()
