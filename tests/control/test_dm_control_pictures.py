"""DMControlEnv pictures: plangym 0.1's render(mode) and show_game, headless.

The tests run with ``SDL_VIDEODRIVER=dummy`` (tests/conftest.py): show_game's pygame window
plays into nowhere. What happens without any display is checked in fresh processes.
"""

import inspect
import os

import numpy as np
import pytest

from plangym.control.dm_control import DMControlEnv
from tests.control.test_dm_control import needs_pictures, random_actions
from tests.helpers.subprocess_runs import run_python

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def env():
    env = DMControlEnv("cartpole-balance", seed=0)
    needs_pictures(env)
    yield env
    env.close()


def test_render_and_show_game_have_0_1_signatures():
    render = inspect.signature(DMControlEnv.render).parameters
    show_game = inspect.signature(DMControlEnv.show_game).parameters
    assert list(render) == ["self", "mode"] and render["mode"].default is None
    assert list(show_game) == ["self", "sleep"] and show_game["sleep"].default == 0.05


def test_render_modes(env):
    image = env.get_image()
    assert image.shape == (240, 320, 3) and image.dtype == np.uint8
    assert np.array_equal(env.render(), image)  # render_mode="rgb_array" decides
    assert np.array_equal(env.render(mode="rgb_array"), image)
    assert env.viewer == []
    assert env.render(mode="human") is True and env.render("human") is True
    assert len(env.viewer) == 2 and np.array_equal(env.viewer[0], image)
    with pytest.raises(ValueError, match="mode: expected None, 'rgb_array' or 'human', received"):
        env.render(mode="ansi")


def test_an_explicit_mode_draws_without_render_mode(env):
    """As in plangym 0.1, whose render(mode) drew whatever render_mode was."""
    blind = env.clone(render_mode=None)
    assert blind.render() is None  # gymnasium's convention, as every family
    assert np.array_equal(blind.render("rgb_array"), env.render("rgb_array"))
    blind.close()


def test_show_game_plays_the_kept_pictures(env):
    env.show_game()  # nothing kept: nothing to show, no window
    assert env._window is None
    state, *_ = env.reset()
    for action in random_actions(env, 3, seed=0):
        env.step(action)
        env.render(mode="human")
    env.show_game(sleep=0.0)
    assert env._window is not None and env._window.size == (320, 240)
    assert len(env.viewer) == 3  # kept, as in plangym 0.1
    env.viewer.append(np.zeros((2, 2), np.uint8))
    with pytest.raises(ValueError, match=r"frames\[3\]: expected an RGB picture"):
        env.show_game(sleep=0.0)
    env.close()
    assert env._window is None


SCRIPT = """
import warnings
from plangym.control.dm_control import DMControlEnv
env = DMControlEnv("cartpole-balance", seed=0)
env.render(mode="human")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        env.show_game(sleep=0.0)
    except RuntimeError as error:
        print("RuntimeError:", error)
print("warnings:", [str(w.message) for w in caught if w.category is RuntimeWarning])
env.close()
"""


def run_headless(driver: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("SDL_VIDEODRIVER", None)
    if driver is not None:
        env["SDL_VIDEODRIVER"] = driver
    done = run_python(SCRIPT, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_without_a_display_show_game_warns_or_names_the_ways_out(env):
    offscreen = run_headless(None)  # SDL falls back to its offscreen driver
    assert "RuntimeError" not in offscreen
    assert "show_game: no display" in offscreen and "get_display" in offscreen
    broken = run_headless("no_such_driver")  # SDL cannot open any window
    assert "RuntimeError: show_game: no display to open a window on" in broken
    assert "SDL_VIDEODRIVER=dummy" in broken
