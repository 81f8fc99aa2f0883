"""`reward="explore"`: a shaped reward from answer-independent progress only.

It pays for what any careful explorer does whatever the answer is, never for a choice that is
right for this instance: a tile entering the view for the first time, each (action kind,
object) pair tried for the first time (examining, opening, reading, using an instrument on an
object it was not yet used on: the pair counts the action's every object argument), and the
first use of each action kind, all counted over actions the mask allows (parsing depends on
what the agent sees, never on hidden properties) and whether or not they succeed. The pay per
novelty is the same for every object, so which candidate holds the answer cannot change it;
`tests/test_rl_shaping.py` checks that on every discovery task. Unit tests (which have no
hidden answer) also pay the change of their procedural score (their sub-goals), except on a
sealed test instance: its last sub-goal is its success, which a sealed episode never tells the
agent (its success reward is 0 too, docs/rl.md). The bonus of an episode is capped (`cap`, 0.2)
so that wandering never outweighs success (+1).
"""

from __future__ import annotations

from typing import Any

TILE, PAIR, KIND, SUBGOAL, CAP = 0.0005, 0.0025, 0.005, 0.5, 0.2


class ExploreShaping:
    """The bookkeeping of one env's explore bonus (reset per episode)."""

    def __init__(self, tile: float = TILE, pair: float = PAIR, kind: float = KIND, subgoal: float = SUBGOAL,
                 cap: float = CAP) -> None:  # fmt: skip
        self.weights = (tile, pair, kind, subgoal)
        self.cap = cap
        self.tiles: set[int] = set()
        self.pairs: set[tuple[str, str]] = set()
        self.kinds: set[str] = set()
        self.paid = 0.0
        self._place: tuple[int, int] = (-1, -1)
        self._score = 0.0
        self._unit = False

    def reset(self, base: Any) -> None:
        self.tiles.clear()
        self.pairs.clear()
        self.kinds.clear()
        self.paid = 0.0
        self._place = (-1, -1)
        self._unit = base.scenario.suite == "unit" and not base.sealed  # sealed: progress is the evaluator's
        self._score = base.scenario.scorecard.normalized if self._unit else 0.0
        self._new_tiles(base)  # the first view is free: nothing was done to earn it

    def step(self, base: Any, packet: dict[str, Any], allowed: bool) -> float:
        """The bonus for the step just taken (`packet`, parsed iff `allowed`)."""
        tile_w, pair_w, kind_w, subgoal_w = self.weights
        bonus = tile_w * self._new_tiles(base)
        name = packet.get("action")
        if allowed and name:
            if name not in self.kinds:
                self.kinds.add(name)
                bonus += kind_w
            for arg in ("arg1", "arg2"):
                uuid = packet.get(arg)
                if uuid and (name, uuid) not in self.pairs and uuid in base.world.objects:
                    self.pairs.add((name, uuid))
                    bonus += pair_w
        bonus = min(bonus, self.cap - self.paid)
        self.paid += bonus
        if self._unit:  # sub-goals: progress, not novelty, so outside the cap
            score = base.scenario.scorecard.normalized
            bonus += subgoal_w * (score - self._score)
            self._score = score
        return bonus

    def _new_tiles(self, base: Any) -> int:
        agent = base.scenario.player
        place = (agent.x, agent.y)
        if place == self._place:
            return 0
        self._place = place
        r, size = base.radius, base.world.size
        before = len(self.tiles)
        for x in range(max(0, agent.x - r), min(size, agent.x + r + 1)):
            self.tiles.update(range(x * size + max(0, agent.y - r), x * size + min(size, agent.y + r + 1)))
        return len(self.tiles) - before
