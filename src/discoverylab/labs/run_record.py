"""The record of one Tiny Labs episode (`LabRecord`), shared by the runner, the CLI and the plots.

It lives in its own module so that `plots` (which draws records) and `runner` (which writes them and
calls the plots) do not import each other.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from discoverylab.bench.rundir import RunConfigMismatch
from discoverylab.bench.schema import Status, UsageRecord
from discoverylab.labs.protocol import grader_version


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
    grader_version: int | None = None  # the protocol's grader version (None: written before versions were recorded)
    error: str | None = None
    transcript: str | None = None
    score_file: str | None = None
    plots: list[str] = Field(default_factory=list)


def lab_key(protocol: str, agent: str, split: str | None, index: int | None, seed: int | None) -> tuple[str, str, str]:
    """A record's key (protocol, instance label, agent); old records (no split) are raw seeds."""
    label = f"s{seed}" if split in (None, "seed") else f"{split}#{index}"
    return (protocol, label, agent)


def config_hash(protocol: str, config: dict[str, Any]) -> str:
    """Short stable hash of (protocol, config, the protocol's grader version): two episodes with equal
    hashes ran the same lab and were graded alike."""
    text = json.dumps({"protocol": protocol, "config": config, "grader_version": grader_version(protocol)},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class GraderVersionMismatch(RunConfigMismatch):
    """A run directory's records were graded by another version of their protocol's grader."""


def stale_grade(record: LabRecord, current: int) -> str | None:
    """Why `record` was not graded by the current grader (version `current`), or None when it was."""
    if record.grader_version == current:
        return None
    old = (f"version {record.grader_version}" if record.grader_version is not None
           else "a version from before grader versions were recorded")
    return f"{record.protocol} was graded here by its grader {old}; this code grades with version {current}"
