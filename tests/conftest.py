"""Shared fixtures. Keep this file generic: part-specific fixtures belong next to their tests."""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Iterator
from types import ModuleType

import pytest

from discoverylab.llm import EmbeddedModelServer, EmbeddedServerError, find_model_file
from discoverylab.llm.local_server import INSTALL_HINT, shared_server
from llm_scripted_server import ScriptedLLMServer

try:  # pytest >= 9.2 keeps a node's id here (see `_name_its_xdist_group`)
    from _pytest.nodeid import NodeId
except ImportError:  # older pytest reads the id pytest-xdist writes itself
    NodeId = None

# POSIX only; on Windows the llm tests simply run without the cross-worker lock.
fcntl: ModuleType | None = importlib.import_module("fcntl") if importlib.util.find_spec("fcntl") else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Send every `llm`-marked test to one xdist worker so only one model server runs.

    Runs before xdist reads the `xdist_group` marks (`--dist loadgroup` in pyproject.toml).
    `_one_llm_test_at_a_time` below also serialises them, whatever the scheduler does.
    """
    for item in items:
        if item.get_closest_marker("llm") is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("llm"))
    if getattr(config.option, "loadgroup", False):  # set on xdist workers under --dist loadgroup
        for item in items:
            _name_its_xdist_group(item)


def _name_its_xdist_group(item: pytest.Item) -> None:
    """Append `@group` to a grouped test's node id, as pytest-xdist means to.

    xdist's loadgroup scheduler reads the group from that suffix, but pytest-xdist <= 3.8 writes it
    to `item._nodeid`, which pytest >= 9.2 no longer reads (the id lives in `item._id`), so every
    group was silently split over the workers (pytest-dev/pytest-xdist#1386): both workers built
    the same module fixtures (the chaos benchmark's 40 s run twice) and waited on each other's
    model server. Only on an xdist worker, only where pytest keeps the id in `_id`.
    """
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})
    nodeid = item.nodeid
    if not names or NodeId is None or not isinstance(getattr(item, "_id", None), NodeId) or nodeid.rfind("@") > nodeid.rfind("]"):
        return
    item._id = NodeId.parse(f"{nodeid}@{'_'.join(names)}")


@pytest.fixture(autouse=True)
def _state_home_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's $XDG_STATE_HOME is a fresh folder (subprocesses inherit it): state a command
    keeps there (env-serve's ledger of played sealed instances) never outlives the test, nor lands
    in the user's home, where a second test session would find its instances already played.
    $SB3_LOGDIR lies inside it too."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    # Stable-Baselines3's logger makes a folder for every `learn()` (empty unless asked to log):
    # without $SB3_LOGDIR it is /tmp/SB3-<date>, hundreds left behind per test session.
    monkeypatch.setenv("SB3_LOGDIR", str(state / "sb3"))


@pytest.fixture(scope="session", autouse=True)
def _macro_graphs_measured_once_per_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One disk cache of measured macro effect graphs for the whole run (`$DISCOVERYLAB_CACHE_DIR`).

    A 100-household economy's graph takes 5-40 s of CPU; each process kept its own in memory, so
    both xdist workers measured the same seeds' graphs. Now the second finds the first's file
    (written atomically; the key is the structure and settings). `lab run` keeps using its own
    `OUT/cache` (an explicit cache_dir wins over the variable).
    The folder is this run's (shared by its workers), never an earlier run's; a value the user
    set is left alone.
    """
    from discoverylab.labs.macroecon.ground_truth import CACHE_ENV_VAR

    if os.environ.get(CACHE_ENV_VAR):
        yield
        return
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "macro-graphs"
    folder.mkdir(exist_ok=True)
    os.environ[CACHE_ENV_VAR] = str(folder)
    try:
        yield
    finally:
        os.environ.pop(CACHE_ENV_VAR, None)


@pytest.fixture(autouse=True)
def _one_llm_test_at_a_time(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Across xdist workers, let only one `llm` test generate at a time.

    Two llama.cpp generations on a 2-core machine slow each other down tenfold; a file lock in
    the run's shared temp directory keeps them in turn whatever the scheduler does.
    """
    if request.node.get_closest_marker("llm") is None or "PYTEST_XDIST_WORKER" not in os.environ or fcntl is None:
        yield
        return
    lock_path = tmp_path_factory.getbasetemp().parent / "llm-tests.lock"
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def embedded_llm() -> Iterator[EmbeddedModelServer]:
    """The offline SmolLM2-135M server, started once per test session (per xdist worker).

    Mark tests that use it `@pytest.mark.llm`. They are skipped (with the install hint) only when
    xllamacpp or the model package is not installed; a server that fails to start fails them.
    """
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed: {INSTALL_HINT}")
    try:
        find_model_file()
    except EmbeddedServerError as exc:
        pytest.skip(str(exc))
    # The process-wide server, so code under test that calls default_client() reuses it.
    server = shared_server()
    yield server
    server.stop()


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLMServer]:
    """A real HTTP server on 127.0.0.1 replaying scripted OpenAI-format answers (see its module)."""
    server = ScriptedLLMServer().start()
    yield server
    server.stop()
