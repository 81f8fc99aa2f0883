"""``LabSpec``: a whole lab as data (spec §1.6), loadable from JSON or YAML.

Each component names a registered ``kind`` plus free-form fields that the kind's factory reads::

    lab: sequence
    objects: {alphabet: ACGT, length: 30}
    properties:
      gc_content: {kind: gc}
      hamming_distance: {kind: hamming, reference_seed: 17}
      both: {kind: mix, of: [gc_content, hamming_distance], weights: [0.5, 0.5]}
    dynamics: {kind: directed_evolution, drivers: [gc_content, palindrome_score],
               attractors: [[0.8, 0.8], [0.4, 0.2]], basin: {kind: gaussian, sigma: 0.1}}
    protocol: {kind: sequence/unknown-dynamics, rounds: 6, max_steps: 20, hint: none}
    seed: 0
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from discoverylab.labs.core.errors import InvalidSpec


class KindSpec(BaseModel):
    """A component: its registered ``kind`` and the kind-specific fields (kept as extras)."""

    model_config = ConfigDict(extra="allow")

    kind: str

    @property
    def fields(self) -> dict[str, Any]:
        """The kind-specific fields."""
        return dict(self.model_extra or {})


class ObjectsSpec(BaseModel):
    """The object space."""

    model_config = ConfigDict(extra="forbid")

    alphabet: str = "ACGT"
    length: int = Field(default=30, ge=1, le=10_000)


class SamplerSpec(BaseModel):
    """Settings of the approximate sampler (spec §1.3)."""

    model_config = ConfigDict(extra="forbid")

    eps: float = Field(default=0.1, ge=0.0, le=1.0)
    max_iters: int = Field(default=4000, ge=1)
    restarts: int = Field(default=3, ge=0)
    time_limit: float | None = 2.0


class LabSpec(BaseModel):
    """A complete, serialisable description of one lab."""

    model_config = ConfigDict(extra="forbid")

    lab: str = "sequence"
    name: str = ""
    objects: ObjectsSpec = Field(default_factory=ObjectsSpec)
    properties: dict[str, KindSpec]
    operators: dict[str, KindSpec] = Field(default_factory=dict)
    """Named, configured operators (e.g. merges) that ``dynamics`` may refer to."""
    dynamics: KindSpec | None = None
    protocol: KindSpec | None = None
    sampler: SamplerSpec = Field(default_factory=SamplerSpec)
    difficulty: str | None = None
    seed: int = Field(default=0, ge=0)

    @classmethod
    def from_text(cls, text: str, fmt: str = "yaml") -> LabSpec:
        """Parse JSON or YAML text (YAML accepts JSON too)."""
        try:
            data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
            return cls.model_validate(data)
        except (ValidationError, ValueError, yaml.YAMLError) as exc:
            raise InvalidSpec(f"invalid lab spec: {exc}") from exc

    @classmethod
    def from_file(cls, path: str | Path) -> LabSpec:
        """Load ``.json``, ``.yaml`` or ``.yml``."""
        path = Path(path)
        return cls.from_text(path.read_text(encoding="utf-8"), "json" if path.suffix == ".json" else "yaml")

    def to_file(self, path: str | Path) -> None:
        """Write JSON or YAML according to the suffix."""
        path = Path(path)
        data = self.model_dump(mode="json", exclude_none=True)
        text = json.dumps(data, indent=2) if path.suffix == ".json" else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")

    def config_hash(self) -> str:
        """Short stable hash of the spec (for run records)."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def kind_spec(kind: str, **fields: Any) -> KindSpec:
    """Build a ``KindSpec`` in code (keyword fields become the kind's extras)."""
    return KindSpec.model_validate({"kind": kind, **fields})
