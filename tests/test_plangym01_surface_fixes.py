"""plangym 0.1 names that code written for it uses: DM_CONTROL's shape, the video game classes
of ``plangym.videogames``, and ``FastGymLunarLander``.

Everything runs the real simulators; the checks of what an import pulls in (or what a
missing extra raises) run in a fresh interpreter.
"""

import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym import environment_names, registry
from plangym.control.lunar_lander import FastGymLunarLander, LanderSim, LunarLander


def run_python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter; return the finished process."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def assert_runs(code: str) -> None:
    result = run_python(code)
    assert result.returncode == 0, result.stderr


# DM_CONTROL: dm_control.suite.ALL_TASKS, (domain, task) pairs ----------------------------------
def test_dm_control_is_the_suites_all_tasks():
    from plangym.control.dm_control.env import suite  # dm_control's, GL backend picked first

    assert list(suite.ALL_TASKS) == environment_names.DM_CONTROL
    assert all(isinstance(pair, tuple) and len(pair) == 2 for pair in environment_names.DM_CONTROL)
    pairs = [(domain, task) for domain, task in environment_names.DM_CONTROL]  # 0.1's loop
    assert [f"{d}-{t}" for d, t in pairs] == environment_names.DM_CONTROL_NAMES


def test_dm_control_imports_without_dm_control():
    assert_runs(
        """
        import sys
        sys.modules["dm_control"] = None  # what a missing package looks like
        from plangym.environment_names import DM_CONTROL, DM_CONTROL_NAMES
        assert len(DM_CONTROL) == len(DM_CONTROL_NAMES) == 51
        assert ("cartpole", "balance") in DM_CONTROL and "cartpole-balance" in DM_CONTROL_NAMES
        """
    )


def test_every_dm_control_task_resolves_by_either_spelling():
    from plangym.control.dm_control import DMControlEnv

    for (domain, task), name in zip(
        environment_names.DM_CONTROL, environment_names.DM_CONTROL_NAMES, strict=True
    ):
        assert environment_names.family_of(name) == "dm_control"
        assert registry.get_planenv_class(registry.resolve_name(None, domain, task)) is DMControlEnv
        assert registry.get_planenv_class(name) is DMControlEnv


def test_make_builds_a_task_from_a_dm_control_pair():
    domain, task = environment_names.DM_CONTROL[3]
    by_parts = plangym.make(domain_name=domain, task_name=task)
    by_name = plangym.make(f"{domain}-{task}")
    try:
        assert by_parts.name == by_name.name == "cartpole-balance"
        state, *_ = by_parts.reset()
        action = by_parts.sample_action()
        first, again = by_parts.step(action, state=state), by_name.step(action, state=state)
        assert np.array_equal(first[1], again[1]) and first[2] == again[2]
    finally:
        by_parts.close()
        by_name.close()


# plangym.videogames: AtariEnv, MontezumaEnv, MarioEnv and RetroEnv ----------------------------
def test_videogame_classes_load_lazily():
    assert_runs(
        """
        import sys
        import plangym.videogames as videogames
        heavy = ("stable_retro", "nes_py", "gym_super_mario_bros")
        assert not [m for m in sys.modules if m.startswith(heavy)], "imported an extra"
        from plangym.videogames import AtariEnv, MarioEnv, MontezumaEnv, RetroEnv
        from plangym.videogames.montezuma import MontezumaEnv as montezuma
        from plangym.videogames.nes import MarioEnv as mario
        from plangym.videogames.retro import RetroEnv as retro
        assert (MontezumaEnv, MarioEnv, RetroEnv) == (montezuma, mario, retro)
        assert set(videogames.__all__) >= {"AtariEnv", "MontezumaEnv", "MarioEnv", "RetroEnv"}
        """
    )


def test_montezuma_from_videogames_plays():
    from plangym.videogames import MontezumaEnv

    env = MontezumaEnv(autoreset=False)
    try:
        state, obs, _ = env.reset()
        _, obs_after, *_ = env.step(0, state=state)
        assert obs_after.shape == obs.shape
    finally:
        env.close()


def test_unknown_videogame_names_raise_attribute_error():
    import plangym.videogames

    with pytest.raises(AttributeError, match="NoSuchEnv"):
        plangym.videogames.NoSuchEnv  # noqa: B018


@pytest.mark.parametrize(
    ("module", "code", "extra"),
    [
        ("stable_retro", "from plangym.videogames import RetroEnv", "retro"),
        ("nes_py", "from plangym.videogames import MarioEnv; MarioEnv('SuperMarioBros-v0')", "nes"),
    ],
    ids=["retro", "nes"],
)
def test_a_missing_extra_is_named(module, code, extra):
    result = run_python(f"import sys; sys.modules[{module!r}] = None\n{code}")
    assert result.returncode != 0
    assert "ImportError" in result.stderr and f'pip install "plangym[{extra}]"' in result.stderr


# FastGymLunarLander: plangym 0.1's gymnasium env ----------------------------------------------
def test_fast_gym_lunar_lander_has_01s_constructor_and_api():
    env = FastGymLunarLander()
    assert isinstance(env, gym.Env) and isinstance(env, LanderSim)
    assert (env.deterministic, env.continuous, env.render_mode) == (False, False, "rgb_array")
    assert env.FPS == 50 and env.action_space == gym.spaces.Discrete(4)
    obs, info = env.reset()
    assert obs.shape == (8,) and obs.dtype == np.float32 and info == {}
    obs, reward, terminated, truncated, info = env.step(2)
    assert env.prev_reward == reward and not env.game_over
    assert env.render().shape == (400, 600, 3)
    continuous = FastGymLunarLander(deterministic=True, continuous=True, render_mode=None)
    assert continuous.action_space.shape == (2,) and continuous.render() is None


def test_fast_gym_lunar_lander_deterministic_episodes_are_the_same():
    def episode() -> list:
        env = FastGymLunarLander(deterministic=True)
        steps = [env.reset()[0]]
        for action in [2, 2, 1, 3, 0] * 20:
            steps.append(env.step(action)[0])
        return steps

    first, second = episode(), episode()
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_fast_gym_lunar_lander_plays_fast_lunar_lander_episodes():
    """The same episode as ``FastLunarLander-v0`` (the same physics), to its end."""
    env = FastGymLunarLander(deterministic=True)
    plan_env = LunarLander(deterministic=True, autoreset=False)
    obs, _ = env.reset()
    _, plan_obs, _ = plan_env.reset()
    assert np.array_equal(obs, plan_obs)
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, _ = env.step(0)
        plan_obs, plan_reward, plan_terminated, *_ = plan_env.step(0)
        assert np.array_equal(obs, plan_obs) and reward == plan_reward
        assert terminated == plan_terminated and not truncated
    assert env.game_over


def test_fast_gym_lunar_lander_has_no_time_limit():
    """plangym 0.1's env never truncated an episode (gymnasium's LunarLander-v3: 1000 steps)."""
    env = FastGymLunarLander()
    env.reset(seed=1)
    env.elapsed_steps = 5000
    assert env.step(0)[3] is False and env.max_episode_steps is None
