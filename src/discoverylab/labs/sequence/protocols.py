"""Importing this module registers the sequence lab's protocols (`make_protocol` does it on demand) and
their check (vi) for `discoverylab.labs.core.verify`: the scripted oracle must get full marks and the
random agent a low score on the protocol a `LabSpec` describes.
"""

from __future__ import annotations

from typing import Any

from discoverylab.labs.agents import make_agent, run_episode
from discoverylab.labs.core.errors import InvalidSpec
from discoverylab.labs.core.spec import LabSpec
from discoverylab.labs.core.verify import register_protocol_check
from discoverylab.labs.protocol import Protocol
from discoverylab.labs.sequence import protocol_a, protocol_b, protocol_population
from discoverylab.labs.sequence.properties import PROPERTY_NAMES

__all__ = ["protocol_a", "protocol_b", "protocol_from_spec", "protocol_population"]


PROTOCOL_ALIASES = {"eps": "epsilon"}
DYNAMICS_FIELDS = {"drivers", "attractors", "basin", "mutations_per_step", "p_explore", "stuck_patience"}
BASIN_FIELDS = {"kind", "sigma"}


def _known(fields: dict[str, Any], model: type[Any], spec: LabSpec) -> dict[str, Any]:
    """The protocol fields the config model takes; any other field is refused (never silently dropped)."""
    unknown = sorted(k for k in fields if k not in model.model_fields and k not in PROTOCOL_ALIASES)
    if unknown:
        raise InvalidSpec(f"lab spec {spec.name!r}: protocol {spec.protocol.kind if spec.protocol else '?'} "
                          f"does not support the field(s) {unknown}; known: {sorted(model.model_fields)}")
    return {k: v for k, v in fields.items() if k in model.model_fields}


def _dynamics_config(spec: LabSpec) -> dict[str, Any]:
    """Protocol B's settings from the spec's dynamics; kinds and fields it cannot honour are refused."""
    if spec.dynamics is None:
        return {}
    if spec.dynamics.kind != "directed_evolution":
        raise InvalidSpec(f"lab spec {spec.name!r}: sequence/unknown-dynamics runs directed_evolution dynamics, "
                          f"not {spec.dynamics.kind!r} (its attractors and drivers are what the agent must find)")
    dyn = spec.dynamics.fields
    unknown = sorted(set(dyn) - DYNAMICS_FIELDS)
    basin = dyn.get("basin", {})
    if isinstance(basin, dict):
        unknown += [f"basin.{k}" for k in sorted(set(basin) - BASIN_FIELDS)]
    if unknown:
        raise InvalidSpec(f"lab spec {spec.name!r}: sequence/unknown-dynamics does not support the dynamics "
                          f"field(s) {unknown}; known: {sorted(DYNAMICS_FIELDS)}, basin: {sorted(BASIN_FIELDS)}")
    config: dict[str, Any] = {}
    if "drivers" in dyn:
        config["drivers"] = tuple(dyn["drivers"])
    if "attractors" in dyn:
        config["attractors"] = tuple(tuple(a) for a in dyn["attractors"])
    if isinstance(basin, dict):
        config["kernel"] = basin.get("kind", "gaussian")
        if "sigma" in basin:
            config["sigma"] = float(basin["sigma"])
    config["mutations"] = int(dyn.get("mutations_per_step", 1))
    for key in ("p_explore", "stuck_patience"):
        if key in dyn:
            config[key] = dyn[key]
    return config


