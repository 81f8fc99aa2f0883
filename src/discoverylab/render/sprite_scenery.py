"""Procedural sprites for terrain, buildings and plants (see `sprite_paint`); furniture and
kitchen appliances are in `sprite_furniture`."""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageOps

from discoverylab.render.sprite_characters import creature_body
from discoverylab.render.sprite_paint import (
    LEAF,
    LEAF_DARK,
    LEAF_LIGHT,
    METAL_DARK,
    NAMED_COLOURS,
    OUTLINE,
    TILE,
    WOOD,
    WOOD_DARK,
    WOOD_LIGHT,
    canvas,
    outlined,
    painter,
    rgba,
    seeded,
    shade,
    speckle,
    with_shadow,
)

GRASS = rgba("#67b94c")
GRASS_VARIANTS = 4
PLANT_VARIANTS = 3

# ---- terrain ---------------------------------------------------------------------------------


@painter("grass", opaque=True)
def grass(variant: str = "0") -> Image.Image:
    v = int(variant)
    img, d = canvas(GRASS)
    rng = seeded(10 + v)
    speckle(d, rng, [shade(GRASS, 1.12), shade(GRASS, 0.9)], 26)
    for _ in range(5 + v):  # little blades: a dark tuft with a light tip
        x, y = int(rng.integers(2, 29)), int(rng.integers(3, 30))
        d.line((x, y, x, y - 2), fill=shade(GRASS, 0.78))
        d.line((x + 2, y, x + 2, y - 2), fill=shade(GRASS, 0.78))
        d.point((x + 1, y - 1), fill=shade(GRASS, 0.78))
    if v == 3:  # an occasional tiny flower
        x, y = int(rng.integers(5, 26)), int(rng.integers(5, 26))
        d.point([(x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)], fill=rgba("#f4f0e0"))
        d.point((x, y), fill=rgba("#f2c230"))
    return img


@painter("path", opaque=True)
def path(variant: str = "0") -> Image.Image:
    base = rgba("#d8b884")
    img, d = canvas(base)
    rng = seeded(20 + int(variant))
    speckle(d, rng, [shade(base, 0.92), shade(base, 1.08)], 60)
    for _ in range(4):  # pebbles
        x, y = int(rng.integers(2, 28)), int(rng.integers(2, 28))
        d.rectangle((x, y, x + 2, y + 1), fill=shade(base, 0.78))
        d.point((x, y), fill=shade(base, 1.15))
    return img


@painter("sand", opaque=True)
def sand(variant: str = "0") -> Image.Image:
    base = rgba("#ecd9a0")
    img, d = canvas(base)
    speckle(d, seeded(25 + int(variant)), [shade(base, 0.9), shade(base, 1.06)], 50)
    return img


@painter("floor", opaque=True)
def floor(variant: str = "0") -> Image.Image:
    base = rgba("#c48a55")
    img, d = canvas(base)
    rng = seeded(30 + int(variant))
    for row in range(4):  # planks, 8 px high, seams staggered by row
        y0 = row * 8
        tone = shade(base, 1.0 + (0.04 if row % 2 else -0.03))
        d.rectangle((0, y0, TILE - 1, y0 + 7), fill=tone)
        d.line((0, y0 + 7, TILE - 1, y0 + 7), fill=shade(base, 0.7))
        d.line((0, y0, TILE - 1, y0), fill=shade(base, 1.1))
        seam = (row * 13 + 6) % TILE
        d.line((seam, y0, seam, y0 + 6), fill=shade(base, 0.7))
        speckle(d, rng, [shade(tone, 0.9)], 3, (0, y0 + 2, TILE - 3, y0 + 5), size=2)
    return img


@painter("cave_floor", opaque=True)
def cave_floor() -> Image.Image:
    base = rgba("#6e6258")
    img, d = canvas(base)
    speckle(d, seeded(35), [shade(base, 0.85), shade(base, 1.1)], 70)
    return img


