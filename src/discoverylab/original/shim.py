"""The `discoveryworld` modules a script written for the original imports, mapped to ours.

`installed()` puts a finder first on `sys.meta_path` that serves `discoveryworld` (an empty
package, as the original's), `discoveryworld.DiscoveryWorldAPI` (our API, recording the world
history as the original always does, plus the `ScenarioMaker` names that module imports) and
`discoveryworld.ScenarioMaker` (`scenario_maker`). Any other `discoveryworld.*` import fails with
a message naming what is mapped. Leaving the block removes the finder and the modules it made, and
puts back any it displaced. Only the runner (`python -m discoverylab.compat`) and tests install it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

from discoverylab import compat
from discoverylab.original import scenario_maker

SCENARIO_MAKER_NAMES = (
    "ScenarioMaker", "SCENARIOS", "SCENARIO_NAMES", "SCENARIO_INFOS", "SCENARIO_DIFFICULTY_OPTIONS",
    "getInternalScenarioName",
)  # fmt: skip
PACKAGE = "discoveryworld"


class DiscoveryWorldAPI(compat.DiscoveryWorldAPI):
    """`compat.DiscoveryWorldAPI` as the original's scripts get it: with the world history on."""

    record_history = True


def _fill_package(module: ModuleType) -> None:
    module.__doc__ = "discoverylab's stand-in for the original DiscoveryWorld package (see discoverylab.original)."


def _fill_api(module: ModuleType) -> None:
    module.__doc__ = "discoverylab's stand-in for discoveryworld.DiscoveryWorldAPI."
    module.DiscoveryWorldAPI = DiscoveryWorldAPI  # type: ignore[attr-defined]
    for name in SCENARIO_MAKER_NAMES:  # the original module imports these, so scripts may too
        setattr(module, name, getattr(scenario_maker, name))


def _fill_scenario_maker(module: ModuleType) -> None:
    module.__doc__ = scenario_maker.__doc__
    for name in SCENARIO_MAKER_NAMES:
        setattr(module, name, getattr(scenario_maker, name))


BUILDERS: dict[str, Callable[[ModuleType], None]] = {
    PACKAGE: _fill_package,
    f"{PACKAGE}.DiscoveryWorldAPI": _fill_api,
    f"{PACKAGE}.ScenarioMaker": _fill_scenario_maker,
}


class OriginalFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the modules in `BUILDERS`; refuses every other `discoveryworld.*` clearly."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname in BUILDERS:
            return importlib.util.spec_from_loader(fullname, self, is_package=fullname == PACKAGE)
        if fullname.startswith(PACKAGE + "."):
            mapped = ", ".join(sorted(n for n in BUILDERS if n != PACKAGE))
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: discoverylab maps only {mapped} of the original (docs/agents.md).",
                name=fullname,
            )
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        BUILDERS[module.__name__](module)


def _ours(name: str) -> bool:
    return name == PACKAGE or name.startswith(PACKAGE + ".")


@contextmanager
def installed() -> Iterator[OriginalFinder]:
    """Map the original's imports to ours for the duration of the block."""
    finder = OriginalFinder()
    displaced = {name: module for name, module in sys.modules.items() if _ours(name)}
    for name in displaced:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    importlib.invalidate_caches()
    try:
        yield finder
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(displaced)
