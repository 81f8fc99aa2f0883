"""The opt-in compiled engine (`discoverylab.native`, `make native`): a build is used only when
it matches the sources and this Python, a failed build says why, and the compiled engine gives
the pure engine's observations (a build takes ~2.5 CPU-minutes: made once per session, or the
checkout's own `build/native` when it is fresh)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from discoverylab import native
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

SRC = Path(native.__file__).resolve().parents[1]
FINGERPRINT = Path(__file__).resolve().parents[1] / "benchmarks" / "fingerprint.py"

# Hashed in a fresh process by `benchmarks/fingerprint.py` (its path is the script's argument):
# every Normal task's symbolic rollout (masks, observations, rewards; 100-step episodes for unit
# tests) and text-env rollout, and the oracle's episodes of every task and difficulty at seed 0;
# then a pickled and a copied clone of some tasks' envs. It also checks that a Python subclass's
# class-level default reaches compiled code.
_ROLLOUT = """
import copy, hashlib, importlib.util, json, pickle, sys
import numpy as np
from discoverylab import native
from discoverylab.scenarios.registry import all_tasks
from discoverylab.world.objects import WorldObject
from discoverylab.world.world import World

spec = importlib.util.spec_from_file_location("fingerprint", sys.argv[2])
fingerprint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fingerprint)

class Block(WorldObject):
    passable = False

block = Block(World(0), "block", "block")
assert block.is_passable_now() is False and block.passable is False, "a subclass's default was lost"
out = {"active": native.active()}
out.update(fingerprint.hashes([t for t, cls in all_tasks().items() if "normal" in cls.difficulties], [0]))
for task in sys.argv[1].split(","):
    env = fingerprint.symbolic(task, hashlib.sha256())
    # A pickled and a deep-copied clone continue as the original does (the batched env moves envs).
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    rng = np.random.default_rng(4)
    for _ in range(30):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        want = env.step(action)[0]
        for clone in clones:
            got = clone.step(action)[0]
            assert all(np.array_equal(got[key], want[key]) for key in want), f"{task}: a clone differs"
# A device's setting keeps its type: compiled, steps annotated `float` once turned 5000 + 100 into
# 5100.0, and the reactor's dialog then read "5100.0 Hertz" (an int step must stay an int).
from discoverylab.world.devices import Device
device = Device(World(0), "dial", "dial", variables={"f": 5000})
device.add_node("root", "f={f}")
device.add_option("root", "+100", "root", modify={"f": 100}, clamp=(0, 10000))
device.adjust({"f": 100}, (0, 10000))
device.adjust({"f": -6000}, (0, 10000))
out["device"] = repr(device.props["f"])
# The theme characters that tick every step are compiled too (Space Sick's, Lost in Translation's),
# and Space Sick's other tickers and scorer's ledger.
from discoverylab.scenarios.lost_in_translation import things as village
from discoverylab.scenarios.space_sick import characters as colony
from discoverylab.scenarios.space_sick import tickers
classes = (colony.ColonyNPC, colony.Colonist, colony.Chef, colony.Farmer, village.Dog, village.Trainer, village.Elder,
           tickers.SeedJar, tickers.FieldKeeper, tickers.ColonyLedger)
out["compiled classes"] = [cls.__name__ for cls in classes if "__mypyc_attrs__" in vars(cls)]
# Weak references: compiled, mypyc never cleared them (reading one after its object died crashed),
# so a compiled class refuses them (TypeError); a Python subclass gets its own, which works.
import gc, weakref
try:
    weakref.ref(World(0))
    out["weakref"] = "taken"
except TypeError:
    out["weakref"] = "refused"
class Leaf(WorldObject):
    pass
fired = []
for seed in range(3):
    world = World(seed)
    leaf = Leaf(world, "leaf", "leaf")
    ref = weakref.ref(leaf, fired.append)
    del leaf
    world.dispose()
    del world
    gc.collect()
    assert ref() is None
