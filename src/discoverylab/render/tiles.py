"""What a tile shows: its look (the sprite keys of its objects, bottom-up) and the drawing of a look.

Split from `renderer.py`, which caches and assembles these pictures: everything here is a pure
function of the world state (`tile_look`) or of a look (`compose_tile`), so the renderer can key
its tile cache by the look and never invalidate it. A look stops at the first opaque sprite;
open holders carry up to `MAX_SHOWN_CONTENTS` content keys, drawn shrunk inside the holder's
`CONTENT_BOX`; an air-layer object over an agent (a canopy) is drawn faded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PIL import Image, ImageDraw

from discoverylab.render.sprite_keys import FADE_SUFFIX, sprite_key
from discoverylab.render.sprites import (
    CONTENT_BOX,
    MINI,
    SHOWS_FULLNESS,
    TILE,
    base_name,
    is_opaque,
    mini_sprite,
    sprite,
)
from discoverylab.world.objects import Layer

if TYPE_CHECKING:
    from discoverylab.world.world import World

MAX_SHOWN_CONTENTS = 4  # contents drawn on a holder; more are hinted by three dots
SINGLE_CONTENT = 24  # px of a holder's only item (several share the space at 16 px)

# A tile's look: entries bottom-up, each a sprite key or (holder key, content keys, overflow).
TileEntry = str | tuple[str, tuple[str, ...], bool]
TileLook = tuple[TileEntry, ...]


def tile_look(world: World, x: int, y: int) -> TileLook:
    """What tile (x, y) shows, as sprite keys bottom-up (the cache key for its picture)."""
    stack = world.stacks[x][y]  # top layer first; within a layer, in placement order
    if not stack:
        return ()
    if len(stack) == 1:  # most tiles (ground alone): the general path below, without its checks
        obj = stack[0]
        key = sprite_key(obj)
        if obj.contents and obj.is_open and not obj.is_agent and base_name(key) not in SHOWS_FULLNESS:
            shown = tuple(sprite_key(c) for c in obj.contents[:MAX_SHOWN_CONTENTS])
            return ((key, shown, len(obj.contents) > MAX_SHOWN_CONTENTS),)
        return (key,)
    layers = [obj.layer for obj in stack]
    if len(set(layers)) < len(layers):  # a shared layer: the later placed lies on top
        stack = [stack[i] for i in sorted(range(len(stack)), key=lambda i: (-(stack[i].layer or 0), -i))]
    fade_air = stack[0].layer == Layer.AIR and any(o.is_agent for o in stack)
    entries: list[TileEntry] = []
    for obj in stack:
        key = sprite_key(obj)
        if fade_air and obj.layer == Layer.AIR:  # keep the agent visible under a canopy
            key += FADE_SUFFIX
        if obj.contents and obj.is_open and not obj.is_agent and base_name(key) not in SHOWS_FULLNESS:
            shown = tuple(sprite_key(c) for c in obj.contents[:MAX_SHOWN_CONTENTS])
            entries.append((key, shown, len(obj.contents) > MAX_SHOWN_CONTENTS))
        else:
            entries.append(key)
        if is_opaque(key):
            break
    entries.reverse()
    return tuple(entries)


def _content_slots(box: tuple[int, int, int, int], count: int, size: int) -> list[tuple[int, int]]:
    """Top-left corners of `count` (<= 4) shrunk sprites of `size` px inside `box`."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1 - size) // 2, (y0 + y1 - size) // 2
    left, right, top, bottom = x0, max(x0, x1 - size), y0, max(y0, y1 - size)
    if count == 1:
        return [(cx, cy)]
    if count == 2:
        return [(left, cy), (right, cy)]
    return [(left, top), (right, top), (left, bottom), (right, bottom)][:count]


def compose_tile(look: TileLook, scale: int = 1) -> Image.Image:
    """Draw a tile look (RGB, 32 * scale px square)."""
    tile = Image.new("RGBA", (TILE, TILE), (0, 0, 0, 255))
    for entry in look:
        if isinstance(entry, str):
            tile.alpha_composite(sprite(entry))
            continue
        key, contents, overflow = entry
        tile.alpha_composite(sprite(key))
        box = CONTENT_BOX.get(base_name(key), (0, 0, TILE, TILE))
        size = SINGLE_CONTENT if len(contents) == 1 else MINI  # a lone item is drawn larger
        for content, corner in zip(contents, _content_slots(box, len(contents), size), strict=True):
            tile.alpha_composite(mini_sprite(content, size), corner)
        if overflow:
            draw = ImageDraw.Draw(tile)
            for i in range(3):
                draw.rectangle(
                    (box[2] - 9 + 3 * i, box[3] - 3, box[2] - 8 + 3 * i, box[3] - 2),
                    fill=(250, 250, 250, 255),
                )
    out = tile.convert("RGB")
    if scale != 1:
        out = out.resize((TILE * scale, TILE * scale), Image.Resampling.NEAREST)
    return out
