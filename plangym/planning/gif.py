"""Animated GIFs of RGB frames, coded by Pillow (the ``viz`` extra).

The GIF is lossless when all the frames hold at most 255 colours together (an Atari
screen uses at most 128): one global palette holds them all. Frames with more colours are
first reduced to 255 colours shared by all of them (Pillow's fast octree, no dithering).

The file stays small: each frame after the first stores only the bounding box of what
changed, unchanged pixels inside it become the transparent colour (the palette entry after
the frames' colours), which leaves long runs for the LZW coder, a frame equal to the one
before is merged into it (shown that much longer), and the codes start at the palette's
size (see :func:`encode`).

>>> import io
>>> frames = [np.zeros((4, 6, 3), np.uint8), np.full((4, 6, 3), 200, np.uint8)]
>>> buffer = io.BytesIO()
>>> write_gif(buffer, frames, delay_cs=10)
>>> data = buffer.getvalue()
>>> data[:6], data[-1:]
(b'GIF89a', b';')
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Sequence
from types import ModuleType
from typing import BinaryIO

import numpy as np

from plangym.extras import require

MAX_COLOURS = 255  # the 256th palette entry is the transparent colour


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
    data = encode(palette, indices, delay_cs, loop)
    if hasattr(target, "write"):
        target.write(data)
    else:
        with open(target, "wb") as file:
            file.write(data)


def encode(palette: np.ndarray, indices: np.ndarray, delay_cs: int = 8, loop: int = 0) -> bytes:
    """Return the GIF of palette-indexed frames ``indices`` (n, height, width).

    The LZW coding is Pillow's. The blocks around it are written here because Pillow's
    own GIF writer always starts the codes at 8 bits: for the dozen colours of an Atari
    screen, a code size fitted to the palette makes the file a sixth smaller.
    """
    _, height, width = indices.shape
    transparent = len(palette)  # the entry after the frames' colours
    table_bits = max(1, int(np.ceil(np.log2(len(palette) + 1))))
    table = np.zeros((1 << table_bits, 3), dtype=np.uint8)
    table[: len(palette)] = palette
    code_size = max(2, table_bits)
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0x80 | (table_bits - 1), 0, 0)
    out += table.tobytes()
    # NETSCAPE2.0 application extension: how many times the animation loops.
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loop) + b"\x00"
    previous = None
    for frame, repeats in distinct_runs(indices):
        if previous is None:
            top, left, patch = 0, 0, frame
        else:
            top, left, patch = changed_patch(frame, previous, transparent)
        # Graphic control: disposal 1 (keep the frame), delay (a frame repeated is shown
        # that much longer), transparency after the first frame.
        flags = (1 << 2) | int(previous is not None)
        delay = min(delay_cs * repeats, 0xFFFF)
        out += b"\x21\xf9\x04" + struct.pack("<BHB", flags, delay, transparent) + b"\x00"
        rows, cols = patch.shape
        out += b"\x2c" + struct.pack("<HHHHB", left, top, cols, rows, 0)
        out.append(code_size)
        out += pillow_lzw(patch, code_size) + b"\x00"
        previous = frame
    out += b"\x3b"
    return bytes(out)


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


def pillow_lzw(patch: np.ndarray, code_size: int) -> bytes:
    """Return ``patch``'s colour indices LZW-coded by Pillow, in GIF sub-blocks."""
    from PIL import Image, ImageFile

    picture = Image.fromarray(np.ascontiguousarray(patch, dtype=np.uint8), mode="L")
    buffer = io.BytesIO()
    # Pillow's "gif" encoder takes the raw mode and the code size. Pillow >= 11 types a tile
    # as its private _Tile named tuple, which Pillow 10 lacks; a plain tuple works in both.
    tile = ("gif", (0, 0, *picture.size), 0, ("L", code_size))
    ImageFile._save(picture, buffer, [tile])  # type: ignore[list-item]
    return buffer.getvalue()


def changed_patch(
    frame: np.ndarray, previous: np.ndarray, transparent: int
) -> tuple[int, int, np.ndarray]:
    """Cut the bounding box of what changed since ``previous``; unchanged pixels transparent.

    Returns ``(top, left, patch)``; a frame identical to the last is one transparent pixel.

    >>> changed_patch(np.array([[1, 2], [3, 4]]), np.array([[1, 0], [3, 4]]), 9)
    (0, 1, array([[2]], dtype=uint8))
    """
    changed = frame != previous
    rows = np.flatnonzero(changed.any(axis=1))
    if not len(rows):
        return 0, 0, np.full((1, 1), transparent, dtype=np.uint8)
    cols = np.flatnonzero(changed.any(axis=0))
    top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    patch = np.where(changed[top:bottom, left:right], frame[top:bottom, left:right], transparent)
    return int(top), int(left), patch.astype(np.uint8)


def palettize(frames: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Return ``(palette, indices)``: the frames' RGB colours and each pixel's colour index.

    ``(None, None)`` when the frames hold more than :data:`MAX_COLOURS` colours.

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
    if len(colours) > MAX_COLOURS:
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
