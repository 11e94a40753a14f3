"""plangym.utils: plangym 0.1's helpers (frames, virtual display, time limits, grayscale)."""

import copy
import dataclasses
import importlib.util
import os
import pickle
import shutil
import subprocess
import sys
import types
import warnings

import ale_py
import cv2
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from PIL import Image

import plangym
from plangym.utils import (
    NO_TIME_LIMIT,
    GrayScaleObservation,
    find_time_limit,
    get_display,
    process_frame,
    process_frame_opencv,
    process_frame_pil,
    remove_time_limit,
    remove_time_limit_from_spec,
    to_grayscale,
)

gym.register_envs(ale_py)


@pytest.fixture
def frame():
    """A random RGB frame, taller than wide so that swapped sizes show."""
    return np.random.default_rng(0).integers(0, 256, size=(30, 20, 3), dtype=np.uint8)


@pytest.fixture
def no_pil(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)


@pytest.fixture
def no_cv2(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)


def every_color():
    """All 2**24 RGB colours as a (4096, 4096, 3) frame."""
    v = np.arange(2**24, dtype=np.uint32)
    rgb = np.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255], axis=-1)
    return rgb.astype(np.uint8).reshape(4096, 4096, 3)


SIZES = [(None, None, (30, 20)), (10, None, (30, 10)), (None, 12, (12, 20)), (8, 5, (5, 8))]
MODES = [("RGB", (3,)), ("BGR", (3,)), ("L", ()), ("GRAY", ())]


@pytest.mark.parametrize(
    "process", [process_frame_pil, process_frame_opencv], ids=["pil", "opencv"]
)
@pytest.mark.parametrize(("width", "height", "hw"), SIZES)
@pytest.mark.parametrize(("mode", "channels"), MODES)
def test_shapes(frame, process, width, height, hw, mode, channels):
    out = process(frame, width, height, mode)
    assert out.shape == hw + channels
    assert out.dtype == np.uint8


# ---------------------------------------------------------------- process_frame_pil


def test_pil_resizes_like_pillow(frame):
    expected = np.array(Image.fromarray(frame).resize((8, 5)))
    np.testing.assert_array_equal(process_frame_pil(frame, width=8, height=5), expected)


def test_pil_keeps_frame_without_resize(frame):
    before = frame.copy()
    out = process_frame_pil(frame)
    np.testing.assert_array_equal(out, frame)
    out[...] = 0  # the result is a writable array of its own
    np.testing.assert_array_equal(frame, before)


def test_pil_grayscale_agrees_with_to_grayscale():
    colors = every_color()
    diff = process_frame_pil(colors, mode="L").astype(int) - to_grayscale(colors)
    assert np.abs(diff).max() == 1
    assert (diff != 0).mean() < 0.01
    corner = colors[:64, :64]
    np.testing.assert_array_equal(
        process_frame_pil(corner, mode="GRAY"), process_frame_pil(corner, mode="L")
    )


def test_pil_bgr_reverses_channels(frame):
    np.testing.assert_array_equal(process_frame_pil(frame, mode="BGR"), frame[..., ::-1])
    resized = process_frame_pil(frame, 8, 5, mode="BGR")
    np.testing.assert_array_equal(resized, process_frame_pil(frame, 8, 5)[..., ::-1])
    assert resized.flags.c_contiguous


def test_pil_other_modes_go_to_pillow(frame):
    assert process_frame_pil(frame, mode="RGBA").shape == (30, 20, 4)
    with pytest.raises(ValueError):
        process_frame_pil(frame, mode="NOPE")


def test_sizes_must_be_positive(frame):
    with pytest.raises(ValueError, match="positive"):
        process_frame_pil(frame, width=0)
    with pytest.raises(ValueError, match="positive"):
        process_frame_opencv(frame, height=-3)


# ---------------------------------------------------------------- process_frame_opencv


def test_opencv_resizes_like_opencv(frame):
    np.testing.assert_array_equal(process_frame_opencv(frame, 8, 5), cv2.resize(frame, (8, 5)))
    np.testing.assert_array_equal(process_frame_opencv(frame), frame)


def test_opencv_grayscale_agrees_with_pillow_and_to_grayscale():
    colors = every_color()
    gray = process_frame_opencv(colors, mode="GRAY").astype(int)
    assert np.abs(gray - to_grayscale(colors)).max() == 1
    pil = np.array(Image.fromarray(colors).convert("L")).astype(int)
    assert np.abs(gray - pil).max() <= 1


