"""Procedural sprites for laboratory machines, chemicals, archaeology tools and village props
(see `sprite_paint`)."""

from __future__ import annotations

from PIL import Image

from discoverylab.render.sprite_paint import (
    METAL,
    METAL_DARK,
    METAL_LIGHT,
    NAMED_COLOURS,
    OUTLINE,
    SUBSTANCE_COLOURS,
    WOOD,
    WOOD_DARK,
    canvas,
    item,
    outlined,
    painter,
    rgba,
    shade,
    with_shadow,
)


@painter("substance")
def substance(letter: str = "a") -> Image.Image:
    """A measure of a chemical: a small flask of tinted liquid."""
    liquid = SUBSTANCE_COLOURS.get(letter, SUBSTANCE_COLOURS["mix"])
    img, d = canvas()
    glass = rgba("#e4f4f8", 200)
    d.rectangle((14, 5, 17, 12), fill=glass)
    d.polygon([(14, 12), (17, 12), (24, 26), (7, 26)], fill=glass)
    d.polygon([(11, 18), (20, 18), (24, 26), (7, 26)], fill=liquid)
    d.line((15, 7, 15, 12), fill=(255, 255, 255, 230))
    d.rectangle((13, 4, 18, 5), fill=WOOD)
    return item(img, 18)


@painter("dispenser")
def dispenser(letter: str = "a") -> Image.Image:
    """A chemical dispenser: a tank of the substance over a nozzle."""
    liquid = SUBSTANCE_COLOURS.get(letter, SUBSTANCE_COLOURS["mix"])
    img, d = canvas()
    d.rectangle((6, 20, 25, 29), fill=METAL_DARK)
    d.rounded_rectangle((8, 2, 23, 19), radius=3, fill=rgba("#e4f4f8", 220))
    d.rounded_rectangle((9, 8, 22, 18), radius=2, fill=liquid)
    d.line((10, 4, 10, 16), fill=(255, 255, 255, 230))
    d.rectangle((14, 20, 17, 24), fill=METAL)
    d.rectangle((8, 26, 23, 27), fill=METAL_LIGHT)
    return outlined(img)


@painter("bottle_cleaner")
def bottle_cleaner() -> Image.Image:
    img, d = canvas()
    d.rounded_rectangle((6, 8, 25, 28), radius=2, fill=rgba("#d8e4ec"))
    d.ellipse((10, 11, 21, 22), fill=rgba("#5fb0ea"), outline=METAL_DARK)
    for x, y in ((13, 14), (17, 16), (15, 19)):
        d.ellipse((x, y, x + 2, y + 2), outline=(255, 255, 255, 255))
    d.rectangle((8, 24, 12, 25), fill=NAMED_COLOURS["green"])
    return outlined(img)


@painter("machine")
def machine(colour: str = "grey", light: str = "off") -> Image.Image:
    """A generic lab device (reactor, controller, terminal): cabinet, screen, status light."""
    body = NAMED_COLOURS.get(colour, NAMED_COLOURS["grey"])
    img, d = canvas()
    d.rectangle((4, 4, 27, 28), fill=body)
    d.rectangle((4, 4, 27, 6), fill=shade(body, 1.25))
    d.rectangle((7, 9, 20, 17), fill=OUTLINE)
    d.line((9, 12, 17, 12), fill=rgba("#7aff9a"))
    d.line((9, 14, 14, 14), fill=rgba("#7aff9a"))
    d.ellipse((22, 9, 25, 12), fill=NAMED_COLOURS["green"] if light == "on" else NAMED_COLOURS["red"])
    for x in (8, 13, 18):
        d.rectangle((x, 21, x + 3, 24), fill=shade(body, 0.7))
    return with_shadow(outlined(img), (3, 26, 28, 31))


@painter("reactor")
def reactor(state: str = "off") -> Image.Image:
    """A crystal reactor: a ring housing a crystal that glows once calibrated."""
    img, d = canvas()
    d.rectangle((5, 20, 26, 28), fill=METAL_DARK)
    d.ellipse((6, 4, 25, 23), fill=METAL, outline=METAL_DARK, width=2)
    glow = rgba("#7af0ff") if state == "on" else rgba("#5a7a88")
    if state == "on":
        d.ellipse((8, 6, 23, 21), fill=rgba("#c8fbff", 160))
    d.polygon([(15, 8), (19, 13), (15, 19), (12, 13)], fill=glow)
    d.rectangle((9, 23, 11, 25), fill=NAMED_COLOURS["green"] if state == "on" else NAMED_COLOURS["red"])
    return outlined(img)


