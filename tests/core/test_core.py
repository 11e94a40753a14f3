"""The contract shared by every env: make(), return tuples, batches and input checks."""

import pickle

import gymnasium
import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym import environment_names
from plangym.api_tests import assert_identical
from plangym.control import ClassicControl
from plangym.core import PlanEnv, PlangymEnv
from plangym.videogames import AtariEnv


@pytest.fixture
def cartpole():
    env = plangym.make("CartPole-v1")
    yield env
    env.close()


def test_make_routes_names_to_families():
    assert isinstance(plangym.make("MountainCar-v0"), ClassicControl)
    atari = plangym.make("ALE/Pong-v5", frameskip=2)
    assert isinstance(atari, AtariEnv) and atari.frameskip == 2
    assert isinstance(atari, PlangymEnv) and isinstance(atari, PlanEnv)


def test_unknown_names_suggest_the_closest():
    with pytest.raises(
        ValueError, match=r"unknown environment 'ALE/MsPackman-v5'.*ALE/MsPacman-v5"
    ):
        plangym.make("ALE/MsPackman-v5")
    with pytest.raises(ValueError, match="name: unknown environment 'zzzz'; see"):
        plangym.make("zzzz")
    with pytest.raises(TypeError, match="name: expected an environment name"):
        plangym.make(3)


@pytest.mark.parametrize("make", [plangym.make, plangym.make_vec])
def test_an_unknown_name_is_also_gymnasiums_name_not_found(make):
    # plangym 0.1's make and gymnasium's make_vec raise gymnasium's error for it.
    with pytest.raises(gymnasium.error.NameNotFound, match="unknown environment 'Nope-v0'"):
        make("Nope-v0")


def test_a_gymnasium_id_plangym_has_no_version_of_is_said_so():
    # Not a near miss of FrontLine-Nes-v0 or Freeway-v4, as the closest names would say.
    message = r"unknown environment 'FrozenLake-v1': gymnasium registers it, but plangym has no"
    with pytest.raises(gymnasium.error.NameNotFound, match=rf"^name: {message}"):
        plangym.make("FrozenLake-v1")
    # make_vec names gymnasium's parameter and the way to run gymnasium's env on workers.
    with pytest.raises(gymnasium.error.NameNotFound, match=rf"^id: {message}.*AsyncVectorEnv"):
        plangym.make_vec("FrozenLake-v1", 2)
    with pytest.raises(gymnasium.error.NameNotFound, match=r"^id: .*'CartPol-v1'; closest"):
        plangym.make_vec("CartPol-v1", 2)
    with pytest.raises(gymnasium.error.NameNotFound, match=r"^name: .*'CartPol-v1'; closest"):
        plangym.make_vec(name="CartPol-v1")
    # An old version of an env plangym has: the versions it has.
    with pytest.raises(gymnasium.error.NameNotFound, match=r"'Ant-v2'; closest .*: Ant-v5"):
        plangym.make("Ant-v2")


@pytest.mark.parametrize("make", [plangym.make, plangym.make_vec])
def test_an_unknown_dm_control_task_is_named_by_its_parameters(make):
    message = r"^domain_name, task_name: .*received domain_name='walker', task_name='wlak';"
    with pytest.raises(gymnasium.error.NameNotFound, match=message):
        make(domain_name="walker", task_name="wlak")
    with pytest.raises(gymnasium.error.NameNotFound, match=r"\(the rest from name='walker'\)"):
        make("walker", task_name="wlak")
    with pytest.raises(TypeError, match=r"^domain_name: expected a str, received 3"):
        make(domain_name=3, task_name="walk")


def test_atari_names_come_from_ale_py():
    registered = [k for k, s in gym.registry.items() if str(s.entry_point).startswith("ale_py")]
    assert sorted(registered) == environment_names.ATARI
    v5 = [name for name in environment_names.ATARI if name.startswith("ALE/")]
    assert len(v5) >= 100


def test_ray_make_picks_ray_env_and_needs_n_workers():
    """Resolved without starting Ray.

    tests/vectorization/test_ray.py runs RayEnv on a real cluster.
    """
    from plangym.registry import get_environment_class
    from plangym.vectorization.ray import RayEnv

    assert get_environment_class("CartPole-v1", n_workers=2, ray=True) == (RayEnv, ClassicControl)
    with pytest.raises(ValueError, match="n_workers: ray=True"):
        plangym.make("CartPole-v1", ray=True)


def test_return_tuples_follow_return_state(cartpole):
    state, obs, info = cartpole.reset()
    assert isinstance(info, dict) and obs.shape == (4,)
    obs, info = cartpole.reset(return_state=False)
    assert len(cartpole.step(0)) == 5
    new_state, obs, reward, terminal, truncated, info = cartpole.step(0, state=state)
    assert isinstance(reward, float) and isinstance(terminal, bool)
    assert info == {"n_step": 1, "dt": 1}
    assert len(cartpole.step(0, state=state, return_state=False)) == 5
    assert len(cartpole.step(0, return_state=True)) == 6