out["subclass weakrefs cleared"] = len(fired)
print(json.dumps(out))
"""


def _fake_build(folder: Path, **changes: object) -> Path:
    """A build folder whose manifest matches the sources (its libraries are empty files)."""
    files = {m: f"{m.replace('.', '/')}.so" for m in native.modules()}
    for rel in files.values():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(b"")
    manifest = {"sources": native.source_hash(), "abi": native._abi(), "modules": files, **changes}
    (folder / native.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_a_matching_build_is_usable_and_a_missing_one_says_so(tmp_path: Path) -> None:
    assert "no compiled engine" in str(native.usable(tmp_path / "none"))
    assert native.usable(_fake_build(tmp_path)) is None


@pytest.mark.parametrize(
    ("changes", "words"),
    [({"sources": "0" * 64}, "sources changed"), ({"abi": "cpython-27 .so"}, "another Python"), ({"modules": {}}, "other modules")],
)
def test_a_stale_or_foreign_build_is_never_used(tmp_path: Path, changes: dict[str, object], words: str) -> None:
    folder = _fake_build(tmp_path, **changes)
    before = list(sys.meta_path)
    with pytest.warns(RuntimeWarning, match=words):
        assert native.enable(folder) is False
    assert sys.meta_path == before  # the pure engine stays


def test_enabling_after_the_engine_was_imported_warns(tmp_path: Path) -> None:
    # This process imported the pure engine already: switching now would mix the two.
    folder = _fake_build(tmp_path)
    before = list(sys.meta_path)
    with pytest.warns(RuntimeWarning, match="imported before"):
        assert native.enable(folder) is False
    assert sys.meta_path == before


def test_a_build_without_a_compiler_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from discoverylab.cli.main import app

    monkeypatch.setattr(native.shutil, "which", lambda name: None)
    with pytest.raises(native.NativeBuildError, match="No C compiler"):
        native.build(tmp_path / "out")
    assert not (tmp_path / "out").exists()
    done = CliRunner().invoke(app, ["native", "build", "--folder", str(tmp_path / "out")])  # `make native`
    assert done.exit_code == 1
    assert "about 2.5 CPU-minutes" in done.stdout  # a long silent build says first what it is doing
    assert "No C compiler" in done.stderr and "Traceback" not in done.output
    done = CliRunner().invoke(app, ["native", "status", "--folder", str(tmp_path / "out")])
    assert done.exit_code == 1 and "not usable: no compiled engine" in done.stdout


def test_a_killed_builds_scratch_folder_is_swept_and_a_live_ones_kept(tmp_path: Path) -> None:
    # A SIGKILL or SIGTERM skips TemporaryDirectory's clean-up: the next build removes what the
    # dead build left (~40 MB each), never a running build's folder.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    folders = {name: tmp_path / f"{native.TMP_PREFIX}{name}" for name in ("dead", "live", "old", "new")}
    for folder in folders.values():
        (folder / "src").mkdir(parents=True)
    (folders["dead"] / native.OWNER).write_text(gone.stdout.strip())
    (folders["live"] / native.OWNER).write_text(str(os.getpid()))
    os.utime(folders["old"], (0, 0))  # no owner file (an older build), and hours old
    (tmp_path / "other-dead").mkdir()
    assert sorted(native.sweep_stale(tmp_path)) == [folders["dead"], folders["old"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["other-dead", folders["live"].name, folders["new"].name])


def test_the_env_variable_off_leaves_the_pure_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("", "0"):
        monkeypatch.setenv(native.ENV_VAR, value)
        assert native.enable_from_env() is False
    assert native.active() is False


def test_pure_python_subclass_defaults_stay_on_the_class() -> None:
    # The pure engine (the reference) keeps class-level defaults where they are written.
    class Block(WorldObject):
        passable = False

    assert "passable" in vars(Block) and not hasattr(Block, "__native_defaults__")
    block = Block(World(0), "block", "block")
    assert block.is_passable_now() is False and "passable" not in vars(block)


@pytest.fixture(scope="session")
def native_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's fresh build, else one made now (skipped where no C compiler or mypyc)."""
    if native.usable() is None:
        return native.DEFAULT_DIR
    try:
        return native.build(tmp_path_factory.mktemp("native"))
    except native.NativeBuildError as exc:
        if "No C compiler" in str(exc) or "mypyc is not installed" in str(exc):
            pytest.skip(str(exc))
        raise


