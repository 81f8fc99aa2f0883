"""Procedural sprites for portable things: containers, food, tools, and the labelled-box
fallback for types without art (see `sprite_paint`); measuring instruments are in
`sprite_instruments`."""

from __future__ import annotations

from PIL import Image, ImageFont

from discoverylab.render.sprite_paint import (
    GLASS,
    LEAF,
    LEAF_DARK,
    METAL,
    METAL_DARK,
    METAL_LIGHT,
    NAMED_COLOURS,
    OUTLINE,
    SUBSTANCE_COLOURS,
    WOOD,
    WOOD_DARK,
    WOOD_LIGHT,
    canvas,
    item,
    named_colour,
    outlined,
    painter,
    rgba,
    seeded,
    shade,
    speckle,
)

GOLD = NAMED_COLOURS["gold"]


# ---- containers ------------------------------------------------------------------------------


@painter("jar")
def jar(fill: str = "") -> Image.Image:
    """`fill`: "" (empty), "full" (assorted things) or a substance letter (a tinted liquid)."""
    img, d = canvas()
    d.rounded_rectangle((9, 9, 22, 27), radius=3, fill=GLASS)
    if fill in SUBSTANCE_COLOURS:
        r, g, b, _ = SUBSTANCE_COLOURS[fill]
        d.rounded_rectangle((10, 16, 21, 26), radius=2, fill=(r, g, b, 230))
        d.line((11, 16, 20, 16), fill=shade(SUBSTANCE_COLOURS[fill], 1.3))
    elif fill:
        d.rounded_rectangle((10, 17, 21, 26), radius=2, fill=rgba("#c88a3a", 220))
        speckle(d, seeded(90), [rgba("#8a5a32")], 6, (11, 18, 20, 25))
    d.rectangle((10, 6, 21, 9), fill=METAL, outline=METAL_DARK)
    d.line((11, 11, 11, 24), fill=(255, 255, 255, 200))
    return item(img)


@painter("petri_dish")
def petri_dish(fill: str = "") -> Image.Image:
    img, d = canvas()
    d.ellipse((5, 13, 26, 25), fill=rgba("#d8eef4", 190), outline=rgba("#8ab4c4"))
    d.ellipse((7, 15, 24, 23), fill=rgba("#eef8fb", 170))
    if fill:
        for x, y, c in ((10, 17, "yellow"), (16, 19, "green"), (19, 16, "white")):
            d.ellipse((x, y, x + 3, y + 2), fill=NAMED_COLOURS[c])
    d.arc((7, 14, 16, 20), 190, 260, fill=(255, 255, 255, 230))
    return outlined(img)


@painter("pot")
def pot(heat: str = "") -> Image.Image:
    img, d = canvas()
    d.rectangle((5, 15, 8, 17), fill=METAL_DARK)
    d.rectangle((23, 15, 26, 17), fill=METAL_DARK)
    d.rounded_rectangle((8, 12, 23, 27), radius=3, fill=METAL)
    d.ellipse((8, 10, 23, 15), fill=METAL_LIGHT, outline=METAL_DARK)
    d.ellipse((10, 11, 21, 14), fill=METAL_DARK)
    d.line((10, 17, 10, 24), fill=METAL_LIGHT)
    if heat == "hot":
        for x in (11, 16, 20):
            d.line([(x, 8), (x - 1, 6), (x, 4), (x - 1, 2)], fill=(240, 240, 250, 200))
    elif heat == "cold":
        d.point([(12, 20), (18, 22), (15, 18)], fill=rgba("#bfe8ff"))
    return item(img, 18)


@painter("flower_pot")
def flower_pot(fill: str = "") -> Image.Image:
    img, d = canvas()
    clay = rgba("#c8643a")
    d.polygon([(8, 14), (23, 14), (21, 28), (10, 28)], fill=clay)
    d.rectangle((7, 12, 24, 15), fill=shade(clay, 1.15))
    d.rectangle((9, 12, 22, 13), fill=rgba("#5a3a22"))
    if fill:
        d.line((15, 12, 15, 5), fill=LEAF_DARK)
        d.ellipse((11, 4, 15, 8), fill=LEAF)
        d.ellipse((15, 2, 20, 7), fill=LEAF)
    return item(img, 14)


@painter("bag")
def bag(colour: str = "") -> Image.Image:
    """A sack (fertilizer bag): a paper bag with a coloured band."""
    img, d = canvas()
    paper = rgba("#e8dcc0")
    d.polygon([(9, 8), (22, 8), (24, 28), (7, 28)], fill=paper)
    d.rectangle((9, 6, 22, 9), fill=shade(paper, 0.85))
    d.rectangle((8, 15, 23, 21), fill=named_colour(colour, "green"))
    d.line((11, 18, 20, 18), fill=(255, 255, 255, 255))
    return item(img, 18)