@painter("generator")
def generator(part: str = "core", level: str = "0") -> Image.Image:
    """A segment of a long generator: `left`/`right` ends or a `core` with a charge bar."""
    body = rgba("#6a7488")
    img, d = canvas()
    x0 = 3 if part == "left" else 0
    x1 = 28 if part == "right" else 31
    d.rectangle((x0, 6, x1, 28), fill=body)
    d.rectangle((x0, 6, x1, 9), fill=shade(body, 1.3))
    d.line((x0, 28, x1, 28), fill=shade(body, 0.6))
    if part == "core":
        d.rectangle((8, 12, 23, 25), fill=OUTLINE)
        filled = int(round(13 * max(0, min(100, int(level))) / 100))
        if filled:
            d.rectangle((9, 25 - filled, 22, 24), fill=rgba("#7af0ff"))
    else:
        for y in (13, 17, 21):
            d.line((x0 + 5, y, x1 - 5, y), fill=shade(body, 0.7))
    return img


@painter("flag_pole")
def flag_pole(height: str = "0", pole_height: str = "6") -> Image.Image:
    """A flag pole whose flag sits at `height` of `pole_height` meters (0 = ground)."""
    img, d = canvas()
    d.rectangle((14, 1, 16, 29), fill=METAL_LIGHT)
    d.line((16, 1, 16, 29), fill=METAL_DARK)
    d.rectangle((11, 28, 19, 30), fill=METAL_DARK)
    top = max(1, int(pole_height) - 1)
    y = 22 - int(19 * min(int(height), top) / top)
    d.polygon([(17, y), (27, y + 2), (17, y + 6)], fill=NAMED_COLOURS["red"])
    return outlined(img)


@painter("floppy")
def floppy(colour: str = "blue") -> Image.Image:
    img, d = canvas()
    c = NAMED_COLOURS.get(colour, NAMED_COLOURS["blue"])
    d.rectangle((8, 8, 23, 24), fill=c)
    d.rectangle((11, 8, 20, 13), fill=METAL_LIGHT)
    d.rectangle((17, 9, 18, 12), fill=c)
    d.rectangle((10, 16, 21, 24), fill=rgba("#f2efe6"))
    return item(img, 16)


@painter("hammer")
def hammer() -> Image.Image:
    img, d = canvas()
    d.line((9, 25, 19, 12), fill=WOOD, width=3)
    d.polygon([(13, 7), (22, 5), (25, 12), (17, 15)], fill=rgba("#8f8c88"))
    d.line((14, 8, 21, 6), fill=rgba("#b8b4ae"))
    return item(img, 16)


@painter("chisel")
def chisel() -> Image.Image:
    bronze = rgba("#c8843a")
    img, d = canvas()
    d.line((8, 24, 16, 16), fill=WOOD_DARK, width=4)
    d.polygon([(15, 15), (18, 18), (26, 10), (24, 8)], fill=bronze)
    d.line((17, 15, 24, 9), fill=shade(bronze, 1.3))
    return item(img, 16)


@painter("tongs")
def tongs() -> Image.Image:
    iron = rgba("#5e5a58")
    img, d = canvas()
    d.line((7, 25, 24, 8), fill=iron, width=2)
    d.line((11, 26, 26, 11), fill=iron, width=2)
    d.ellipse((13, 15, 17, 19), fill=shade(iron, 1.4))
    return item(img, 18)


@painter("rocket")
def rocket(part: str = "body") -> Image.Image:
    """A rocket on its pad, two tiles tall: the `top` (nose cone and window) above the `body`
    (hull, fins and nozzle). It was drawn with the generic machine, which looks like a computer
    terminal (issue #26)."""
    hull, trim = rgba("#e8ecf2"), NAMED_COLOURS["red"]
    img, d = canvas()
    if part == "top":
        d.polygon([(15, 2), (22, 14), (23, 31), (8, 31), (9, 14)], fill=hull)
        d.polygon([(15, 2), (20, 11), (11, 11)], fill=trim)
        d.ellipse((12, 17, 19, 24), fill=rgba("#5ab4ff"), outline=METAL_DARK, width=1)
        d.line((22, 14, 23, 31), fill=shade(hull, 0.8))
        return outlined(img)
    d.rectangle((8, 0, 23, 24), fill=hull)
    d.line((22, 0, 22, 24), fill=shade(hull, 0.8))
    d.rectangle((8, 6, 23, 8), fill=trim)
    d.polygon([(8, 14), (2, 26), (8, 24)], fill=trim)
    d.polygon([(23, 14), (29, 26), (23, 24)], fill=trim)
    d.polygon([(11, 24), (20, 24), (22, 29), (9, 29)], fill=METAL_DARK)
    d.rectangle((13, 29, 18, 30), fill=rgba("#ffb347"))
    return with_shadow(outlined(img), (4, 28, 27, 31))
