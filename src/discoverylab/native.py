"""The compiled engine, opt-in: `world/`, the symbolic encoder and the theme characters that
act every step compiled by mypyc.

`make native` (`discoverylab native build`) compiles the modules in `MODULES`, unchanged,
into `build/native/` (ignored by git) with a manifest of the sources' hash. With
`DISCOVERYLAB_NATIVE=1` in the environment (or a build folder's path), `import discoverylab`
puts an import hook first that loads those modules from the build; nothing else changes. The
pure-Python engine stays the reference: `make test` runs it (tests patch engine functions, which
compiled callers would not see), and the compiled one must give the same observations
(`tests/test_native.py`). A build whose sources changed since, or made by another Python, is
never used: `enable` warns and the pure engine runs. See docs/performance.md ("The compiled
engine") for what it buys and docs/rl.md for how an RL user turns it on.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_DIR = PACKAGE_DIR.parents[1] / "build" / "native"  # a checkout's build/ (ignored by git)
ENV_VAR = "DISCOVERYLAB_NATIVE"
MANIFEST = "manifest.json"
TMP_PREFIX, OWNER = "discoverylab-native-", "owner.pid"  # a build's scratch folder, and who made it
# What is compiled: the world (but the pydantic models of the text observation and the pickling
# helpers, which interpreted classes extend), the symbolic encoder's modules and the action
# mask's look-up (`mask_book`), and the theme modules of characters that tick every step (the
# other theme modules stay interpreted).
_WORLD_SKIPPED = {"unpickle", "observation_model"}
_RL = ("symbolic", "scenery", "kept_views", "cells", "window_reads", "view", "mask_book")
_THEMES = ("space_sick.characters", "space_sick.tickers", "lost_in_translation.things")


class NativeBuildError(RuntimeError):
    """`build` could not compile the engine (no C compiler, no mypyc, a compile error)."""


def modules() -> list[str]:
    """The dotted names of the compiled modules, in a fixed order."""
    world = sorted(p.stem for p in (PACKAGE_DIR / "world").glob("*.py") if p.stem not in _WORLD_SKIPPED)
    return (
        [f"discoverylab.world.{name}" for name in world]
        + [f"discoverylab.rl.{name}" for name in _RL]
        + [f"discoverylab.scenarios.{name}" for name in _THEMES]
    )


def _source(module: str) -> Path:
    return PACKAGE_DIR.parent.joinpath(*module.split(".")).with_suffix(".py")


def source_hash() -> str:
    """sha256 over the compiled modules' sources (names and bytes): what a build must match."""
    digest = hashlib.sha256()
    for module in modules():
        digest.update(module.encode() + b"\0" + _source(module).read_bytes() + b"\0")
    return digest.hexdigest()


def _abi() -> str:
    return f"{sys.implementation.cache_tag} {importlib.machinery.EXTENSION_SUFFIXES[0]}"