@painter("granules")
def granules(colour: str = "white") -> Image.Image:
    img, d = canvas()
    c = named_colour(colour, "white")
    for x, y in ((11, 19), (16, 21), (19, 18), (14, 16), (20, 22), (12, 23)):
        d.ellipse((x, y, x + 2, y + 2), fill=c, outline=shade(c, 0.6))
    return img


# ---- food, plants and earth ------------------------------------------------------------------


@painter("mushroom")
def mushroom(colour: str = "red", cooked: str = "") -> Image.Image:
    cap = named_colour(colour, "red")
    stem = rgba("#f2e6cc")
    if cooked:
        cap, stem = shade(cap, 0.6), shade(stem, 0.7)
    img, d = canvas()
    d.rounded_rectangle((13, 16, 18, 26), radius=2, fill=stem)
    d.pieslice((7, 7, 24, 25), 180, 360, fill=cap)
    d.rectangle((7, 15, 24, 16), fill=shade(cap, 0.75))
    for x, y in ((11, 11), (17, 9), (19, 13)):
        d.rectangle((x, y, x + 1, y + 1), fill=(250, 250, 245, 255))
    d.arc((9, 9, 22, 22), 200, 250, fill=shade(cap, 1.3))
    return item(img)


@painter("seed")
def seed() -> Image.Image:
    img, d = canvas()
    c = rgba("#a8763e")
    for x, y in ((10, 18), (16, 15), (18, 21)):
        d.ellipse((x, y, x + 4, y + 6), fill=c)
        d.point((x + 1, y + 1), fill=shade(c, 1.3))
    return outlined(img)


@painter("flower")
def flower(colour: str = "red") -> Image.Image:
    petal = named_colour(colour, "red")
    img, d = canvas()
    d.line((15, 14, 15, 27), fill=LEAF_DARK, width=2)
    d.ellipse((16, 20, 21, 23), fill=LEAF)
    for dx, dy in ((-4, 0), (4, 0), (0, -4), (0, 4)):
        d.ellipse((13 + dx, 9 + dy, 18 + dx, 14 + dy), fill=petal)
    d.ellipse((14, 10, 17, 13), fill=GOLD)
    return item(img, 10)


@painter("dirt")
def dirt() -> Image.Image:
    img, d = canvas()
    c = rgba("#7a5232")
    d.ellipse((6, 15, 25, 27), fill=c)
    d.ellipse((9, 12, 21, 22), fill=shade(c, 1.12))
    speckle(d, seeded(95), [shade(c, 0.7), shade(c, 1.3)], 12, (9, 15, 22, 24))
    return outlined(img)


@painter("rock")
def rock(kind: str = "") -> Image.Image:
    img, d = canvas()
    stone = rgba("#8f8c88")
    if kind == "glowing":
        d.ellipse((3, 7, 28, 30), fill=rgba("#9cff7a", 80))
        stone = rgba("#7fbf6a")
    d.polygon([(8, 26), (6, 19), (10, 12), (19, 10), (25, 16), (25, 25)], fill=stone)
    d.polygon([(10, 13), (19, 11), (21, 16), (12, 18)], fill=shade(stone, 1.2))
    d.line((16, 19, 20, 24), fill=shade(stone, 0.7))
    return item(img, 18)


@painter("crystal")
def crystal(colour: str = "cyan") -> Image.Image:
    c = named_colour(colour, "cyan")
    img, d = canvas()
    d.polygon([(16, 4), (23, 12), (20, 27), (12, 27), (9, 12)], fill=c)
    d.polygon([(16, 4), (16, 27), (12, 27), (9, 12)], fill=shade(c, 1.25))
    d.line((9, 12, 23, 12), fill=shade(c, 0.7))
    d.point([(14, 8), (13, 9)], fill=(255, 255, 255, 255))
    return item(img, 14)


# ---- tools and trinkets ----------------------------------------------------------------------


@painter("flag")
def flag(colour: str = "red") -> Image.Image:
    c = named_colour(colour, "red")
    img, d = canvas()
    d.rectangle((9, 3, 10, 28), fill=METAL_DARK)
    d.ellipse((8, 1, 11, 4), fill=GOLD)
    d.polygon([(11, 5), (24, 7), (21, 11), (25, 15), (11, 15)], fill=c)
    d.line((11, 6, 22, 8), fill=shade(c, 1.3))
    return item(img, 10)


@painter("key")
def key(colour: str = "gold", rust: str = "") -> Image.Image:
    c = named_colour(colour, "gold")
    if rust:
        c = rgba("#a0522d")
    img, d = canvas()
    d.ellipse((5, 11, 14, 20), fill=c)
    d.ellipse((8, 14, 11, 17), fill=(0, 0, 0, 0))
    d.rectangle((13, 14, 26, 16), fill=c)
    d.rectangle((21, 17, 22, 20), fill=c)
    d.rectangle((25, 17, 26, 19), fill=c)
    d.line((14, 14, 25, 14), fill=shade(c, 1.3))
    return item(img, 16)