def protocol_from_spec(spec: LabSpec) -> Protocol:
    """Build the protocol a sequence `LabSpec` describes (its objects, properties and dynamics)."""
    if spec.protocol is None:
        raise ValueError(f"lab spec {spec.name!r} has no protocol")
    fields = dict(spec.protocol.fields)
    length = spec.objects.length
    if spec.protocol.kind == protocol_a.HiddenPropertyProtocol.name:
        config = _known(fields, protocol_a.HiddenPropertyConfig, spec) | {"length": length}
        if "eps" in fields and "epsilon" not in fields:
            config["epsilon"] = fields["eps"]
        hidden = str(fields.get("hidden", "palindrome_score"))
        entry = spec.properties.get(hidden)
        if hidden in PROPERTY_NAMES and (entry is None or not entry.fields):
            return protocol_a.HiddenPropertyProtocol(**config)
        if hidden == "alternation_k" and entry is not None and set(entry.fields) <= {"k"}:
            return protocol_a.HiddenPropertyProtocol(**config | {"alternation_k": int(entry.fields.get("k", 1))})
        from discoverylab.labs.core.lab import build_lab  # a composed or parametrised property

        lab = build_lab(spec, spec.seed)
        prop = lab.properties[hidden]
        config["hidden"] = None
        return protocol_a.HiddenPropertyProtocol(value_fn=prop.batch, value_range=prop.feasible_range(lab.space),
                                                 value_quantum=prop.quantum(lab.space), **config)
    if spec.protocol.kind == protocol_b.UnknownDynamicsProtocol.name:
        config = _known(fields, protocol_b.UnknownDynamicsConfig, spec) | {"length": length}
        config |= _dynamics_config(spec)
        config["measurables"] = tuple(config.get("measurables") or spec.properties)
        config["properties"] = {name: entry.model_dump() for name, entry in spec.properties.items()}
        return protocol_b.UnknownDynamicsProtocol(**config)
    if spec.protocol.kind == protocol_population.PopulationProtocol.name:
        try:
            return protocol_population.PopulationProtocol(**population_config(spec))
        except ValueError as exc:  # the config model's complaint, as a refused spec
            raise InvalidSpec(f"lab spec {spec.name!r}: {exc}") from exc
    raise ValueError(f"not a sequence protocol: {spec.protocol.kind!r}")


def population_config(spec: LabSpec) -> dict[str, Any]:
    """The population protocol's settings: its fields, the spec's operators (named by the
    `population` dynamics) and its property entries as the listed measurables."""
    assert spec.protocol is not None
    config = _known(dict(spec.protocol.fields), protocol_population.PopulationConfig, spec) | {
        "length": spec.objects.length}
    dyn = spec.dynamics
    if dyn is not None:
        if dyn.kind != "population":
            raise InvalidSpec(f"lab spec {spec.name!r}: {protocol_population.PopulationProtocol.name} runs "
                              f"population dynamics, not {dyn.kind!r}")
        names = {role: dyn.fields.get(role) for role in ("compose", "evolve")}
        missing = [str(n) for n in names.values() if n is not None and n not in spec.operators]
        if missing or names["compose"] is None:
            raise InvalidSpec(f"lab spec {spec.name!r}: population dynamics names operators {missing or ['compose']} "
                              f"that `operators` does not define ({sorted(spec.operators)})")
        for role, name in names.items():
            config[role] = spec.operators[name].model_dump() if name is not None else None
    if spec.properties:
        config.setdefault("measurables", tuple(spec.properties))
        config["properties"] = {name: entry.model_dump() for name, entry in spec.properties.items()}
    return config


def check_protocol(spec: LabSpec) -> tuple[float, float]:
    """(oracle score, random score) on one episode seeded by the spec."""
    assert spec.protocol is not None
    scores = []
    for kind in ("oracle", "random"):
        proto = protocol_from_spec(spec)
        agent = make_agent(spec.protocol.kind, kind, proto)
        scores.append(run_episode(proto, agent, seed=spec.seed).score.score)
    return scores[0], scores[1]


def check_population(spec: LabSpec) -> tuple[float, float]:
    """(oracle, random) like `check_protocol`; a population lab that leaves nothing to discover, or
    that the heuristic learner cannot learn from the budget (skill < `MIN_SKILL`), is refused."""
    from discoverylab.labs.core.learnability import MIN_SKILL

    proto = protocol_from_spec(spec)
    assert isinstance(proto, protocol_population.PopulationProtocol) and spec.protocol is not None
    proto.reset(spec.seed)
    if (why := proto.degenerate()) is not None:
        raise InvalidSpec(f"population lab {spec.name!r} leaves nothing to discover: {why}")
    skill = run_episode(proto, make_agent(spec.protocol.kind, "heuristic", proto), seed=spec.seed).score.score
    if skill < MIN_SKILL:
        raise InvalidSpec(f"population lab {spec.name!r} is not learnable from its budget: the heuristic learner "
                          f"reaches skill {skill:.3f} (needs >= {MIN_SKILL})")
    return check_protocol(spec)


for _name in (protocol_a.HiddenPropertyProtocol.name, protocol_b.UnknownDynamicsProtocol.name):
    register_protocol_check(_name, check_protocol, overwrite=True)
register_protocol_check(protocol_population.PopulationProtocol.name, check_population, overwrite=True)
