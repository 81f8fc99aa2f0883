"""Protocol A, inferring a hidden property (spec §2.6; paper §6.1). Registered as `sequence/hidden-property`.

Description: the agent must identify an unknown f: {A,C,G,T}^N -> [0,1] (one of the lab's properties
with hidden parameters) in exactly R rounds.
Actions (one per round): `SAMPLE v` (B sequences with f about v), a list of exactly B sequences (their
values), `RANDOM` (if enabled). Then one final JSON answer: up to 3 ranked hypotheses, each with an
optional `python` predictor, plus predictions for 20 listed held-out sequences.
Observation: text replies, values rounded to 3 decimals (optionally with Gaussian noise).
Scoring: `grade_hidden_property` (program score in a sandbox on ~200 held-out sequences with
adversarial near-misses, prediction score on the 20 listed ones, optional LLM judge).
Difficulty knobs: length, rounds, batch, epsilon, hidden property and its parameters, noise, hint
level (`none` | `family` | `examples`), RANDOM on/off, strict/lenient parsing.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.seeding import SeedStreams
from discoverylab.labs.core.spaces import StringSpace
from discoverylab.labs.protocol import Protocol, Reply, Score, register_protocol
from discoverylab.labs.sequence.grading import GRADER_VERSION, grade_hidden_property
from discoverylab.labs.sequence.heldout import (
    HeldOutSet,
    ValueFn,
    build_heldout,
    prediction_subset,
    stock_values,
    targeted_codes,
    value_function,
)
from discoverylab.labs.sequence.judge import JudgeClient
from discoverylab.labs.sequence.kinds import KIND_OF_NAME, PositionsProperty
from discoverylab.labs.sequence.measurables import build_measurables
from discoverylab.labs.sequence.parsing import (
    FinalAnswer,
    Hypothesis,
    ParseFailure,
    QueryAction,
    RandomAction,
    SampleAction,
    parse_final_answer,
    parse_round,
)
from discoverylab.labs.sequence.problems import HiddenProblem, draw_hidden_problem, signature
from discoverylab.labs.sequence.properties import (
    PropertyParams,
    decode,
    encode,
    feasible_range,
    quantum,
)
from discoverylab.labs.sequence.sampling import long_sampler_error, sample_codes
from discoverylab.labs.sequence.sandbox_policy import PROGRAM_RULES

logger = logging.getLogger(__name__)

NAME_OF_KIND = {kind: name for name, kind in KIND_OF_NAME.items()}
FAMILY_TEXT = {
    "gc_content": "fraction of G/C bases",
    "weighted_count": "mean of a hidden per-base weight",
    "alternation_k": "fraction of changes between consecutive bases of the subsequence s[0], s[k], s[2k], ...",
    "palindrome_score": "fraction of positions where s equals its reverse complement",
    "entropy_score": "normalised Shannon entropy of the overlapping k-mers",
    "hamming_distance": "fraction of positions that differ from a hidden reference sequence",
    "interaction_energy": "normalised nearest-neighbour pair energy (higher = more stable)",
}


class HiddenPropertyConfig(BaseModel):
    """Knobs of Protocol A; defaults follow the paper's prompt (N=10, R=5, B=10, epsilon 0.1) [R14]."""

    model_config = ConfigDict(extra="forbid")

    length: int = Field(10, ge=2, le=1000)
    rounds: int = Field(5, ge=1, le=50)
    batch: int = Field(10, ge=1, le=100)
    epsilon: float = Field(0.1, gt=0.0, le=0.5)
    hidden: str | None = None
    """Hidden property name (`alternation_2` etc. accepted); None (default): each seed draws a new
    problem (`problems.draw_hidden_problem`: parametrised or composed families). Preset `paper`:
    palindromicity, the paper's worked example."""
    alternation_k: int = Field(1, ge=1)
    entropy_k: int = Field(2, ge=1)
    weights: tuple[float, float, float, float] | None = None
    hint: Literal["none", "family", "examples"] = "none"
    allow_random: bool = False
    invalid_mode: Literal["strict", "lenient"] = "strict"
    noise: float = Field(0.0, ge=0.0, le=0.5)
    n_predictions: int = Field(20, ge=1, le=100)
    final_retries: int = Field(1, ge=0, le=5)
    program_seconds_per_100: float = Field(2.0, gt=0.0)

    @model_validator(mode="after")
    def _long_sequences_need_a_long_sampler(self) -> HiddenPropertyConfig:
        """Above 200 letters only properties whose sampler meets its tolerance there (`sampling`)."""
        problem = long_sampler_error(self.length, self.hidden)
        if problem is not None:
            raise ValueError(problem)
        return self