def _rollouts(tasks: str, native_dir: Path | None) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(SRC), native.ENV_VAR: str(native_dir) if native_dir else ""}
    done = subprocess.run([sys.executable, "-c", _ROLLOUT, tasks, str(FINGERPRINT)], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.timeout(1500)  # the build in `native_build`: ~2.5 CPU-minutes, 8.6 min beside a loaded suite
def test_the_compiled_engine_gives_the_pure_engines_observations(native_build: Path) -> None:
    tasks = "Proteomics,SpaceSick,LostInTranslation,PlantNutrients,MovingAgentsTest,NavigationHouseTest,DoorsWithKeysTest"
    compiled = _rollouts(tasks, native_build)
    pure = _rollouts(tasks, None)
    assert compiled.pop("active") is True and pure.pop("active") is False
    assert compiled.pop("compiled classes") == [
        "ColonyNPC", "Colonist", "Chef", "Farmer", "Dog", "Trainer", "Elder", "SeedJar", "FieldKeeper", "ColonyLedger"
    ]  # fmt: skip
    assert pure.pop("compiled classes") == []
    assert compiled.pop("weakref") == "refused" and pure.pop("weakref") == "taken"
    assert compiled["subclass weakrefs cleared"] == 3  # (and the process exited cleanly: `_rollouts` checks)
    assert pure["device"] == "0" and all(task in pure for task in tasks.split(",")) and len(pure) >= 19 + 39
    assert len([key for key in pure if key.startswith("oracle ")]) >= 39
    assert compiled == pure


# Compiled, a disposed world's untouched scenery is reused (`world/spare_check.py`): the check
# covers every field of the plain classes, and a change to any field keeps an object from reuse.
_SPARES = """
import json
from discoverylab import native
from discoverylab.rl import make_rl_env
from discoverylab.scenarios import layout
from discoverylab.world import catalog, spare_check, spares
from discoverylab.world.catalog import spawn
from discoverylab.world.objects import Layer
from discoverylab.world.unpickle import compiled_fields
from discoverylab.world.world import World

out = {"active": native.active()}
covered = set(spare_check.CHECKED_FIELDS + spare_check.REPLACED)
classes = {plan[1] for plan in map(catalog.inline_plan, catalog.templates()) if plan is not None}
out["uncovered"] = {cls.__name__: sorted(set(compiled_fields(cls)) ^ covered) for cls in classes}
env = make_rl_env("MovingAgentsTest")
env.reset(seed=3)
for _ in range(60):
    env.step(0)
before = {id(obj) for obj in env.unwrapped.world._fills["grass"][0]}
env.reset(seed=4)
out["reused grass"] = sum(id(obj) in before for obj in env.unwrapped.world._fills["grass"][0])
world = World(1)
layout.fill_grass(world)
tiles = [column[y][0] for column in world.stacks for y in range(world.size)]
layer, cls, name, type_, materials, fresh, attrs = catalog.inline_plan("grass")
like = spare_check.model(world, cls, name, type_, materials, layer, attrs)

def changes(field, value):
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, float):
        return [value + 1.5, -value] if value == 0.0 else [value + 1.5]
    if isinstance(value, Layer):
        return [Layer((value + 1) % len(Layer)), None]
    if isinstance(value, int):
        return [value + 1, 2**70]
    if isinstance(value, str):
        return [value + "x"]
    if isinstance(value, World):
        return [World(99)]
    if isinstance(value, list):
        if not value:
            return [[spawn(world, "coin")]]
        return [[*value, spawn(world, "coin")], [m.copy() for m in value], [spawn(world, "coin") for _ in value]]
    if isinstance(value, dict):
        return [{"wet": True}]
    assert value is None
    return [Layer.AIR] if field == "layer_hint" else [spawn(world, "coin")]

changed = {}
for field in compiled_fields(cls):
    if field not in spare_check.REPLACED:
        for value in changes(field, getattr(like, field)):
            tile = tiles[len(changed)]
            setattr(tile, field, value)
            changed[id(tile)] = f"{field}={value!r}"
tiles[len(changed)].quirk = 1
changed[id(tiles[len(changed)])] = "an attribute of its own"
tiles[len(changed)].quirk = 1
del tiles[len(changed)].quirk
changed[id(tiles[len(changed)])] = "an empty __dict__"
held = tiles[len(changed)]
changed[id(held)] = "held"
out["changes"] = len(changed)
del tiles, tile, like
world.dispose()
taken = spares.take("grass", cls, name, type_, materials, layer, attrs)
out["reused changed"] = [changed[id(obj)] for obj in taken if id(obj) in changed]
out["reused"] = len(taken)
out["typed grid checks"] = spares._COMPILED
for hold in (False, True):  # a tile a caller holds keeps its objects: the grid is not kept
    spares.clear()
    world = World(2)
    layout.fill_grass(world)
    tile = world.stacks[3][4] if hold else None
    world.dispose()
    out[f"held {hold}"] = [bool(spares._STACKS), None if tile is None else len(tile)]
print(json.dumps(out))
"""


@pytest.mark.timeout(1500)
def test_the_compiled_engine_reuses_only_untouched_scenery(native_build: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC), native.ENV_VAR: str(native_build)}
    done = subprocess.run([sys.executable, "-c", _SPARES], env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["active"] is True
    # Every field of a plain class is compared or set anew; a class with another is never reused.
    assert {name: diff for name, diff in out["uncovered"].items() if diff} == {"Food": ["color"]}
    assert out["reused grass"] > 500
    # An emptied `__dict__` (an attribute set, then deleted) holds no attribute: reused (telling it
    # from none would cost `gc.get_referents`, ~0.6M instructions per unit-test reset).
    assert out["changes"] > 40 and out["reused changed"] == ["an empty __dict__"]
    assert out["reused"] == 1024 - out["changes"] + 1
    # A disposed world's grid is kept (emptied) for the next world unless a tile is held elsewhere.
    assert out["typed grid checks"] is True and out["held False"] == [True, None] and out["held True"] == [False, 1]
