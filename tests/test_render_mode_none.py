"""render() with render_mode=None draws nothing and returns None, in every family.

Mario's render() returns the screen whatever the render mode, as plangym 0.1's did.
"""

import pytest

import plangym

NAMES = [
    "CartPole-v1",
    "ALE/Pong-v5",
    "PlanMontezuma-v0",
    "Hopper-v5",
    "walker-walk",
    "LunarLander-v3",
    "FastLunarLander-v0",
    "Airstriker-Genesis-v0",
]


@pytest.mark.parametrize("name", NAMES)
def test_render_returns_none_and_get_image_refuses(name):
    try:
        env = plangym.make(name, render_mode=None)
    except ImportError as error:  # a family whose extra is not installed
        pytest.skip(str(error))
    try:
        env.reset()
        assert env.render() is None  # ale-py, MuJoCo and dm_control raised
        with pytest.raises(RuntimeError, match="render_mode=None"):
            env.get_image()
    finally:
        env.close()
