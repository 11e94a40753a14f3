"""Inline pictures of planned games: replay_frames, Animation, Trajectory's HTML."""

from __future__ import annotations

import base64
import io
import re
import sys

import numpy as np
import pytest

import plangym
from plangym.planning import (
    Animation,
    SwarmPlanner,
    Trajectory,
    UCTPlanner,
    play,
    replay_frames,
)
from plangym.planning.common import Decision

Image = pytest.importorskip("PIL.Image")
ImageSequence = pytest.importorskip("PIL.ImageSequence")
pytest.importorskip("pygame")  # classic control draws with pygame

pytestmark = pytest.mark.timeout(120)


def decode_gif(data: bytes) -> tuple[list[np.ndarray], list[int]]:
    frames, delays = [], []
    with Image.open(io.BytesIO(data)) as image:
        for frame in ImageSequence.Iterator(image):
            frames.append(np.asarray(frame.convert("RGB")))
            delays.append(frame.info["duration"] // 10)
    return frames, delays


def gif_of_html(markup: str) -> bytes:
    match = re.fullmatch(r'<img src="data:image/gif;base64,([A-Za-z0-9+/=]+)" (.*)/>', markup)
    assert match, markup[:80]
    return base64.b64decode(match.group(1))


def distinct_frames(n: int, height: int = 12, width: int = 16) -> list[np.ndarray]:
    frames = []
    for i in range(n):
        frame = np.zeros((height, width, 3), np.uint8)
        frame[i % height, : i + 1] = (255, 40 * (i % 6), 7)
        frames.append(frame)
    return frames


@pytest.fixture(scope="module")
def cartpole_game():
    env = plangym.make("CartPole-v1")
    trajectory = play(env, SwarmPlanner(env, n_walkers=8, horizon=4), max_steps=25, seed=3)
    env.close()
    return trajectory


def test_html_is_an_img_whose_gif_decodes_to_the_frames():
    frames = distinct_frames(6)
    animation = Animation(frames, fps=25)
    markup = animation._repr_html_()
    assert 'width="16" height="12"' in markup
    decoded, delays = decode_gif(gif_of_html(markup))
    assert len(decoded) == len(animation) == 6
    assert delays == [4] * 6
    for ours, theirs in zip(frames, decoded, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert gif_of_html(markup) == animation.gif_bytes()


def test_png_is_the_last_frame():
    frames = distinct_frames(3)
    with Image.open(io.BytesIO(Animation(frames)._repr_png_())) as image:
        assert image.format == "PNG"
        np.testing.assert_array_equal(np.asarray(image.convert("RGB")), frames[-1])


def test_save_repr_and_timing(tmp_path):
    animation = Animation(distinct_frames(10), delay_cs=5)
    path = animation.save(tmp_path / "a.gif")
    assert path.read_bytes() == animation.gif_bytes()
    assert repr(animation) == "Animation(10 frames of 16x12, 20 fps, 0.5 s)"
    assert animation.fps == 20 and animation.duration_s == 0.5
    assert Animation(distinct_frames(2)).delay_cs == 8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"frames": []}, "at least one frame"),
        ({"frames": [np.zeros((4, 4), np.uint8)]}, "RGB uint8"),
        ({"frames": [np.zeros((4, 4, 3)), np.zeros((4, 4, 3))]}, "RGB uint8"),
        ({"frames": [np.zeros((4, 4, 3), np.uint8), np.zeros((5, 4, 3), np.uint8)]}, "one shape"),
        ({"fps": 10, "delay_cs": 4}, "not both"),
        ({"fps": 0}, "fps"),
        ({"delay_cs": 0}, "delay_cs"),
    ],
)
def test_bad_animations_are_rejected(kwargs, message):
    kwargs = {"frames": distinct_frames(2), **kwargs}
    with pytest.raises(ValueError, match=message):
        Animation(**kwargs)


def test_trajectory_html_shows_what_the_game_achieved(cartpole_game):
    markup = cartpole_game._repr_html_()
    assert markup.startswith("<table>") and markup.endswith("</table>")
    assert f"<tr><th>score</th><td>{cartpole_game.score:,.0f}</td></tr>" in markup
    assert "<th>agent steps</th><td>25</td>" in markup
    assert "<th>episode ended</th><td>no</td>" in markup
    assert f"{cartpole_game.frames_simulated:,}" in markup
    text = repr(cartpole_game)
    assert text.startswith("Trajectory(score=25, agent_steps=25, ") and "states" not in text


