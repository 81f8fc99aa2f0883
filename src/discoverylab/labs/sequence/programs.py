"""Python source of predictor programs `def f(s)` for the sequence properties, with parameters baked in.

Used by the scripted oracle (which must reach full marks through the same sandboxed program grader an
LLM faces) and by the heuristic scientist once it has identified a family.
"""

from __future__ import annotations

from discoverylab.labs.sequence.judge import family_of
from discoverylab.labs.sequence.properties import (
    PropertyParams,
    energy_extremes,
    masked_params,
    max_kmer_entropy,
)

_COMP = "{'A': 'T', 'T': 'A', 'C': 'G', 'G': 'C'}"


def reference_program(name: str, params: PropertyParams, length: int) -> str:
    """Source of `def f(s)` computing property `name` exactly (spec §2.2 definitions)."""
    family = family_of(name)
    if family == "gc_content":
        return "def f(s):\n    return sum(c in 'GC' for c in s) / len(s)\n"
    if family == "weighted_count":
        w = dict(zip("ACGT", params.weights, strict=True))
        return f"W = {w!r}\n\ndef f(s):\n    return sum(W[c] for c in s) / len(s)\n"
    if family == "alternation_k":
        k = int(name.rsplit("_", 1)[1]) if name not in ("alternation_k",) else params.alternation_k
        return (f"def f(s):\n    u = s[::{k}]\n    if len(u) <= 1:\n        return 0.0\n"
                "    return sum(u[j] != u[j + 1] for j in range(len(u) - 1)) / (len(u) - 1)\n")
    if family == "palindrome_score":
        return (f"C = {_COMP}\n\ndef f(s):\n    n = len(s)\n"
                "    return sum(s[i] == C[s[n - 1 - i]] for i in range(n)) / n\n")
    if family == "entropy_score":
        k = int(name.rsplit("_", 1)[1]) if name != "entropy_score" else params.entropy_k
        norm = (max_kmer_entropy(length, k) if params.entropy_normalize == "achievable" else 2.0 * k)
        return ("import math\nfrom collections import Counter\n\n"
                f"def f(s):\n    k = {k}\n    w = len(s) - k + 1\n    if w <= 1:\n        return 0.0\n"
                "    counts = Counter(s[i:i + k] for i in range(w))\n"
                "    h = -sum(c / w * math.log2(c / w) for c in counts.values())\n"
                f"    return max(0.0, min(1.0, h / {norm!r}))\n")
    if family == "hamming_distance":
        ref = params.reference_for(length)
        return f"R = {ref!r}\n\ndef f(s):\n    return sum(a != b for a, b in zip(s, R)) / len(s)\n"
    if family == "interaction_energy":
        e_min, e_max = energy_extremes(length, params.energy)
        table = {a + b: params.energy[i][j] for i, a in enumerate("ACGT") for j, b in enumerate("ACGT")}
        return (f"J = {table!r}\n\ndef f(s):\n    e = sum(J[s[i:i + 2]] for i in range(len(s) - 1))\n"
                f"    return max(0.0, min(1.0, ({e_max!r} - e) / ({e_max!r} - {e_min!r})))\n")
    if family == "motif_score":
        m = params.motif
        return (f"M = {m!r}\n\ndef f(s):\n    w = len(s) - len(M) + 1\n    if w <= 0:\n        return 0.0\n"
                "    return sum(s[i:i + len(M)] == M for i in range(w)) / w\n")
    raise KeyError(f"no reference program for property {name!r}")


def positions_program(name: str, params: PropertyParams, length: int, positions: tuple[int, ...]) -> str:
    """Source of `def f(s)` computing property `name` of the letters at `positions` (a drawn problem)."""
    sub = masked_params(params, positions, length) if family_of(name) == "hamming_distance" else params
    inner = reference_program(name, sub, len(positions)).replace("def f(s):", "def base_f(s):")
    return f"{inner}\nPOS = {list(positions)!r}\n\ndef f(s):\n    return base_f(''.join(s[i] for i in POS))\n"
