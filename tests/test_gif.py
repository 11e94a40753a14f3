"""The GIF writer: decode what it wrote with an independent reader and compare pixels."""

from __future__ import annotations

import io
import struct
import time

import numpy as np
import pytest

import plangym
from plangym.planning.gif import lzw_encode, write_gif


def lzw_decode(data: bytes, min_code_size: int) -> bytes:
    """GIF's LZW decompression, written from the format's description."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    bits = int.from_bytes(data, "little")
    total_bits = len(data) * 8
    position, width = 0, min_code_size + 1
    table: list[bytes] = []
    previous: bytes | None = None
    out = bytearray()
    while position + width <= total_bits:
        code = (bits >> position) & ((1 << width) - 1)
        position += width
        if code == clear:
            table = [bytes([i]) for i in range(clear)] + [b"", b""]
            width, previous = min_code_size + 1, None
            continue
        if code == end:
            return bytes(out)
        if previous is None:
            entry = table[code]
        else:
            entry = table[code] if code < len(table) else previous + previous[:1]
            table.append(previous + entry[:1])
            if len(table) == 1 << width and width < 12:
                width += 1
        out += entry
        previous = entry
    raise AssertionError("no end code")


def read_gif(data: bytes) -> tuple[list[np.ndarray], list[int]]:
    """Decode an animated GIF into full RGB frames (disposal 'keep', one global palette)."""
    assert data[:6] == b"GIF89a"
    width, height, flags, _, _ = struct.unpack("<HHBBB", data[6:13])
    assert flags & 0x80, "a global colour table"
    table_size = 2 ** ((flags & 7) + 1)
    palette = np.frombuffer(data[13 : 13 + 3 * table_size], np.uint8).reshape(-1, 3)
    position = 13 + 3 * table_size
    canvas = np.zeros((height, width, 3), np.uint8)
    frames, delays = [], []
    transparent = None
    while True:
        kind = data[position]
        if kind == 0x3B:
            return frames, delays
        if kind == 0x21:
            label = data[position + 1]
            position += 2
            if label == 0xF9:
                flags, delay, index = struct.unpack("<BHB", data[position + 1 : position + 5])
                transparent = index if flags & 1 else None
                delays.append(delay)
            while data[position]:
                position += data[position] + 1
            position += 1
            continue
        assert kind == 0x2C
        left, top, cols, rows, _ = struct.unpack("<HHHHB", data[position + 1 : position + 10])
        min_code_size = data[position + 10]
        position += 11
        chunks = bytearray()
        while data[position]:
            chunks += data[position + 1 : position + 1 + data[position]]
            position += data[position] + 1
        position += 1
        indices = np.frombuffer(lzw_decode(bytes(chunks), min_code_size), np.uint8)
        indices = indices.reshape(rows, cols)
        region = canvas[top : top + rows, left : left + cols]
        keep = indices == transparent if transparent is not None else np.zeros_like(indices, bool)
        region[~keep] = palette[indices[~keep]]
        frames.append(canvas.copy())


@pytest.mark.parametrize("min_code_size", [2, 4, 8])
def test_lzw_round_trip_through_table_resets(min_code_size):
    rng = np.random.default_rng(min_code_size)
    # Random data fills the 4096-code table several times; runs exercise long strings.
    noise = rng.integers(1 << min_code_size, size=30_000, dtype=np.uint8)
    runs = np.repeat(noise[:300], rng.integers(1, 40, size=300))
    for data in (noise.tobytes(), runs.tobytes(), b"", bytes([1]), bytes([1, 1])):
        assert lzw_decode(lzw_encode(data, min_code_size), min_code_size) == data


def test_lossless_atari_frames_decode_exactly():
    env = plangym.make("ALE/Pong-v5")
    env.reset()
    rng = np.random.default_rng(0)
    frames = [env.step(int(rng.integers(env.n_actions)))[0] for _ in range(40)]
    frames.insert(5, frames[4])  # an unchanged frame
    buffer = io.BytesIO()
    write_gif(buffer, frames, delay_cs=7)
    decoded, delays = read_gif(buffer.getvalue())
    assert delays == [7] * len(frames)
    assert len(decoded) == len(frames)
    for ours, theirs in zip(frames, decoded, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_many_colours_are_quantised():
    rng = np.random.default_rng(1)
    frames = [rng.integers(256, size=(20, 30, 3), dtype=np.uint8) for _ in range(3)]
    buffer = io.BytesIO()
    write_gif(buffer, frames)
    decoded, _ = read_gif(buffer.getvalue())
    for ours, theirs in zip(frames, decoded, strict=True):
        # A 6-level cube is at most 26 away from any colour on each channel.
        assert np.abs(ours.astype(int) - theirs.astype(int)).max() <= 26


def test_encoding_300_atari_frames_is_fast(tmp_path):
    env = plangym.make("ALE/MsPacman-v5")
    env.reset()
    rng = np.random.default_rng(0)
    frames = [env.step(int(rng.integers(env.n_actions)))[0] for _ in range(300)]
    start = time.perf_counter()
    write_gif(tmp_path / "run.gif", frames)
    assert time.perf_counter() - start < 10  # about 1 s on an idle core
    assert (tmp_path / "run.gif").stat().st_size < 1_000_000


@pytest.mark.parametrize(
    ("frames", "message"),
    [([], "at least one frame"), ([np.zeros((4, 4), np.uint8)], "RGB uint8")],
)
def test_bad_frames_are_rejected(frames, message):
    with pytest.raises(ValueError, match=message):
        write_gif(io.BytesIO(), frames)
