"""A small animated-GIF writer in NumPy and pure Python (no imaging library needed).

Atari screens use at most 128 colours, so one global palette holds them all and the GIF
is lossless. Frames with more than 255 colours are quantised to a 6x6x6 colour cube.

Two things keep it fast and small: each frame after the first stores only the bounding box
of the pixels that changed, and unchanged pixels inside that box become the transparent
colour, which leaves long runs for the LZW compressor. Encoding costs a few milliseconds
per Atari frame, one to three seconds for 300 frames.

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
import struct
from collections.abc import Sequence
from typing import BinaryIO

import numpy as np

MAX_CODES = 4096  # the 12-bit limit of GIF's LZW
CUBE_LEVELS = 6


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
    palette, indices = palettize(stack)
    data = encode(palette, indices, delay_cs=delay_cs, loop=loop)
    if hasattr(target, "write"):
        target.write(data)
    else:
        with open(target, "wb") as file:
            file.write(data)


def palettize(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(palette, indices)``: at most 255 RGB colours and each pixel's colour index.

    The last palette entry is left free for the transparent colour.

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
    if len(colours) > 255:
        # Too many colours to be exact: round every channel to the nearest of CUBE_LEVELS.
        levels = (frames.astype(np.uint16) * (CUBE_LEVELS - 1) + 127) // 255
        steps = np.round(np.arange(CUBE_LEVELS) * 255 / (CUBE_LEVELS - 1)).astype(np.uint8)
        return palettize(steps[levels])
    lookup = np.zeros(1 << 24, dtype=np.uint8)
    lookup[colours] = np.arange(len(colours), dtype=np.uint8)
    palette = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], axis=1)
    return palette.astype(np.uint8), lookup[packed]


def encode(palette: np.ndarray, indices: np.ndarray, delay_cs: int = 8, loop: int = 0) -> bytes:
    """Encode palette-indexed frames (n, height, width) as GIF bytes."""
    _, height, width = indices.shape
    transparent = len(palette)
    table_bits = max(1, int(np.ceil(np.log2(len(palette) + 1))))
    table = np.zeros((1 << table_bits, 3), dtype=np.uint8)
    table[: len(palette)] = palette
    min_code_size = max(2, table_bits)
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0x80 | (table_bits - 1), 0, 0)
    out += table.tobytes()
    # NETSCAPE2.0 application extension: how many times the animation loops.
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", loop) + b"\x00"
    previous = None
    for frame in indices:
        if previous is None:
            top, left, patch, has_transparency = 0, 0, frame, False
        else:
            top, left, patch = changed_patch(frame, previous, transparent)
            has_transparency = True
        previous = frame
        # Graphic control: disposal 1 (keep the frame), delay, optional transparent index.
        flags = (1 << 2) | int(has_transparency)
        out += b"\x21\xf9\x04" + struct.pack("<BHB", flags, delay_cs, transparent) + b"\x00"
        rows, cols = patch.shape
        out += b"\x2c" + struct.pack("<HHHHB", left, top, cols, rows, 0)
        out.append(min_code_size)
        out += sub_blocks(lzw_encode(patch.tobytes(), min_code_size))
    out += b"\x3b"
    return bytes(out)


def changed_patch(
    frame: np.ndarray, previous: np.ndarray, transparent: int
) -> tuple[int, int, np.ndarray]:
    """Cut the bounding box of what changed since ``previous``; unchanged pixels transparent.

    Returns ``(top, left, patch)``; a frame identical to the last is one transparent pixel.
    """
    changed = frame != previous
    rows = np.flatnonzero(changed.any(axis=1))
    if not len(rows):
        return 0, 0, np.full((1, 1), transparent, dtype=np.uint8)
    cols = np.flatnonzero(changed.any(axis=0))
    top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    patch = np.where(changed[top:bottom, left:right], frame[top:bottom, left:right], transparent)
    return int(top), int(left), patch.astype(np.uint8)


def lzw_encode(data: bytes, min_code_size: int) -> bytes:
    """Compress ``data`` (colour indices below ``2**min_code_size``) with GIF's LZW.

    The code table restarts (a clear code) whenever it fills its 4096 codes.
    """
    clear = 1 << min_code_size
    end = clear + 1
    out = bytearray()
    buffer = 0  # bits not yet written, least significant first
    n_bits = 0
    width = min_code_size + 1
    next_code = end + 1
    # The table maps (code of a string, next byte) packed as code << 8 | byte.
    table: dict[int, int] = {}

    def emit(code: int) -> None:
        nonlocal buffer, n_bits
        buffer |= code << n_bits
        n_bits += width
        while n_bits >= 8:
            out.append(buffer & 0xFF)
            buffer >>= 8
            n_bits -= 8

    emit(clear)
    if not data:
        emit(end)
        return bytes(out + (bytes([buffer]) if n_bits else b""))
    prefix = data[0]
    for byte in data[1:]:
        key = prefix << 8 | byte
        code = table.get(key)
        if code is not None:
            prefix = code
            continue
        emit(prefix)
        table[key] = next_code
        next_code += 1
        if next_code == MAX_CODES:
            emit(clear)
            table.clear()
            width = min_code_size + 1
            next_code = end + 1
        elif next_code - 1 == 1 << width:
            width += 1
        prefix = byte
    emit(prefix)
    # The decoder adds one more entry on reading that code, and may widen its codes.
    if next_code == 1 << width and width < 12:
        width += 1
    emit(end)
    if n_bits:
        out.append(buffer & 0xFF)
    return bytes(out)


def sub_blocks(data: bytes) -> bytes:
    """Split image data into GIF sub-blocks of at most 255 bytes, ending with an empty one."""
    out = bytearray()
    for start in range(0, len(data), 255):
        chunk = data[start : start + 255]
        out.append(len(chunk))
        out += chunk
    out.append(0)
    return bytes(out)