def _bricks(d: ImageDraw.ImageDraw, box: tuple[int, int, int, int], base: tuple[int, int, int, int]) -> None:
    x0, y0, x1, y1 = box
    d.rectangle(box, fill=shade(base, 0.62))  # mortar
    for row, y in enumerate(range(y0, y1 + 1, 6)):
        offset = 0 if row % 2 == 0 else -5
        for x in range(x0 + offset, x1 + 1, 10):
            bx0, bx1 = max(x, x0), min(x + 8, x1)
            by1 = min(y + 4, y1)
            if bx1 <= bx0:
                continue
            tone = shade(base, 0.96 + 0.06 * ((row * 3 + x) % 3) / 2)
            d.rectangle((bx0, y, bx1, by1), fill=tone)
            d.line((bx0, y, bx1, y), fill=shade(tone, 1.12))


@painter("wall", opaque=True)
def wall(kind: str = "face") -> Image.Image:
    """`face`: the wall seen from the south (cap + bricks); `cap`: the top of a wall run."""
    stone = rgba("#9a8f86")
    cap = rgba("#6f625a")
    img, d = canvas(cap)
    if kind == "cap":
        d.rectangle((3, 0, 28, 31), fill=shade(cap, 1.12))
        d.line((3, 0, 3, 31), fill=shade(cap, 0.8))
        d.line((28, 0, 28, 31), fill=shade(cap, 0.8))
        speckle(d, seeded(40), [shade(cap, 1.2), shade(cap, 0.95)], 18, (5, 0, 26, 31))
        return img
    d.rectangle((0, 0, 31, 9), fill=shade(cap, 1.12))
    d.line((0, 9, 31, 9), fill=shade(cap, 0.7))
    speckle(d, seeded(41), [shade(cap, 1.25)], 8, (0, 1, 31, 7))
    _bricks(d, (0, 10, 31, 31), stone)
    d.line((0, 31, 31, 31), fill=shade(stone, 0.5))
    return img


@painter("cave_wall", opaque=True)
def cave_wall() -> Image.Image:
    base = rgba("#4a4040")
    img, d = canvas(base)
    rng = seeded(45)
    for _ in range(7):
        x, y = int(rng.integers(0, 26)), int(rng.integers(0, 26))
        d.ellipse((x, y, x + 8, y + 6), fill=shade(base, 1.25), outline=shade(base, 0.7))
    return img


@painter("fence")
def fence(mask: str = "") -> Image.Image:
    """Posts with rails towards the fenced neighbours (`mask` holds n/e/s/w)."""
    img, d = canvas()
    c, lo, hi = WOOD, WOOD_DARK, WOOD_LIGHT
    if "e" in mask or "w" in mask or not mask:
        x0 = 0 if "w" in mask else 13
        x1 = 31 if "e" in mask else 18
        for y in (12, 20):
            d.rectangle((x0, y, x1, y + 2), fill=c)
            d.line((x0, y, x1, y), fill=hi)
    if "n" in mask or "s" in mask:
        y0 = 0 if "n" in mask else 12
        y1 = 31 if "s" in mask else 22
        d.rectangle((14, y0, 17, y1), fill=c)
        d.line((14, y0, 14, y1), fill=hi)
    d.rectangle((12, 7, 19, 26), fill=c)
    d.rectangle((12, 7, 19, 9), fill=hi)
    d.line((19, 10, 19, 26), fill=lo)
    return outlined(img, shade(lo, 0.6))