def format_value(v: float) -> str:
    """3 decimals, trailing zeros dropped, at least one decimal ("0.6", "1.0", "0.333")."""
    text = f"{v:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


class HiddenPropertyProtocol(Protocol):
    """Protocol A; see the module docstring."""

    name = "sequence/hidden-property"

    def __init__(self, judge: JudgeClient | None = None, *, value_fn: ValueFn | None = None,
                 value_range: tuple[float, float] = (0.0, 1.0), value_quantum: float | None = None,
                 **config: Any) -> None:
        """`value_fn` replaces the named hidden property by any (B, N) codes -> values function (e.g. a
        composed property of a generated lab); give its range and quantum with it."""
        super().__init__()
        self.config = HiddenPropertyConfig(**config)
        self.judge = judge
        self._custom = value_fn
        self._custom_range = value_range
        self._custom_quantum = value_quantum
        self._drawn_fn: ValueFn | None = None
        self._drawn_range: tuple[float, float] = (0.0, 1.0)
        self._drawn_quantum: float | None = None
        self._drawn_text = ""
        self.max_turns = self.config.rounds + 1 + self.config.final_retries

    # ------------------------------------------------------------------ episode set-up
    def _on_reset(self, seed: int) -> str:
        cfg = self.config
        self.streams = SeedStreams(seed, ("lab", "sampler", "noise", "grader", "hint"))
        lab_rng = self.streams["lab"]
        reference = decode(lab_rng.integers(0, 4, size=(1, cfg.length), dtype=np.uint8))[0]
        weights = cfg.weights if cfg.weights is not None else PropertyParams().weights
        self.params = PropertyParams(weights=weights, alternation_k=cfg.alternation_k, entropy_k=cfg.entropy_k,
                                     reference=reference)
        self.problem: HiddenProblem | None = None
        self._drawn_fn = None
        self._drawn_prop: Property | None = None
        if self._custom is not None:
            self.hidden = "custom"
        elif cfg.hidden is not None:
            self.hidden = cfg.hidden
        else:
            self._draw(reference)
        self._fn = self._custom or self._drawn_fn or value_function(self.hidden, self.params)
        self.rounds_used = 0
        self.phase: Literal["rounds", "final"] = "rounds"
        self.final_attempts = 0
        self.answer: FinalAnswer | None = None
        self.observed: dict[str, float] = {}
        self._heldout: HeldOutSet | None = None
        self.prediction_indices: list[int] = []
        return self._intro()

    def _draw(self, reference: str) -> None:
        """This seed's problem: a base family with drawn parameters read at drawn positions, or a
        composition of such; either way served through its `Property` (value, range, quantum, sampler)."""
        problem = draw_hidden_problem(self.streams["problem"], self.config.length, reference)
        self.problem = problem
        prop = build_measurables(["hidden"], problem.as_entries(), reference)["hidden"]
        space = StringSpace("ACGT", self.config.length)
        self._drawn_prop = prop
        self._drawn_fn = prop.batch
        self._drawn_range = prop.feasible_range(space)
        self._drawn_quantum = prop.quantum(space)
        self._drawn_text = prop.description
        self.hidden = "composed" if problem.composite else NAME_OF_KIND[problem.root.kind]
        if isinstance(prop, PositionsProperty):
            self.params = prop.params  # its weights, k and Hamming reference (the oracle's program reads them)

    def problem_signature(self) -> str:
        """Hash of what this episode hides (distinct problems over seeds have distinct signatures)."""
        key: dict[str, object] = {"hidden": self.hidden, "length": self.config.length}
        if self.problem is not None:
            key["entries"] = self.problem.describe()
        elif self.hidden.startswith("weighted"):
            key["weights"] = self.params.weights
        elif self.hidden.startswith("alternation"):
            key["k"] = self.params.alternation_k
        elif self.hidden.startswith("entropy"):
            key["k"] = self.params.entropy_k
        elif self.hidden.startswith("hamming"):
            key["reference"] = self.params.reference
        return signature(key)

    def _intro(self) -> str:
        cfg = self.config
        options = [
            f"1. Reply `SAMPLE v` (0 <= v <= 1) to receive {cfg.batch} sequences whose f(s) is approximately v "
            f"(within epsilon = {format_value(cfg.epsilon)}; sequences the sampler could not bring that close are "
            "flagged).",
            f"2. Reply with exactly {cfg.batch} sequences, one per line, to receive their f(s) values.",
        ]
        if cfg.allow_random:
            options.append(f"3. Reply `RANDOM` to receive {cfg.batch} uniformly random sequences with their f(s) values.")
        lines = [
            f"You are a scientist trying to identify an unknown numeric property f(s) in [0,1] of DNA sequences "
            f"s of length {cfg.length} over the alphabet {{A,C,G,T}}. You have exactly {cfg.rounds} rounds. "
            "In each round choose ONE option:",
            *options,
            "After the last round you will be asked for your final hypothesis.",
            "Values are reported with 3 decimals." + (" Measurements are noisy." if cfg.noise > 0 else ""),
        ]
        lines += self._hint_lines()
        lines.append(f"Round 1 of {cfg.rounds}: your move.")
        return "\n".join(lines)

    def _hint_lines(self) -> list[str]:
        cfg = self.config
        if cfg.hint == "family":
            families = "; ".join(FAMILY_TEXT.values())
            drawn = (" Here each reads only the letters at hidden positions (in order), and f may combine two "
                     "such properties." if self.problem is not None else "")
            return [f"Hint: f belongs to one of these families (parameters hidden): {families}.{drawn}"]
        if cfg.hint == "examples":
            rng = self.streams["hint"]
            codes = np.concatenate([self._sample(t, 0.1, 1, rng) for t in (0.1, 0.5, 0.9)])
            seqs = decode(codes)
            shown = "; ".join(f"{s} -> {format_value(v)}" for s, v in zip(seqs, self._fn(codes), strict=True))
            return [f"Examples (sequence -> f): {shown}"]
        return []

    def _sample(self, target: float, eps: float, n: int, rng: np.random.Generator) -> np.ndarray:
        if self._drawn_prop is not None:  # a drawn base property has its family's sampler
            exact = self._drawn_prop.sample_exact(StringSpace("ACGT", self.config.length), target, eps, n, rng)
            if exact is not None:
                return exact
        custom = self._custom or self._drawn_fn
        if custom is not None:
            return targeted_codes(custom, self.config.length, target, n, rng, eps=eps * 0.5, iters=2000)
        return sample_codes(self.hidden, self.params, self.config.length, target, eps, n, rng)

    def _range(self) -> tuple[float, float]:
        if self._custom is not None:
            return self._custom_range
        if self._drawn_fn is not None:
            return self._drawn_range
        return feasible_range(self.hidden, self.config.length, self.params)

    def _quantum(self) -> float | None:
        if self._custom is not None:
            return self._custom_quantum
        if self._drawn_fn is not None:
            return self._drawn_quantum
        return quantum(self.hidden, self.config.length, self.params)

    # ------------------------------------------------------------------ one message
    def _on_step(self, message: str) -> Reply:
        if self.phase == "final":
            return self._final_step(message)
        cfg = self.config
        action = parse_round(message, length=cfg.length, batch=cfg.batch, allow_random=cfg.allow_random)
        self.rounds_used += 1
        header = f"Round {self.rounds_used} of {cfg.rounds}."
        info: dict[str, Any] = {"action": action.as_info(), "round": self.rounds_used}
        if isinstance(action, SampleAction):
            body = self._sample_reply(action.value)
        elif isinstance(action, QueryAction):
            body = self._evaluations(action.sequences)
        elif isinstance(action, RandomAction):
            body = self._evaluations(self._random_sequences(cfg.batch))
        else:
            info["error"] = action.message
            body = self._invalid_reply(action)
        text = f"{header}\n{body}"
        if self.rounds_used >= cfg.rounds:
            self.phase = "final"
            text += "\n\n" + self._final_request()
        else:
            text += f"\nRound {self.rounds_used + 1} of {cfg.rounds}: your move."
        return Reply(text=text, done=False, info=info)

    def _sample_reply(self, target: float) -> str:
        cfg = self.config
        lo, hi = self._range()
        effective = min(max(target, lo), hi)
        codes = self._sample(effective, cfg.epsilon, cfg.batch, self.streams["sampler"])
        if abs(effective - target) > cfg.epsilon:
            intro = (f"Value {format_value(target)} is not achievable; sampling sequences with the closest "
                     f"achievable value, around {format_value(effective)}.")
        else:
            intro = f"Sampling sequences with value around {format_value(target)}."
        values = self._fn(codes)
        missed = [bool(abs(float(v) - effective) > cfg.epsilon + 1e-9) for v in values]
        if any(missed):
            intro += (f" {sum(missed)} of {len(missed)} sequences missed the target by more than epsilon = "
                      f"{format_value(cfg.epsilon)} (marked `(miss)`).")
        return intro + "\n" + self._evaluations(decode(codes), misses=missed)

    def _random_sequences(self, n: int) -> list[str]:
        return decode(self.streams["sampler"].integers(0, 4, size=(n, self.config.length), dtype=np.uint8))

    def _evaluations(self, seqs: list[str], marks: list[bool] | None = None, misses: list[bool] | None = None) -> str:
        values = self._fn(encode(seqs))
        if self.config.noise > 0:
            values = np.clip(values + self.streams["noise"].normal(0.0, self.config.noise, len(values)), 0.0, 1.0)
        lines = ["Evaluations:"]
        for i, (seq, v) in enumerate(zip(seqs, values, strict=True)):
            self.observed[seq] = float(v)
            suffix = " (random)" if marks and marks[i] else " (miss)" if misses and misses[i] else ""
            lines.append(f"{seq} -> {format_value(float(v))}{suffix}")
        return "\n".join(lines)

    def _invalid_reply(self, failure: ParseFailure) -> str:
        cfg = self.config
        if cfg.invalid_mode == "lenient" and failure.partial:
            pad = self._random_sequences(cfg.batch - len(failure.partial))
            return (f"Error: {failure.message}\nEvaluating your {len(failure.partial)} valid sequence(s), padded "
                    "with random ones.\n" + self._evaluations(failure.partial + pad,
                                                              [False] * len(failure.partial) + [True] * len(pad)))
        return (f"Error: {failure.message}\nThis round is used; here are {cfg.batch} random sequences instead.\n"
                + self._evaluations(self._random_sequences(cfg.batch)))

    # ------------------------------------------------------------------ final answer
    @property
    def heldout(self) -> HeldOutSet:
        """The grader's held-out set T (built from the grader stream on first use)."""
        if self._heldout is None:
            rng = self.streams["grader"]
            self._heldout = build_heldout(self.hidden, self.params, self.config.length, rng,
                                          value_fn=self._custom or self._drawn_fn, positions=self._positions())
            self.prediction_indices = prediction_subset(self._heldout, rng, self.config.n_predictions)
        return self._heldout

    @property
    def prediction_sequences(self) -> list[str]:
        held = self.heldout
        return [held.sequences[i] for i in self.prediction_indices]

    def _final_request(self) -> str:
        listed = "\n".join(f"{i}. {s}" for i, s in enumerate(self.prediction_sequences, start=1))
        return (
            "All rounds are used. State your final hypothesis for f and a very brief justification, in the format "
            "below. Give up to 3 ranked hypotheses; `python` is optional: a function `def f(s):` returning a number "
            f"in [0,1] ({PROGRAM_RULES}).\n"
            '{"hypotheses": [{"rank": 1, "description": "...", "python": "def f(s):\\n    ..."}], '
            '"predictions": {"<sequence>": <value>, ...}}\n'
            f"Predict f for each of these {len(self.prediction_sequences)} held-out sequences:\n{listed}"
        )

    def _final_step(self, message: str) -> Reply:
        parsed = parse_final_answer(message, length=self.config.length, held_out=self.prediction_sequences)
        self.final_attempts += 1
        if isinstance(parsed, FinalAnswer):
            self.answer = parsed
            note = (" Notes: " + " ".join(parsed.warnings)) if parsed.warnings else ""
            return Reply(text="Final answer recorded." + note, done=True, info={"action": parsed.as_info()})
        if self.final_attempts <= self.config.final_retries:
            return Reply(text=f"Error: {parsed.message} Please send your final answer again.",
                         info={"action": parsed.as_info(), "error": parsed.message})
        fallback = parsed.partial[0] if parsed.partial else ""
        self.answer = FinalAnswer(hypotheses=[Hypothesis(rank=1, description=fallback)] if fallback else [],
                                  predictions={}, structured=False, warnings=[parsed.message])
        return Reply(text="No valid structured answer; your text was recorded as the hypothesis.", done=True,
                     info={"action": self.answer.as_info(), "error": parsed.message})

    # ------------------------------------------------------------------ grading and truth
    def ground_truth(self) -> dict[str, Any]:
        description = FAMILY_TEXT.get(self.hidden.rstrip("0123456789").rstrip("_")
                                      if self.hidden.startswith("alternation") else self.hidden, "")
        if self._drawn_fn is not None:
            description = self._drawn_text
        return {"property": self.hidden, "params": self.params, "length": self.config.length,
                "quantum": self._quantum(), "value_fn": self._fn, "description": description,
                "problem": self.problem.describe() if self.problem is not None else None,
                "positions": self._positions()}

    def _positions(self) -> tuple[int, ...] | None:
        """The positions a drawn base property reads (None: all of them, or a composition)."""
        return self.problem.positions if self.problem is not None else None

    def grade(self) -> Score:
        answer = self.answer or FinalAnswer(hypotheses=[], predictions={}, structured=False)
        held = self.heldout
        return grade_hidden_property(
            answer, held, self.prediction_indices,
            quantum=self._quantum(),
            truth={k: v for k, v in self.ground_truth().items() if k != "value_fn"}, judge=self.judge,
            stock=stock_values(held.sequences) if self.problem is not None else None,
            seconds_per_100=self.config.program_seconds_per_100,
            extras={"rounds_used": float(self.rounds_used)},
        )


PRESETS: dict[str, dict[str, Any]] = {"paper": {"hidden": "palindrome_score"}}
"""Named configs; `paper` is the paper's worked example (the same problem on every seed)."""

register_protocol(HiddenPropertyProtocol.name, HiddenPropertyProtocol, presets=PRESETS, overwrite=True,
                  grader_version=GRADER_VERSION,
                  summary="Infer a hidden sequence property from SAMPLE/query rounds (paper §6.1)")
