"""Drawing kit for the procedural sprites: a painter registry, palettes and pixel helpers.

Every sprite is a 32x32 RGBA image drawn with Pillow `ImageDraw` primitives (no third-party art).
Painters register under a base name (`@painter("door")`) and receive the colon-separated
arguments of a sprite key (`"door:locked"` calls the door painter with `"locked"`). Variation
(grass blades, pebbles) comes from a fixed-seed numpy generator per painter call, so the
atlas is identical in every process.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image, ImageChops, ImageDraw

TILE = 32
RGBA = tuple[int, int, int, int]
Painter = Callable[..., Image.Image]

PAINTERS: dict[str, Painter] = {}
OPAQUE: set[str] = set()  # painters whose every sprite covers the whole tile


def painter(name: str, opaque: bool = False) -> Callable[[Painter], Painter]:
    """Register a painter for sprite keys starting with `name`."""

    def wrap(fn: Painter) -> Painter:
        if name in PAINTERS:
            raise ValueError(f"Sprite painter {name!r} registered twice.")
        PAINTERS[name] = fn
        if opaque:
            OPAQUE.add(name)
        return fn

    return wrap


def rgba(hex_colour: str, alpha: int = 255) -> RGBA:
    """'#rrggbb' -> (r, g, b, a)."""
    h = hex_colour.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), alpha


def shade(colour: RGBA, factor: float) -> RGBA:
    """Darker (< 1) or lighter (> 1) version of a colour, alpha kept."""
    r, g, b, a = colour
    if factor <= 1:
        return int(r * factor), int(g * factor), int(b * factor), a
    t = factor - 1
    return int(r + (255 - r) * t), int(g + (255 - g) * t), int(b + (255 - b) * t), a


def seeded(salt: int) -> np.random.Generator:
    """A fixed generator per painter variant: the same pixels in every process."""
    return np.random.default_rng(1234 + salt)


def canvas(fill: RGBA | None = None) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img = Image.new("RGBA", (TILE, TILE), fill if fill is not None else (0, 0, 0, 0))
    return img, ImageDraw.Draw(img)


def speckle(
    draw: ImageDraw.ImageDraw,
    rng: np.random.Generator,
    colours: list[RGBA],
    count: int,
    box: tuple[int, int, int, int] = (0, 0, TILE - 1, TILE - 1),
    size: int = 1,
) -> None:
    """Scatter `count` dots of random colours inside `box` (inclusive)."""
    x0, y0, x1, y1 = box
    for _ in range(count):
        x = int(rng.integers(x0, x1 + 1))
        y = int(rng.integers(y0, y1 + 1))
        colour = colours[int(rng.integers(0, len(colours)))]
        draw.rectangle((x, y, x + size - 1, y + size - 1), fill=colour)


def outlined(img: Image.Image, colour: RGBA = (38, 30, 36, 255)) -> Image.Image:
    """Add a 1-px outline (4-connected) around the opaque pixels: the pixel-art look."""
    alpha = img.getchannel("A").point(lambda a: 255 if a > 100 else 0)
    grown = Image.new("L", img.size, 0)
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        shifted = Image.new("L", img.size, 0)
        shifted.paste(alpha, (dx, dy))
        grown = ImageChops.lighter(grown, shifted)
    out = Image.new("RGBA", img.size, colour)
    out.putalpha(grown)
    out.alpha_composite(img)
    return out


def shadow(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], alpha: int = 70) -> None:
    """A soft ground shadow (an ellipse of translucent black) under an object."""
    draw.ellipse(box, fill=(0, 0, 0, alpha))


def with_shadow(img: Image.Image, box: tuple[int, int, int, int], alpha: int = 70) -> Image.Image:
    """`img` drawn over a ground shadow ellipse."""
    base, draw = canvas()
    shadow(draw, box, alpha)
    base.alpha_composite(img)
    return base


def item(img: Image.Image, width: int = 14) -> Image.Image:
    """Outline a portable item and put a small ground shadow, `width` px wide, under it."""
    half = width // 2
    return with_shadow(outlined(img), (16 - half, 25, 15 + half, 30), alpha=55)


def named_colour(name: str, default: str) -> RGBA:
    """The fill for a colour word, or for `default` when the word is not a colour we know."""
    return NAMED_COLOURS.get(name, NAMED_COLOURS[default])


def faded(img: Image.Image, factor: float) -> Image.Image:
    """The sprite with its alpha scaled (tree canopies over an agent)."""
    out = img.copy()
    out.putalpha(img.getchannel("A").point(lambda a: int(a * factor)))
    return out


# Colour names used in object names ("red key", "pink mushroom") -> fill colour.
NAMED_COLOURS: dict[str, RGBA] = {
    "red": rgba("#d83a3a"),
    "green": rgba("#4fb84a"),
    "blue": rgba("#3d6fd8"),
    "yellow": rgba("#f2d13a"),
    "pink": rgba("#f08fc0"),
    "orange": rgba("#f08a2a"),
    "purple": rgba("#8f4fc8"),
    "white": rgba("#f2efe6"),
    "black": rgba("#2e2a30"),
    "brown": rgba("#8a5a32"),
    "gold": rgba("#f0c030"),
    "silver": rgba("#c8ccd4"),
    "grey": rgba("#8c8c96"),
    "gray": rgba("#8c8c96"),
    "cyan": rgba("#40c8d8"),
}

OUTLINE = rgba("#26201f")
WOOD = rgba("#b87a44")
WOOD_DARK = rgba("#7c4a26")
WOOD_LIGHT = rgba("#d49a5e")
METAL = rgba("#a8b0bc")
METAL_DARK = rgba("#5e6672")
METAL_LIGHT = rgba("#dfe5ec")
GLASS = rgba("#bfe6f2", 170)
LEAF = rgba("#3f9a3a")
LEAF_DARK = rgba("#2c7030")
LEAF_LIGHT = rgba("#6cc45a")

# Substances are clear in the material table; the pictures give each letter its own tint.
SUBSTANCE_COLOURS: dict[str, RGBA] = {
    "a": rgba("#e85a6a"),
    "b": rgba("#4a8ae8"),
    "c": rgba("#f0c83a"),
    "d": rgba("#4ac87a"),
    "mix": rgba("#a06ad8"),
}
