"""The measurables of Protocol B: properties built from lab-spec entries, and how they are described.

A dynamics episode measures any sequence property a `LabSpec` declares (its drivers and its
distractors), not only the paper's four. Entries are the spec's property entries as plain dicts,
e.g. `{"weighted_count": {"kind": "weighted_count", "weights": {...}}}`; a name without an entry is
the canonical property of that name. The episode's Hamming reference is used unless an entry fixes
its own `reference` or `reference_seed`. Descriptions shown to the agent never reveal hidden
parameters (the Hamming reference, per-letter weights, how a composite is put together).

    >>> props = build_measurables(["gc_content", "alternation_k"], {"alternation_k": {"kind": "alternation", "k": 2}},
    ...                           reference="A" * 8)
    >>> describe(props["alternation_k"])
    'fraction of changes between consecutive letters of the subsequence s[0], s[2], s[4], ...'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from discoverylab.labs.core.lab import COMPOSITE_KINDS, build_properties
from discoverylab.labs.core.properties import Property
from discoverylab.labs.core.spec import KindSpec
from discoverylab.labs.sequence.kinds import KIND_OF_NAME, PROPERTY_KINDS, SequenceProperty
from discoverylab.labs.sequence.properties import PropertyParams

MEASURABLE_TEXT = {
    "gc_content": "fraction of G/C bases",
    "palindrome_score": "fraction of positions where the sequence equals its reverse complement "
                        "(A<->T, C<->G, then reversed)",
    "hamming_distance": "fraction of positions that differ from a hidden reference sequence",
    "entropy_score": "diversity of 2-mers (normalised Shannon entropy)",
}
"""The paper's wording for its four measurables (spec §2.7)."""

PropertyEntries = Mapping[str, Mapping[str, Any]]


def entry_specs(names: Iterable[str], entries: PropertyEntries) -> dict[str, KindSpec]:
    """Spec entries for `names` and every part their composites refer to.

    Raises:
        ValueError: a name has no entry and is not a canonical property name.
    """
    out: dict[str, KindSpec] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        raw = entries.get(name)
        if raw is None:
            if name not in KIND_OF_NAME:
                raise ValueError(f"measurable {name!r} has no property entry and is not one of the canonical "
                                 f"properties {sorted(KIND_OF_NAME)}; add it to `properties`")
            out[name] = KindSpec(kind=KIND_OF_NAME[name])
            continue
        spec = raw if isinstance(raw, KindSpec) else KindSpec.model_validate(dict(raw))
        out[name] = spec
        if spec.kind in COMPOSITE_KINDS:
            of = spec.fields.get("of")
            todo.extend([of] if isinstance(of, str) else list(of or []))
    return out


def uses_episode_reference(names: Iterable[str], entries: PropertyEntries) -> bool:
    """True if any of `names` (or a part of it) measures against the episode's Hamming reference."""
    for spec in entry_specs(names, entries).values():
        if spec.kind == "hamming" and not {"reference", "reference_seed"} & set(spec.fields):
            return True
    return False


def build_measurables(names: Iterable[str], entries: PropertyEntries, reference: str) -> dict[str, Property]:
    """The properties `names` (composites' parts included), with `reference` as the default Hamming reference."""
    base = PropertyParams(reference=reference)

    def factory(name: str, entry: KindSpec) -> Property:
        own_reference = bool({"reference", "reference_seed"} & set(entry.fields))
        params = replace(base, reference=None) if own_reference else base
        return PROPERTY_KINDS.get(entry.kind)(name, entry.fields, params)  # type: ignore[no-any-return]

    return build_properties(entry_specs(names, entries), factory)


def describe(prop: Property) -> str:
    """What a measurable measures, in words an agent can use; hidden parameters stay hidden."""
    if not isinstance(prop, SequenceProperty):
        return "an undisclosed combination of sequence properties"
    key, params = prop.key, prop.params
    if key == "entropy_score":
        return f"diversity of {params.entropy_k}-mers (normalised Shannon entropy)"
    if key == "alternation_k":
        k = params.alternation_k
        if k == 1:
            return "fraction of changes between consecutive letters"
        return f"fraction of changes between consecutive letters of the subsequence s[0], s[{k}], s[{2 * k}], ..."
    if key == "weighted_count":
        return "mean over positions of an undisclosed weight of each letter"
    if key == "interaction_energy":
        return "nearest-neighbour pair energy, rescaled so the most stable sequence scores 1"
    if key == "motif_score":
        return f"fraction of windows of length {len(params.motif)} equal to an undisclosed motif"
    return MEASURABLE_TEXT.get(key, prop.description)
