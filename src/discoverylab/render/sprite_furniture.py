"""Procedural sprites for furniture and kitchen appliances (see `sprite_paint`).

The indoor objects of houses and labs: tables, chairs, a bed and a bookcase, and the appliances
whose sprite shows their state (a fridge or stove open or closed, powered or not; a sink running).
Split from `sprite_scenery`, which keeps the terrain, buildings and plants these stand among.
"""

from __future__ import annotations

from PIL import Image

from discoverylab.render.sprite_paint import (
    METAL,
    METAL_DARK,
    METAL_LIGHT,
    NAMED_COLOURS,
    WOOD,
    WOOD_DARK,
    WOOD_LIGHT,
    canvas,
    outlined,
    painter,
    rgba,
    seeded,
    shade,
    with_shadow,
)

# ---- furniture -------------------------------------------------------------------------------


@painter("table")
def table() -> Image.Image:
    img, d = canvas()
    d.rectangle((3, 23, 6, 30), fill=WOOD_DARK)
    d.rectangle((25, 23, 28, 30), fill=WOOD_DARK)
    d.rectangle((1, 3, 30, 22), fill=WOOD_LIGHT)
    d.line((1, 3, 30, 3), fill=shade(WOOD_LIGHT, 1.15))
    d.line((1, 12, 30, 12), fill=shade(WOOD_LIGHT, 0.9))
    d.rectangle((1, 21, 30, 24), fill=WOOD)
    d.line((1, 24, 30, 24), fill=WOOD_DARK)
    return with_shadow(outlined(img), (2, 26, 29, 31))


@painter("bedside_table")
def bedside_table(state: str = "closed") -> Image.Image:
    img, d = canvas()
    d.rectangle((6, 4, 25, 28), fill=WOOD)
    d.rectangle((6, 4, 25, 8), fill=WOOD_LIGHT)
    d.line((6, 18, 25, 18), fill=WOOD_DARK)
    if state == "open":  # drawer pulled out: its dark inside shows
        d.rectangle((4, 9, 27, 19), fill=WOOD_LIGHT, outline=WOOD_DARK)
        d.rectangle((6, 10, 25, 16), fill=rgba("#3b2a22"))
    else:
        d.rectangle((8, 10, 23, 16), fill=shade(WOOD, 1.08), outline=WOOD_DARK)
        d.rectangle((14, 12, 17, 13), fill=NAMED_COLOURS["gold"])
    d.rectangle((8, 20, 23, 26), fill=shade(WOOD, 1.08), outline=WOOD_DARK)
    return with_shadow(outlined(img), (4, 25, 27, 31))


@painter("chair")
def chair() -> Image.Image:
    img, d = canvas()
    d.rectangle((9, 3, 22, 11), fill=WOOD)
    d.rectangle((9, 3, 22, 4), fill=WOOD_LIGHT)
    d.line((13, 5, 13, 11), fill=WOOD_DARK)
    d.line((18, 5, 18, 11), fill=WOOD_DARK)
    d.rectangle((9, 22, 11, 29), fill=WOOD_DARK)
    d.rectangle((20, 22, 22, 29), fill=WOOD_DARK)
    d.rectangle((8, 12, 23, 22), fill=WOOD_LIGHT)
    d.line((8, 22, 23, 22), fill=WOOD_DARK)
    return with_shadow(outlined(img), (7, 25, 24, 31))


@painter("bed")
def bed() -> Image.Image:
    img, d = canvas()
    blanket = rgba("#4a7fc8")
    d.rectangle((3, 1, 28, 30), fill=WOOD)
    d.rectangle((3, 1, 28, 4), fill=WOOD_DARK)
    d.rounded_rectangle((7, 5, 24, 11), radius=3, fill=rgba("#f4f1ea"), outline=rgba("#c8c4bc"))
    d.rectangle((4, 13, 27, 29), fill=blanket)
    d.rectangle((4, 13, 27, 15), fill=shade(blanket, 1.3))
    d.line((4, 21, 27, 21), fill=shade(blanket, 0.8))
    return outlined(img)


@painter("bookcase")
def bookcase() -> Image.Image:
    img, d = canvas()
    d.rectangle((3, 1, 28, 30), fill=WOOD_DARK)
    rng = seeded(80)
    for y in (3, 12, 21):
        d.rectangle((5, y, 26, y + 7), fill=rgba("#3b2a22"))
        x = 5
        while x < 25:
            w = int(rng.integers(2, 4))
            colour = list(NAMED_COLOURS.values())[int(rng.integers(0, 8))]
            d.rectangle((x, y + 1 + int(rng.integers(0, 2)), x + w - 1, y + 7), fill=colour)
            x += w + 1
    return outlined(img)


@painter("fridge")
def fridge(state: str = "closed", power: str = "on") -> Image.Image:
    body = rgba("#eef2f4")
    img, d = canvas()
    d.rectangle((5, 1, 26, 29), fill=body)
    d.line((26, 1, 26, 29), fill=shade(body, 0.8))
    if state == "open":
        d.rectangle((7, 3, 24, 27), fill=rgba("#bfe0ee"))
        for y in (11, 19):
            d.line((7, y, 24, y), fill=METAL_DARK)
        d.rectangle((27, 1, 30, 29), fill=shade(body, 0.9))  # the door, swung right
    else:
        d.line((5, 11, 26, 11), fill=shade(body, 0.65))
        d.rectangle((8, 4, 9, 9), fill=METAL_DARK)
        d.rectangle((8, 14, 9, 21), fill=METAL_DARK)
    if power == "on":
        d.rectangle((22, 3, 23, 4), fill=rgba("#40b0f0"))
    return with_shadow(outlined(img), (3, 26, 28, 31))


@painter("stove")
def stove(state: str = "closed", power: str = "off") -> Image.Image:
    body = rgba("#5a5f68")
    img, d = canvas()
    d.rectangle((2, 2, 29, 29), fill=body)
    d.rectangle((2, 2, 29, 12), fill=shade(body, 0.75))
    hot = rgba("#ff6a2a") if power == "on" else shade(body, 0.55)
    for cx in (8, 22):
        d.ellipse((cx - 4, 3, cx + 4, 11), outline=hot, width=2)
    for i, cx in enumerate((9, 14, 19, 24)):
        d.rectangle((cx - 1, 14, cx, 15), fill=rgba("#ffd040") if power == "on" and i == 0 else METAL_LIGHT)
    if state == "open":
        d.rectangle((4, 17, 27, 28), fill=rgba("#281c18"))
        if power == "on":
            d.rectangle((6, 25, 25, 26), fill=rgba("#ff6a2a"))
        d.rectangle((3, 28, 28, 31), fill=METAL)
    else:
        d.rectangle((5, 18, 26, 27), fill=rgba("#2e323a"), outline=METAL)
        d.line((8, 19, 23, 19), fill=METAL_LIGHT)
    return outlined(img)


@painter("sink")
def sink(power: str = "off") -> Image.Image:
    img, d = canvas()
    counter = rgba("#d8d4cc")
    d.rectangle((2, 5, 29, 22), fill=counter)
    d.rectangle((2, 22, 29, 29), fill=WOOD)
    d.line((16, 23, 16, 29), fill=WOOD_DARK)
    d.ellipse((7, 9, 24, 20), fill=METAL, outline=METAL_DARK)
    d.ellipse((9, 11, 22, 19), fill=METAL_LIGHT if power == "off" else rgba("#5fb0ea"))
    d.rectangle((15, 4, 16, 9), fill=METAL_DARK)
    if power == "on":
        d.line((15, 9, 15, 13), fill=rgba("#9ad8ff"))
    return outlined(img)