@painter("nail")
def nail(rust: str = "") -> Image.Image:
    c = rgba("#a0522d") if rust else METAL
    img, d = canvas()
    d.line((9, 23, 23, 9), fill=c, width=2)
    d.line((19, 7, 25, 13), fill=shade(c, 0.8), width=3)  # the head
    d.line((7, 25, 9, 23), fill=shade(c, 1.3))  # the point
    return item(img, 16)


@painter("coin")
def coin() -> Image.Image:
    img, d = canvas()
    d.ellipse((9, 10, 22, 23), fill=GOLD)
    d.ellipse((11, 12, 20, 21), outline=shade(GOLD, 0.7))
    d.line((13, 14, 13, 18), fill=shade(GOLD, 1.35))
    return item(img, 12)


@painter("shovel")
def shovel() -> Image.Image:
    img, d = canvas()
    d.line((8, 5, 19, 18), fill=WOOD, width=3)
    d.rectangle((5, 3, 10, 5), fill=WOOD_DARK)
    d.polygon([(17, 17), (23, 15), (27, 24), (22, 28), (16, 23)], fill=METAL)
    d.line((18, 19, 22, 26), fill=METAL_LIGHT)
    return item(img, 18)


@painter("tape")
def tape() -> Image.Image:
    img, d = canvas()
    d.rounded_rectangle((8, 10, 22, 24), radius=4, fill=NAMED_COLOURS["yellow"])
    d.ellipse((12, 14, 18, 20), fill=METAL_DARK)
    d.rectangle((22, 20, 28, 22), fill=METAL_LIGHT)
    return item(img, 16)


@painter("stick")
def stick() -> Image.Image:
    img, d = canvas()
    d.line((7, 24, 25, 9), fill=WOOD, width=3)
    d.line((18, 15, 21, 19), fill=WOOD, width=2)
    return item(img, 18)


@painter("book")
def book(colour: str = "blue") -> Image.Image:
    c = named_colour(colour, "blue")
    img, d = canvas()
    d.rectangle((8, 8, 23, 26), fill=c)
    d.rectangle((21, 9, 23, 26), fill=rgba("#f2efe6"))
    d.line((11, 12, 19, 12), fill=GOLD)
    return item(img, 16)


@painter("paint_bucket")
def paint_bucket(colour: str = "red") -> Image.Image:
    img, d = canvas()
    d.rectangle((9, 12, 22, 27), fill=METAL)
    d.ellipse((9, 9, 22, 14), fill=named_colour(colour, "red"), outline=METAL_DARK)
    d.arc((8, 4, 23, 18), 180, 360, fill=METAL_DARK)
    return item(img, 14)


@painter("artifact")
def artifact() -> Image.Image:
    img, d = canvas()
    clay = rgba("#c88a4a")
    d.ellipse((9, 12, 22, 27), fill=clay)
    d.rectangle((12, 7, 19, 13), fill=clay)
    d.rectangle((11, 6, 20, 8), fill=shade(clay, 1.2))
    d.line((10, 19, 21, 19), fill=shade(clay, 0.6))
    return item(img, 14)


@painter("computer")
def computer(power: str = "on") -> Image.Image:
    img, d = canvas()
    d.rectangle((5, 5, 26, 20), fill=rgba("#d8d4c8"))
    d.rectangle((7, 7, 24, 18), fill=rgba("#2a5a3a") if power == "on" else OUTLINE)
    if power == "on":
        for y in (9, 12, 15):
            d.line((9, y, 19, y), fill=rgba("#7aff9a"))
    d.rectangle((12, 21, 19, 23), fill=rgba("#bcb8ac"))
    d.rectangle((6, 24, 25, 28), fill=rgba("#d8d4c8"))
    return outlined(img)


# ---- fallback --------------------------------------------------------------------------------


@painter("unknown")
def unknown(label: str = "?") -> Image.Image:
    """A labelled crate: what an object type without art looks like."""
    img, d = canvas()
    d.rectangle((4, 6, 27, 27), fill=rgba("#e8d8a8"), outline=WOOD_DARK)
    d.rectangle((4, 6, 27, 9), fill=WOOD_LIGHT)
    font = ImageFont.load_default(size=7)
    words = (label or "?").split()[-2:]  # the last words name the thing best ("ancient widget")
    for i, word in enumerate(words):
        while len(word) > 1 and d.textlength(word, font=font) > 21:
            word = word[:-1]
        d.text((16 - d.textlength(word, font=font) / 2, 11 + 7 * i), word, fill=OUTLINE, font=font)
    return outlined(img)