def test_step_batch_default_return_state_matches_step(cartpole):
    state, *_ = cartpole.reset()
    assert len(cartpole.step_batch([0, 1])) == 5
    assert len(cartpole.step_batch([0, 1], states=[state, state])) == 6
    assert len(cartpole.step_batch([0, 1], states=[state, state], return_state=False)) == 5
    assert len(cartpole.step_batch(np.array([0, 1]), return_state=True)) == 6


def test_whole_numbers_as_floats_are_dts_as_in_plangym_01(cartpole):
    state, *_ = cartpole.reset()
    assert cartpole.step(0, state=state, dt=2.0)[-1] == {"n_step": 2, "dt": 2}
    assert cartpole.step(0, state=state, dt=np.array(2.0))[-1] == {"n_step": 2, "dt": 2}
    assert cartpole.step_batch([0], [state], dt=np.array(2.0))[-1] == [{"n_step": 2, "dt": 2}]
    for dt in (np.array([2.0, 2.0, 3.0]), np.ones(3) * 3, [1.0, np.float32(2), 3]):
        result = cartpole.step_batch([0, 1, 0], states=[state] * 3, dt=dt)
        expected = cartpole.step_batch([0, 1, 0], states=[state] * 3, dt=[int(d) for d in dt])
        assert_identical(result, expected)


def test_an_int_beyond_int64_in_a_batch_is_named_as_a_bad_action(cartpole):
    state, *_ = cartpole.reset()
    for actions, bad in (([0, 2**70], 1), ([-(2**70), 0], 0)):
        expected = rf"^actions\[{bad}\]: expected an integer in \[0, 2\)"
        with pytest.raises(ValueError, match=expected):
            cartpole.step_batch(actions, [state, state])  # was NumPy's OverflowError


def test_step_batch_accepts_array_inputs(cartpole):
    state, *_ = cartpole.reset()
    states = [state] * 4
    result = cartpole.step_batch(np.array([0, 1, 0, 1]), states=states, dt=np.array([1, 2, 3, 4]))
    assert [info["n_step"] for info in result[-1]] == [1, 2, 3, 4]
    result = cartpole.step_batch([0, 1, 0, 1], states=states, dt=np.int64(2))
    assert [info["dt"] for info in result[-1]] == [2, 2, 2, 2]
    assert all(isinstance(s, np.ndarray) for s in result[0])


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"dt": 0}, ValueError, "dt: expected an integer >= 1, received 0"),
        ({"dt": 2.5}, ValueError, r"dt: expected an integer >= 1 \(a whole number\), received 2.5"),
        ({"dt": np.nan}, ValueError, r"dt: expected an integer >= 1 \(a whole number\)"),
        ({"dt": [1, 1.5, 1]}, ValueError, r"dt\[1\]: expected an integer >= 1 \(a whole number\)"),
        ({"dt": np.array([1.0, 2.0, 0.5])}, ValueError, r"dt\[2\]: expected an integer >= 1 \("),
        ({"dt": np.array([1.0, 0.0, 1.0])}, ValueError, r"dt\[1\]: expected an integer >= 1"),
        ({"dt": [1, 2]}, ValueError, r"dt: expected 3 values \(one per action\), received 2"),
        ({"dt": [1, 0, 1]}, ValueError, r"dt\[1\]: expected an integer >= 1, received 0"),
        ({"dt": np.array([1, -3, 1])}, ValueError, r"dt\[1\]: expected an integer >= 1"),
        ({"dt": "3"}, TypeError, "dt: expected an integer >= 1 or a sequence of 3"),
        ({"dt": 2**61 + 1}, ValueError, r"dt: expected an integer in \[1, 2147483647\]"),
        ({"dt": np.array([1, 2**40, 1])}, ValueError, r"dt\[1\]: expected an integer in \[1, "),
        ({"states": "single"}, TypeError, r"states: .*received one state .*pass \[state\] \* 3"),
        ({"states": "abc"}, TypeError, "states: expected None or a list of 3 states"),
        ({"states": [None, None]}, ValueError, r"states: expected 3 states \(one per action\)"),
        ({"actions": 1}, TypeError, "actions: expected a sequence of actions, received 1"),
        ({"actions": [0, 1, 2]}, ValueError, r"actions\[2\]: expected an integer in \[0, 2\)"),
        ({"actions": [0, 1, True]}, TypeError, r"actions\[2\]: expected an integer in \[0, 2\)"),
    ],
)
def test_bad_batches_name_the_parameter(cartpole, kwargs, error, message):
    state, *_ = cartpole.reset()
    if kwargs.get("states") == "single":
        kwargs["states"] = state
    call = {"actions": [0, 1, 0], "states": [state] * 3, "dt": 1, **kwargs}
    with pytest.raises(error, match=message):
        cartpole.step_batch(**call)
    assert_identical(cartpole.get_state(), state)
    assert len(cartpole.step_batch([0, 1, 0], states=[state] * 3)) == 6


def test_mixed_states_and_nones_are_rejected(cartpole):
    state, *_ = cartpole.reset()
    with pytest.raises(ValueError, match=r"states: expected all states or all None.*\[1\]"):
        cartpole.step_batch([0, 0], states=[state, None])


