"""Sprite choice: which sprite key an object shows in its current state.

`sprite_key(obj)` names an object's sprite from its state: its `sprite` attribute if that names
one of our painters, else its `type` (and name) plus state words, e.g. `"door:locked"`,
`"fridge:open:on"`, `"mushroom:pink:cooked"`, `"agent:npc17:east"`; a type without art gets
`"unknown:<name>"` (a labelled crate). Split from `sprites`, which draws a key's picture: here
only strings are made, from the world state, so a tile's look stays a hashable tuple of keys.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from discoverylab.render import (  # noqa: F401  (painters register on import: sprite_key asks PAINTERS)
    sprite_furniture,
    sprite_instruments,
    sprite_items,
    sprite_lab,
    sprite_scenery,
)
from discoverylab.render.sprite_characters import CREATURES
from discoverylab.render.sprite_paint import NAMED_COLOURS, PAINTERS
from discoverylab.world.objects import Layer

if TYPE_CHECKING:
    from discoverylab.world.objects import WorldObject

FADE_SUFFIX = "|fade"  # appended to a key: the sprite drawn see-through (canopy over an agent)
UNKNOWN = "unknown"


def _variant(obj: WorldObject, n: int) -> int:
    """A stable pseudo-random pick from the tile coordinates (no RNG involved)."""
    h = (obj.x * 73856093) ^ (obj.y * 19349663)
    return (h ^ (h >> 7)) % n


def _colour_word(name: str, default: str) -> str:
    return next((w for w in name.lower().split() if w in NAMED_COLOURS), default)


def _colour_of(obj: WorldObject, default: str) -> str:
    """The object's colour: its `color` attribute or prop, else a colour word in its name."""
    colour = str(getattr(obj, "color", "") or obj.props.get("color", "")).lower()
    return colour if colour in NAMED_COLOURS else _colour_word(obj.name, default)


def _creature_word(text: str) -> str | None:
    """A creature species named in `text` ("statue of a spheroid", "Dog", "prismatic beast")."""
    return next((w for w in text.lower().split() if w in CREATURES), None)


def _has_at(obj: WorldObject, dx: int, dy: int, types: tuple[str, ...]) -> bool:
    x, y, world = obj.x + dx, obj.y + dy, obj.world
    if not world.in_bounds(x, y):
        return False
    return any(o.type in types for o in world.layer_at(x, y, Layer.BUILDING))


def _grass(obj: WorldObject) -> str:
    v = _variant(obj, 12)
    return "grass:3" if v == 0 else f"grass:{v % 3}"


def _wall(obj: WorldObject) -> str:
    # A wall with more wall (or a door) south of it shows its top only; the last one of a run
    # shows its brick face, as in top-down RPG maps.
    return "wall:cap" if _has_at(obj, 0, 1, ("wall", "door")) else "wall:face"


def _fence(obj: WorldObject) -> str:
    mask = "".join(
        d
        for d, dx, dy in (("n", 0, -1), ("e", 1, 0), ("s", 0, 1), ("w", -1, 0))
        if _has_at(obj, dx, dy, ("fence",))
    )
    return f"fence:{mask}"


def _door(obj: WorldObject) -> str:
    return "door:open" if obj.is_open else "door:locked" if obj.requires_key else "door:closed"


def _tree(obj: WorldObject) -> str:
    canopy = obj.layer == Layer.AIR or "leaves" in obj.name
    return f"tree_canopy:{_variant(obj, 5) == 0:d}" if canopy else "tree_trunk"


def _soil(obj: WorldObject) -> str:
    return "soil" if any(o.type == "dirt" for o in obj.contents) else "soil:hole"


def _table(obj: WorldObject) -> str:
    if obj.openable:
        return f"bedside_table:{'open' if obj.is_open else 'closed'}"
    return "table"


def _appliance(obj: WorldObject) -> str:
    power = "on" if obj.activated else "off"
    if obj.type == "sink":
        return f"sink:{power}"
    return f"{obj.type}:{'open' if obj.is_open else 'closed'}:{power}"


def _pot(obj: WorldObject) -> str:
    t = obj.temperature_c
    return "pot:hot" if t >= 100 else "pot:cold" if t <= 10 else "pot"


