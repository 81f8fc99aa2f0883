"""Image observations: pure functions of the world state, computed only when asked.

`render_view(world, agent)` is the agent's 24x16-tile view starting at agent - (12, 8):
768x512 px at scale 1 (32 px tiles, the paper's size), 1536x1024 at scale 2 (the original's
size). Tiles outside the world are black. `render_world(world)` draws the whole map.
`grid=True` adds a 1-px tile grid and "x,y" labels. `view_array` gives the view as a numpy
array (the Gymnasium image observation), `view_png` as PNG bytes through a faster path (below),
`vision_observation` as the original's `vision` dict of data URLs.

Speed: a tile's look is the tuple of its objects' sprite keys (bottom layer first, stopping at
an opaque sprite; open holders carry their contents' keys), found and drawn by `render.tiles`.
Composed tiles are cached by that tuple across worlds, so a view costs one key scan per tile and
one gather of all tiles (a single fancy index), and the image always follows the current state:
there is nothing to invalidate. Tiles of plain ground (grass, path, sand: the key is a function
of type and position) skip the scan. Each cached tile is kept as RGB and as indices into a
process-wide colour table; a view rarely uses more than 256 colours, so its PNG is a palette
image written by `render.png` (no row filters, zlib-ng's deflate). The last views' PNGs are kept
by their pictures and cells, so a step that changes nothing on screen costs no encoding.
Nothing here touches the disk.
"""

from __future__ import annotations

import base64
import io
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import count
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from discoverylab.render.png import palette_png
from discoverylab.render.sprite_keys import FADE_SUFFIX as FADE_SUFFIX  # re-exported: tests read it here
from discoverylab.render.sprites import TILE
from discoverylab.render.tiles import TileLook, compose_tile, tile_look

if TYPE_CHECKING:
    from discoverylab.world.agent import Agent
    from discoverylab.world.world import World

VIEW_TILES = (24, 16)  # width, height of the agent's view in tiles

LABEL_PLATE = (24, 24, 28)  # grid labels: white pixel text on an opaque dark plate
LABEL_TEXT = (255, 255, 255)
_PLATE_INDEX, _TEXT_INDEX = 1, 2  # their colour-table indices


_SERIALS = count()


def _code(rgb: tuple[int, int, int]) -> int:
    return (rgb[0] << 16) | (rgb[1] << 8) | rgb[2]


@dataclass(slots=True)
class _Art:
    """A cached picture: RGB pixels and the same pixels as colour-table indices."""

    rgb: np.ndarray  # (h, w, 3) uint8
    idx: np.ndarray  # (h, w) uint16
    used: np.ndarray  # the distinct indices in `idx`
    serial: int = field(default_factory=lambda: next(_SERIALS))  # never reused, unlike id()


class _ColourTable:
    """Process-wide colour -> index table shared by every cached picture."""

    LIMIT = 60_000  # stays inside uint16; reached only after composing a huge variety of tiles

    def __init__(self) -> None:
        # Fixed entries: black (out-of-world tiles, grid lines), then the label plate and text.
        self.codes: list[int] = [0, _code(LABEL_PLATE), _code(LABEL_TEXT)]
        self.index: dict[int, int] = {code: i for i, code in enumerate(self.codes)}
        self._codes_array: np.ndarray | None = None
        # Pictures of plain-ground tiles by (type, x, y, scale): they index this table, so they
        # live and die with it.
        self.ground: dict[tuple[str, int, int, int], _Art] = {}

    def art(self, rgb: np.ndarray) -> _Art:
        """`rgb` with its colour-table indices (new colours are added to the table)."""
        flat = rgb.reshape(-1, 3).astype(np.uint32)
        codes = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
        uniq, inverse = np.unique(codes, return_inverse=True)
        table = np.empty(len(uniq), np.uint16)
        for i, code in enumerate(uniq.tolist()):
            if code not in self.index:
                self.index[code] = len(self.codes)
                self.codes.append(code)
                self._codes_array = None
            table[i] = self.index[code]
        return _Art(rgb, table[inverse].reshape(rgb.shape[:2]), np.unique(table))

    def codes_array(self) -> np.ndarray:
        if self._codes_array is None:
            self._codes_array = np.array(self.codes, np.uint32)
        return self._codes_array