def test_opencv_bgr_order(frame):
    np.testing.assert_array_equal(process_frame_opencv(frame, mode="BGR"), frame[..., ::-1])
    red = np.zeros((4, 4, 3), dtype=np.uint8)
    red[..., 0] = 255
    # Written as BGR and read back by OpenCV's own conversion, the pixel is red again.
    bgr = process_frame_opencv(red, width=2, mode="BGR")
    np.testing.assert_array_equal(bgr[0, 0], [0, 0, 255])
    np.testing.assert_array_equal(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)[0, 0], [255, 0, 0])


def test_opencv_rejects_unknown_mode(frame):
    with pytest.raises(ValueError, match="RGBA"):
        process_frame_opencv(frame, mode="RGBA")


# ---------------------------------------------------------------- process_frame


def test_process_frame_prefers_pillow(frame):
    out = process_frame(frame, 8, 5)
    np.testing.assert_array_equal(out, process_frame_pil(frame, 8, 5))
    # The libraries resize differently, so this tells which one ran.
    assert not np.array_equal(out, process_frame_opencv(frame, 8, 5))


def test_process_frame_falls_back_to_opencv(frame, monkeypatch):
    pillow_resized = np.array(Image.fromarray(frame).resize((8, 5)))
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    for mode in ("RGB", "L", "BGR"):
        np.testing.assert_array_equal(
            process_frame(frame, 8, 5, mode), process_frame_opencv(frame, 8, 5, mode)
        )
    assert not np.array_equal(process_frame(frame, 8, 5), pillow_resized)


def test_process_frame_without_image_libraries(frame, no_pil, no_cv2):
    np.testing.assert_array_equal(process_frame(frame, mode="L"), to_grayscale(frame))
    np.testing.assert_array_equal(process_frame(frame, mode="GRAY"), to_grayscale(frame))
    np.testing.assert_array_equal(process_frame(frame, mode="BGR"), frame[..., ::-1])
    assert process_frame(frame) is frame
    assert process_frame(frame, 20, 30, "L").shape == (30, 20)  # the size it has: no resize
    with pytest.raises(ImportError, match=r"needs Pillow or OpenCV to resize.*pip install pillow"):
        process_frame(frame, width=10)
    with pytest.raises(ValueError, match="RGBA"):
        process_frame(frame, mode="RGBA")


def test_process_frame_accepts_the_earlier_positional_mode(frame):
    np.testing.assert_array_equal(process_frame(frame, "L"), process_frame(frame, mode="L"))
    assert process_frame(frame, "GRAY").shape == (30, 20)
    with pytest.raises(TypeError, match="mode once"):
        process_frame(frame, "L", mode="GRAY")


# ---------------------------------------------------------------- missing optional packages


def test_pil_missing_names_pillow(frame, no_pil):
    with pytest.raises(ImportError, match=r"process_frame_pil needs Pillow: pip install pillow"):
        process_frame_pil(frame)


def test_cv2_missing_names_opencv(frame, no_cv2):
    with pytest.raises(
        ImportError,
        match=r"process_frame_opencv needs OpenCV: pip install opencv-python-headless",
    ):
        process_frame_opencv(frame)
    np.testing.assert_array_equal(process_frame(frame, 8, 5), process_frame_pil(frame, 8, 5))


