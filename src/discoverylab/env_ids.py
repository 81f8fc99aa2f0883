"""Registered Gymnasium ids name what they play.

`gymnasium.make(id, **kwargs)` passes its keyword arguments over the id's own, so
`gymnasium.make("discoverylab/DialogTest-Normal-v0", task="PickAndPlaceTest")` built a Pick and Place
env whose `env.spec.id` still said Dialog: logs, wrappers and result tables keyed by the id then
named another environment than the one played. As in Gymnasium's own ids, an id is one environment:
Gymnasium sets `env.spec` right after building the env, and our envs refuse there a spec whose
`discoverylab/` id names another task, difficulty or protocol than the one they play (closing
themselves first), with the id to make instead. Options that do not change which environment is
played (max_steps, observation, reward, ...) pass as before.
"""

from __future__ import annotations

from typing import Any

NAMESPACE = "discoverylab/"


def check_spec(env: Any, spec: Any, plays: str | None, asked: str, fix: str) -> None:
    """Raise ValueError (after closing `env`) when `spec` names one of our ids other than `plays`,
    the id of what `env` plays (None: no registered id plays it). `asked` says what the keyword
    arguments asked for, `fix` what to do instead."""
    spec_id = getattr(spec, "id", None)
    if not isinstance(spec_id, str) or not spec_id.startswith(NAMESPACE) or spec_id == plays:
        return
    try:
        env.close()
    except Exception:  # noqa: BLE001, S110 - the refusal below is the news; a failed close adds nothing
        pass
    raise ValueError(f"{spec_id} names the environment it plays, but the keyword arguments ask for {asked}: "
                     f"env.spec.id would name another environment than the one played. {fix}")
