"""What a scenario is: a world builder for (difficulty, seed) plus a scorecard and an oracle.

A new task is one module with one `Scenario` subclass decorated with `@register`. The class
docstring is its documentation (Description / Actions / Observation / Scoring / Difficulty
knobs); the docs task table is generated from the registry.

Oracle knowledge reports: a scenario's oracle generator `return`s a `KnowledgeReport` (what it
found out, as text and as named facts), or yields one before the action that ends the task (the
agent keeps it and sends the same observation back for the next action). The oracle agent
captures it (after the episode the runner sends the final observation back, so a generator whose
last action ended the task can still return), and the episode record stores it as
`knowledge_report`.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from discoverylab.scoring.scorecard import Scorecard
from discoverylab.world.agent import ActionRecord, Agent
from discoverylab.world.unpickle import FastState
from discoverylab.world.world import World

Observation = dict[str, Any]
Action = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class KnowledgeReport:
    """What an oracle discovered: a short text (what an agent would say) and the same as facts."""

    text: str
    facts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "facts": dict(self.facts)}


OracleGen = Generator[Action | KnowledgeReport, Observation, Any]  # returns a KnowledgeReport or None

DIFFICULTIES = ("easy", "normal", "challenge")


class Scenario(FastState):
    """Base class. Subclasses set the class attributes and implement `build` and `update`."""

    task_id: ClassVar[str]  # e.g. "DialogTest"; Gymnasium id discoverylab/<task_id>-<Difficulty>-v0
    title: ClassVar[str]  # human name, e.g. "Small Skills: Dialog Test"
    suite: ClassVar[str]  # "unit", "discovery" or "tutorial"
    difficulties: ClassVar[tuple[str, ...]] = ("normal",)
    task_name: ClassVar[str]  # the original's taskName, kept for comparison

    def __init__(self, world: World, difficulty: str) -> None:
        self.world = world
        self.difficulty = difficulty
        self.scorecard = Scorecard(self.task_name, "")
        world.reseed_build(f"{self.task_id}/{difficulty}")  # difficulties of one seed draw independently
        self.player: Agent = self.build()
        self.scorecard.task_description = self.description()
        world.on_tick.append(self._tick_score)

    # ---- to implement -----------------------------------------------------------------
    def build(self) -> Agent:
        """Build the map and objects with `self.world.rng_build`; return the player agent."""
        raise NotImplementedError

    def description(self) -> str:
        raise NotImplementedError

    def update(self) -> None:
        """Update scorecard items (and call `finish`) from the world state; runs every tick."""
        raise NotImplementedError

    @staticmethod
    def oracle(obs: Observation) -> OracleGen:
        """A scripted solver: gets the first observation, yields actions, receives the next
        observations. It sees only what the agent sees (and reads the task text from it)."""
        raise NotImplementedError

    # ---- shared machinery -------------------------------------------------------------
    def default_step_limit(self) -> int:
        return 100 if self.suite == "unit" or self.difficulty == "easy" else 1000

    def new_actions(self) -> list[ActionRecord]:
        """The player's action records added since the previous call (scorers scan each once,
        so scoring stays O(1) per tick however long the episode)."""
        history = self.player.history
        start = getattr(self, "_history_seen", 0)
        self._history_seen = len(history)
        return history[start:]

    def _tick_score(self) -> None:
        if not self.scorecard.completed:  # unit tests freeze their scorer once decided
            self.update()

    def burn(self, draws: int = 20) -> None:
        """Decorrelate layouts across nearby seeds, as the original's builders do."""
        self.world.rng_build.integers(0, 32, size=draws)

    def randint(self, low: int, high: int) -> int:
        """An integer in [low, high], both ends included (like the original's `randint`)."""
        return int(self.world.rng_build.integers(low, high + 1))

    def choice(self, seq: list[Any] | tuple[Any, ...]) -> Any:
        return seq[int(self.world.rng_build.integers(0, len(seq)))]

    def seed_option(self, options: Sequence[T], label: str = "") -> T:
        """The instance's categorical answer, drawn uniformly from a stream of its own (keyed by
        task, difficulty and `label`, independent of the layout draws). No blocks of seeds: the
        answers of other instances, remembered or not, say nothing about this one."""
        rng = self.world.child_rng(f"option/{self.task_id}/{self.difficulty}/{label}")
        return options[int(rng.integers(0, len(options)))]

    def shuffled(self, seq: list[Any] | tuple[Any, ...]) -> list[Any]:
        order = self.world.rng_build.permutation(len(seq))
        return [seq[i] for i in order.tolist()]  # Python ints at once: `int()` of each numpy scalar cost 3x