def test_get_display_missing_names_pyvirtualdisplay(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyvirtualdisplay", None)
    with pytest.raises(ImportError, match=r"pip install pyvirtualdisplay.*Xvfb") as info:
        get_display()
    assert str(info.value).startswith("get_display needs pyvirtualdisplay")


def test_module_imports_without_optional_packages():
    blocked = ("PIL", "PIL.Image", "cv2", "pyvirtualdisplay")
    code = (
        "import sys\n"
        f"sys.modules.update(dict.fromkeys({blocked!r}))\n"
        "import numpy as np\n"
        "from plangym.utils import process_frame\n"
        "print(process_frame(np.full((2, 2, 3), 255, np.uint8), mode='L').tolist())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[255, 255], [255, 255]]"


# ---------------------------------------------------------------- get_display


class RecordingDisplay:
    """Stands in for pyvirtualdisplay.Display, which needs the Xvfb program to start."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.started = False
        self.displayfd = os.environ.get("PYVIRTUALDISPLAY_DISPLAYFD")

    def start(self):
        self.started = True
        return self


@pytest.fixture
def recording_pyvirtualdisplay(monkeypatch):
    module = types.ModuleType("pyvirtualdisplay")
    module.Display = RecordingDisplay
    monkeypatch.setitem(sys.modules, "pyvirtualdisplay", module)
    monkeypatch.delenv("PYVIRTUALDISPLAY_DISPLAYFD", raising=False)


def test_get_display_starts_a_display(recording_pyvirtualdisplay):
    display = get_display(size=(64, 48), backend="xvfb")
    assert isinstance(display, RecordingDisplay)
    assert display.started
    assert display.kwargs == {"visible": False, "size": (64, 48), "backend": "xvfb"}
    assert display.displayfd == "0"
    assert get_display().kwargs == {"visible": False, "size": (400, 400)}


def test_get_display_keeps_a_displayfd_setting(recording_pyvirtualdisplay, monkeypatch):
    monkeypatch.setenv("PYVIRTUALDISPLAY_DISPLAYFD", "1")
    assert get_display(visible=True).displayfd == "1"


@pytest.mark.skipif(
    importlib.util.find_spec("pyvirtualdisplay") is None or shutil.which("Xvfb") is None,
    reason="needs pyvirtualdisplay and the Xvfb program",
)
def test_get_display_with_xvfb():
    display = get_display(size=(64, 48))
    try:
        assert display.is_alive()
    finally:
        display.stop()


# ---------------------------------------------------------------- time limits


def balance(env, steps, seed=0):
    """Keep CartPole's pole up for ``steps`` steps; return the step that truncated, or None."""
    obs, _ = env.reset(seed=seed)
    for t in range(steps):
        x, x_dot, theta, theta_dot = obs
        action = int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0)
        obs, _, terminated, truncated, _ = env.step(action)
        assert not terminated
        if truncated:
            return t + 1
    return None


def test_remove_time_limit_from_spec():
    spec = dataclasses.replace(gym.spec("CartPole-v1"))
    assert remove_time_limit_from_spec(spec) is None
    assert spec.max_episode_steps == 1e100 and isinstance(spec.max_episode_steps, int)
    assert spec._max_episode_steps == 500
    remove_time_limit_from_spec(spec)  # a second call forgets nothing
    assert spec._max_episode_steps == 500
    assert gym.spec("CartPole-v1").max_episode_steps == 500
    assert not hasattr(gym.spec("CartPole-v1"), "_max_episode_steps")
    env = gym.make(spec)  # gymnasium's TimeLimit takes the int 1e100 (not the float)
    assert find_time_limit(env)._max_episode_steps == 1e100
    assert balance(env, 600) is None


def test_a_spec_without_limit_travels_like_any_spec():
    spec = dataclasses.replace(gym.spec("CartPole-v1"))
    remove_time_limit_from_spec(spec)
    copied = pickle.loads(pickle.dumps(spec))
    assert (copied.max_episode_steps, copied._max_episode_steps) == (NO_TIME_LIMIT, 500)
    assert copy.deepcopy(spec)._max_episode_steps == 500
    assert EnvSpec.from_json(spec.to_json()).max_episode_steps == NO_TIME_LIMIT
    assert balance(gym.make(copied), 600) is None


def test_remove_time_limit_from_spec_copies_and_unlimited_specs():
    spec = copy.deepcopy(gym.spec("Pendulum-v1"))
    remove_time_limit_from_spec(spec)
    assert (spec.max_episode_steps, spec._max_episode_steps) == (NO_TIME_LIMIT, 200)
    unlimited = dataclasses.replace(gym.spec("CartPole-v1"), max_episode_steps=None)
    remove_time_limit_from_spec(unlimited)
    assert (unlimited.max_episode_steps, unlimited._max_episode_steps) == (NO_TIME_LIMIT, None)
    not_a_spec = types.SimpleNamespace()
    remove_time_limit_from_spec(not_a_spec)
    assert vars(not_a_spec) == {}


def test_cartpole_truncates_at_500_with_its_limit():
    assert balance(gym.make("CartPole-v1"), 600) == 500


def test_remove_time_limit_steps_past_500():
    env = gym.make("CartPole-v1")
    assert env.spec.max_episode_steps == 500  # caches the spec on the outer wrappers
    inner = env.env
    assert isinstance(env, gym.wrappers.TimeLimit)
    unlimited = remove_time_limit(env)
    assert unlimited is inner
    assert find_time_limit(unlimited) is None
    assert (unlimited.spec.max_episode_steps, unlimited.spec._max_episode_steps) == (1e100, 500)
    assert balance(unlimited, 600) is None
    assert gym.spec("CartPole-v1").max_episode_steps == 500
    assert balance(gym.make(unlimited.spec), 600) is None  # its spec makes an unlimited env
    assert remove_time_limit(unlimited).spec._max_episode_steps == 500  # again: no change


def test_remove_time_limit_under_other_wrappers():
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("CartPole-v1"))
    assert env.spec.max_episode_steps == 500
    assert remove_time_limit(env) is env
    assert find_time_limit(env) is None
    assert (env.spec.max_episode_steps, env.spec._max_episode_steps) == (1e100, 500)
    assert [w.name for w in env.spec.additional_wrappers] == ["RecordEpisodeStatistics"]
    assert balance(env, 600) is None
    remade = gym.make(pickle.loads(pickle.dumps(env.spec)))
    assert isinstance(remade, gym.wrappers.RecordEpisodeStatistics)
    assert balance(remade, 600) is None


