"""Procedural character sprites: the player and NPCs, in four facings (see `sprite_paint`).

A character's look is a palette index: the player has its own look (blue shirt, gold facing
marker); each NPC gets shirt, hair, skin and trousers from its index (a checksum of its
`sprite` and name, see `sprites.sprite_key`), so the same character always looks the same.
"""

from __future__ import annotations

from PIL import Image, ImageDraw, ImageOps

from discoverylab.render.sprite_paint import NAMED_COLOURS, OUTLINE, canvas, outlined, painter, rgba, shade

SHIRTS = [
    rgba(c) for c in ("#d8463a", "#4aa84a", "#8f4fc8", "#f08a2a", "#e070a8", "#8a5a32", "#2aa8a0", "#7a7f8c")
]
HAIRS = [rgba(c) for c in ("#2e2622", "#e8c050", "#7a4a26", "#c0502a", "#b8b8c0")]
SKINS = [rgba(c) for c in ("#f4cfa8", "#d8a070", "#a86a42", "#f8dcc0")]
PLAYER = {
    "shirt": rgba("#3a72d8"),
    "pants": rgba("#2e3a5a"),
    "hair": rgba("#5a3a22"),
    "skin": rgba("#f4cfa8"),
}
SICK_SKIN = rgba("#b8d890")


def look(index: int) -> dict[str, tuple[int, int, int, int]]:
    """Palette of NPC number `index` (its digits pick shirt, hair, skin and trousers)."""
    shirt, rest = index % len(SHIRTS), index // len(SHIRTS)
    hair, rest = rest % len(HAIRS), rest // len(HAIRS)
    skin, rest = rest % len(SKINS), rest // len(SKINS)
    return {
        "shirt": SHIRTS[shirt],
        "pants": rgba("#4a4038") if rest % 2 else rgba("#3a4660"),
        "hair": HAIRS[hair],
        "skin": SKINS[skin],
    }


def _pointer(facing: str, colour: tuple[int, int, int, int]) -> Image.Image:
    """A small chevron on the tile edge the character faces."""
    img, d = canvas()
    d.polygon([(13, 29), (19, 29), (16, 31)], fill=colour, outline=OUTLINE)
    turns = {"south": 0, "east": 90, "north": 180, "west": 270}[facing]
    return img.rotate(turns, resample=Image.Resampling.NEAREST) if turns else img


def _body(palette: dict[str, tuple[int, int, int, int]], facing: str) -> Image.Image:
    """Facing south, north or east (west mirrors east)."""
    shirt, pants, hair, skin = palette["shirt"], palette["pants"], palette["hair"], palette["skin"]
    img, d = canvas()
    d.ellipse((9, 25, 22, 29), fill=(0, 0, 0, 70))
    if facing == "east":
        d.rectangle((13, 22, 15, 26), fill=pants)
        d.rectangle((16, 22, 18, 26), fill=shade(pants, 0.8))
        d.rectangle((13, 26, 16, 27), fill=OUTLINE)
        d.rectangle((16, 26, 19, 27), fill=OUTLINE)
        d.rounded_rectangle((11, 14, 20, 23), radius=2, fill=shirt)
        d.rectangle((14, 15, 16, 21), fill=shade(shirt, 0.82))  # the near arm
        d.rectangle((14, 21, 16, 22), fill=skin)
        d.ellipse((10, 4, 21, 15), fill=skin)
        d.pieslice((10, 3, 21, 14), 180, 360, fill=hair)
        d.rectangle((10, 8, 14, 12), fill=hair)
        d.rectangle((18, 9, 18, 10), fill=OUTLINE)
        d.point((21, 11), fill=shade(skin, 0.85))
        return img
    d.rectangle((12, 22, 14, 26), fill=pants)
    d.rectangle((17, 22, 19, 26), fill=pants)
    d.rectangle((12, 26, 14, 27), fill=OUTLINE)
    d.rectangle((17, 26, 19, 27), fill=OUTLINE)
    d.rounded_rectangle((10, 14, 21, 23), radius=2, fill=shirt)
    d.rectangle((8, 15, 9, 21), fill=shirt)
    d.rectangle((22, 15, 23, 21), fill=shirt)
    d.rectangle((8, 21, 9, 22), fill=skin)
    d.rectangle((22, 21, 23, 22), fill=skin)
    d.ellipse((10, 4, 21, 15), fill=skin)
    if facing == "north":
        d.ellipse((10, 3, 21, 14), fill=hair)
        d.arc((12, 5, 19, 11), 200, 300, fill=shade(hair, 1.3))
    else:
        d.pieslice((10, 3, 21, 14), 180, 360, fill=hair)
        d.rectangle((10, 7, 11, 11), fill=hair)
        d.rectangle((20, 7, 21, 11), fill=hair)
        d.rectangle((13, 9, 13, 10), fill=OUTLINE)
        d.rectangle((18, 9, 18, 10), fill=OUTLINE)
        d.point((15, 12), fill=shade(skin, 0.8))
        d.line((12, 15, 19, 15), fill=shade(shirt, 0.75))  # collar
    return img


@painter("agent")
def agent(who: str = "player", facing: str = "south", sick: str = "") -> Image.Image:
    """`who` is "player" or "npc<index>"."""
    palette = dict(PLAYER) if who == "player" else look(int(who[3:] or 0))
    if sick:
        palette["skin"] = SICK_SKIN
    if facing not in ("north", "east", "south", "west"):
        facing = "south"
    body = _body(palette, "east" if facing == "west" else facing)
    if facing == "west":
        body = ImageOps.mirror(body)
    img = outlined(body)
    marker = NAMED_COLOURS["gold"] if who == "player" else rgba("#f4f4f4")
    img.alpha_composite(_pointer(facing, marker))
    return img


