"""plangym 0.1's names in ``plangym.control.lunar_lander``, with 0.1's values and meanings."""

import importlib.util
import inspect
import subprocess
import sys

import pytest

from plangym.control import lunar_lander
from plangym.control.lunar_lander import LunarLander, physics

HAS_BOX2D = importlib.util.find_spec("Box2D") is not None

# The values in plangym 0.1.32's plangym/control/lunar_lander.py, copied as literals.
VALUES_01 = {
    "FPS": 50,
    "SCALE": 30.0,
    "MAIN_ENGINE_POWER": 13.0,
    "SIDE_ENGINE_POWER": 0.6,
    "INITIAL_RANDOM": 1000.0,
    "LANDER_POLY": [(-14, +17), (-17, 0), (-17, -10), (+17, -10), (+17, 0), (+14, +17)],
    "LEG_AWAY": 20,
    "LEG_DOWN": 18,
    "LEG_W": 2,
    "LEG_H": 8,
    "LEG_SPRING_TORQUE": 40,
    "SIDE_ENGINE_HEIGHT": 14.0,
    "SIDE_ENGINE_AWAY": 12.0,
    "VIEWPORT_W": 600,
    "VIEWPORT_H": 400,
}


@pytest.mark.parametrize("name", sorted(VALUES_01))
def test_constant_has_01_value(name):
    value = getattr(lunar_lander, name)
    assert value == VALUES_01[name]
    assert type(value) is type(VALUES_01[name])
    assert name in lunar_lander.__all__


def test_constants_shared_with_physics_are_one_definition():
    for name in [
        "FPS",
        "SCALE",
        "MAIN_ENGINE_POWER",
        "SIDE_ENGINE_POWER",
        "INITIAL_RANDOM",
        "LANDER_POLY",
        "VIEWPORT_W",
        "VIEWPORT_H",
    ]:
        assert getattr(lunar_lander, name) is getattr(physics, name), name
    # Our physics works in metres: the same lengths, divided by SCALE.
    assert physics.W == lunar_lander.VIEWPORT_W / lunar_lander.SCALE == 20.0
    assert physics.H == lunar_lander.VIEWPORT_H / lunar_lander.SCALE
    for name in ["LEG_DOWN", "SIDE_ENGINE_AWAY", "SIDE_ENGINE_HEIGHT"]:
        assert getattr(physics, name) == getattr(lunar_lander, name) / lunar_lander.SCALE
    assert physics.HULL[0] == (-14 / 30.0, 17 / 30.0)


@pytest.mark.skipif(not HAS_BOX2D, reason="needs the box2d extra")
def test_gym_lunar_lander_is_gymnasiums_class():
    resolved = lunar_lander.GymLunarLander  # first: this import hides Box2D's SWIG warnings
    from gymnasium.envs.box2d.lunar_lander import LunarLander as GymnasiumLunarLander

    assert resolved is GymnasiumLunarLander
    assert lunar_lander.import_error is None
    assert "GymLunarLander" in dir(lunar_lander)
    assert "import_error" in dir(lunar_lander)


def test_unknown_name_raises_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        lunar_lander.no_such_name  # noqa: B018
    assert not hasattr(lunar_lander, "no_such_name")


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_importing_the_package_does_not_import_box2d():
    code = (
        "import sys\n"
        "import plangym.control.lunar_lander as m\n"
        "from plangym.control.lunar_lander import *\n"
        "assert m.FPS == 50 and m.LEG_DOWN == 18\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] == 'Box2D'"
        " or n.startswith('gymnasium.envs.box2d')))\n"
    )
    assert run_python(code).strip() == "[]"


def test_without_box2d_import_error_is_kept_and_gym_lunar_lander_names_the_extra():
    code = (
        "import sys\n"
        "sys.modules['Box2D'] = None  # as if the box2d extra were not installed\n"
        "import plangym.control.lunar_lander as m\n"
        "assert isinstance(m.import_error, ImportError), m.import_error\n"
        "try:\n"
        "    m.GymLunarLander\n"
        "except ImportError as error:\n"
        "    print(error)\n"
        "env = m.LunarLander(deterministic=True)\n"
        "env.reset()\n"
        "print('works')\n"
    )
    out = run_python(code)
    assert "plangym[box2d]" in out
    assert "'box2d' extra" in out
    assert out.strip().endswith("works")


def test_process_terminal_has_01_signature():
    params = list(inspect.signature(LunarLander.process_terminal).parameters.values())
    assert [p.name for p in params] == ["self", "terminal", "obs", "kwargs"]
    assert params[2].default is None
    assert params[3].kind is inspect.Parameter.VAR_KEYWORD


def test_process_terminal_accepts_01_call():
    env = LunarLander(deterministic=True)
    try:
        env.reset()
        obs = env.step(0)[1]
        # 0.1's calls: positional obs, keyword obs, extra keywords.
        assert env.process_terminal(False, obs) is False
        assert env.process_terminal(terminal=False, obs=obs, reward=0.0, info={}) is False
        assert env.process_terminal(False) is False
        assert env.process_terminal(True, obs) is True
    finally:
        env.close()


def test_process_terminal_reads_the_landers_state_as_01():
    env = LunarLander(deterministic=True)
    try:
        env.reset()
        sim = env.gym_env.unwrapped
        sim.game_over = True  # a crash ends the episode even if terminal is false
        assert env.process_terminal(False, None) is True
        sim.game_over = False
        sim.body.x = -1.0  # left the screen sideways
        assert env.process_terminal(False, None) is True
    finally:
        env.close()


def test_process_terminal_before_setup_is_terminal():
    env = LunarLander(delay_setup=True)
    assert env.process_terminal(False, obs=None) is False
    assert env.process_terminal(True, obs=None) is True


@pytest.mark.parametrize("autoreset", [False, True])
@pytest.mark.parametrize("continuous", [False, True])
def test_process_terminal_agrees_with_step(continuous, autoreset):
    """In a rollout the hook returns the step's own terminal flag (it stays an identity)."""
    env = LunarLander(continuous=continuous, autoreset=autoreset)
    try:
        env.seed(3)
        env.reset()
        env.action_space.seed(3)
        ends = 0
        for _ in range(1000):
            obs, _, terminal, truncated, _ = env.step(env.sample_action())
            assert env.process_terminal(terminal, obs) is bool(terminal)
            assert env.process_terminal(False, obs) is (bool(terminal) and not autoreset)
            if terminal or truncated:
                ends += bool(terminal)
                env.reset()
        assert ends > 0
    finally:
        env.close()