@pytest.mark.parametrize("planner", [SwarmPlanner, UCTPlanner])
def test_replay_of_a_real_run_is_exact(planner):
    env = plangym.make("CartPole-v1", n_workers=2)
    try:
        trajectory = play(env, planner(env, seed=1), max_steps=12, seed=1)
    finally:
        env.close()
    drawing = plangym.make("CartPole-v1", return_image=True)
    try:
        frames, exact = replay_frames(drawing, trajectory)
    finally:
        drawing.close()
    assert exact is True
    assert len(frames) == 12 and frames[0].shape == (200, 300, 3)  # 600x400 halved
    assert all(frame.dtype == np.uint8 for frame in frames)
    assert not all(np.array_equal(frames[0], frame) for frame in frames[1:])


def test_animation_of_a_trajectory_by_name_and_by_env(cartpole_game):
    by_name = cartpole_game.animation("CartPole-v1", every=2)
    assert len(by_name) == 13  # steps 1, 3, ..., 25
    assert by_name.delay_cs == 4  # 50 fps, every second picture
    drawing = plangym.make("CartPole-v1", return_image=True)
    try:
        by_env = cartpole_game.animation(drawing, every=2)
    finally:
        drawing.close()
    for first, second in zip(by_name.frames, by_env.frames, strict=True):
        np.testing.assert_array_equal(first, second)
    decoded, delays = decode_gif(gif_of_html(by_name._repr_html_()))
    shown = [frame for frame, delay in zip(decoded, delays, strict=True) for _ in range(delay // 4)]
    assert len(shown) == 13
    for ours, theirs in zip(by_name.frames, shown, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_atari_replay_draws_with_get_image_and_plays_at_60_fps():
    env = plangym.make("ALE/MsPacman-v5", obs_type="ram")
    try:
        trajectory = play(env, SwarmPlanner(env, n_walkers=4, horizon=2), max_steps=6, seed=0)
        frames, exact = replay_frames(env, trajectory)  # no return_image: get_image()
    finally:
        env.close()
    assert exact and len(frames) == 6 and frames[0].shape == (210, 160, 3)
    animation = trajectory.animation("ALE/MsPacman-v5")
    assert animation.delay_cs == 8  # frameskip 5 at 60 frames a second
    for ours, theirs in zip(frames, animation.frames, strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_a_replay_in_another_frameskip_warns(cartpole_game):
    with pytest.warns(RuntimeWarning, match="another frameskip"):
        cartpole_game.animation("CartPole-v1", frameskip=2)


def test_misuse_of_animation(cartpole_game):
    with pytest.raises(ValueError, match="no steps"):
        Trajectory(states=[0]).animation("CartPole-v1")
    drawing = plangym.make("CartPole-v1", return_image=True)
    try:
        with pytest.raises(ValueError, match="frameskip"):
            cartpole_game.animation(drawing, frameskip=2)
    finally:
        drawing.close()
    with pytest.raises(ValueError, match="every"):
        cartpole_game.animation("CartPole-v1", every=0)


def test_without_pillow_pictures_name_the_extra(monkeypatch):
    animation = Animation(distinct_frames(2))
    monkeypatch.setitem(sys.modules, "PIL", None)
    for show in (animation._repr_html_, animation._repr_png_, animation.gif_bytes):
        with pytest.raises(ImportError, match=r"the 'viz' extra: pip install .plangym\[viz\]."):
            show()


def test_a_planner_that_only_waits_still_animates():
    class Wait:
        name = "wait"

        def decide(self, state):
            return Decision(action=0, frames=0)

    env = plangym.make("CartPole-v1")
    trajectory = play(env, Wait(), max_steps=100, seed=0)
    env.close()
    animation = trajectory.animation("CartPole-v1")
    assert trajectory.ended and len(animation) == trajectory.agent_steps
    assert "<th>episode ended</th><td>yes</td>" in trajectory._repr_html_()