def _mushroom(obj: WorldObject) -> str:
    return f"mushroom:{_colour_of(obj, 'red')}:{'cooked' if obj.cooked else ''}"


def _rusted(obj: WorldObject) -> bool:
    """The `rusted` property where the object has one (a derusted "key (no rust)" shows clean),
    else the word in its name."""
    if "rusted" in obj.props:
        return bool(obj.props["rusted"])
    return "rusted" in obj.name or "rusty" in obj.name


def _key(obj: WorldObject) -> str:
    return f"key:{_colour_of(obj, 'gold')}:{'rust' if _rusted(obj) else ''}"


def _nail(obj: WorldObject) -> str:
    return f"nail:{'rust' if _rusted(obj) else ''}"


def _statue(obj: WorldObject) -> str:
    subject = _creature_word(obj.name) or _creature_word(obj.sprite.replace("_", " "))
    return f"statue:{subject}" if subject else "statue"


def _substance_letter(name: str) -> str:
    """'Substance B' -> 'b'; mixtures and others -> 'mix'."""
    words = name.lower().replace("(", " ").replace(")", " ").split()
    if "mixture" in words or "substance" not in words:
        return "mix"
    after = words[words.index("substance") + 1 :]
    return after[0] if after and len(after[0]) == 1 else "mix"


def _jar(obj: WorldObject) -> str:
    """Empty, holding things, or holding chemicals (tinted by substance; mixed: purple)."""
    if not obj.contents:
        return "jar"
    letters = {_substance_letter(o.name) for o in obj.contents if o.type == "substance"}
    if not letters:
        return "jar:full"
    return f"jar:{letters.pop() if len(letters) == 1 else 'mix'}"


def _generator(obj: WorldObject) -> str:
    part = next((p for p in ("left", "right") if p in obj.sprite), "core")
    digits = re.findall(r"(\d+)%", obj.name)
    return f"generator:{part}:{digits[0] if digits else 0}"


def _flag_pole(obj: WorldObject) -> str:
    return f"flag_pole:{int(getattr(obj, 'flag_height', 0))}:{int(getattr(obj, 'pole_height', 6))}"


def _full(base: str) -> Callable[[WorldObject], str]:
    return lambda obj: f"{base}:full" if obj.contents else base


def _fixed(key: str) -> Callable[[WorldObject], str]:
    return lambda obj: key


def _coloured(base: str, default: str) -> Callable[[WorldObject], str]:
    return lambda obj: f"{base}:{_colour_of(obj, default)}"


BY_TYPE: dict[str, Callable[[WorldObject], str]] = {
    "grass": _grass,
    "path": lambda o: f"path:{_variant(o, 2)}",
    "sand": lambda o: f"sand:{_variant(o, 2)}",
    "floor": _fixed("floor"),
    "cave floor": _fixed("cave_floor"),
    "cave wall": _fixed("cave_wall"),
    "launch pad": _fixed("launch_pad"),
    "wall": _wall,
    "fence": _fence,
    "door": _door,
    "sign": _fixed("sign"),
    "village sign": _fixed("sign"),
    "statue": _statue,
    "tree": _tree,
    "plant": lambda o: f"plant:{_variant(o, 3)}",
    "cactus": _fixed("cactus"),
    "soil": _soil,
    "dirt": _fixed("dirt"),
    "table": _table,
    "desk": _fixed("table"),
    "chair": _fixed("chair"),
    "bed": _fixed("bed"),
    "bookcase": _fixed("bookcase"),
    "fridge": _appliance,
    "stove": _appliance,
    "sink": _appliance,
    "jar": _jar,
    "petri dish": _full("petri_dish"),
    "flowerpot": _full("flower_pot"),
    "pot": _pot,
    "fertilizer bag": _fixed("bag:green"),
    "fertilizer pellet": _fixed("granules:white"),
    "mushroom": _mushroom,
    "seed": _fixed("seed"),
    "flower": _coloured("flower", "red"),
    "rock": lambda o: "rock:glowing" if "glowing" in o.name else "rock",
    "quantum crystal": _fixed("crystal:cyan"),
    "crystal": _coloured("crystal", "cyan"),
    "flag": _coloured("flag", "red"),
    "key": _key,
    "nail": _nail,
    "coin": _fixed("coin"),
    "shovel": _fixed("shovel"),
    "tape": _fixed("tape"),
    "stick": _fixed("stick"),
    "book": _coloured("book", "blue"),
    "paint bucket": _coloured("paint_bucket", "red"),
    "computer": _fixed("computer"),
    "monitor": _fixed("computer"),
    "floppy disk": _fixed("floppy:blue"),
    "flag pole": _flag_pole,
    "substance": lambda o: f"substance:{_substance_letter(o.name)}",
    "dispenser": lambda o: f"dispenser:{_substance_letter(o.name)}",
    "bottle cleaner": _fixed("bottle_cleaner"),
    "crystal reactor": lambda o: f"reactor:{'on' if o.activated else 'off'}",
    "generator": _generator,
    "microscope": _fixed("microscope"),
    "spectrometer": _fixed("spectrometer"),
    "thermometer": _fixed("thermometer"),
    "PH meter": _fixed("ph_meter"),
    "radiation meter": _fixed("radiation_meter"),
    "densitometer": _fixed("densitometer"),
}