def test_remove_time_limit_leaves_a_shared_spec_alone():
    env = gym.make("CartPole-v1").unwrapped
    registered = gym.spec("CartPole-v1")
    env.spec = registered
    assert remove_time_limit(env) is env
    assert (env.spec.max_episode_steps, env.spec._max_episode_steps) == (NO_TIME_LIMIT, 500)
    assert env.spec is not registered
    assert registered.max_episode_steps == 500


# ---------------------------------------------------------------- GrayScaleObservation


@pytest.fixture
def pong():
    env = gym.make("ALE/Pong-v5")
    yield env
    env.close()


@pytest.mark.parametrize(("keep_dim", "shape"), [(False, (210, 160)), (True, (210, 160, 1))])
def test_grayscale_observation_on_pong(pong, keep_dim, shape):
    env = GrayScaleObservation(pong, keep_dim=keep_dim)
    assert env.observation_space == gym.spaces.Box(0, 255, shape, np.uint8)
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        screen = env.unwrapped.ale.getScreenRGB()
        assert obs.shape == shape
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs.reshape(210, 160), to_grayscale(screen))
        pil = np.array(Image.fromarray(screen).convert("L")).astype(int)
        assert np.abs(obs.reshape(210, 160).astype(int) - pil).max() <= 1
        obs, *_ = env.step(env.action_space.sample())
    assert len(np.unique(obs)) > 1  # a real picture, not a blank one
    # Exact on every colour, where OpenCV and Pillow round some differently.
    colors = every_color()
    np.testing.assert_array_equal(env.observation(colors).reshape(4096, 4096), to_grayscale(colors))


def test_grayscale_observation_records_its_arguments(pong):
    env = GrayScaleObservation(pong, keep_dim=True)
    wrapper_spec = env.spec.additional_wrappers[-1]
    assert wrapper_spec.entry_point == "plangym.utils:GrayScaleObservation"
    assert wrapper_spec.kwargs == {"keep_dim": True}
    remade = gym.make(env.spec)
    try:
        assert isinstance(remade, GrayScaleObservation)
        assert remade.observation_space.shape == (210, 160, 1)
    finally:
        remade.close()


def test_grayscale_observation_forwards_public_attributes(pong):
    env = GrayScaleObservation(pong)
    assert env.ale is env.unwrapped.ale
    assert env.get_action_meanings()[0] == "NOOP"
    assert pong.unwrapped._obs_type == "rgb"
    with pytest.raises(AttributeError):
        env._obs_type  # noqa: B018  private names are not looked up below
    with pytest.raises(AttributeError):
        env.not_there  # noqa: B018


def test_grayscale_observation_rejects_cartpole():
    with pytest.raises(ValueError, match=r"RGB image observations.*Box\(.*\(4,\)"):
        GrayScaleObservation(gym.make("CartPole-v1"))


def test_grayscale_observation_rejects_float_images(pong):
    floats = gym.wrappers.TransformObservation(
        pong,
        lambda obs: obs.astype(np.float32),
        gym.spaces.Box(0.0, 255.0, (210, 160, 3), np.float32),
    )
    with pytest.raises(ValueError, match="uint8"):
        GrayScaleObservation(floats)


def test_an_out_of_date_env_warns_as_gymnasium_make_does():
    with pytest.warns(DeprecationWarning, match=r"CartPole-v0 is out of date.*`v1`"):
        plangym.make("CartPole-v0").close()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*out of date", category=DeprecationWarning)
        plangym.make("CartPole-v1").close()