@painter("door", opaque=True)
def door(state: str = "closed") -> Image.Image:
    """A door in a stone frame: `closed`, `locked` (padlock) or `open` (leaf swung aside)."""
    frame = rgba("#6f625a")
    img, d = canvas(frame)
    d.rectangle((0, 0, 31, 3), fill=shade(frame, 1.15))
    d.line((0, 3, 31, 3), fill=shade(frame, 0.7))
    if state == "open":
        d.rectangle((4, 4, 27, 31), fill=rgba("#3b2a22"))
        d.rectangle((4, 28, 27, 31), fill=rgba("#c48a55"))  # threshold: floor shows through
        d.rectangle((4, 4, 8, 31), fill=WOOD_DARK)  # the leaf, seen edge-on
        d.line((8, 4, 8, 31), fill=shade(WOOD_DARK, 0.7))
        return img
    leaf = WOOD if state == "closed" else shade(WOOD, 0.85)
    d.rectangle((4, 4, 27, 31), fill=leaf)
    for x in (10, 16, 22):
        d.line((x, 5, x, 31), fill=shade(leaf, 0.75))
    d.line((4, 4, 27, 4), fill=shade(leaf, 1.2))
    d.rectangle((5, 10, 26, 11), fill=shade(leaf, 0.7))
    d.rectangle((5, 24, 26, 25), fill=shade(leaf, 0.7))
    if state == "locked":
        gold = NAMED_COLOURS["gold"]
        d.arc((12, 12, 19, 20), 180, 360, fill=METAL_DARK, width=2)
        d.rectangle((11, 16, 20, 24), fill=gold, outline=shade(gold, 0.55))
        d.rectangle((15, 18, 16, 21), fill=OUTLINE)
    else:
        d.rectangle((22, 17, 24, 19), fill=NAMED_COLOURS["gold"], outline=shade(NAMED_COLOURS["gold"], 0.5))
    return img


@painter("sign")
def sign() -> Image.Image:
    img, d = canvas()
    d.rectangle((8, 17, 10, 29), fill=WOOD_DARK)
    d.rectangle((21, 17, 23, 29), fill=WOOD_DARK)
    d.rectangle((3, 5, 28, 19), fill=WOOD_LIGHT)
    d.rectangle((3, 17, 28, 19), fill=WOOD)
    d.line((3, 5, 28, 5), fill=shade(WOOD_LIGHT, 1.15))
    for y, x1 in ((9, 24), (12, 20), (15, 23)):
        d.line((7, y, x1, y), fill=shade(WOOD_DARK, 0.8))
    return with_shadow(outlined(img), (5, 26, 26, 31))


@painter("statue")
def statue(subject: str = "") -> Image.Image:
    """A stone figure on a pedestal; `subject` names a creature to carve instead of a person."""
    stone = rgba("#b8b4ae")
    img, d = canvas()
    d.rectangle((7, 24, 24, 30), fill=shade(stone, 0.8))
    d.rectangle((7, 24, 24, 25), fill=stone)
    if subject:
        body = creature_body(subject).resize((24, 24), Image.Resampling.NEAREST)
        grey = ImageOps.colorize(
            ImageOps.grayscale(body), black=shade(stone, 0.45)[:3], white=shade(stone, 1.3)[:3]
        )
        grey.putalpha(body.getchannel("A").point(lambda a: 255 if a > 60 else 0))
        img.alpha_composite(grey, (4, 1))
        return outlined(img)
    d.ellipse((12, 2, 19, 9), fill=stone)
    d.rectangle((11, 10, 20, 23), fill=stone)
    d.rectangle((8, 11, 10, 19), fill=shade(stone, 0.9))
    d.rectangle((21, 11, 23, 19), fill=shade(stone, 0.9))
    d.line((20, 10, 20, 23), fill=shade(stone, 0.75))
    return outlined(img)


# ---- plants ----------------------------------------------------------------------------------


@painter("tree_trunk")
def tree_trunk() -> Image.Image:
    """The trunk tile; the top shows the lower edge of the canopy (drawn on the tile above)."""
    img, d = canvas()
    bark = rgba("#8a5a36")
    d.ellipse((6, 24, 26, 31), fill=(0, 0, 0, 70))
    d.rectangle((12, 0, 19, 27), fill=bark)
    d.polygon([(9, 28), (12, 22), (12, 28)], fill=bark)
    d.polygon([(22, 28), (19, 22), (19, 28)], fill=bark)
    d.line((13, 6, 13, 26), fill=shade(bark, 1.2))
    d.line((17, 9, 17, 14), fill=shade(bark, 0.7))
    d.line((15, 18, 15, 23), fill=shade(bark, 0.7))
    img = outlined(img)
    leaves, ld = canvas()  # the canopy's hanging edge, continuing the blob above
    ld.ellipse((1, -22, 30, 9), fill=LEAF)
    ld.ellipse((4, -20, 27, 5), fill=shade(LEAF, 1.08))
    ld.arc((1, -22, 30, 9), 20, 160, fill=LEAF_DARK, width=2)
    img.alpha_composite(outlined(leaves))
    return img


