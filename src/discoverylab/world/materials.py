"""Materials: what objects are made of, and therefore what instruments measure.

Instruments never read an object's "true" answer; they read its materials (spectrum, pH,
radiation, nutrients...). Keeping materials as data lets scenarios build new measurable
objects without new code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class Material:
    """One material. Mutable on purpose: scenarios tune per-object copies (e.g. soil nutrients)."""

    key: str
    name: str
    microscope: str = ""
    color: str = ""
    spectrum: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    ph: float = 7.0
    radiation: float = 0.0
    poisonous: bool = False
    living: tuple[float, float] | None = None
    npk: tuple[float, float, float] = (0.0, 0.0, 0.0)
    extra: dict[str, float] = field(default_factory=dict)

    def copy(self) -> Material:
        """A copy with its own `extra`, every field stored by name on a bare instance: the
        generated `__init__` behind a type call cost ~4,400 instructions a copy, this ~3,000
        (`dataclasses.replace` ~4x as long); every tree, plant and table copies its materials.
        `tests/test_speed_paths.py` fails if a field is left out."""
        new = _new(Material)
        new.key = self.key
        new.name = self.name
        new.microscope = self.microscope
        new.color = self.color
        new.spectrum = self.spectrum
        new.ph = self.ph
        new.radiation = self.radiation
        new.poisonous = self.poisonous
        new.living = self.living
        new.npk = self.npk
        new.extra = self.extra.copy()
        return new


_new = Material.__new__  # `object.__new__`; a compiled (mypyc) class needs its own


@lru_cache(maxsize=1)
def _table() -> dict[str, Material]:
    raw = json.loads(resources.files("discoverylab.data").joinpath("materials.json").read_text("utf-8"))
    table: dict[str, Material] = {}
    for key, row in raw.items():
        if key.startswith("_"):
            continue
        living = row.get("living")
        table[key] = Material(
            key=key,
            name=row["name"],
            microscope=row.get("microscope", ""),
            color=row.get("color", ""),
            spectrum=tuple(float(v) for v in row.get("spectrum", (0, 0, 0, 0, 0))),
            ph=float(row.get("ph", 7.0)),
            radiation=float(row.get("radiation", 0.0)),
            poisonous=bool(row.get("poisonous", False)),
            living=(float(living[0]), float(living[1])) if living else None,
            npk=tuple(float(v) for v in row.get("npk", (0, 0, 0))),  # type: ignore[arg-type]
        )
    return table


def material(key: str) -> Material:
    """A fresh copy of the named material (copies, so objects never share mutable state)."""
    try:
        return _table()[key].copy()
    except KeyError:
        raise KeyError(f"Unknown material {key!r}; known: {sorted(_table())}") from None


def shared_material(key: str) -> Material:
    """The table's own instance: for scenery (grass, floors, walls) that nothing ever alters.
    Saves thousands of copies per reset."""
    table = _table()
    if key not in table:
        material(key)  # raises with the list of known materials
    return table[key]


def material_names() -> list[str]:
    return sorted(_table())