def build(out: Path = DEFAULT_DIR) -> Path:
    """Compile `modules()` into `out` (replaced) and write its manifest; NativeBuildError with
    the reason when it cannot (the pure engine is unaffected). ~2.5 CPU-minutes."""
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None and shutil.which("gcc") is None:
        raise NativeBuildError(f"No C compiler found ({compiler!r} or 'gcc' on PATH): the pure-Python engine stays in use.")
    if importlib.util.find_spec("mypyc") is None:
        raise NativeBuildError("mypyc is not installed (`pip install mypy`, or the `dev` extra): the pure-Python engine stays in use.")
    expected = source_hash()
    sweep_stale(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=TMP_PREFIX) as tmp:
        (Path(tmp) / OWNER).write_text(str(os.getpid()), encoding="utf-8")
        src = Path(tmp) / "src"
        shutil.copytree(PACKAGE_DIR, src / "discoverylab", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        files = [str(_source(m).relative_to(PACKAGE_DIR.parent)) for m in modules()]
        done = subprocess.run(
            [sys.executable, "-m", "mypyc", "--ignore-missing-imports", *files],
            cwd=src, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
            raise NativeBuildError(f"mypyc failed (exit {done.returncode}); the pure-Python engine stays in use. Its last lines:\n{tail}")
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        built: dict[str, str] = {}
        for module in modules():
            rel = Path(*module.split(".")).with_suffix(suffix)
            if not (src / rel).is_file():
                raise NativeBuildError(f"mypyc left no {rel}; the pure-Python engine stays in use.")
            built[module] = str(rel)
        for shared in src.glob(f"*__mypyc{suffix}"):  # the shared library the modules import
            built[shared.name[: -len(suffix)]] = shared.name
        if out.exists():
            shutil.rmtree(out)
        for name in built.values():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, out / name)
    if source_hash() != expected:
        shutil.rmtree(out)
        raise NativeBuildError("The sources changed while compiling: build again.")
    manifest = {"sources": expected, "abi": _abi(), "modules": built}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return out


def sweep_stale(folder: Path, unowned_after_s: float = 3600.0) -> list[Path]:
    """Remove the scratch folders of builds that were killed (a SIGKILL or SIGTERM skips the
    clean-up, and each left ~40 MB in /tmp): those whose owner process is gone, and those with no
    owner file older than `unowned_after_s` (made before owners were written). A live build's
    folder is kept. Returns what was removed."""
    removed = []
    for tmp in folder.glob(f"{TMP_PREFIX}*"):
        try:
            owner = int((tmp / OWNER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            try:
                stale = time.time() - tmp.stat().st_mtime > unowned_after_s
            except OSError:
                continue
        else:
            stale = not pid_alive(owner)
        if stale and tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` runs (another user's counts: its scratch is not ours to remove);
    what cannot be a pid is nobody's. Also used by `bench/live.py`'s sweep."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:
        return True
    return True


class _NativeFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules (and their shared library) in a build folder."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file, loader=_Loader(fullname, str(file)))


class _Loader(importlib.machinery.ExtensionFileLoader):
    """Loads a compiled module, then takes weak references away from the compiled classes
    (`no_weakrefs`): of every compiled module loaded so far, since the shared library sets up
    the modules a module imports itself, without this loader."""

    def exec_module(self, module: ModuleType) -> None:
        super().exec_module(module)
        for name in modules():
            loaded = sys.modules.get(name)
            for value in vars(loaded).values() if loaded is not None else ():
                if isinstance(value, type) and value.__module__ == name:
                    no_weakrefs(value)


_WEAKLIST_AT = 26 * ctypes.sizeof(ctypes.c_void_p)  # PyTypeObject.tp_weaklistoffset (CPython 3.8-3.13, 64- and 32-bit)


def no_weakrefs(cls: type) -> bool:
    """Make `weakref.ref(obj)` of a compiled class a TypeError (as for `object()`) instead of a
    crash: mypyc gives a class with a `__dict__` a weak-reference slot after it but never clears
    it when an object dies (mypyc/mypyc#1102), so reading the reference later read freed memory.
    Touches only a class laid out so (weak slot right after the dict) whose field reads back as
    `__weakrefoffset__`; an interpreted subclass made afterwards gets a slot of its own, which
    CPython clears. Returns whether `cls` was changed."""
    offset = cls.__weakrefoffset__
    if sys.implementation.name != "cpython" or "__mypyc_attrs__" not in vars(cls) or offset <= 0:
        return False
    if offset != cls.__dictoffset__ + ctypes.sizeof(ctypes.c_void_p):
        return False
    field = ctypes.c_ssize_t.from_address(id(cls) + _WEAKLIST_AT)
    if field.value != offset:  # not the layout this expects: leave it
        return False
    field.value = 0
    return True


def usable(folder: Path = DEFAULT_DIR) -> str | None:
    """Why the build in `folder` cannot be used (None when it can): missing, made by another
    Python, or older than the sources."""
    return _checked(folder)[1]


def _checked(folder: Path) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """The build's manifest when it can be used, else why not (read once: `enable` loads what
    was checked)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = manifest["modules"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"no compiled engine in {folder} (run `make native`)"
    if manifest.get("abi") != _abi():
        return None, f"the build in {folder} was made for another Python ({manifest.get('abi')}; this is {_abi()}): run `make native` again"
    if manifest.get("sources") != source_hash():
        return None, f"the engine's sources changed since the build in {folder}: run `make native` again"
    if not isinstance(files, dict) or sorted(k for k in files if k.startswith("discoverylab.")) != sorted(modules()):
        return None, f"the build in {folder} compiled other modules than this version's: run `make native` again"
    missing = [rel for rel in files.values() if not (folder / rel).is_file()]
    if missing:
        return None, f"the build in {folder} lacks {missing[0]}: run `make native` again"
    return manifest, None


def enable(folder: Path = DEFAULT_DIR) -> bool:
    """Load the compiled modules from `folder` from now on; warn and return False (the pure
    engine stays) when the build is unusable or an engine module is imported already."""
    manifest, reason = _checked(folder)
    if manifest is not None:
        loaded = [m for m in modules() if m in sys.modules]
        if loaded:
            reason = f"{loaded[0]} was imported before the compiled engine was enabled"
    if manifest is None or reason is not None:
        warnings.warn(f"Compiled engine not used: {reason}. Running the pure-Python engine.", RuntimeWarning, stacklevel=2)
        return False
    finder = _NativeFinder({name: folder / rel for name, rel in manifest["modules"].items()})
    sys.meta_path.insert(0, finder)
    return True


def enable_from_env() -> bool:
    """`enable` as `DISCOVERYLAB_NATIVE` asks: unset, empty or 0: no; 1: `build/native` of this
    checkout; anything else: that folder."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value in ("", "0"):
        return False
    return enable(DEFAULT_DIR if value == "1" else Path(value))


def active() -> bool:
    """Whether the engine in use is the compiled one."""
    import discoverylab.world.world as world

    return not str(world.__file__).endswith(".py")
