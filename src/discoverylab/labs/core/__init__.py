"""The Tiny Labs framework (spec §1): spaces, properties, samplers, operators, dynamics, specs, verification.

Re-exports are added as the submodules land; import from the submodules for the full API.
"""

from __future__ import annotations
