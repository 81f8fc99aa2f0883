"""The evaluator's key never travels to Ray's workers.

Jobs carry their instances (seed included) from the runner, so no worker needs the key; but the
Ray backend passed every `DISCOVERYLAB_*` variable to its tasks as the runtime env, which Ray keeps
in the cluster's job table (shown by `ray list jobs` and the dashboard to anyone on the cluster)
and sets in every worker, beside the episodes it runs: with `$DISCOVERYLAB_EVAL_KEY` set, the key
that derives every test seed went along. A fake `ray` module records what `ray.init` was given.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from discoverylab.bench.ray_pool import RayPool
from discoverylab.instances import KEY_ENV


def test_ray_workers_get_the_settings_but_not_the_eval_key(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False  # type: ignore[attr-defined]
    fake.init = lambda **kw: seen.update(kw)  # type: ignore[attr-defined]
    fake.remote = lambda **kw: (lambda cls: cls)  # type: ignore[attr-defined]
    fake.put = lambda obj: obj  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv(KEY_ENV, "0123456789abcdef0123456789abcdef")
    monkeypatch.setenv("DISCOVERYLAB_LLM_REQUEST_TIMEOUT", "60")
    RayPool(lambda job: job, 1, address="ray://head:10001")
    passed = seen["runtime_env"]["env_vars"]
    assert passed.get("DISCOVERYLAB_LLM_REQUEST_TIMEOUT") == "60"  # settings still travel
    assert KEY_ENV not in passed, passed
