"""A user-written PlanEnv gets the API free.

The env is tests/helpers/corridor_env.py, the one docs/extending.md builds.
"""

import copy
import pickle

import numpy as np
import pytest

from plangym import api_tests
from plangym.api_tests import assert_identical
from plangym.rng import restore_generator
from tests.helpers.corridor_env import STATE_SIZE, Corridor, OldGymCorridor


class TestCorridor(api_tests.TestPlanEnv):
    @pytest.fixture(
        params=[
            {},
            {"frameskip": 3, "slip": 0.5},
            {"autoreset": False, "length": 5, "max_steps": 10},
            {"return_image": True, "length": 4},
        ],
        ids=["default", "frameskip3", "no-autoreset", "image"],
    )
    def env(self, request):
        env = Corridor(seed=11, **request.param)
        yield env
        env.close()


class TestOldGymCorridor(api_tests.TestPlanEnv):
    @pytest.fixture
    def env(self):
        env = OldGymCorridor(seed=5, length=5, max_steps=20)
        yield env
        env.close()


def _state(position, t=0, env=None):
    env = env or Corridor(seed=0)
    state = env.get_state()
    state[0], state[1] = position, t
    return state


# dt and frameskip -----------------------------------------------------------------------------
@pytest.mark.parametrize(("frameskip", "dt"), [(1, 1), (1, 4), (3, 1), (3, 4)])
def test_dt_times_frameskip_underlying_steps_are_applied(frameskip, dt):
    env = Corridor(length=1001, max_steps=10_000, frameskip=frameskip, seed=1)
    state, *_ = env.reset()
    calls = []
    original = env.apply_action
    env.apply_action = lambda action: calls.append(action) or original(action)
    new_state, _, _, terminal, truncated, info = env.step(1, state=state, dt=dt)
    assert not (terminal or truncated)
    assert calls == [1] * (dt * frameskip)
    assert info["n_step"] == dt * frameskip
    assert info["dt"] == dt
    assert int(new_state[1]) == dt * frameskip  # the env's own step counter agrees


def test_rewards_are_summed_and_stepping_stops_at_the_end():
    env = Corridor(length=5, slip=0.0, frameskip=2, seed=0)
    state, *_ = env.reset()  # position 2, the right end is 2 steps away
    new_state, obs, reward, terminal, truncated, info = env.step(1, state=state, dt=5)
    assert terminal and not truncated
    assert reward == 1.0
    assert info["n_step"] == 2 and info["dt"] == 5
    assert int(new_state[0]) == 4 and obs.argmax() == 4


def test_truncation_counts_as_end_of_episode():
    env = Corridor(length=1001, max_steps=3, slip=0.0, seed=0)
    state, *_ = env.reset()
    *_, terminal, truncated, info = env.step(1, state=state, dt=10)
    assert truncated and not terminal
    assert info["n_step"] == 3


# autoreset ------------------------------------------------------------------------------------
def test_autoreset_returns_the_terminal_step_unchanged_then_resets():
    kwargs = {"length": 5, "slip": 0.0, "seed": 0, "return_image": True}
    resetting, keeping = Corridor(**kwargs), Corridor(autoreset=False, **kwargs)
    start = _state(3, t=7, env=resetting)
    with_reset = resetting.step(1, state=start)
    without_reset = keeping.step(1, state=start)
    assert_identical(with_reset, without_reset)
    new_state, obs, reward, terminal, _, info = with_reset
    assert terminal and reward == 1.0
    assert int(new_state[0]) == 4 and int(new_state[1]) == 8
    assert obs.argmax() == 4 and info["position"] == 4
    assert tuple(info["rgb"][0, 4]) == (255, 0, 0)
    # After handing out the terminal data the env has started a new episode...
    after = resetting.get_state()
    assert int(after[0]) == 2 and int(after[1]) == 0
    # ...while the env without autoreset stays at the end.
    assert_identical(keeping.get_state(), new_state)


def test_autoreset_without_returned_state():
    env = Corridor(length=5, slip=0.0, seed=0)
    env.set_state(_state(3, env=env))
    obs, reward, terminal, _, _ = env.step(1)
    assert terminal and reward == 1.0 and obs.argmax() == 4
    assert int(env.get_state()[0]) == 2