# ---- creatures -------------------------------------------------------------------------------
CREATURES = ("spheroid", "echojelly", "vortisquid", "animaplant", "prismatic", "dog")


def _eyes(d: ImageDraw.ImageDraw, points: list[tuple[int, int]]) -> None:
    for x, y in points:
        d.rectangle((x, y, x + 1, y + 2), fill=(255, 255, 255, 255))
        d.point((x + 1, y + 1), fill=OUTLINE)


def creature_body(species: str) -> Image.Image:
    """A creature facing east, without outline or shadow (statues reuse it in stone)."""
    img, d = canvas()
    if species == "spheroid":
        pink = rgba("#e06aa8")
        d.ellipse((6, 7, 25, 26), fill=pink)
        d.ellipse((9, 9, 17, 15), fill=shade(pink, 1.3))
        d.arc((6, 7, 25, 26), 20, 160, fill=shade(pink, 0.75), width=2)
        _eyes(d, [(17, 13), (21, 13)])
    elif species == "echojelly":
        jelly = rgba("#8fdcf0", 200)
        for x in (9, 13, 17, 21):
            d.line([(x, 17), (x - 1, 21), (x + 1, 25), (x, 28)], fill=rgba("#6ab8e0", 220))
        d.pieslice((5, 3, 26, 30), 180, 360, fill=jelly)
        d.rectangle((5, 16, 26, 18), fill=shade(jelly, 0.85))
        d.arc((8, 6, 18, 14), 190, 260, fill=(255, 255, 255, 230))
        _eyes(d, [(16, 10), (20, 10)])
    elif species == "vortisquid":
        purple = rgba("#9a5ad0")
        for x in (8, 12, 16, 20, 24):
            d.line([(x, 18), (x - 2, 23), (x, 27), (x + 2, 28)], fill=shade(purple, 0.85), width=2)
        d.polygon([(16, 2), (24, 10), (23, 20), (9, 20), (8, 10)], fill=purple)
        d.polygon([(16, 2), (19, 6), (13, 6)], fill=shade(purple, 1.3))
        _eyes(d, [(15, 12), (19, 12)])
    elif species == "animaplant":
        green = rgba("#5aa84a")
        d.line((11, 24, 9, 28), fill=rgba("#7a5232"), width=2)
        d.line((20, 24, 22, 28), fill=rgba("#7a5232"), width=2)
        d.ellipse((8, 10, 24, 26), fill=green)
        d.ellipse((4, 8, 12, 14), fill=shade(green, 0.8))
        d.ellipse((19, 5, 28, 11), fill=shade(green, 0.8))
        d.ellipse((13, 3, 19, 9), fill=NAMED_COLOURS["pink"])
        d.ellipse((15, 5, 17, 7), fill=NAMED_COLOURS["yellow"])
        _eyes(d, [(16, 14), (20, 14)])
    elif species == "prismatic":
        facets = [rgba(c) for c in ("#7ee0f0", "#c8a0f0", "#f0a0c8", "#a0f0c8")]
        d.polygon([(5, 14), (12, 9), (24, 9), (28, 16), (25, 26), (7, 26)], fill=facets[0])
        d.polygon([(12, 9), (24, 9), (18, 18)], fill=facets[1])
        d.polygon([(5, 14), (12, 9), (18, 18), (7, 26)], fill=facets[2])
        d.polygon([(24, 9), (28, 16), (25, 26), (18, 18)], fill=facets[3])
        d.polygon([(20, 9), (22, 4), (25, 9)], fill=facets[1])
        d.polygon([(13, 9), (15, 4), (18, 9)], fill=facets[3])
        _eyes(d, [(21, 12)])
    elif species == "dog":
        fur = rgba("#b07840")
        d.rectangle((8, 20, 10, 27), fill=shade(fur, 0.8))
        d.rectangle((19, 20, 21, 27), fill=shade(fur, 0.8))
        d.ellipse((6, 13, 23, 23), fill=fur)
        d.line([(7, 16), (3, 11)], fill=fur, width=2)  # tail
        d.ellipse((18, 7, 28, 17), fill=fur)
        d.rectangle((25, 12, 29, 16), fill=shade(fur, 1.2))
        d.point((29, 12), fill=OUTLINE)
        d.polygon([(19, 8), (21, 5), (23, 9)], fill=shade(fur, 0.6))
        _eyes(d, [(23, 10)])
    else:  # any other creature: a coloured blob, the colour from its number
        colour = SHIRTS[int(species[8:] or 0) % len(SHIRTS)] if species.startswith("creature") else SHIRTS[0]
        d.ellipse((6, 9, 25, 27), fill=colour)
        d.ellipse((9, 11, 16, 16), fill=shade(colour, 1.3))
        _eyes(d, [(17, 14), (21, 14)])
    return img


@painter("creature")
def creature(species: str = "spheroid", facing: str = "east") -> Image.Image:
    """An animal NPC (Proteomics species, the translation village's dog, ...)."""
    body = creature_body(species)
    if facing == "west":
        body = ImageOps.mirror(body)
    img, d = canvas()
    d.ellipse((8, 25, 23, 30), fill=(0, 0, 0, 60))
    img.alpha_composite(outlined(body))
    if facing in ("north", "south"):
        img.alpha_composite(_pointer(facing, rgba("#f4f4f4")))
    return img
