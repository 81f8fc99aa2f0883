"""Baseline agents for Protocol A (hidden property): scripted oracle, random, heuristic scientist.

They talk to the lab only through text, like an LLM would. The oracle additionally reads
`protocol.ground_truth()` (that is what makes it an oracle); the other two never do. Protocol B
agents are in `agents_dynamics`; both sets register themselves with `discoverylab.labs.agents`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from discoverylab.labs.agents import LabAgent, register_agent
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.judge import RUBRIC, family_of
from discoverylab.labs.sequence.programs import positions_program, reference_program
from discoverylab.labs.sequence.properties import encode

_EVAL_LINE = re.compile(r"^([ACGT]+) -> ([0-9.]+)", re.MULTILINE)
_LISTED = re.compile(r"^\s*\d+\.\s+([ACGT]+)\s*$", re.MULTILINE)
_LENGTH = re.compile(r"of length (\d+)")
_BATCH = re.compile(r"receive (\d+) sequences")


def is_final_request(message: str) -> bool:
    return "All rounds are used" in message


def listed_sequences(message: str) -> list[str]:
    """The held-out sequences the final request lists, in order."""
    return _LISTED.findall(message)


def observations(message: str) -> list[tuple[str, float]]:
    return [(s, float(v)) for s, v in _EVAL_LINE.findall(message)]


class HiddenPropertyOracle:
    """Knows f; samples harmlessly, then answers with the exact program and exact predictions."""

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol

    def reset(self, seed: int) -> None:
        self.truth: dict[str, Any] | None = None

    def act(self, message: str) -> str:
        if self.truth is None:
            self.truth = self.protocol.ground_truth()
        if not is_final_request(message):
            return "SAMPLE 0.5"
        name, params, length = self.truth["property"], self.truth["params"], self.truth["length"]
        rubric = RUBRIC.get(family_of(name), {})
        listed = listed_sequences(message)
        values = self.truth["value_fn"](encode(listed)) if listed else []
        hypothesis: dict[str, Any] = {"rank": 1, "description": str(rubric.get("definition", name))}
        positions = self.truth.get("positions")
        if positions:
            hypothesis["description"] = str(self.truth["description"])
            hypothesis["python"] = positions_program(name, params, length, positions)
        elif name in RUBRIC or family_of(name) in RUBRIC:
            hypothesis["python"] = reference_program(name, params, length)
        answer = {"hypotheses": [hypothesis],
                  "predictions": {s: float(v) for s, v in zip(listed, values, strict=True)}}
        return json.dumps(answer)


class HiddenPropertyRandom:
    """Uniformly random requests and answers: the floor every grader must separate from the oracle."""

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0xA6E7]))
        self.length, self.batch = 10, 10

    def act(self, message: str) -> str:
        if m := _LENGTH.search(message):
            self.length = int(m.group(1))
        if m := _BATCH.search(message):
            self.batch = int(m.group(1))
        if is_final_request(message):
            preds = {s: round(float(self.rng.random()), 3) for s in listed_sequences(message)}
            return json.dumps({"hypotheses": [{"rank": 1, "description": "f counts something about the bases"}],
                               "predictions": preds})
        if self.rng.random() < 0.5:
            return f"SAMPLE {self.rng.random():.2f}"
        codes = self.rng.integers(0, 4, size=(self.batch, self.length))
        return "\n".join("".join("ACGT"[c] for c in row) for row in codes)


# ---------------------------------------------------------------------- heuristic scientist
def _composition(x: np.ndarray) -> np.ndarray:
    return np.stack([(x == b).mean(axis=1) for b in range(4)], axis=1)


def _dinucleotides(x: np.ndarray) -> np.ndarray:
    pairs = x[:, :-1] * 4 + x[:, 1:]
    return np.stack([(pairs == k).sum(axis=1) for k in range(16)], axis=1).astype(np.float64)


def _positional(x: np.ndarray) -> np.ndarray:
    """One indicator per (position, letter): linear in these is a per-position weight table."""
    return (x[:, :, None] == np.arange(4)).reshape(len(x), -1).astype(np.float64)


def _cv_error(features: np.ndarray, y: np.ndarray, folds: int = 5) -> float:
    """Mean absolute error of least squares on held-out folds: a model with more coefficients than
    the data support (per-position weights on 50 values) fits its data but not the next fold."""
    order = np.arange(len(y))
    errors = np.zeros(len(y))
    for k in range(folds):
        test = order % folds == k
        if test.all() or not test.any():
            return float("inf")
        coef = _fit(features[~test], y[~test])
        errors[test] = np.abs(_predict(features[test], coef) - y[test])
    return float(errors.mean())


def _fit(features: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients (last one = intercept)."""
    design = np.column_stack([features, np.ones(len(features))])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return coef


def _predict(features: np.ndarray, coef: np.ndarray) -> np.ndarray:
    return np.clip(np.column_stack([features, np.ones(len(features))]) @ coef, 0.0, 1.0)


