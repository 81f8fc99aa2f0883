"""Baseline agents for Protocol B (unknown dynamics): scripted oracle, random, heuristic scientist.

They exchange JSON with the lab like an LLM would. The oracle reads `protocol.ground_truth()`; the
random and heuristic agents only use what the prompt tells them (the measurables, the report format)
and what the lab returns. When the prompt names the paper's (gc, pal) axes they report in them;
otherwise they key coordinates by the measurables they believe drive the process.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from discoverylab.labs.agents import LabAgent
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence.dynamics_science import keyed_report, next_start
from discoverylab.labs.sequence.properties import compute_codes, decode

_LENGTH = re.compile(r"sequences of length (\d+)")
_MAX_STEPS = re.compile(r"number_of_steps in 1\.\.(\d+)")
_MEASURABLE = re.compile(r"^- ([a-z_0-9]+):", re.MULTILINE)
PAPER_FORMAT = '"gc": x, "pal": y'
"""How the paper-format prompt shows an attractor; other labs key coordinates by measurable."""


def _payloads(message: str) -> list[dict[str, Any]]:
    """Every JSON object line of a lab message (the report request follows a result on the last round)."""
    out: list[dict[str, Any]] = []
    for line in message.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def _payload(message: str) -> dict[str, Any]:
    """The last JSON object of a lab message."""
    found = _payloads(message)
    return found[-1] if found else {}


class DynamicsOracle:
    """Knows the measured attractors, the drivers and every held-out start's fate."""

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol

    def reset(self, seed: int) -> None:
        self.length = 30

    def act(self, message: str) -> str:
        if m := _LENGTH.search(message):
            self.length = int(m.group(1))
        payload = _payload(message)
        if payload.get("type") != "report_request":
            return json.dumps({"type": "experiment", "sequence": "GC" * (self.length // 2) + "G" * (self.length % 2),
                               "measurables": [], "steps": 5, "reasoning": "oracle probe"})
        truth = self.protocol.ground_truth()
        kind = truth["cycle_type"]
        keys = truth.get("report_keys", ["gc", "pal"])
        attractors = [dict(zip(keys, a, strict=True)) | {"type": kind} for a in truth["attractors"]]
        predictions = {h["sid"]: {"attractor": h["basin"] + 1} | dict(zip(keys, h["end_state"], strict=True))
                       for h in truth["heldout"]}
        return json.dumps({"type": "report", "hypothesis": truth["rule"] + f"; sequences settle into {kind}s.",
                           "evidence": "ground truth", "attractors": attractors, "drivers": truth["drivers"],
                           "predictions": predictions})


class DynamicsRandom:
    """Random experiments and a random report."""

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0xD1A0]))
        self.length, self.max_steps, self.measurables = 30, 20, ["gc_content"]
        self.paper_format = True

    def act(self, message: str) -> str:
        if m := _LENGTH.search(message):
            self.length = int(m.group(1))
        if m := _MAX_STEPS.search(message):
            self.max_steps = int(m.group(1))
        self.measurables = _MEASURABLE.findall(message) or self.measurables
        if "MEASURABLES" in message:
            self.paper_format = PAPER_FORMAT in message
        payload = _payload(message)
        if payload.get("type") == "report_request" and not self.paper_format:
            return self._keyed_report(payload)
        if payload.get("type") == "report_request":
            n = int(self.rng.integers(1, 4))
            attractors = [{"gc": float(self.rng.random()), "pal": float(self.rng.random()), "type": "other"}
                          for _ in range(n)]
            k = int(self.rng.integers(1, len(self.measurables) + 1))
            drivers = [str(d) for d in self.rng.choice(self.measurables, size=k, replace=False)]
            preds = {sid: {"attractor": int(self.rng.integers(1, n + 1)), "gc": float(self.rng.random()),
                           "pal": float(self.rng.random())} for sid in payload.get("heldout_starts", {})}
            return json.dumps({"type": "report", "hypothesis": "random walk", "evidence": "none",
                               "attractors": attractors, "drivers": drivers, "predictions": preds})
        seq = decode(self.rng.integers(0, 4, size=(1, self.length), dtype=np.uint8))[0]
        return json.dumps({"type": "experiment", "sequence": seq, "measurables": self.measurables,
                           "steps": int(self.rng.integers(1, self.max_steps + 1))})

    def _keyed_report(self, payload: dict[str, Any]) -> str:
        """Random drivers, and random attractors and end states keyed by them."""
        n = int(self.rng.integers(1, 4))
        k = int(self.rng.integers(1, len(self.measurables) + 1))
        drivers = [str(d) for d in self.rng.choice(self.measurables, size=k, replace=False)]
        attractors = [{d: float(self.rng.random()) for d in drivers} | {"type": "other"} for _ in range(n)]
        preds = {sid: {"attractor": int(self.rng.integers(1, n + 1))} | {d: float(self.rng.random()) for d in drivers}
                 for sid in payload.get("heldout_starts", {})}
        return json.dumps({"type": "report", "hypothesis": "random walk", "evidence": "none",
                           "attractors": attractors, "drivers": drivers, "predictions": preds})


def _gc_pal(x: np.ndarray) -> np.ndarray:
    return np.stack([compute_codes("gc_content", x), compute_codes("palindrome_score", x)], axis=1)


