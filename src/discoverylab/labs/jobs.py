"""Tiny Labs jobs: which (protocol, instance, agent) episodes a run holds, checked before it starts
(unknown protocols, agents and bad configs fail here, not once per episode).

An instance is a raw public seed (`--seeds` alone) or an index of a split (`--split`; the sealed
`test` split derives its seeds from the evaluator's key with the protocol name as the task, see
`discoverylab.instances`). Jobs, records, transcripts and file names carry the instance's public
part (split, index, commitment); the seed only when it is public."""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from discoverylab.instances import SEED_SPLIT, Instance, key_id, make_instance
from discoverylab.labs.agents import UnknownAgentError, agent_kinds
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.protocol import (
    Protocol,
    UnknownProtocolError,
    grader_version,
    make_protocol,
    protocol_entry,
    protocol_names,
)
from discoverylab.labs.run_record import config_hash

logger = logging.getLogger(__name__)

LLM_AGENT_MODULE = "discoverylab.labs.llm_agent"
_LAB_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
LAB_PACKAGES = {"macro": "macroecon"}
"""Labs whose package name differs from the lab name (`discoverylab.labs.<package>.protocols`)."""

@dataclass(frozen=True, slots=True, eq=False)
class LabJob:
    """One episode to run: protocol x seed x agent kind, with the protocol's config."""

    protocol: str
    seed: int = field(repr=False)  # what the worker builds; a sealed seed never leaves the evaluator's side
    agent: str
    config: dict[str, Any] = field(default_factory=dict)
    agent_options: dict[str, Any] = field(default_factory=dict)
    """Keyword options of the agent (e.g. the LLM agent's `history_turns`, `limits`)."""
    spec: dict[str, Any] | None = None
    """A lab spec (`LabSpec` as JSON data) to build the protocol from, instead of the registry name."""
    split: str = SEED_SPLIT
    index: int | None = None  # the instance index in `split` (None: a raw seed)
    key_id: str | None = None  # fingerprint of the evaluator's key (sealed runs: a resume needs the same key)
    judge: dict[str, str] | None = None
    """The LLM judge (`{"model": ..., "base_url": ...}`; empty base URL: the embedded model), or None."""

    @property
    def lab(self) -> str:
        return self.protocol.split("/", 1)[0]

    @property
    def instance(self) -> Instance:
        return Instance(self.protocol, "", self.split, self.seed if self.index is None else self.index, self.seed)

    @property
    def grader_version(self) -> int:
        """The version of the protocol's grader that grades this job (recorded with its result)."""
        return grader_version(self.protocol)

    @property
    def config_hash(self) -> str:
        """Hash of what the episode ran: protocol config plus any agent options, the judge, the key's
        fingerprint and the grader's version (`run_record.config_hash`)."""
        extra: dict[str, Any] = {"agent_options": self.agent_options} if self.agent_options else {}
        if self.key_id is not None:
            extra["eval_key_id"] = self.key_id
        if self.judge is not None:
            extra["judge"] = self.judge
        return config_hash(self.protocol, self.config | extra)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.protocol, self.instance.label, self.agent)

    @property
    def stem(self) -> str:
        """File-name stem shared by the transcript, the score file and the plots."""
        return f"{self.protocol.replace('/', '-')}-{self.instance.label.replace('#', '')}-{self.agent}"


def lab_jobs(protocol: str, indices: Sequence[int], agent: str, split: str | None, key: bytes | None,
             **fields: Any) -> list[LabJob]:  # fmt: skip
    """The jobs of one protocol and agent: raw seeds (`split` None) or indices of `split`."""
    if split is None:
        return [LabJob(protocol, int(s), agent, **fields) for s in indices]
    kid = key_id(key) if key is not None else None
    return [LabJob(protocol, make_instance(protocol, "", split, int(i), key).seed, agent, split=split, index=int(i),
                   key_id=kid, **fields) for i in indices]  # fmt: skip


def expand_protocols(target: str) -> list[str]:
    """`all` -> every registered protocol; a lab name -> its protocols; else one protocol name."""
    if target == "all":
        return protocol_names()
    if "/" in target:
        protocol_entry(target)  # raises UnknownProtocolError listing the known names
        return [target]
    names = protocol_names(target) if _LAB_NAME.match(target) else []
    if not names:
        known = sorted({n.split("/", 1)[0] for n in protocol_names()})
        raise UnknownProtocolError(
            f"{target!r} is neither a protocol nor a lab; labs: {', '.join(known)}; "
            f"protocols: {', '.join(protocol_names())}; or 'all'")
    return names


