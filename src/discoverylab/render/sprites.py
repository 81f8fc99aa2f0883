"""The sprite atlas: the picture for a sprite key, and how holders show their contents.

`sprite(key)` draws the 32x32 RGBA picture of a key (chosen by `sprite_keys.sprite_key`) once
per process (cached); `mini_sprite(key)` is the half-size version used for contents shown on
their holder (a jar on a table). Keys are plain strings, so a tile's look is a hashable tuple of
keys and the renderer can cache whole composed tiles.

All art is our own, drawn procedurally with Pillow (`sprite_scenery`, `sprite_furniture`,
`sprite_items`, `sprite_instruments`, `sprite_lab`, `sprite_characters`); a type without art
becomes a labelled crate (`"unknown:<name>"`).
"""

from __future__ import annotations

from functools import cache

from PIL import Image

from discoverylab.render import (  # noqa: F401  (painters register on import)
    sprite_furniture,
    sprite_instruments,
    sprite_items,
    sprite_lab,
    sprite_scenery,
)
from discoverylab.render.sprite_keys import FADE_SUFFIX, UNKNOWN
from discoverylab.render.sprite_keys import is_fallback as is_fallback  # re-exported: tests import it here
from discoverylab.render.sprite_keys import sprite_key as sprite_key  # re-exported: tests import it here
from discoverylab.render.sprite_paint import OPAQUE, PAINTERS, TILE, faded

MINI = TILE // 2

# Holders whose sprite already shows that they hold something: their contents are not drawn.
SHOWS_FULLNESS = frozenset({"jar", "petri_dish", "flower_pot", "bag"})

# Where the contents of an open holder are drawn on its tile: (x0, y0, x1, y1), exclusive ends.
CONTENT_BOX: dict[str, tuple[int, int, int, int]] = {
    "table": (1, 0, 31, 22),
    "bedside_table": (5, 0, 27, 18),
    "chair": (7, 4, 25, 22),
    "bed": (4, 6, 28, 30),
    "fridge": (6, 2, 26, 28),
    "stove": (4, 12, 28, 29),
    "sink": (7, 4, 25, 21),
    "pot": (8, 0, 24, 16),
    "soil": (6, 8, 26, 26),
}


# ---- atlas -----------------------------------------------------------------------------------
@cache
def base_name(key: str) -> str:
    return key.split(":", 1)[0].split("|", 1)[0]


@cache
def is_opaque(key: str) -> bool:
    """Whether the sprite covers its whole tile (nothing below it needs drawing)."""
    return base_name(key) in OPAQUE and not key.endswith(FADE_SUFFIX)


@cache
def sprite(key: str) -> Image.Image:
    """The 32x32 RGBA sprite for a key (drawn on first use, then cached for the process)."""
    if key.endswith(FADE_SUFFIX):
        return faded(sprite(key[: -len(FADE_SUFFIX)]), 0.45)
    base, *args = key.split(":")
    if base == UNKNOWN:
        return PAINTERS[UNKNOWN](key.partition(":")[2])
    paint = PAINTERS.get(base)
    if paint is None:
        return PAINTERS[UNKNOWN](base)
    try:
        return paint(*args)
    except (TypeError, ValueError, IndexError, KeyError):  # a malformed key: show it, don't crash
        return PAINTERS[UNKNOWN](key)


@cache
def mini_sprite(key: str, size: int = MINI) -> Image.Image:
    """A shrunk sprite for contents drawn on their holder (half size by default)."""
    return sprite(key).resize((size, size), Image.Resampling.BOX)


# One representative key per painter and state (for the sprite sheet and the tests).
_ATLAS = """
grass:0 grass:1 grass:2 grass:3 path:0 path:1 sand:0 floor cave_floor cave_wall launch_pad
wall:face wall:cap fence: fence:ew fence:ns fence:es fence:nesw door:closed door:locked door:open
sign statue tree_canopy:0 tree_canopy:1 tree_trunk plant:0 plant:1 plant:2 cactus soil soil:hole dirt
table bedside_table:closed bedside_table:open chair bed bookcase fridge:closed:on fridge:open:on
stove:closed:off stove:closed:on stove:open:on sink:off sink:on jar jar:full petri_dish petri_dish:full
jar:a jar:mix pot pot:hot flower_pot flower_pot:full bag:green granules:white seed flower:red flower:blue
mushroom:red: mushroom:green: mushroom:yellow: mushroom:pink: mushroom:white: mushroom:red:cooked
rock rock:glowing crystal:cyan flag:red key:gold: key:red: key:gold:rust nail: nail:rust coin shovel tape stick book:blue
paint_bucket:red artifact computer microscope spectrometer thermometer ph_meter radiation_meter
densitometer meter agent:player:south agent:player:east agent:player:north agent:player:west
agent:player:south:sick agent:npc15:south agent:npc16:south agent:npc17:south agent:npc32:south
agent:npc35:south agent:npc9:south agent:npc17:east creature:spheroid:east creature:echojelly:east
creature:vortisquid:east creature:animaplant:east creature:prismatic:east creature:dog:west
creature:creature3:east statue:spheroid statue:vortisquid statue:prismatic substance:a substance:b
substance:mix dispenser:c bottle_cleaner machine:grey reactor:off reactor:on generator:left:0
generator:core:50 generator:right:0 flag_pole:4:6 floppy:blue hammer chisel tongs rocket:top rocket:body
"""


def atlas_keys() -> list[str]:
    """A representative key for every painter and state, plus one labelled crate."""
    return [*_ATLAS.split(), "unknown:ancient widget"]


def sprite_sheet(columns: int = 12, scale: int = 2) -> Image.Image:
    """Every atlas sprite on a grass-free grey sheet (for docs and eyeballing)."""
    keys = atlas_keys()
    rows = -(-len(keys) // columns)
    sheet = Image.new("RGBA", (columns * TILE, rows * TILE), (96, 96, 104, 255))
    for i, key in enumerate(keys):
        sheet.alpha_composite(sprite(key), ((i % columns) * TILE, (i // columns) * TILE))
    return sheet.resize((sheet.width * scale, sheet.height * scale), Image.Resampling.NEAREST)
