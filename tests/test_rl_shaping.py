"""`reward="explore"` pays answer-independent progress only (issue 27, docs/rl.md).

On every discovery task and difficulty: (1) each step's bonus is what an answer-blind observer
computes from the agent's place, the action's kind and which objects it names (never their
properties); (2) the probe attack, trying every object action from one state and keeping the
one that pays most, finds every object paying the same; (3) grouping instances by their answer
(the first knowledge question's gold facts), the mean shaped return of a fixed random policy
does not separate the groups beyond what shuffled labels give.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from discoverylab.rl import make_rl_env
from discoverylab.rl.shaping import CAP, KIND, PAIR, TILE
from discoverylab.scenarios.registry import all_tasks

DISCOVERY = [(t, d) for t, cls in sorted(all_tasks().items()) if cls.suite == "discovery" for d in cls.difficulties]
STEPS = 30


def _rollout(task: str, difficulty: str, seed: int, steps: int = STEPS) -> tuple[float, list[tuple[float, float]], str]:
    """A random masked rollout: (shaped return, [(bonus, answer-blind expectation)] per step,
    the instance's answer: its first knowledge question's gold facts, read after the episode)."""
    env = make_rl_env(task, difficulty, reward="explore", max_steps=steps)
    _, info = env.reset(seed=seed)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    r, size = base.radius, base.world.size
    agent = base.scenario.player
    seen = {(x, y) for x in range(agent.x - r, agent.x + r + 1) for y in range(agent.y - r, agent.y + r + 1)
            if 0 <= x < size and 0 <= y < size}  # fmt: skip
    kinds: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    paid, total, trace = 0.0, 0.0, []
    done = False
    while not done:
        mask = info["action_mask"]
        action = int((rng.random(mask.shape) * mask).argmax())
        packet = env.packet(action)
        _, reward, term, trunc, info = env.step(action)
        done = term or trunc
        agent = base.scenario.player
        view = {(x, y) for x in range(agent.x - r, agent.x + r + 1) for y in range(agent.y - r, agent.y + r + 1)
                if 0 <= x < size and 0 <= y < size}  # fmt: skip
        blind = TILE * len(view - seen)
        seen |= view
        name = packet.get("action")  # a dialog choice names no action kind: it pays nothing
        if name is not None and name not in kinds:
            kinds.add(name)
            blind += KIND
        for arg in ("arg1", "arg2"):
            uid = packet.get(arg)
            if name and uid and (name, uid) not in pairs and uid in base.world.objects:
                pairs.add((name, uid))
                blind += PAIR
        blind = min(blind, CAP - paid)
        paid += blind
        success = 1.0 if term and info["scorecard"]["completedSuccessfully"] else 0.0
        trace.append((float(reward), blind + success))
        total += float(reward)
    questions = base.scorecard(reveal=True)["knowledgeQuestions"]
    env.close()
    return total, trace, " ".join(questions[0]["goldFacts"]) if questions else ""


@pytest.mark.parametrize(("task", "difficulty"), DISCOVERY)
def test_explore_bonus_is_answer_blind_every_step(task: str, difficulty: str) -> None:
    _, trace, _ = _rollout(task, difficulty, seed=3)
    assert trace and any(b > 0 for b, _ in trace)  # it does pay something
    for bonus, blind in trace:
        assert bonus == pytest.approx(blind, abs=1e-9)


@pytest.mark.parametrize(("task", "difficulty"), DISCOVERY)
def test_attack_explore_bonus_probe_reads_nothing(task: str, difficulty: str) -> None:
    """The probe attack: from one state, try each object action on a copy and keep the best
    payer. Every object an action kind can name must pay that kind the same."""
    env = make_rl_env(task, difficulty, reward="explore", max_steps=50)
    _, info = env.reset(seed=7)
    rng = np.random.default_rng(7)
    for _ in range(8):  # walk a little so that more objects are in view
        mask = info["action_mask"]
        move = int((rng.random(15) * mask[:15]).argmax())
        _, _, _, _, info = env.step(move)
    mask = info["action_mask"]
    paid: dict[str, set[float]] = {}
    candidates = np.flatnonzero(mask[env.base_single : env.base_location]) + env.base_single
    for action in rng.permutation(candidates)[:40]:  # a sample of them keeps the copies cheap
        name, slots = env.layout(int(action))
        name = f"{name} {len(set(slots))}"  # PUT/USE on one object twice names it once
        probe = copy.deepcopy(env)
        before = len(probe.shaping.tiles)
        _, reward, term, _, _ = probe.step(int(action))
        reward = float(reward) - TILE * (len(probe.shaping.tiles) - before)  # what the place shows: layout
        if not term:  # success pays +1: that is the task's own reward, not the bonus
            paid.setdefault(name, set()).add(round(float(reward), 9))
        probe.close()
    assert paid, "no object action to probe"
    for name, values in paid.items():
        assert len(values) == 1, f"{name} pays {sorted(values)} depending on the object"
    env.close()


@pytest.mark.parametrize(("task", "difficulty"), DISCOVERY)
def test_explore_return_does_not_separate_answers(task: str, difficulty: str) -> None:
    runs = [_rollout(task, difficulty, s, steps=20) for s in range(100, 112)]
    labels = np.array([answer for _, _, answer in runs])
    returns = np.array([ret for ret, _, _ in runs])
    groups = sorted(set(labels))
    if len(groups) < 2:
        pytest.skip(f"{task} {difficulty}: one answer over these seeds")

    def spread(lab: np.ndarray) -> float:  # between-group variance of the means, size-weighted
        return float(sum((lab == g).sum() * (returns[lab == g].mean() - returns.mean()) ** 2 for g in groups))

    rng = np.random.default_rng(0)
    null = [spread(rng.permutation(labels)) for _ in range(400)]
    assert spread(labels) <= np.quantile(null, 0.999) + 1e-12