# Last resort before the crate: a word of the name or type that has art.
BY_WORD: dict[str, str] = {
    "artifact": "artifact",
    "hammer": "hammer",
    "chisel": "chisel",
    "tongs": "tongs",
    "controller": "machine:grey",
    "terminal": "machine:grey",
    "interface": "machine:grey",
    "console": "machine:grey",
    "reactor": "reactor",
    "machine": "machine:grey",
    "substance": "substance:mix",
    "mixture": "substance:mix",
    "disk": "floppy:blue",
    "bookcase": "bookcase",
    "book": "book",
    "computer": "computer",
    "monitor": "computer",
    "meter": "meter",
    "plant": "plant:0",
    "tree": "tree_trunk",
    "rock": "rock",
    "statue": "statue",
    "mushroom": "mushroom:red:",
    "flower": "flower:red",
    "crystal": "crystal:cyan",
    "jar": "jar",
    "stick": "stick",
    "table": "table",
    "seed": "seed",
}


# The original's creature sprite sheets ("enemy06_04_") by sheet number.
CREATURE_SHEETS = {1: "spheroid", 6: "echojelly", 10: "vortisquid", 11: "animaplant", 16: "prismatic"}


# Sprite names (the original's, kept by scenarios) that pick art regardless of type.
SPRITE_ALIASES: dict[str, str] = {"quantum_crystal": "crystal:cyan"}


def _agent(obj: WorldObject) -> str:
    """Players and people by palette; animals (named species, a dog class, the original's
    "enemyNN" sprite sheets) as creatures."""
    facing = str(getattr(obj, "facing", "south"))
    sick = ":sick" if getattr(obj, "poisoned", False) else ""
    if not obj.is_npc:
        return f"agent:player:{facing}{sick}"
    species = _creature_word(f"{type(obj).__name__} {obj.name}")
    enemy = re.match(r"enemy(\d+)", obj.sprite)
    if species is None and enemy is not None:
        species = CREATURE_SHEETS.get(int(enemy.group(1)), f"creature{int(enemy.group(1))}")
    if species is not None:
        return f"creature:{species}:{facing}"
    # Sprite and name together pick the look, so two people sharing an original sprite differ.
    index = zlib.crc32(f"{obj.sprite}|{obj.name}".encode()) % 100_000
    return f"agent:npc{index}:{facing}{sick}"


def sprite_key(obj: WorldObject) -> str:
    """The sprite key for an object in its current state."""
    if obj.is_agent:
        return _agent(obj)
    if obj.sprite:  # a scenario's explicit choice: one of the original's names, or one of ours
        if obj.sprite in SPRITE_ALIASES:
            return SPRITE_ALIASES[obj.sprite]
        if obj.sprite.split(":", 1)[0] in PAINTERS:
            return obj.sprite
    chooser = BY_TYPE.get(obj.type)
    if chooser is not None:
        return chooser(obj)
    for word in f"{obj.type} {obj.name}".lower().split():
        if word in BY_WORD:
            return BY_WORD[word]
        if word.endswith("meter"):
            return "meter"
    return f"{UNKNOWN}:{obj.name}"


def is_fallback(key: str) -> bool:
    return key.startswith(UNKNOWN + ":") or key == UNKNOWN