_COLOURS = _ColourTable()
_TILE_CACHE: dict[tuple[TileLook, int], _Art] = {}
_TILE_CACHE_LIMIT = 20_000  # ~4 KB a tile at scale 1; cleared wholesale when full
_LABEL_CACHE: dict[tuple[int, int, int], np.ndarray] = {}
# The caches are process-wide; the browser UI renders from several threads. Rendering holds the
# GIL anyway, so one lock costs no throughput.
_CACHE_LOCK = threading.RLock()


def _reset_caches_if_full() -> None:
    global _COLOURS
    if len(_COLOURS.codes) > _ColourTable.LIMIT:
        _COLOURS = _ColourTable()
        _TILE_CACHE.clear()
        _LABEL_CACHE.clear()
    elif len(_TILE_CACHE) >= _TILE_CACHE_LIMIT:
        _TILE_CACHE.clear()


def _art(image: Image.Image) -> _Art:
    return _COLOURS.art(np.asarray(image.convert("RGB")))


# Ground whose sprite key is a function of its type and tile alone (a variant picked from x, y):
# a tile holding only such ground gets its picture by (type, x, y, scale), across worlds.
POSITIONAL_GROUND = frozenset({"grass", "path", "sand"})


# ---- tiles -----------------------------------------------------------------------------------
def _tile_art(world: World, x: int, y: int, scale: int) -> _Art:
    look = tile_look(world, x, y)
    art = _TILE_CACHE.get((look, scale))
    if art is None:
        art = _TILE_CACHE[(look, scale)] = _art(compose_tile(look, scale))
    return art


# A 3x5 pixel font for the grid labels: crisp at 32 px tiles, two colours only.
_GLYPHS: dict[str, tuple[str, ...]] = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "011", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
    ",": ("00", "00", "00", "01", "10"),
}


def _label(x: int, y: int, scale: int) -> np.ndarray:
    """The "x,y" label as a mask: True for text (white), False for its plate (dark, opaque)."""
    mask = _LABEL_CACHE.get((x, y, scale))
    if mask is None:
        columns: list[str] = []
        for ch in f"{x},{y}":
            glyph = _GLYPHS[ch]
            columns.extend("".join(row[c] for row in glyph) for c in range(len(glyph[0])))
            columns.append("00000")
        mask = np.array([[bit == "1" for bit in col] for col in columns[:-1]], bool).T  # (5, w)
        mask = np.pad(mask, 1).repeat(scale, axis=0).repeat(scale, axis=1)  # 1-px plate margin
        _LABEL_CACHE[(x, y, scale)] = mask
    return mask


# ---- assembly --------------------------------------------------------------------------------
LabelPlacement = tuple[int, int, np.ndarray]  # (top px, left px, text mask)


