"""Animated GIFs of RGB frames, written by Pillow's public API (the ``viz`` extra).

The GIF is lossless when all the frames hold at most 256 colours together (an Atari screen
uses at most 128): the frames are indexed against one global palette of exactly their
colours, so Pillow never has to choose colours itself. Frames with more colours are first
reduced, explicitly, to 255 colours shared by all of them (Pillow's fast octree, no
dithering).

Pillow's writer keeps the file small: each frame after the first stores only the box of
what changed, with the unchanged pixels in it set to the transparent colour (the palette
entry after the frames' colours), which leaves long runs for the LZW coder. A frame equal
to the one before is merged into it here (shown that much longer).

>>> import io
>>> frames = [np.zeros((4, 6, 3), np.uint8), np.full((4, 6, 3), 200, np.uint8)]
>>> buffer = io.BytesIO()
>>> write_gif(buffer, frames, delay_cs=10)
>>> data = buffer.getvalue()
>>> data[:6], data[-1:]
(b'GIF89a', b';')
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any, BinaryIO

import numpy as np

from plangym.extras import require

GIF_COLOURS = 256  # a GIF palette's size
MAX_COLOURS = GIF_COLOURS - 1  # what quantized frames keep: one entry stays transparent
MAX_DELAY_CS = 0xFFFF  # a GIF frame's delay is a 16-bit count of hundredths of a second


def pillow_image() -> ModuleType:
    """Return ``PIL.Image``; without Pillow, an ImportError naming the ``viz`` extra."""
    require("PIL", extra="viz", feature="Writing a GIF")
    from PIL import Image

    return Image


def write_gif(
    target: str | os.PathLike | BinaryIO,
    frames: Sequence[np.ndarray],
    delay_cs: int = 8,
    loop: int = 0,
) -> None:
    """Write ``frames`` (RGB uint8 arrays of one shape) as an animated GIF.

    Args:
        target: A path or a binary file object.
        frames: At least one (height, width, 3) uint8 array; all of the same shape.
        delay_cs: Time each frame is shown, in hundredths of a second.
        loop: Times the animation repeats; 0 repeats forever.
    """
    if not len(frames):
        raise ValueError("frames: expected at least one frame, received none")
    stack = np.asarray(frames)
    if stack.ndim != 4 or stack.shape[-1] != 3 or stack.dtype != np.uint8:
        raise ValueError(
            "frames: expected RGB uint8 arrays of one shape (height, width, 3), "
            f"received an array of shape {stack.shape[1:]} and dtype {stack.dtype}"
        )
    image = pillow_image()
    palette, indices = palettize(stack)
    if palette is None:
        palette, indices = palettize(quantize(stack, image))
    assert palette is not None and indices is not None  # at most MAX_COLOURS once quantized
    runs = distinct_runs(indices)
    pictures = [indexed_picture(image, frame, palette) for frame, _ in runs]
    options: dict[str, Any] = {
        "format": "GIF",
        "save_all": True,
        "append_images": pictures[1:],
        # Pillow takes milliseconds and stores hundredths; repeats are merged into one frame.
        "duration": [min(delay_cs * repeats, MAX_DELAY_CS) * 10 for _, repeats in runs],
        "loop": loop,
        "disposal": 1,  # each frame is drawn over the one before
        # One global palette: Pillow then writes no colour table per frame, and never
        # remaps or reduces the colours.
        "palette": palette_bytes(palette),
        # Makes Pillow set the unchanged pixels of each changed box to the transparent
        # entry; with a palette given, it does not touch the palette itself.
        "optimize": True,
    }
    if len(palette) < GIF_COLOURS:
        options["transparency"] = len(palette)
    pictures[0].save(target, **options)


def indexed_picture(image: ModuleType, indices: np.ndarray, palette: np.ndarray) -> Any:
    """Return a Pillow picture of mode "P": ``indices`` into ``palette`` (<= 256 colours)."""
    height, width = indices.shape
    picture = image.frombytes("P", (width, height), np.ascontiguousarray(indices, np.uint8))
    picture.putpalette(palette_bytes(palette))
    return picture


def palette_bytes(palette: np.ndarray) -> bytes:
    r"""Return the palette as Pillow takes it, with the transparent entry after the colours.

    The transparent entry gets a colour none of the frames has: Pillow matches palette
    entries by colour, and a duplicate could swap it with a visible entry.

    >>> palette_bytes(np.array([[0, 0, 0], [0, 0, 2]], np.uint8))
    b'\x00\x00\x00\x00\x00\x02\x00\x00\x01'
    """
    if len(palette) >= GIF_COLOURS:
        return np.ascontiguousarray(palette, dtype=np.uint8).tobytes()
    packed = {int(r) << 16 | int(g) << 8 | int(b) for r, g, b in palette}
    free = next(colour for colour in range(len(palette) + 1) if colour not in packed)
    table = np.zeros((len(palette) + 1, 3), dtype=np.uint8)
    table[: len(palette)] = palette
    table[-1] = (free >> 16, (free >> 8) & 255, free & 255)
    return table.tobytes()


def distinct_runs(indices: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Group equal consecutive frames: ``[(frame, times it is repeated), ...]``.

    >>> [(int(f[0, 0]), n) for f, n in distinct_runs(np.array([[[1]], [[1]], [[2]]]))]
    [(1, 2), (2, 1)]
    """
    runs: list[tuple[np.ndarray, int]] = []
    for frame in indices:
        if runs and np.array_equal(runs[-1][0], frame):
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((frame, 1))
    return runs


def palettize(frames: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Return ``(palette, indices)``: the frames' RGB colours and each pixel's colour index.

    ``(None, None)`` when the frames hold more than 256 colours together.

    >>> palette, indices = palettize(np.array([[[[0, 0, 0], [9, 9, 9], [0, 0, 0]]]], np.uint8))
    >>> palette.tolist(), indices.tolist()
    ([[0, 0, 0], [9, 9, 9]], [[[0, 1, 0]]])
    """
    packed = (
        frames[..., 0].astype(np.uint32) << 16
        | frames[..., 1].astype(np.uint32) << 8
        | frames[..., 2].astype(np.uint32)
    )
    # A table over all 2**24 colours finds them in linear time, where sorting the pixels
    # (np.unique) takes seconds on a few hundred frames.
    present = np.zeros(1 << 24, dtype=bool)
    present[packed.ravel()] = True
    colours = np.flatnonzero(present)
    if len(colours) > GIF_COLOURS:
        return None, None
    lookup = np.zeros(1 << 24, dtype=np.uint8)
    lookup[colours] = np.arange(len(colours), dtype=np.uint8)
    palette = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], axis=1)
    return palette.astype(np.uint8), lookup[packed]


def quantize(frames: np.ndarray, image: ModuleType) -> np.ndarray:
    """Reduce ``frames`` to at most :data:`MAX_COLOURS` colours shared by all of them."""
    count, height, width, _ = frames.shape
    # One tall picture of every frame, so that they all get the same palette.
    tall = image.fromarray(np.ascontiguousarray(frames).reshape(count * height, width, 3))
    reduced = tall.quantize(
        MAX_COLOURS, method=image.Quantize.FASTOCTREE, dither=image.Dither.NONE
    ).convert("RGB")
    return np.asarray(reduced).reshape(frames.shape)
