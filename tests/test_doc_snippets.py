"""Every Python example in README.md and docs/ runs as written, in a fresh interpreter (budgets
scaled down where an example trains or plays long), or its entry below says why not and which
test drives the same calls. A new example fails `test_every_example_has_a_plan` until it gets an
entry: docs that stop matching the code show here."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from env_server_kit import running_env_server

ROOT = Path(__file__).resolve().parents[1]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SERVER = "http://127.0.0.1:8000"  # the examples' env server; replaced by a real one on a free port

# name -> replacements (old, new) applied before running; each must occur in the example. A string: not run, and why.
PLAN: dict[str, tuple[tuple[str, str], ...] | str] = {
    "README.md#0": (),
    "docs/rl.md#0": (),
    "docs/rl.md#1": (),
    "docs/rl.md#2": (
        ('MaskablePPO("MlpPolicy", env)', 'MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1)'),
        (".learn(10_000)", ".learn(32)"),
        ('MaskablePPO("MlpPolicy", venv)', 'MaskablePPO("MlpPolicy", venv, n_steps=8, batch_size=32, n_epochs=1)'),
        (".learn(300_000)", ".learn(64)"),
    ),
    "docs/tinylabs.md#0": (),
    "docs/tinylabs.md#1": (),
    "docs/integrations.md#0": ((SERVER, "{server}"),),
    "docs/integrations.md#1": ((SERVER, "{server}"),),
    "docs/integrations.md#2": ((SERVER, "{server}"),),  # the MCP client, against the real server's /mcp
    "docs/integrations.md#3": ((SERVER, "{server}"),),  # OpenEnv's MCPToolClient, on the real server's socket
    "docs/agents.md#0": "a paid OpenAI model; tests/test_llm_agents_e2e.py runs `run_episode` with LLM settings "
    "against the embedded model",
    "docs/integrations.md#4": "starts a Ray cluster; tests/test_env_server_ray.py drives `RaySessions` against a local one",
    "docs/integrations.md#5": "verifiers lives in its own venv (.venv-verifiers); tests/test_verifiers_integration.py "
    "loads the environment there",
    "docs/integrations.md#6": "a module of the reader's own, for verifiers (its own venv); "
    "tests/test_verifiers_integration.py plugs such a reward and re-weights ours in a rollout",
    "docs/integrations.md#7": "verifiers lives in its own venv (.venv-verifiers); tests/test_verifiers_integration.py "
    "loads the environment there with a plugged reward",
}


def examples() -> Iterator[tuple[str, str]]:
    """(name, code) of every ```python block: README.md, then docs/*.md in name order."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for i, match in enumerate(_BLOCK.finditer(text)):
            yield f"{path.relative_to(ROOT).as_posix()}#{i}", match.group(1)


def test_every_example_has_a_plan() -> None:
    names = [name for name, _ in examples()]
    assert len(names) == len(set(names))
    assert set(names) == set(PLAN), (
        f"examples without an entry in PLAN: {sorted(set(names) - set(PLAN))}; "
        f"entries without an example: {sorted(set(PLAN) - set(names))}"
    )
    for name, plan in PLAN.items():
        assert plan == () or isinstance(plan, str) or all(len(pair) == 2 for pair in plan), name


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_env_server(max_sessions=8, ttl_s=60) as (url, _):
        yield url


@pytest.mark.parametrize("name", [name for name, plan in PLAN.items() if not isinstance(plan, str)])
def test_example_runs(name: str, server: str, tmp_path: Path) -> None:
    code = dict(examples())[name]
    plan = PLAN[name]
    assert not isinstance(plan, str)
    for old, new in plan:
        assert old in code, f"{name}: the example no longer contains {old!r} (update PLAN)"
        code = code.replace(old, new.format(server=server))
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"{name} failed:\n{code}\n--- stderr ---\n{done.stderr[-3000:]}"
