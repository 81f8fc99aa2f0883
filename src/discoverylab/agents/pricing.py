"""Token prices for the per-episode cost ceiling (`bench --max-cost`).

US dollars per million tokens (input, output), as published by the providers; extend or override
with a JSON file `{"model-name": [input, output], ...}` passed as `--prices FILE` or named by
`$DISCOVERYLAB_PRICES`. A model is matched by its exact name, then by the longest table entry its
name starts with (so dated snapshots share their family's price). Local models cost nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

ENV_PRICES = "DISCOVERYLAB_PRICES"

PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-2024-05-13": (5.0, 15.0),  # the paper's GPT-4o pricing at submission
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "o4-mini": (1.1, 4.4),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


class PriceError(ValueError):
    """A price file is unreadable or malformed."""


def load_prices(path: str | Path | None = None) -> dict[str, tuple[float, float]]:
    """The built-in table, updated from `path` (or `$DISCOVERYLAB_PRICES`) when given."""
    table = dict(PRICES)
    source = path or os.environ.get(ENV_PRICES)
    if not source:
        return table
    try:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
        if not isinstance(data, Mapping):
            raise TypeError("the top level must be an object")
        for name, pair in data.items():
            inp, out = (float(x) for x in pair)
            table[str(name)] = (inp, out)
    except (OSError, ValueError, TypeError) as exc:
        raise PriceError(f"bad price file {source}: {exc}. Expected {{\"model\": [input_usd_per_M, output_usd_per_M]}}.") from exc
    return table


def price_of(model: str, table: Mapping[str, tuple[float, float]] | None = None, local: bool = False) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for `model`, (0, 0) for a local model, None if unknown."""
    if local:
        return (0.0, 0.0)
    table = PRICES if table is None else table
    name = model.split("/")[-1]
    if name in table:
        return table[name]
    matches = [key for key in table if name.startswith(key)]
    return table[max(matches, key=len)] if matches else None


def cost_usd(prompt_tokens: int, completion_tokens: int, price: tuple[float, float] | None) -> float | None:
    """Dollars for that many tokens at `price` (None when the price is unknown)."""
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
