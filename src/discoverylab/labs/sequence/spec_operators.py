"""Operators, schedules and population dynamics of the sequence lab, as lab-spec entries.

A spec's ``operators`` section names configured operators; ``dynamics`` may then be one operator
kind, a ``schedule`` over named operators, or ``population`` (merge parent pairs, then evolve)::

    operators:
      drift: {kind: gc_biased_mutation, mutations: 2, bias: 0.9}
      pull: {kind: palindrome_pull}
      merge: {kind: consensus_merge, mode: any}
    dynamics: {kind: schedule, mode: alternate, ops: [drift, pull]}
    # or: {kind: population, compose: merge, evolve: drift}

Unknown kinds and fields are refused with ``InvalidSpec`` (never silently ignored).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.operators import Alternate, Dynamics, Operator, PopulationDynamics, Sequential
from discoverylab.labs.core.registry import Registry
from discoverylab.labs.core.spec import KindSpec
from discoverylab.labs.sequence.operators import (
    AlternatingMerge,
    ConsensusMerge,
    GCBiasedMutation,
    MajorityUpdate,
    PalindromePull,
    PalindromeSandwich,
)

OPERATOR_CLASSES: dict[str, type[Operator]] = {
    "majority_update": MajorityUpdate, "gc_biased_mutation": GCBiasedMutation, "palindrome_pull": PalindromePull,
    "alternating_merge": AlternatingMerge, "consensus_merge": ConsensusMerge, "palindrome_sandwich": PalindromeSandwich,
}
OperatorFactory = Callable[[Mapping[str, Any], int], Operator]
OPERATOR_KINDS: Registry[OperatorFactory] = Registry("sequence operator")
SCHEDULES = {"sequential": Sequential, "alternate": Alternate}


def _factory(cls: type[Operator]) -> OperatorFactory:
    def make(fields: Mapping[str, Any], length: int) -> Operator:
        known = set(inspect.signature(cls.__init__).parameters) - {"self"}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise InvalidSpec(f"operator {cls.__name__} has no field(s) {unknown}; fields: {sorted(known)}")
        options = dict(fields)
        if cls is PalindromeSandwich:
            options.setdefault("crop_to", length)
        try:
            return cls(**options)
        except (TypeError, ValueError) as exc:
            raise InvalidSpec(f"operator {cls.__name__}: {exc}") from exc

    return make


for _kind, _cls in OPERATOR_CLASSES.items():
    OPERATOR_KINDS.register(_kind, _factory(_cls))


def build_operator(name: str, entry: KindSpec, length: int) -> Operator:
    """One named operator of a spec's ``operators`` section."""
    if entry.kind not in OPERATOR_KINDS:
        raise InvalidSpec(f"operator {name!r}: unknown kind {entry.kind!r}; kinds: {sorted(OPERATOR_CLASSES)}")
    return OPERATOR_KINDS.get(entry.kind)(entry.fields, length)


def _named(names: Any, operators: Mapping[str, Operator], what: str) -> list[Operator]:
    names = [names] if isinstance(names, str) else list(names or [])
    missing = [n for n in names if n not in operators]
    if missing or not names:
        raise InvalidSpec(f"{what} refers to unknown operators {missing or names}; defined: {sorted(operators)}")
    return [operators[n] for n in names]


def schedule_dynamics(entry: KindSpec, operators: Mapping[str, Operator]) -> Dynamics:
    """``{kind: schedule, mode: sequential|alternate, ops: [names]}``."""
    fields = entry.fields
    unknown = sorted(set(fields) - {"mode", "ops"})
    mode = str(fields.get("mode", "sequential"))
    if unknown or mode not in SCHEDULES:
        raise InvalidSpec(f"schedule dynamics: fields are mode ({'|'.join(SCHEDULES)}) and ops; got {sorted(fields)}")
    return Dynamics(SCHEDULES[mode](_named(fields.get("ops"), operators, "schedule dynamics")))


def population_dynamics(entry: KindSpec, operators: Mapping[str, Operator]) -> PopulationDynamics:
    """``{kind: population, compose: <merge operator>, evolve: <operator or null>}``."""
    fields = entry.fields
    unknown = sorted(set(fields) - {"compose", "evolve"})
    if unknown:
        raise InvalidSpec(f"population dynamics has no field(s) {unknown}; fields: compose, evolve")
    compose = _named(fields.get("compose"), operators, "population compose")[0]
    evolve = _named(fields["evolve"], operators, "population evolve")[0] if fields.get("evolve") else None
    try:
        return PopulationDynamics(compose, evolve)
    except ValueError as exc:
        raise InvalidSpec(f"population dynamics: {exc}") from exc
