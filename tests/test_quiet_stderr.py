"""Building and stepping an env of each installed family prints nothing on stderr.

Each case runs in a fresh interpreter with no display and no SDL driver chosen, as a
newcomer's shell or a notebook kernel on a server would: the ALE's banner, MuJoCo's note
about gymnasium's model files and SDL's probing for a display must not reach the user.
Warnings that matter stay Python warnings (and would show here too).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

# (case id, module its extra brings or None, what to run)
USE = """
import plangym
env = plangym.make({name!r}{kwargs})
state, obs, info = env.reset()
for action in (env.sample_action(), env.sample_action()):
    env.step(action)
env.set_state(state)
env.step_batch([env.sample_action()] * 2, [state] * 2)
{extra}
env.close()
"""
CASES = [
    ("classic-control", None, "CartPole-v1", "", "env.get_image()"),
    ("classic-control-rgb", "pygame", "CartPole-v1", ", obs_type='rgb'", "env.get_image()"),
    ("atari", None, "ALE/Pong-v5", "", "env.get_image()"),
    ("atari-workers", None, "ALE/Pong-v5", ", n_workers=2", ""),
    ("montezuma", None, "PlanMontezuma-v0", "", ""),
    ("mujoco", "mujoco", "HalfCheetah-v5", "", ""),
    ("dm-control", "dm_control", "cartpole-balance", "", ""),
    ("box2d", "Box2D", "LunarLander-v3", "", "env.get_image()"),
    ("fast-lunar-lander", None, "FastLunarLander-v0", "", ""),
    ("retro", "stable_retro", "Airstriker-Genesis-v0", "", ""),
    ("nes", "nes_py", "SuperMarioBros-v0", "", ""),
]


def params():
    for case, module, name, kwargs, extra in CASES:
        missing = module is not None and importlib.util.find_spec(module) is None
        marks = pytest.mark.skip(reason=f"{module} is not installed") if missing else ()
        code = USE.format(name=name, kwargs=kwargs, extra=extra)
        yield pytest.param(code, id=case, marks=marks)


def headless_environment() -> dict[str, str]:
    """This process's environment without a display or a chosen SDL driver."""
    drop = {"DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "SDL_AUDIODRIVER", "XDG_RUNTIME_DIR"}
    return {key: value for key, value in os.environ.items() if key not in drop}


@pytest.mark.parametrize("code", list(params()))
def test_an_env_of_each_family_is_quiet_on_stderr(code):
    result = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env=headless_environment(),
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"stderr was not empty:\n{result.stderr}"