@dataclass(slots=True)
class _Layout:
    """What goes where in a region: a tile-grid of picture slots (-1: black, outside the world),
    the distinct pictures, then (with the grid) lines and labels."""

    shape: tuple[int, int]  # (height px, width px)
    px: int  # tile size in px
    cells: np.ndarray  # (height tiles, width tiles) int: index into `arts`, -1 for black
    arts: list[_Art]
    labels: list[LabelPlacement]
    origin: tuple[int, int]  # world coordinates of the top-left tile

    def paint(self, field: str, lut: np.ndarray | None = None, grid: bool = False) -> np.ndarray:
        """RGB pixels (`field="rgb"`), or colour indices mapped through `lut` to uint8.

        Indices are gathered by one fancy index (the distinct pictures, plus black last so that
        slot -1 is black, stacked and indexed by the cell grid, axes interleaved): ~4x faster
        than a slice copy per tile. RGB keeps the slice copies, which beat the gather there."""
        px = self.px
        rows, cols = self.cells.shape
        out: np.ndarray
        if field == "rgb":
            out = np.zeros((*self.shape, 3), np.uint8)
            black, plate, text = np.zeros(3, np.uint8), np.array(LABEL_PLATE, np.uint8), 255
            arts = self.arts
            for j, row in enumerate(self.cells.tolist()):
                for i, slot in enumerate(row):
                    if slot >= 0:
                        out[j * px : (j + 1) * px, i * px : (i + 1) * px] = arts[slot].rgb
        else:
            assert lut is not None
            pics = np.take(lut, np.stack([*(art.idx for art in self.arts), np.zeros((px, px), np.uint16)]))
            black, plate, text = lut[0], lut[_PLATE_INDEX], lut[_TEXT_INDEX]
            out = np.ascontiguousarray(pics[self.cells].swapaxes(1, 2)).reshape(rows * px, cols * px)
        if grid:
            out[:, ::px] = black  # 1-px lines on every tile's top and left edge
            out[::px, :] = black
            for top, left, mask in self.labels:
                h, w = min(mask.shape[0], px - 1), min(mask.shape[1], px - 1)
                area = out[top : top + h, left : left + w]
                area[...] = plate
                area[mask[:h, :w]] = text
        return out

    def used_colours(self, grid: bool) -> np.ndarray:
        """Colour-table indices the painted region can contain."""
        fixed = np.array([0, _PLATE_INDEX, _TEXT_INDEX] if grid else [0], np.uint16)
        return np.unique(np.concatenate([fixed, *(art.used for art in self.arts)]))


def _layout(world: World, x0: int, y0: int, width: int, height: int, scale: int, grid: bool) -> _Layout:
    """Tiles [x0, x0 + width) x [y0, y0 + height) (out-of-world tiles stay black); the grid
    labels only if `grid`."""
    if scale < 1 or int(scale) != scale:
        raise ValueError(f"scale must be a positive integer, got {scale!r}.")
    with _CACHE_LOCK:
        return _build_layout(world, x0, y0, width, height, scale, grid)


def _build_layout(world: World, x0: int, y0: int, width: int, height: int, scale: int, grid: bool) -> _Layout:
    _reset_caches_if_full()
    px = TILE * scale
    cells = [-1] * (width * height)
    slots: dict[int, int] = {}
    arts: list[_Art] = []
    labels: list[LabelPlacement] = []
    cache, ground, stacks = _TILE_CACHE, _COLOURS.ground, world.stacks
    for j in range(max(0, -y0), min(height, world.size - y0)):
        y, row = y0 + j, j * width
        for i in range(max(0, -x0), min(width, world.size - x0)):
            x = x0 + i
            stack = stacks[x][y]
            art = None
            if len(stack) == 1 and (obj := stack[0]).type in POSITIONAL_GROUND and not obj.sprite and not obj.contents:
                key = (obj.type, x, y, scale)  # plain ground: skip the look entirely
                art = ground.get(key)
                if art is None:
                    art = ground[key] = _tile_art(world, x, y, scale)
            if art is None:
                art = cache.get((tile_look(world, x, y), scale))
                if art is None:
                    art = _tile_art(world, x, y, scale)
            slot = slots.get(art.serial)
            if slot is None:
                slot = slots[art.serial] = len(arts)
                arts.append(art)
            cells[row + i] = slot
            if grid:
                labels.append((j * px + 1, i * px + 1, _label(x, y, scale)))
    grid_cells = np.array(cells, np.intp).reshape(height, width)
    return _Layout((height * px, width * px), px, grid_cells, arts, labels, (x0, y0))


def render_region(
    world: World, x0: int, y0: int, width: int, height: int, scale: int = 1, grid: bool = False
) -> Image.Image:
    """Tiles [x0, x0 + width) x [y0, y0 + height) as an RGB image (out-of-world tiles black)."""
    return Image.fromarray(_layout(world, x0, y0, width, height, scale, grid).paint("rgb", grid=grid))


def _view_origin(agent: Agent) -> tuple[int, int]:
    ax, ay = agent.location()
    return ax - VIEW_TILES[0] // 2, ay - VIEW_TILES[1] // 2


