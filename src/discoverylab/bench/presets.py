"""The paper's evaluation settings as named presets for `discoverylab bench --preset`.

Zero-shot runs of the discovery themes: Normal and Challenge to 1,000 steps with the paper's
$125 per-episode ceiling, and the reduced-cost Easy setting to 100 steps; unit tests to 100 steps.
Seeds 0-4 are the official variations. Options given on the command line override a preset.
Each `paper-*` discovery preset has a `-vision` twin for the paper's multimodal Hypothesizer (the
rendered views of the previous and the current step go with each action prompt). ReAct's END
action is off in every preset: the paper's runs went to the step budget.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "paper-easy": {"suite": "discovery", "difficulty": "easy", "max_steps": 100, "seeds": "0-4"},
    "paper-normal": {"suite": "discovery", "difficulty": "normal", "max_steps": 1000, "seeds": "0-4", "max_cost": 125.0},
    "paper-challenge": {"suite": "discovery", "difficulty": "challenge", "max_steps": 1000, "seeds": "0-4", "max_cost": 125.0},
    "paper-unit": {"suite": "unit", "difficulty": "normal", "max_steps": 100, "seeds": "0-4"},
}
PRESETS.update({f"{name}-vision": {**PRESETS[name], "vision": True} for name in ("paper-easy", "paper-normal", "paper-challenge")})
DEFAULTS: dict[str, Any] = {"suite": "all", "difficulty": None, "max_steps": None, "seeds": "0-4", "max_cost": None,
                            "vision": False, "end_action": False}  # fmt: skip


def resolve(preset: str | None, **given: Any) -> dict[str, Any]:
    """Options from the command line (None = not given) over the preset over the defaults."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"Unknown preset {preset!r}. Valid presets: {', '.join(PRESETS)}.")
    merged = {**DEFAULTS, **(PRESETS[preset] if preset else {})}
    merged.update({key: value for key, value in given.items() if value is not None})
    return merged