def test_autoreset_in_a_batch():
    env = Corridor(length=5, slip=0.0, seed=0)
    near_end = _state(3, env=env)
    states, observs, rewards, terminals, _, _ = env.step_batch([1, 0], states=[near_end] * 2)
    assert terminals == [True, False] and rewards == [1.0, 0.0]
    assert [int(s[0]) for s in states] == [4, 2]
    assert [int(o.argmax()) for o in observs] == [4, 2]


# clone ----------------------------------------------------------------------------------------
def test_clone_keeps_constructor_parameters():
    env = Corridor("windy", 7, slip=0.3, max_steps=40, seed=9, frameskip=2, autoreset=False)
    clone = env.clone()
    assert type(clone) is Corridor
    assert (clone.name, clone.length, clone.slip, clone.max_steps, clone.seed) == (
        "windy",
        7,
        0.3,
        40,
        9,
    )
    assert (clone.frameskip, clone.autoreset, clone.return_image) == (2, False, False)
    other = env.clone(length=11, return_image=True)
    assert (other.length, other.slip, other.seed, other.return_image) == (11, 0.3, 9, True)
    assert other.obs_shape == (11,)


class BonusCorridor(Corridor):
    """A subclass whose own parameter comes first, the rest passed on by ``*args``."""

    def __init__(self, bonus=0.5, *args, **kwargs):
        self.bonus = bonus
        super().__init__(*args, **kwargs)


def test_clone_and_pickle_repeat_a_call_through_star_args():
    """A positional argument was also named: 'got multiple values for argument'."""
    env = BonusCorridor(0.25, "Bonus", 5, seed=1)
    for copy_of in (env.clone(), pickle.loads(pickle.dumps(env)), env.clone(delay_setup=True)):
        assert (copy_of.bonus, copy_of.name, copy_of.length, copy_of.seed) == (0.25, "Bonus", 5, 1)
    other = env.clone(bonus=0.75, slip=0.1, length=7)  # length went through *args
    assert (other.bonus, other.name, other.length, other.slip) == (0.75, "Bonus", 7, 0.1)


class RefilledCorridor(Corridor):
    """Fills one observation array in place: step_batch's observations are all the last."""

    def _observe(self):
        self._buffer = getattr(self, "_buffer", np.zeros(self.length, np.float32))
        self._buffer[:] = super()._observe()
        return self._buffer


class BlindCorridor(Corridor):
    """Sees nothing: one read-only array, returned by every step (nothing writes it)."""

    NOTHING = np.zeros(1, np.float32)
    NOTHING.flags.writeable = False

    def _observe(self):
        return self.NOTHING


def test_the_suite_tells_an_observation_filled_in_place_from_a_shared_read_only_one():
    check = api_tests.TestPlanEnv.test_each_step_returns_an_observation_of_its_own
    check(None, BlindCorridor(slip=0.0, seed=1))
    with pytest.raises(AssertionError, match="filled in place"):
        check(None, RefilledCorridor(slip=0.0, seed=1))


def test_clone_replays_a_state_exactly():
    env = Corridor(slip=0.5, seed=3)
    env.reset()
    for _ in range(4):
        env.step(env.sample_action())
    state = env.get_state()
    actions = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1]
    expected = api_tests.replay(env, state, actions)
    assert_identical(api_tests.replay(env.clone(), state, actions), expected)