def render_view(world: World, agent: Agent, scale: int = 1, grid: bool = False) -> Image.Image:
    """The agent's view: 24x16 tiles starting at agent - (12, 8); 768x512 px at scale 1."""
    return render_region(world, *_view_origin(agent), *VIEW_TILES, scale, grid)


def view_array(world: World, agent: Agent, scale: int = 1, grid: bool = False) -> np.ndarray:
    """`render_view` as a fresh (512 * scale, 768 * scale, 3) uint8 array, without the PIL copy."""
    return _layout(world, *_view_origin(agent), *VIEW_TILES, scale, grid).paint("rgb", grid=grid)


def render_world(world: World, scale: int = 1, grid: bool = False) -> Image.Image:
    """The whole map (32x32 tiles: 1024x1024 px at scale 1)."""
    return render_region(world, 0, 0, world.size, world.size, scale, grid)


# ---- PNG -------------------------------------------------------------------------------------
_PNG_CACHE: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
_PNG_CACHE_LIMIT = 64  # the last views: many steps (waits, dialog, failed actions) change nothing


def _layout_png(layout: _Layout, grid: bool) -> bytes:
    """PNG of a layout, from `_PNG_CACHE` when the same pictures sit in the same cells (with the
    grid: at the same world coordinates, which the labels show)."""
    key = (layout.shape, tuple(art.serial for art in layout.arts), layout.cells.tobytes(), grid,
           layout.origin if grid else None)  # fmt: skip
    with _CACHE_LOCK:
        png = _PNG_CACHE.get(key)
        if png is None:
            png = _PNG_CACHE[key] = _encode_layout(layout, grid)
            if len(_PNG_CACHE) > _PNG_CACHE_LIMIT:
                _PNG_CACHE.popitem(last=False)
        else:
            _PNG_CACHE.move_to_end(key)
        return png


def _encode_layout(layout: _Layout, grid: bool) -> bytes:
    """A palette PNG when the layout uses <= 256 colours (palette sorted by colour, so the bytes
    do not depend on the cache history), else an RGB PNG."""
    codes = _COLOURS.codes_array()
    used = layout.used_colours(grid)
    if len(used) > 256:
        return to_png_bytes(Image.fromarray(layout.paint("rgb", grid=grid)))
    used = used[np.argsort(codes[used])]
    lut = np.zeros(len(codes), np.uint8)
    lut[used] = np.arange(len(used), dtype=np.uint8)
    pixels = layout.paint("idx", lut, grid)
    used_codes = codes[used]
    palette = np.stack([(used_codes >> 16) & 255, (used_codes >> 8) & 255, used_codes & 255], axis=1)
    return palette_png(pixels, palette.astype(np.uint8).tobytes())


def region_png(
    world: World, x0: int, y0: int, width: int, height: int, scale: int = 1, grid: bool = False
) -> bytes:
    """PNG bytes of `render_region(...)` (same pixels), written the fast way."""
    return _layout_png(_layout(world, x0, y0, width, height, scale, grid), grid)


def view_png(world: World, agent: Agent, scale: int = 1, grid: bool = False) -> bytes:
    """PNG bytes of `render_view(...)` (same pixels), written the fast way."""
    return region_png(world, *_view_origin(agent), *VIEW_TILES, scale, grid)


def to_png_bytes(image: Image.Image, compress_level: int = 1) -> bytes:
    """PNG bytes of any image (deterministic for given pixels)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()


def png_data_url(png: bytes) -> str:
    """`data:image/png;base64,...`, the original's `vision` format."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def to_data_url(image: Image.Image) -> str:
    return png_data_url(to_png_bytes(image))


def vision_observation(world: World, agent: Agent, scale: int = 1) -> dict[str, str]:
    """The original's `vision` entry: the view without and with the grid, as PNG data URLs."""
    layout = _layout(world, *_view_origin(agent), *VIEW_TILES, scale, grid=True)
    return {
        "base64_no_grid": png_data_url(_layout_png(layout, False)),
        "base64_with_grid": png_data_url(_layout_png(layout, True)),
    }
