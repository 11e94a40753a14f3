"""The GIF writer: decode what it wrote with Pillow's reader and compare pixels."""

from __future__ import annotations

import io
import sys
import time

import numpy as np
import pytest

import plangym
from plangym.planning.gif import MAX_COLOURS, write_gif

Image = pytest.importorskip("PIL.Image")
ImageSequence = pytest.importorskip("PIL.ImageSequence")


def read_gif(data: bytes) -> tuple[list[np.ndarray], list[int]]:
    """Decode an animated GIF into full RGB frames and their delays (hundredths of s)."""
    frames, delays = [], []
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "GIF"
        for frame in ImageSequence.Iterator(image):
            frames.append(np.asarray(frame.convert("RGB")))
            delays.append(frame.info["duration"] // 10)
    return frames, delays


def timeline(frames: list[np.ndarray], delays: list[int], delay_cs: int) -> list[np.ndarray]:
    """What is on screen every ``delay_cs``: a frame merged with repeats of it shows longer."""
    assert all(delay % delay_cs == 0 for delay in delays), delays
    return [
        frame for frame, delay in zip(frames, delays, strict=True) for _ in range(delay // delay_cs)
    ]


def atari_frames(name: str, n: int) -> list[np.ndarray]:
    env = plangym.make(name)
    env.reset()
    rng = np.random.default_rng(0)
    frames = [env.step(int(rng.integers(env.n_actions)))[0] for _ in range(n)]
    env.close()
    return frames


def encode(frames, **kwargs) -> bytes:
    buffer = io.BytesIO()
    write_gif(buffer, frames, **kwargs)
    return buffer.getvalue()


def test_lossless_atari_frames_decode_exactly():
    frames = atari_frames("ALE/Pong-v5", 40)
    frames.insert(5, frames[4])  # an unchanged frame: merged into the one before
    decoded, delays = read_gif(encode(frames, delay_cs=7))
    assert len(decoded) < len(frames) and sum(delays) == 7 * len(frames)
    shown = timeline(decoded, delays, 7)
    assert len(shown) == len(frames)
    for ours, theirs in zip(frames, shown, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_the_frames_are_stored_as_changed_boxes_with_one_global_palette():
    frames = atari_frames("ALE/Pong-v5", 10)
    with Image.open(io.BytesIO(encode(frames))) as image:
        assert image.info["loop"] == 0 and image.palette is not None
        boxes = []
        for frame in ImageSequence.Iterator(image):
            boxes.append(frame.dispose_extent)
            assert frame.tile == [] or frame.tile[0][0] == "gif"
    height, width = frames[0].shape[:2]
    assert boxes[0] == (0, 0, width, height)
    assert all((x1 - x0) * (y1 - y0) < width * height for x0, y0, x1, y1 in boxes[1:])


def test_many_colours_are_quantised_to_one_shared_palette():
    rng = np.random.default_rng(1)
    noise = [rng.integers(256, size=(20, 30, 3), dtype=np.uint8) for _ in range(3)]
    decoded, _ = read_gif(encode(noise))
    assert len(decoded) == 3
    colours = {tuple(pixel) for frame in decoded for pixel in frame.reshape(-1, 3)}
    assert len(colours) <= MAX_COLOURS
    error = np.abs(np.stack(noise).astype(int) - np.stack(decoded).astype(int))
    assert error.mean() < 16  # uniform noise is the worst case: about 12.5 measured


def test_smooth_pictures_with_many_colours_stay_close():
    y, x = np.mgrid[0:64, 0:64]
    gradient = np.stack([x * 4, y * 4, np.full_like(x, 128)], axis=-1).astype(np.uint8)
    frames = [gradient, np.roll(gradient, 8, axis=1)]  # 4,096 colours
    decoded, _ = read_gif(encode(frames))
    error = np.abs(np.stack(frames).astype(int) - np.stack(decoded).astype(int))
    assert error.max() <= 24 and error.mean() < 6


@pytest.mark.parametrize("count", [255, 256])
def test_up_to_256_colours_stay_exact(count):
    colours = (np.arange(count * 3) * 7 % 256).astype(np.uint8).reshape(count, 1, 3)
    assert len({tuple(c) for c in colours[:, 0]}) == count
    frames = [colours, colours[::-1], colours]
    decoded, _ = read_gif(encode(frames))
    for ours, theirs in zip(frames, decoded, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_black_in_the_frames_does_not_become_transparent():
    # The transparent entry must not share a colour with a visible one: black, the
    # commonest Atari colour, would otherwise turn see-through in changed boxes.
    frames = [np.zeros((8, 8, 3), np.uint8) for _ in range(3)]
    frames[1][2:5, 2:5] = (255, 255, 255)  # a white square, then black again
    decoded, _ = read_gif(encode(frames))
    for ours, theirs in zip(frames, decoded, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_a_single_frame_and_a_path_target(tmp_path):
    frame = np.zeros((4, 6, 3), np.uint8)
    frame[1, 2] = (255, 0, 0)
    write_gif(tmp_path / "one.gif", [frame, frame], delay_cs=5)
    decoded, delays = read_gif((tmp_path / "one.gif").read_bytes())
    assert delays == [10]  # two identical frames are one, shown twice as long
    np.testing.assert_array_equal(decoded[0], frame)
    write_gif(str(tmp_path / "two.gif"), [frame])
    assert (tmp_path / "two.gif").read_bytes()[:6] == b"GIF89a"


def test_300_atari_frames_are_exact_fast_and_small(tmp_path):
    frames = atari_frames("ALE/MsPacman-v5", 300)
    start = time.perf_counter()
    write_gif(tmp_path / "run.gif", frames)
    assert time.perf_counter() - start < 10  # 0.17 s measured on a quiet machine
    data = (tmp_path / "run.gif").read_bytes()
    # 112 KB measured: only the changed boxes are stored (300 whole screens: 620 KB).
    assert len(data) < 200_000
    decoded, delays = read_gif(data)
    shown = timeline(decoded, delays, 8)
    assert len(shown) == len(frames)
    for ours, theirs in zip(frames, shown, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_written_through_pillows_public_api_only():
    import inspect

    from plangym.planning import gif

    source = inspect.getsource(gif)
    assert "ImageFile" not in source and "._save" not in source and "struct" not in source


@pytest.mark.parametrize(
    ("frames", "message"),
    [([], "at least one frame"), ([np.zeros((4, 4), np.uint8)], "RGB uint8")],
)
def test_bad_frames_are_rejected(frames, message):
    with pytest.raises(ValueError, match=message):
        write_gif(io.BytesIO(), frames)


def test_without_pillow_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match=r"needs the 'viz' extra: pip install .plangym\[viz\]."):
        write_gif(io.BytesIO(), [np.zeros((4, 4, 3), np.uint8)])