# states -------------------------------------------------------------------------------------
def test_state_is_a_plain_array_with_value_semantics():
    env = Corridor(slip=0.5, seed=4)
    state, *_ = env.reset()
    assert state.dtype == np.uint64 and state.shape == (STATE_SIZE,)
    for twin in (state.copy(), copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert np.array_equal(twin, state)
    first = env.step(1, state=state)
    env.step(1)  # moves the env (and its wind generator) on
    assert_identical(env.step(1, state=state), first)


def test_generator_is_part_of_the_state():
    env = Corridor(slip=0.5, seed=4)
    state, *_ = env.reset()
    runs = [[int(s[0]) for s in env.step_batch([1] * 10, states=[state] * 10)[0]]]
    assert len(set(runs[0])) == 1  # same state, same wind, every time
    env.set_state(state)
    free = [int(env.step(1, return_state=True)[0][0]) for _ in range(30)]
    env.set_state(state)
    assert free == [int(env.step(1, return_state=True)[0][0]) for _ in range(30)]
    assert len(set(free)) > 1


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (np.zeros(3, dtype=np.uint64), ValueError, r"state: expected a uint64 array of shape"),
        (np.zeros(STATE_SIZE), ValueError, "received ndarray.*float64"),
        ([0] * STATE_SIZE, TypeError, r"state: .*received \[0, 0"),
        (np.full(STATE_SIZE, 50, dtype=np.uint64), ValueError, r"in \[0, 9\), received 50"),
    ],
)
def test_bad_states_are_rejected_before_stepping(bad, error, match):
    env = Corridor(seed=0)
    state, *_ = env.reset()
    with pytest.raises(error, match=match):
        env.step(1, state=bad)
    with pytest.raises(error, match=r"states\[1\]"):
        env.step_batch([1, 1], states=[state, bad])
    with pytest.raises(error, match="state"):
        env.set_state(bad)
    assert_identical(env.get_state(), state)


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        (2, ValueError, "received 2"),
        (-1, ValueError, "received -1"),
        (1.0, TypeError, r"received 1.0 \(float\)"),
        ("left", TypeError, "received 'left'"),
        (True, TypeError, "received True"),
    ],
)
def test_bad_actions_are_rejected_before_stepping(bad, error, match):
    env = Corridor(seed=0)
    state, *_ = env.reset()
    with pytest.raises(error, match=rf"action: expected 0 \(left\) or 1 \(right\), {match}"):
        env.step(bad, state=state)
    with pytest.raises(error, match=rf"actions\[1\]: expected 0 \(left\) or 1 \(right\), {match}"):
        env.step_batch([1, bad], states=[state, state])
    assert_identical(env.get_state(), state)
    assert len(env.step(np.int64(1), state=state)) == 6  # NumPy integers are fine


# pickling -------------------------------------------------------------------------------------
def test_delayed_env_pickles_and_works_after_setup():
    delayed = Corridor(length=7, seed=21, frameskip=2, delay_setup=True)
    assert delayed._wind is None  # nothing was built
    restored = pickle.loads(pickle.dumps(delayed))
    assert (restored.length, restored.seed, restored.frameskip) == (7, 21, 2)
    restored.setup()
    state, obs, _ = restored.reset()
    assert obs.shape == (7,)
    new_state, *_, info = restored.step(1, state=state, dt=2)
    assert info["n_step"] <= 4
    # The worker copy behaves exactly like an env built directly.
    direct = Corridor(length=7, seed=21, frameskip=2)
    assert_identical(direct.step(1, state=state, dt=2)[0], new_state)
    # and it still remembers how it was built
    assert restored.clone(delay_setup=False).length == 7


def test_setup_env_pickles_with_its_state():
    env = Corridor(slip=0.5, seed=2)
    env.reset()
    env.step(1)
    restored = pickle.loads(pickle.dumps(env))
    assert_identical(restored.get_state(), env.get_state())
    assert_identical(restored.step(0, return_state=True), env.step(0, return_state=True))


# old gym API ----------------------------------------------------------------------------------
def test_old_gym_four_tuple_env_still_works():
    env = OldGymCorridor(length=5, slip=0.0, seed=0, frameskip=2)
    state, *_ = env.reset()
    result = env.step(0, state=state)
    assert len(result) == 6
    _, obs, reward, terminal, truncated, info = result
    assert terminal is True and truncated is False
    assert reward == -1.0 and obs.argmax() == 0
    assert info["n_step"] == 2 and info["TimeLimit.truncated"] is False
    assert int(env.get_state()[0]) == 2  # autoreset still happened
    obs, reward, terminal, truncated, info = env.step(1, dt=3, state=state, return_state=False)
    assert terminal and reward == 1.0 and info["n_step"] == 2


def test_old_gym_env_time_limit_ends_the_episode():
    env = OldGymCorridor(length=1001, max_steps=3, slip=0.0, seed=0, autoreset=False)
    state, *_ = env.reset()
    *_, terminal, truncated, info = env.step(1, state=state, dt=10)
    assert terminal and not truncated
    assert info["n_step"] == 3 and info["TimeLimit.truncated"] is True


def test_old_gym_env_matches_new_api_env_step_by_step():
    old, new = OldGymCorridor(slip=0.5, seed=8), Corridor(slip=0.5, seed=8)
    state, *_ = new.reset()
    actions = [1, 0, 1, 1, 0, 1, 1, 1]
    for action in actions:
        old_result = old.step(action, state=state, dt=2)
        new_result = new.step(action, state=state, dt=2)
        assert_identical(old_result[:4], new_result[:4])
        state = new_result[0]


