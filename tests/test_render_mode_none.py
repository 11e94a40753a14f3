"""render() with render_mode=None draws nothing and returns None, in every family.

Mario's render() returns the screen whatever the render mode, as plangym 0.1's did.
get_image() with render_mode=None refuses where gymnasium's renderer would draw, and returns
the picture of the emulators and of dm_control's physics, as plangym 0.1.32's did.
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
DRAWN_WITHOUT_A_RENDERER = {
    "ALE/Pong-v5": (210, 160, 3),
    "PlanMontezuma-v0": (210, 160, 3),
    "walker-walk": (240, 320, 3),
    "Airstriker-Genesis-v0": (224, 320, 3),
}


@pytest.mark.parametrize("name", NAMES)
def test_render_returns_none_and_get_image_draws_only_without_a_renderer(name):
    try:
        env = plangym.make(name, render_mode=None)
    except ImportError as error:  # a family whose extra is not installed
        pytest.skip(str(error))
    try:
        env.reset()
        assert env.render() is None  # ale-py, MuJoCo and dm_control raised
        shape = DRAWN_WITHOUT_A_RENDERER.get(name)
        if shape is None:
            with pytest.raises(RuntimeError, match="render_mode=None"):
                env.get_image()
            assert env.img_shape is None
        else:  # fragile's frame recorder reads these pictures from render_mode=None envs
            image = env.get_image()
            assert image.shape == shape == env.img_shape and image.dtype == "uint8"
            assert image.any()
    finally:
        env.close()


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("SuperMarioBros-1-1-v0", {"render_mode": "human"}), ("Airstriker-Genesis-v0", {})],
)
def test_a_window_without_a_display_is_refused_when_the_env_is_built(monkeypatch, name, kwargs):
    """pyglet failed deep inside: Retro while building, Mario only at the first render()."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env_class = plangym.registry.get_planenv_class(name)
    args = (name, 5, False, True, False, True, "rgb", "human") if not kwargs else (name,)
    with pytest.raises(ValueError, match=r"render_mode: 'human' .* needs a display"):
        env_class(*args, **kwargs)  # by keyword, and positionally as the 8th argument
