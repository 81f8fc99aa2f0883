"""Importing this module registers the sequence lab's protocols (`make_protocol` does it on demand)."""

from __future__ import annotations

from discoverylab.labs.sequence import protocol_a, protocol_b

__all__ = ["protocol_a", "protocol_b"]