def available_agents(lab: str) -> list[str]:
    """Agent kinds for `lab`, including the LLM agent when its module imports."""
    try:
        importlib.import_module(LLM_AGENT_MODULE)
    except ImportError as exc:
        logger.debug("LLM agent unavailable: %s", exc)
    return agent_kinds(lab)


def config_for(protocol: str, config: dict[str, Any] | None) -> dict[str, Any]:
    """The options of one protocol: `config` itself, or `config[protocol]` when every key is a
    protocol name (so `run all` can configure each protocol: `{"macro/causal-discovery": {...}}`)."""
    if not config:
        return {}
    if all("/" in key for key in config):
        unknown = sorted(set(config) - set(protocol_names()))
        if unknown:
            raise UnknownProtocolError(f"config for unknown protocols {unknown}; registered: "
                                       f"{', '.join(protocol_names())}")
        return dict(config.get(protocol, {}))
    return dict(config)


def spec_label(spec: LabSpec) -> str:
    """The `protocol` of a spec's records: its protocol kind and the spec's name."""
    kind = spec.protocol.kind if spec.protocol is not None else f"{spec.lab}/none"
    return f"{kind}@{spec.name or spec.config_hash()}"


def protocol_from_spec(spec: LabSpec) -> Protocol:
    """Build the protocol a lab spec describes (its lab's `protocols.protocol_from_spec`)."""
    if not _LAB_NAME.match(spec.lab):
        raise ValueError(f"bad lab name {spec.lab!r} in spec {spec.name!r}")
    module = importlib.import_module(f"discoverylab.labs.{LAB_PACKAGES.get(spec.lab, spec.lab)}.protocols")
    build = getattr(module, "protocol_from_spec", None)
    if build is None:
        raise ValueError(f"lab {spec.lab!r} cannot build protocols from lab specs")
    protocol: Protocol = build(spec)
    return protocol


def make_spec_jobs(specs: Sequence[LabSpec], seeds: Sequence[int], agents: Sequence[str],
                   agent_options: dict[str, Any] | None = None, judge: dict[str, str] | None = None, *,
                   split: str | None = None, key: bytes | None = None) -> list[LabJob]:  # fmt: skip
    """Every spec x agent x seed; each spec is built once first so a bad spec fails before the run."""
    jobs = []
    for spec in specs:
        label = spec_label(spec)
        protocol_from_spec(spec)  # raises InvalidSpec/ValueError with the reason
        known = available_agents(spec.lab)
        for kind in agents:
            if kind not in known:
                raise UnknownAgentError(f"no agent {kind!r} for lab {spec.lab!r}; valid agents: {', '.join(known)}")
        data = spec.model_dump(mode="json")
        for a in agents:
            jobs += lab_jobs(label, seeds, a, split, key, config={"spec": spec.config_hash()},
                             agent_options=_options_for(a, agent_options), spec=data, judge=judge)  # fmt: skip
    return jobs


def _options_for(agent: str, agent_options: dict[str, Any] | None) -> dict[str, Any]:
    """Agent options go to the LLM agent (the scripted baselines take none)."""
    return dict(agent_options or {}) if agent == "llm" else {}


def make_jobs(protocols: Sequence[str], seeds: Sequence[int], agents: Sequence[str],
              config: dict[str, Any] | None = None, agent_options: dict[str, Any] | None = None,
              judge: dict[str, str] | None = None, *, split: str | None = None,
              key: bytes | None = None) -> list[LabJob]:  # fmt: skip
    """Every protocol x agent x seed, after checking that each agent exists for each lab.

    `config` holds protocol options, either shared or keyed by protocol name (see `config_for`).
    With `split`, `seeds` are instance indices of that split (`key`: the evaluator's, for `test`).
    """
    for name in protocols:
        lab = name.split("/", 1)[0]
        known = available_agents(lab)
        for kind in agents:
            if kind not in known:
                raise UnknownAgentError(f"no agent {kind!r} for lab {lab!r}; valid agents: {', '.join(known)}")
    configs = {name: config_for(name, config) for name in protocols}
    for name, options in configs.items():
        try:
            make_protocol(name, **options)  # fail before the run, not once per episode
        except (TypeError, ValueError) as exc:
            raise ValueError(f"bad config for {name}: {exc}") from exc
    return [job for p in protocols for a in agents
            for job in lab_jobs(p, seeds, a, split, key, config=configs[p], agent_options=_options_for(a, agent_options),
                                judge=judge)]  # fmt: skip
