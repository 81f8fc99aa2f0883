"""GIF and MP4 videos of a replay, one frame per step, captioned with the action and message.

GIFs are written by Pillow; MP4s by imageio with the ffmpeg binary that the imageio-ffmpeg
wheel ships (no system ffmpeg needed). The caption strip is 64 px high, so frames stay
768x576: divisible by 16, as H.264 encoders want.
"""

from __future__ import annotations

import functools
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from discoverylab.ui.replay import Replay

CAPTION_HEIGHT = 64
CAPTION_BG = (20, 22, 28)
CAPTION_FG = (235, 235, 235)
CAPTION_DIM = (150, 200, 255)


def describe_action(action: Any) -> str:
    """A short human-readable action: 'PICKUP 12', 'choose option 2', or the raw text."""
    if isinstance(action, dict):
        if "chosen_dialog_option_int" in action:
            return f"choose option {action['chosen_dialog_option_int']}"
        parts = [str(action.get(k)) for k in ("action", "arg1", "arg2") if action.get(k) is not None]
        return " ".join(parts) or json.dumps(action)
    return "" if action is None else str(action)


@functools.cache
def _font() -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at 14 px (its tiny bitmap font where FreeType is missing)."""
    try:
        return ImageFont.load_default(size=14)
    except (TypeError, ImportError, OSError):
        return ImageFont.load_default()


def caption(frame: np.ndarray, step: int, action: Any, message: str, score: float) -> np.ndarray:
    """`frame` with a caption strip below: step, action and score, then the message."""
    height, width = frame.shape[:2]
    strip = Image.new("RGB", (width, CAPTION_HEIGHT), CAPTION_BG)
    draw = ImageDraw.Draw(strip)
    font = _font()
    said = action if isinstance(action, str) else describe_action(action)
    head = f"step {step}" + (f"  {said}" if step else "  start") + f"   score {score:.2f}"
    draw.text((8, 4), head[:100], fill=CAPTION_DIM, font=font)
    lines = caption_lines(message)
    for i, line in enumerate(lines):
        draw.text((8, 23 + 18 * i), line, fill=CAPTION_FG, font=font)
    return np.concatenate([frame, np.asarray(strip)], axis=0)


def caption_lines(message: str, width: int = 96, most: int = 2) -> list[str]:
    """The message's first lines, each of its lines wrapped on its own (joining them ran
    sentences together: 'We are talking.  You said: Hello!Sally said: ...')."""
    lines: list[str] = []
    for paragraph in message.splitlines():
        lines += textwrap.wrap(" ".join(paragraph.split()), width=width)
    if len(lines) > most:
        lines = [*lines[: most - 1], lines[most - 1][: width - 4] + " ..."]
    return lines


def captioned_frames(replay: Replay, grid: bool = False) -> Iterator[np.ndarray]:
    for frame, entry in zip(replay.frames(grid), replay.timeline, strict=True):
        yield caption(frame, entry["step"], entry.get("label") or entry["action"], entry["message"], entry["score"])


def write_gif(replay: Replay, out: Path, fps: float = 2.0, grid: bool = False) -> int:
    """Write a looping GIF; returns the number of frames."""
    frames = [Image.fromarray(f).quantize(colors=256, method=Image.Quantize.MEDIANCUT) for f in captioned_frames(replay, grid)]
    out.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=int(1000 / fps), loop=0,
                   optimize=False, disposal=1)  # fmt: skip
    return len(frames)


def write_mp4(replay: Replay, out: Path, fps: float = 2.0, grid: bool = False) -> int:
    """Write an H.264 MP4 (yuv420p, plays everywhere); returns the number of frames."""
    import imageio.v2 as imageio

    out.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    writer = imageio.get_writer(str(out), format="FFMPEG", mode="I", fps=fps, codec="libx264",  # type: ignore[call-overload]
                                pixelformat="yuv420p", macro_block_size=16, ffmpeg_log_level="error")  # fmt: skip
    try:
        for frame in captioned_frames(replay, grid):
            writer.append_data(frame)
            count += 1
    finally:
        writer.close()
    return count
