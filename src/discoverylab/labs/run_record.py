"""The record of one Tiny Labs episode (`LabRecord`), shared by the runner, the CLI and the plots.

It lives in its own module so that `plots` (which draws records) and `runner` (which writes them and
calls the plots) do not import each other.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from discoverylab.bench.schema import Status, UsageRecord


class LabRecord(BaseModel):
    """One episode's result: the unit of `results.jsonl` and of `lab run --json`."""

    lab: str
    protocol: str
    seed: int | None = None  # the public seed; None for a sealed (test) instance
    agent: str
    split: str = "seed"  # "seed" (a raw seed; every record written before splits), paper, dev, train or test
    index: int | None = None  # the instance index within the split
    commitment: str | None = None  # binds a sealed record to its seed (see `discoverylab.instances`)
    status: Status = "ok"  # see bench/schema.py
    score: float = Field(0.0, ge=0.0, le=1.0)
    parts: dict[str, float] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    turns: int = 0
    seconds: float = 0.0
    attempts: int = 1
    usage: UsageRecord | None = None  # LLM tokens, HTTP attempts and retries, cost (None: no LLM)
    config: dict[str, Any] = Field(default_factory=dict)
    config_hash: str = ""
    error: str | None = None
    transcript: str | None = None
    score_file: str | None = None
    plots: list[str] = Field(default_factory=list)


def lab_key(protocol: str, agent: str, split: str | None, index: int | None, seed: int | None) -> tuple[str, str, str]:
    """A record's key (protocol, instance label, agent); old records (no split) are raw seeds."""
    label = f"s{seed}" if split in (None, "seed") else f"{split}#{index}"
    return (protocol, label, agent)


def config_hash(protocol: str, config: dict[str, Any]) -> str:
    """Short stable hash of (protocol, config): two episodes with equal hashes ran the same lab."""
    text = json.dumps({"protocol": protocol, "config": config}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
