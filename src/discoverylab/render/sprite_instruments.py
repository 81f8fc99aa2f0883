"""Procedural sprites for measuring instruments (see `sprite_paint`).

The devices an agent measures with: microscope, spectrometer, thermometer, the handheld pH,
radiation and density meters, and a generic `meter` for any other "...meter" type (`sprites`
maps such names to it). Split from `sprite_items`, which keeps the other portable things.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from discoverylab.render.sprite_paint import (
    METAL_DARK,
    METAL_LIGHT,
    NAMED_COLOURS,
    OUTLINE,
    canvas,
    item,
    named_colour,
    outlined,
    painter,
    rgba,
    shade,
)


@painter("microscope")
def microscope() -> Image.Image:
    img, d = canvas()
    body, dark = rgba("#3a3f4a"), rgba("#23262e")
    d.rounded_rectangle((7, 25, 24, 29), radius=1, fill=dark)
    d.rectangle((18, 12, 21, 25), fill=body)  # the arm
    d.rectangle((9, 19, 21, 20), fill=METAL_LIGHT)  # the stage
    d.polygon([(9, 5), (13, 3), (17, 15), (13, 17)], fill=METAL_LIGHT)  # the tube
    d.rectangle((8, 2, 13, 4), fill=dark)
    d.rectangle((13, 15, 16, 18), fill=dark)
    d.line((10, 5, 13, 13), fill=(255, 255, 255, 255))
    return item(img, 18)


@painter("spectrometer")
def spectrometer() -> Image.Image:
    img, d = canvas()
    d.rounded_rectangle((4, 10, 27, 27), radius=2, fill=rgba("#dcdcd4"))
    d.rectangle((7, 13, 24, 18), fill=OUTLINE)
    for i, name in enumerate(("purple", "blue", "green", "yellow", "orange", "red")):
        d.rectangle((8 + 3 * i, 14, 10 + 3 * i, 17), fill=NAMED_COLOURS[name])
    d.ellipse((7, 21, 10, 24), fill=METAL_DARK)
    d.rectangle((15, 22, 24, 23), fill=METAL_DARK)
    d.rectangle((10, 6, 14, 10), fill=METAL_DARK)
    return item(img, 22)


@painter("thermometer")
def thermometer() -> Image.Image:
    img, d = canvas()
    d.rounded_rectangle((13, 3, 18, 24), radius=2, fill=rgba("#f4f8fa"))
    d.rectangle((15, 12, 16, 24), fill=NAMED_COLOURS["red"])
    d.ellipse((11, 21, 20, 29), fill=NAMED_COLOURS["red"])
    for y in (6, 9, 12, 15, 18):
        d.point((17, y), fill=OUTLINE)
    d.point((14, 24), fill=(255, 255, 255, 255))
    return outlined(img)


def _handheld(body: tuple[int, int, int, int]) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    img, d = canvas()
    d.rounded_rectangle((9, 5, 22, 26), radius=3, fill=body)
    d.rectangle((11, 8, 20, 14), fill=rgba("#b8d8a0"))
    d.line((11, 8, 20, 8), fill=shade(rgba("#b8d8a0"), 0.7))
    return img, d


@painter("ph_meter")
def ph_meter() -> Image.Image:
    img, d = _handheld(rgba("#5aa0d8"))
    d.point([(13, 10), (13, 11), (13, 12), (14, 10), (14, 11)], fill=OUTLINE)  # "p"
    d.point([(16, 10), (16, 11), (16, 12), (17, 11), (18, 10), (18, 11), (18, 12)], fill=OUTLINE)  # "H"
    d.ellipse((12, 17, 15, 20), fill=NAMED_COLOURS["red"])
    d.ellipse((17, 17, 20, 20), fill=NAMED_COLOURS["green"])
    d.line((16, 26, 16, 30), fill=METAL_DARK, width=2)
    return outlined(img)


@painter("radiation_meter")
def radiation_meter() -> Image.Image:
    img, d = canvas()
    y = NAMED_COLOURS["yellow"]
    d.rounded_rectangle((6, 10, 25, 27), radius=3, fill=y)
    d.arc((10, 3, 21, 16), 180, 360, fill=OUTLINE, width=2)  # handle
    d.ellipse((12, 14, 19, 21), fill=OUTLINE)
    for start in (0, 120, 240):  # trefoil blades cut in yellow
        d.pieslice((12, 14, 19, 21), start + 20, start + 80, fill=y)
    d.ellipse((15, 17, 16, 18), fill=OUTLINE)
    d.line((25, 20, 29, 24), fill=METAL_DARK, width=2)
    return item(img, 20)


@painter("densitometer")
def densitometer() -> Image.Image:
    img, d = canvas()
    d.rounded_rectangle((5, 9, 26, 27), radius=2, fill=rgba("#8a6ab8"))
    d.ellipse((9, 11, 22, 24), fill=rgba("#f4f1ea"), outline=OUTLINE)
    d.line((15, 18, 19, 13), fill=NAMED_COLOURS["red"], width=1)
    d.arc((11, 13, 20, 22), 200, 340, fill=METAL_DARK)
    return item(img, 20)


@painter("meter")
def meter(colour: str = "grey") -> Image.Image:
    """A generic measuring device: box, screen, needle dial."""
    img, d = canvas()
    d.rounded_rectangle((5, 8, 26, 27), radius=2, fill=named_colour(colour, "grey"))
    d.rectangle((8, 11, 23, 16), fill=rgba("#b8d8a0"))
    d.pieslice((11, 18, 20, 27), 180, 360, fill=rgba("#f4f1ea"))
    d.line((15, 22, 18, 19), fill=OUTLINE)
    return item(img, 20)