@painter("tree_canopy")
def tree_canopy(variant: str = "0", fade: str = "") -> Image.Image:
    img, d = canvas()
    rng = seeded(50 + int(variant))
    d.ellipse((1, 1, 30, 41), fill=LEAF)
    for _ in range(9):  # leaf clumps with a light top
        x, y = int(rng.integers(3, 22)), int(rng.integers(3, 24))
        d.ellipse((x, y, x + 9, y + 8), fill=shade(LEAF, 1.05))
        d.arc((x, y, x + 9, y + 8), 200, 330, fill=LEAF_LIGHT)
    d.arc((1, 1, 30, 41), 30, 150, fill=LEAF_DARK, width=3)
    speckle(d, rng, [LEAF_DARK], 10, (6, 8, 25, 28))
    if variant == "1":  # a fruit tree
        speckle(d, rng, [NAMED_COLOURS["red"]], 5, (6, 6, 24, 24), size=2)
    return outlined(img)


@painter("plant")
def plant(variant: str = "0") -> Image.Image:
    v = int(variant)
    img, d = canvas()
    rng = seeded(60 + v)
    leaf = [LEAF, shade(LEAF, 1.12), LEAF_DARK][v % 3]
    for _ in range(7):
        x, y = int(rng.integers(7, 19)), int(rng.integers(9, 19))
        d.ellipse((x, y, x + 7, y + 6), fill=leaf)
        d.point((x + 3, y + 1), fill=LEAF_LIGHT)
    d.ellipse((9, 14, 23, 26), fill=leaf)
    speckle(d, rng, [LEAF_DARK], 6, (10, 14, 21, 24))
    if v == 1:
        for colour in ("pink", "white", "pink"):
            x, y = int(rng.integers(9, 21)), int(rng.integers(10, 20))
            d.rectangle((x, y, x + 1, y + 1), fill=NAMED_COLOURS[colour])
    return with_shadow(outlined(img), (8, 22, 24, 29))


@painter("cactus")
def cactus() -> Image.Image:
    green = rgba("#4f9a4a")
    img, d = canvas()
    d.rounded_rectangle((13, 4, 19, 28), radius=3, fill=green)
    d.rounded_rectangle((6, 10, 10, 19), radius=2, fill=green)
    d.rectangle((8, 17, 13, 19), fill=green)
    d.rounded_rectangle((22, 7, 26, 15), radius=2, fill=green)
    d.rectangle((19, 13, 24, 15), fill=green)
    d.line((15, 6, 15, 26), fill=shade(green, 1.25))
    return with_shadow(outlined(img), (9, 25, 23, 31))


@painter("soil", opaque=True)
def soil(state: str = "") -> Image.Image:
    base = rgba("#7a5232")
    img, d = canvas(base)
    for y in range(2, 32, 6):  # tilled furrows
        d.line((1, y, 30, y), fill=shade(base, 0.72))
        d.line((1, y + 1, 30, y + 1), fill=shade(base, 1.15))
    speckle(d, seeded(70), [shade(base, 0.85), shade(base, 1.2)], 20)
    if state == "hole":
        d.ellipse((6, 8, 25, 25), fill=shade(base, 0.6))
        d.ellipse((8, 11, 23, 24), fill=rgba("#24160e"))
    return img


@painter("launch_pad", opaque=True)
def launch_pad() -> Image.Image:
    base = rgba("#a4a4a8")
    img, d = canvas(base)
    d.line((0, 0, 31, 0), fill=shade(base, 0.8))
    d.line((0, 0, 0, 31), fill=shade(base, 0.8))
    d.line((0, 16, 31, 16), fill=NAMED_COLOURS["yellow"])
    return img
