"""The Tiny Labs framework (spec §1): spaces, properties, samplers, operators, dynamics, specs, verification.

Main entry points: ``LabSpec`` (a lab as data), ``build_lab(spec, seed)``, ``verify(spec)``,
``register_protocol_check(kind, fn)``, ``generate_specs(n, complexity, seed)``, ``write_suite`` /
``read_suite``, ``AnnealingSampler``, ``detect_cycle`` / ``estimate_attractors`` / ``basin_of``,
and ``SeedStreams`` for named per-episode random streams.
"""

from __future__ import annotations

from discoverylab.labs.core.errors import InvalidObject, InvalidSpec, LabError, UnknownKind
from discoverylab.labs.core.generator import COMPLEXITY, Complexity, generate_specs, read_suite, write_suite
from discoverylab.labs.core.lab import LAB_KINDS, Lab, build_lab
from discoverylab.labs.core.operators import Dynamics, Operator
from discoverylab.labs.core.properties import (
    Compose,
    Mix,
    Product,
    Property,
    PropertySpace,
    PropertyVector,
    Threshold,
)
from discoverylab.labs.core.sampler import AnnealingSampler, Sample, SampleBatch
from discoverylab.labs.core.seeding import SeedStreams, stream
from discoverylab.labs.core.spaces import ObjectSpace, StringSpace
from discoverylab.labs.core.spec import KindSpec, LabSpec, kind_spec
from discoverylab.labs.core.trajectory import basin_of, detect_cycle, estimate_attractors
from discoverylab.labs.core.verify import register_protocol_check, verify

__all__ = [
    "COMPLEXITY", "LAB_KINDS", "AnnealingSampler", "Complexity", "Compose", "Dynamics", "InvalidObject",
    "InvalidSpec", "KindSpec", "Lab", "LabError", "LabSpec", "Mix", "ObjectSpace", "Operator", "Product",
    "Property", "PropertySpace", "PropertyVector", "Sample", "SampleBatch", "SeedStreams", "StringSpace",
    "Threshold", "UnknownKind", "basin_of", "build_lab", "detect_cycle", "estimate_attractors",
    "generate_specs", "kind_spec", "read_suite", "register_protocol_check", "stream", "verify", "write_suite",
]