_FEATURES = {
    "composition": (_composition, "linear in the base fractions of A, C, G, T"),
    "dinucleotides": (_dinucleotides, "linear in the counts of the 16 dinucleotides"),
    "positions": (_positional, "a sum of per-position weights of the letters"),
}


def _program(kind: str, coef: np.ndarray) -> str:
    c = [round(float(v), 10) for v in coef]
    if kind == "positions":
        return (f"C = {c!r}\n\ndef f(s):\n    v = C[-1]\n    for i, b in enumerate(s):\n"
                "        v += C[4 * i + 'ACGT'.index(b)]\n    return max(0.0, min(1.0, v))\n")
    if kind == "composition":
        return (f"C = {c!r}\n\ndef f(s):\n    n = len(s)\n"
                "    v = sum(C[i] * s.count(b) / n for i, b in enumerate('ACGT')) + C[4]\n"
                "    return max(0.0, min(1.0, v))\n")
    return (f"C = {c!r}\n\ndef f(s):\n    v = C[16]\n    for i in range(len(s) - 1):\n"
            "        v += C['ACGT'.index(s[i]) * 4 + 'ACGT'.index(s[i + 1])]\n"
            "    return max(0.0, min(1.0, v))\n")


class HiddenPropertyHeuristic:
    """A designed-experiment scientist without an LLM and without a library of hypotheses.

    Round 1 sends a designed panel (homopolymers, alternations, runs), round 2 and 3 sweep the value
    with SAMPLE 0 and SAMPLE 1, later rounds send random panels. It then regresses the values on
    generic features (base composition; dinucleotide counts; per-position letters) and answers with
    every fit, best cross-validated error first, each with a predictor program. It solves what is
    linear in those features (GC content or a weighted count, at any positions; interaction energy,
    plain alternation) and only approximates the rest, which is the yardstick an LLM should beat.
    """

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0x5C1E]))
        self.length, self.batch, self.turn = 10, 10, 0
        self.data: dict[str, float] = {}

    def _panel(self) -> list[str]:
        n = self.length
        motifs = ["A", "C", "G", "T", "AC", "AT", "GC", "AG", "AACC", "ACGT"]
        panel = [(m * n)[:n] for m in motifs]
        half = n // 2
        panel += ["A" * half + "T" * (n - half), "G" * half + "C" * (n - half)]
        while len(panel) < self.batch:
            panel.append("".join("ACGT"[c] for c in self.rng.integers(0, 4, size=n)))
        return panel[: self.batch]

    def act(self, message: str) -> str:
        if m := _LENGTH.search(message):
            self.length = int(m.group(1))
        if m := _BATCH.search(message):
            self.batch = int(m.group(1))
        self.data.update(observations(message))
        self.turn += 1
        if is_final_request(message):
            return self._answer(listed_sequences(message))
        if self.turn == 1:
            return "\n".join(self._panel())
        if self.turn in (2, 3):
            return "SAMPLE 0" if self.turn == 2 else "SAMPLE 1"
        codes = self.rng.integers(0, 4, size=(self.batch, self.length))
        return "\n".join("".join("ACGT"[c] for c in row) for row in codes)

    def _answer(self, held_out: list[str]) -> str:
        seqs = list(self.data)
        x, y = encode(seqs), np.array([self.data[s] for s in seqs])
        fits: list[tuple[float, str, np.ndarray]] = []
        for kind, (features, _) in _FEATURES.items():
            coef = _fit(features(x), y)
            fits.append((_cv_error(features(x), y), kind, coef))
        fits.sort(key=lambda t: t[0])
        hypotheses = [{"rank": rank, "description": f"f is {_FEATURES[kind][1]} (cross-validated MAE {err:.3f})",
                       "python": _program(kind, coef)} for rank, (err, kind, coef) in enumerate(fits, start=1)]
        _, kind, coef = fits[0]
        preds = _predict(_FEATURES[kind][0](encode(held_out)), coef) if held_out else np.zeros(0)
        return json.dumps({"hypotheses": hypotheses,
                           "predictions": {s: round(float(v), 4) for s, v in zip(held_out, preds, strict=True)}})


AGENT_CLASSES: dict[str, Callable[[Protocol], LabAgent]] = {
    "oracle": HiddenPropertyOracle, "random": HiddenPropertyRandom, "heuristic": HiddenPropertyHeuristic,
}


def _factory(kind: str) -> Callable[..., LabAgent]:
    """One registered factory per kind, dispatching on the protocol it is built for."""

    def make(protocol: Protocol, **options: Any) -> LabAgent:
        if protocol.name == "sequence/unknown-dynamics":
            from discoverylab.labs.sequence import agents_dynamics

            return agents_dynamics.AGENT_CLASSES[kind](protocol)
        if protocol.name == "sequence/population-dynamics":
            from discoverylab.labs.sequence import agents_population

            return agents_population.AGENT_CLASSES[kind](protocol)
        return AGENT_CLASSES[kind](protocol)

    return make


for _kind in AGENT_CLASSES:
    register_agent("sequence", _kind, _factory(_kind))