class DynamicsHeuristic:
    """Spans the (gc, pal) plane with designed starts, then clusters where the runs end.

    (Labs whose report is keyed by measurable name use `dynamics_science`: spread-out starts,
    drivers from where the runs end, a regression model to locate held-out starts.)

    Starts are built (by its own greedy search, from the measurables' stated definitions) at six
    points spread over the plane; every run is observed for the maximum number of steps. End states
    (the mean of the last two steps) are merged within 0.1 into attractors; a run whose last state
    equals the one two steps earlier is a 2-cycle. Drivers are the measurables that end in a tight
    range inside each attractor although the starts differed. Held-out starts are predicted from
    the nearest designed start.
    """

    TARGETS = ((0.2, 0.2), (0.5, 0.5), (0.9, 0.9), (0.9, 0.1), (0.3, 0.9), (0.7, 0.7))

    def __init__(self, protocol: Protocol | None = None) -> None:
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int) -> None:
        self.rng = np.random.default_rng(np.random.SeedSequence([seed, 0x4E07]))
        self.length, self.max_steps, self.measurables = 30, 20, ["gc_content", "palindrome_score"]
        self.runs: list[dict[str, Any]] = []
        self.turn = 0
        self.paper_format = True
        self.used: list[str] = []

    def _design(self, target: tuple[float, float]) -> str:
        x = self.rng.integers(0, 4, size=(1, self.length), dtype=np.uint8)
        err = float(np.abs(_gc_pal(x) - target).sum())
        for _ in range(3000):
            cand = x.copy()
            cand[0, self.rng.integers(self.length)] = self.rng.integers(4)
            e = float(np.abs(_gc_pal(cand) - target).sum())
            if e <= err:
                x, err = cand, e
            if err < 0.05:
                break
        return decode(x)[0]

    def act(self, message: str) -> str:
        if m := _LENGTH.search(message):
            self.length = int(m.group(1))
        if m := _MAX_STEPS.search(message):
            self.max_steps = int(m.group(1))
        self.measurables = _MEASURABLE.findall(message) or self.measurables
        if "MEASURABLES" in message:
            self.paper_format = PAPER_FORMAT in message
        payload = _payload(message)
        self.runs += [p for p in _payloads(message) if p.get("type") == "lab_results"]
        if payload.get("type") == "report_request" and not self.paper_format:
            return json.dumps(keyed_report(self.runs, self.measurables, payload.get("heldout_starts", {})))
        if payload.get("type") == "report_request":
            return self._report(payload.get("heldout_starts", {}))
        if not self.paper_format:
            self.used.append(next_start(self.used, self.length, self.rng))
            return json.dumps({"type": "experiment", "sequence": self.used[-1], "measurables": self.measurables,
                               "steps": self.max_steps, "reasoning": "a start far from the earlier ones"})
        target = self.TARGETS[self.turn % len(self.TARGETS)]
        self.turn += 1
        return json.dumps({"type": "experiment", "sequence": self._design(target), "measurables": self.measurables,
                           "steps": self.max_steps, "reasoning": f"start near (gc, pal) = {target}"})

    def _report(self, starts: dict[str, str]) -> str:
        ends, cycles, begins, finals = [], [], [], []
        for run in self.runs:
            traj = run["trajectory"]
            meas = run["measurements"]
            gp = _gc_pal(np.array([["ACGT".index(c) for c in s] for s in traj], dtype=np.uint8))
            ends.append(gp[-2:].mean(axis=0))
            begins.append(gp[0])
            cycles.append(len(traj) >= 3 and traj[-1] == traj[-3] and traj[-1] != traj[-2])
            finals.append({m: float(np.mean(v[-2:])) for m, v in meas.items()} | {"_start": {m: v[0] for m, v in meas.items()}})
        clusters: list[list[int]] = []
        for i, e in enumerate(ends):
            for c in clusters:
                if np.linalg.norm(ends[c[0]] - e) <= 0.1:
                    c.append(i)
                    break
            else:
                clusters.append([i])
        centres = [np.mean([ends[i] for i in c], axis=0) for c in clusters]
        kind = "2-cycle" if cycles and np.mean(cycles) >= 0.5 else "other"
        attractors = [{"gc": float(c[0]), "pal": float(c[1]), "type": kind} for c in centres]
        drivers = self._drivers(finals, clusters)
        predictions: dict[str, Any] = {}
        if begins:
            codes = np.array([["ACGT".index(c) for c in s] for s in starts.values()], dtype=np.uint8)
            points = _gc_pal(codes) if len(codes) else np.zeros((0, 2))
            member = {i: k for k, c in enumerate(clusters) for i in c}
            for sid, p in zip(starts, points, strict=True):
                nearest = int(np.argmin([np.linalg.norm(p - b) for b in begins]))
                k = member[nearest]
                predictions[sid] = {"attractor": k + 1, "gc": float(centres[k][0]), "pal": float(centres[k][1])}
        return json.dumps({"type": "report", "hypothesis": f"runs settle into {len(centres)} attractor(s) ({kind})",
                           "evidence": f"{len(self.runs)} runs from designed starts", "attractors": attractors,
                           "drivers": drivers, "predictions": predictions})

    def _drivers(self, finals: list[dict[str, Any]], clusters: list[list[int]]) -> list[str]:
        out = []
        for m in self.measurables:
            within = [np.std([finals[i][m] for i in c]) for c in clusters if len(c) > 1 and m in finals[c[0]]]
            spread = np.std([f["_start"][m] for f in finals if m in f["_start"]]) if finals else 0.0
            if within and spread > 0 and float(np.mean(within)) < 0.25 * spread:
                out.append(m)
        return out


AGENT_CLASSES: dict[str, Callable[[Protocol], LabAgent]] = {"oracle": DynamicsOracle, "random": DynamicsRandom,
                                            "heuristic": DynamicsHeuristic}