def test_frameskip_is_checked_at_construction_and_when_set():
    with pytest.raises(TypeError, match=r"frameskip: expected an integer >= 1, received 1\.5"):
        plangym.make("CartPole-v1", frameskip=1.5)
    env = plangym.make("CartPole-v1")
    env.reset()
    env.frameskip = 2
    assert env.step(0)[-1]["n_step"] == 2
    with pytest.raises(ValueError, match=r"frameskip: expected an integer >= 1, received 0"):
        env.frameskip = 0  # was taken, then the next step failed inside the frame loop
    assert env.frameskip == 2 and env.step(0)[-1]["n_step"] == 2


def test_constructor_choices_are_checked():
    with pytest.raises(ValueError, match=r"obs_type: expected one of \['coords', 'grayscale'"):
        plangym.make("CartPole-v1", obs_type="ram")
    with pytest.raises(ValueError, match=r"Invalid render_mode: expected one of \[None, "):
        plangym.make("CartPole-v1", render_mode="depth")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"autoreset": "no"},
        {"delay_setup": "yes"},
        {"return_image": 1},
        {"remove_time_limit": "False"},
        {"ray": "no", "n_workers": 2},
        {"inline_small_batches": "no", "n_workers": 2},
    ],
)
def test_constructor_flags_are_checked(kwargs):
    name = next(iter(key for key in kwargs if key != "n_workers"))
    with pytest.raises(TypeError, match=rf"{name}: expected True or False, received"):
        plangym.make("CartPole-v1", **kwargs)


def test_clone_repeats_the_constructor_call():
    env = ClassicControl("Acrobot-v1", 3, False, remove_time_limit=False, obs_type="grayscale")
    clone = env.clone()
    assert (clone.frameskip, clone.autoreset, clone.remove_time_limit, clone.obs_type) == (
        3,
        False,
        False,
        "grayscale",
    )
    assert clone.clone(obs_type="coords").obs_shape == (6,)


def test_clone_does_not_share_simulators(cartpole):
    clone = cartpole.clone()
    assert clone.gym_env is not cartpole.gym_env
    state, *_ = cartpole.reset()
    clone.set_state(state)
    clone.step(0)
    assert_identical(cartpole.get_state(), state)


def test_delayed_setup_builds_on_first_use():
    env = plangym.make("CartPole-v1", delay_setup=True)
    assert env._gym_env is None
    blob = pickle.dumps(env)
    assert env.obs_shape == (4,)
    restored = pickle.loads(blob)
    assert restored._gym_env is None
    restored.setup()
    assert len(restored.reset()) == 3


def test_pickled_env_keeps_its_state(cartpole):
    cartpole.reset()
    cartpole.step(1)
    restored = pickle.loads(pickle.dumps(cartpole))
    assert_identical(restored.get_state(), cartpole.get_state())


def test_wrappers_with_args_and_kwargs():
    env = plangym.make(
        "CartPole-v1",
        wrappers=[
            (gym.wrappers.TransformReward, {"func": lambda r: r + 1}),
            (gym.wrappers.TransformReward, (lambda r: 3 * r,)),
        ],
    )
    _, reward, *_ = env.step(0)
    assert reward == 6.0


def test_autoreset_returns_the_terminal_step_then_resets(cartpole):
    state, *_ = cartpole.reset()
    while True:
        data = cartpole.step(1, return_state=True)
        if data[3]:
            break
    terminal_state, obs = data[0], data[1]
    assert abs(obs[2]) > 0.2 or abs(obs[0]) > 2.4
    assert not np.array_equal(cartpole.get_state(), terminal_state)
    assert abs(cartpole.gym_env.unwrapped.state[2]) < 0.05


def test_repr_names_the_env(cartpole):
    assert "ClassicControl(name='CartPole-v1'" in repr(cartpole)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"wrappers": 5}, TypeError, r"^wrappers: expected None or a list of wrappers, received 5"),
        ({"wrappers": "abc"}, TypeError, r"^wrappers: expected None or a list of wrappers"),
        ({"wrappers": [5]}, TypeError, r"^wrappers\[0\]: expected a callable taking an env"),
        ({"wrappers": [(5, {})]}, TypeError, r"^wrappers\[0\]: expected a callable"),
        ({"obs_type": ["rgb"]}, ValueError, r"^obs_type: expected one of \['coords'"),
        ({"episodic_life": "x"}, TypeError, r"^episodic_life: expected True or False"),
        ({"n_workers": 2, "dispatch_costs": 5}, TypeError, r"^dispatch_costs: expected None or"),
        ({"n_workers": 10**6}, ValueError, r"^n_workers: expected at most \d+ worker processes"),
    ],
)
def test_bad_constructor_keywords_are_named_before_anything_is_built(kwargs, error, message):
    with pytest.raises(error, match=message):
        plangym.make("CartPole-v1", **kwargs)


def test_one_atari_state_where_a_list_is_due_is_named_as_one_state():
    env = AtariEnv("ALE/Pong-v5")
    state, *_ = env.reset()
    with pytest.raises(TypeError, match=r"states: .*received one state .*pass \[state\] \* 3"):
        env.step_batch([0, 1, 0], states=state)
    env.close()