def test_runs_unchanged_in_parallel_workers():
    """The extension contract: a plangym 0.1-style env steps batches on worker processes."""
    from plangym.vectorization import ParallelEnv

    # Spawned workers import tests.helpers.corridor_env by name: they inherit this sys.path.
    for start_method in ("fork", "spawn"):
        env = ParallelEnv(
            Corridor, "Corridor", n_workers=2, start_method=start_method, length=9, seed=4
        )
        state, *_ = env.reset()
        actions = [0, 1, 1, 0, 1, 1, 0]
        expected = env.plan_env.step_batch(actions, states=[state] * 7, dt=3)
        assert_identical(env.step_batch(actions, states=[state] * 7, dt=3), expected)
        env.close()


def test_reset_with_a_seed_names_an_attribute_hiding_seed():
    """The test Corridor keeps its seed in ``self.seed``, which hides the method."""
    env = Corridor(seed=3)
    with pytest.raises(TypeError, match=r"seed: Corridor has no seed\(\) method .*found 3"):
        env.reset(seed=1)


class ObjectStateCorridor(Corridor):
    """A plangym 0.1-style env: its states are object arrays (0.1's Atari states were)."""

    def get_state(self):
        state = np.empty(2, dtype=object)
        state[0], state[1] = super().get_state(), {"steps": self._t}
        return state

    def set_state(self, state):
        self.check_state(state)
        inner = state[0]
        self._position, self._t = int(inner[0]), int(inner[1])
        restore_generator(self._wind, inner[2:])

    def check_state(self, state, name="state"):
        if not (isinstance(state, np.ndarray) and state.dtype == object and state.shape == (2,)):
            raise TypeError(f"{name}: expected an object array of 2, received {state!r:.60}")


def test_object_array_states_run_on_workers_as_in_the_caller():
    from plangym.vectorization import ParallelEnv

    single = ObjectStateCorridor(seed=5)
    state, *_ = single.reset()
    env = ParallelEnv(ObjectStateCorridor, "Corridor", n_workers=2, inline_small_batches=False)
    try:
        actions, states = [1, 0, 1, 1], [state] * 4
        assert_identical(env.step_batch(actions, states), single.step_batch(actions, states))
    finally:
        env.close()


def test_a_fresh_env_with_a_time_limit_wrapper_steps_from_a_state():
    """Wrappers are reset with the env: a TimeLimit's count was None until the first reset."""
    import gymnasium

    import plangym

    wrappers = [(gymnasium.wrappers.TimeLimit, {"max_episode_steps": 10})]
    env = plangym.make("CartPole-v1", wrappers=wrappers)
    state, *_ = env.reset(seed=0)
    fresh = plangym.make("CartPole-v1", wrappers=wrappers)
    assert_identical(fresh.step(1, state=state), env.step(1, state=state))


def test_a_time_limit_wrapper_is_refused_where_states_cannot_hold_it():
    import functools

    import gymnasium

    import plangym

    time_limit = gymnasium.wrappers.TimeLimit
    for wrapper in (  # as a class, and as callables that build one
        (time_limit, {"max_episode_steps": 9}),
        lambda env: time_limit(env, 9),
        functools.partial(time_limit, max_episode_steps=9),
    ):
        with pytest.raises(ValueError, match=r"wrappers: AtariEnv states do not hold a TimeLim"):
            plangym.make("ALE/Pong-v5", wrappers=[wrapper])


def test_stateful_wrappers_warn():
    import gymnasium

    import plangym

    stack = gymnasium.wrappers.FrameStackObservation
    for frames in ((stack, {"stack_size": 3}), lambda env: stack(env, 3)):
        with pytest.warns(UserWarning, match="wrappers: FrameStackObservation keeps state"):
            plangym.make("CartPole-v1", wrappers=[frames])


def test_hooks_written_for_plangym_01_are_not_given_truncated():
    """0.1 called process_obs(obs=, reward=, terminal=, info=): no truncated keyword."""
    from plangym.control import ClassicControl

    class Hooks01(ClassicControl):
        def process_obs(self, obs, reward=None, terminal=None, info=None):
            return obs * 2

        def process_info(self, info, obs=None, reward=None, terminal=None):
            return {**info, "custom": 1}

    env = Hooks01("CartPole-v1")
    state, obs, info = env.reset(seed=0, return_state=True)
    assert info["custom"] == 1
    _, stepped, *_, step_info = env.step(0, state=state)
    assert step_info["custom"] == 1
    plain = ClassicControl("CartPole-v1")
    assert (stepped == 2 * plain.step(0, state=state)[1]).all()
