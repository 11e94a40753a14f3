"""The conformance classes: :class:`TestPlanEnv`, :class:`TestPlangymEnv` and its subclass.

See :mod:`plangym.api_tests` for how to run them on an environment;
:class:`TestVideogameEnv` adds the emulator checks.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import gymnasium
import numpy as np
import pytest

from plangym.columns import BatchColumns, records_to_states
from plangym.constructor import keyword_names
from plangym.core import PlanEnv
from plangym.core.obs_pool import rows_of
from plangym.exactness import difference, replay
from plangym.selfcheck import replay_in_fresh_instance, run_in_fresh_process


@pytest.fixture(name="env")
def _no_env() -> None:
    """Skip the suite where pytest collects it from this file: it needs a module's own env."""
    pytest.skip("the suite runs in a test module that defines an env fixture")


def assert_identical(first: Any, second: Any, path: str = "value") -> None:
    """Assert that two step results are bit-identical (see :func:`plangym.exactness.difference`)."""
    found = difference(first, second, path)
    assert found is None, found


def _n_steps(env: PlanEnv) -> int:
    return int(getattr(env, "api_test_steps", 30))


def _warm_state(env: PlanEnv, n_steps: int = 5) -> Any:
    """Return a state a few random steps into an episode (more telling than a reset one)."""
    env.reset()
    for _ in range(n_steps):
        env.step(env.sample_action())
    return env.get_state()


def _setup_and_step(delayed: PlanEnv) -> int:
    """Build a delayed env, step it once from a reset and return the step's length."""
    delayed.setup()
    try:
        state, *_ = delayed.reset()
        return len(delayed.step(delayed.sample_action(), state=state))
    finally:
        delayed.close()


# plangym 0.1's helpers ------------------------------------------------------------------
# Family test files written for plangym 0.1 import these, so they keep 0.1's signatures.


class TestPlanEnv:
    """Checks every :class:`PlanEnv` must pass."""

    def test_reset_returns_state_obs_info(self, env):
        state, obs, info = env.reset()
        assert isinstance(info, dict)
        obs_only, info_only = env.reset(return_state=False)
        assert isinstance(info_only, dict)
        # np.shape: a Discrete space's observations are ints. A Dict or Tuple space has no
        # shape (obs_shape None): its observations are checked against the space instead.
        if env.OBS_IS_ARRAY and env.obs_shape is not None:
            for observation in (obs, obs_only):
                assert np.shape(observation) == env.obs_shape, (
                    f"observation of shape {np.shape(observation)} where obs_shape is "
                    f"{env.obs_shape}: set the class attribute OBS_IS_ARRAY = False for "
                    "observations that are not arrays"
                )
        if env.STATE_IS_ARRAY:
            assert isinstance(state, np.ndarray), (
                f"the state is a {type(state).__name__}, not an array: set the class "
                "attribute STATE_IS_ARRAY = False for states of another kind"
            )

    def test_step_tuple_follows_return_state(self, env):
        state, *_ = env.reset()
        action = env.sample_action()
        assert len(env.step(action)) == 5
        assert len(env.step(action, state=state)) == 6
        assert len(env.step(action, return_state=True)) == 6
        assert len(env.step(action, state=state, return_state=False)) == 5

    @pytest.mark.parametrize("dt", [1, 3])
    def test_info_counts_underlying_steps(self, env, dt):
        state = _warm_state(env)
        *_, terminal, truncated, info = env.step(env.sample_action(), state=state, dt=dt)
        assert info["dt"] == dt
        if terminal or truncated:
            assert 1 <= info["n_step"] <= dt * env.frameskip
        else:
            assert info["n_step"] == dt * env.frameskip

    def test_replay_is_exact_in_same_instance(self, env):
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(_n_steps(env))]
        assert_identical(replay(env, state, actions), replay(env, state, actions))

    def test_replay_is_exact_in_fresh_instance(self, env):
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(_n_steps(env))]
        expected = replay(env, state, actions, dt=2)
        assert_identical(replay_in_fresh_instance(env, state, actions, dt=2), expected)

    def test_state_has_value_semantics(self, env):
        state = _warm_state(env)
        assert_identical(pickle.loads(pickle.dumps(state)), state)
        assert_identical(copy.deepcopy(state), state)
        env.step(env.sample_action())
        env.set_state(state)
        assert_identical(env.get_state(), state)

    def test_each_step_returns_an_observation_of_its_own(self, env):
        state = _warm_state(env)
        observation = env.step(env.sample_action(), state=state)[1]
        kept = copy.deepcopy(observation)
        following = env.step(env.sample_action())[0]
        changed = difference(observation, kept, "observation")
        shared = (  # a read-only array may be shared: nothing writes it
            isinstance(observation, np.ndarray)
            and observation.flags.writeable
            and np.shares_memory(observation, following)
        )
        assert changed is None and not shared, (
            "the next step's observation is the same array, filled in place: return a new "
            "observation each step (step_batch keeps each element's)"
        )

    def test_step_batch_equals_repeated_step(self, env):
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(6)]
        dts = [1, 2, 1, 3, 1, 2]
        batch = env.step_batch(actions, states=[state] * 6, dt=dts)
        single = [env.step(a, state=state, dt=d) for a, d in zip(actions, dts, strict=True)]
        assert_identical(batch, tuple(list(column) for column in zip(*single, strict=True)))

    def test_array_form_agrees_with_the_lists(self, env):
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(20)]  # enough for batch kernels
        dts = [1, 2, 1, 3] * 5
        lists = env.step_batch(actions, states=[state] * 20, dt=dts)
        arrays = env.step_batch(actions, states=[state] * 20, dt=dts, arrays=True)
        new_states, observs, rewards, terminals, truncateds, infos = arrays
        if isinstance(new_states, np.ndarray) and new_states.dtype.names is not None:
            assert_identical(records_to_states(new_states), lists[0])
            # The same batch given as one record array steps alike.
            again = env.step_batch(actions, states=np.stack([state] * 20), dt=dts, arrays=True)
            assert_identical(records_to_states(again[0]), lists[0])
        else:
            assert_identical(list(new_states), lists[0])
        # Rows, not list(): the rows of a stack of 0-d observations are 0-d arrays too.
        rows = rows_of(observs) if isinstance(observs, np.ndarray) else list(observs)
        assert_identical(rows, list(lists[1]))
        assert rewards.dtype == np.float64 and rewards.tolist() == [float(r) for r in lists[2]]
        assert terminals.tolist() == lists[3] and truncateds.tolist() == lists[4]
        if isinstance(infos, dict):
            infos = BatchColumns(None, [], [], [], [], infos).info_list()
        assert_identical(infos, lists[5])

    @pytest.mark.parametrize("arrays", ["yes", 1, None])
    def test_arrays_must_be_a_bool(self, env, arrays):
        state = _warm_state(env)
        with pytest.raises(TypeError, match="arrays: expected True or False"):
            env.step_batch([env.sample_action()] * 2, states=[state] * 2, arrays=arrays)
        assert_identical(env.get_state(), state)

    def test_step_batch_without_states_steps_in_sequence(self, env):
        if _is_vectorized(env):
            pytest.skip("each worker steps its chunk from its own state (docs/parallel.md)")
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(4)]
        env.set_state(state)
        batch = env.step_batch(actions, dt=2)
        assert len(batch) == 5
        env.set_state(state)
        single = [env.step(action, dt=2) for action in actions]
        assert_identical(batch, tuple(list(column) for column in zip(*single, strict=True)))
        assert len(env.step_batch(actions, states=[None] * 4)) == 5
        assert len(env.step_batch(actions, return_state=True)) == 6

    def test_step_batch_of_nothing(self, env):
        assert env.step_batch([], states=[], return_state=True) == ([],) * 6
        assert env.step_batch([]) == ([],) * 5

    @pytest.mark.parametrize("dt", [0, -1, 1.5, "2", None, True])
    def test_bad_dt_is_rejected_and_env_stays_usable(self, env, dt):
        state = _warm_state(env)
        with pytest.raises((ValueError, TypeError), match="dt"):
            env.step(env.sample_action(), state=state, dt=dt)
        with pytest.raises((ValueError, TypeError), match="dt"):
            env.step_batch([env.sample_action()] * 2, states=[state] * 2, dt=[1, dt])
        assert_identical(env.get_state(), state)
        assert len(env.step(env.sample_action(), state=state)) == 6

    def test_batch_length_mismatch_is_rejected(self, env):
        state = _warm_state(env)
        actions = [env.sample_action() for _ in range(3)]
        with pytest.raises(ValueError, match="states"):
            env.step_batch(actions, states=[state] * 2)
        with pytest.raises(ValueError, match="dt"):
            env.step_batch(actions, dt=[1, 1])
        with pytest.raises(ValueError, match="states"):
            env.step_batch(actions, states=[state, None, state])
        assert_identical(env.get_state(), state)

    def test_clone_keeps_parameters(self, env):
        # A singleton's clone stays unbuilt: its process already holds the one allowed.
        clone = env.clone(delay_setup=True) if env.SINGLETON else env.clone()
        try:
            assert type(clone) is type(env)
            assert clone.name == env.name
            assert clone.frameskip == env.frameskip
            assert clone.autoreset == env.autoreset
            assert clone.return_image == env.return_image
        finally:
            clone.close()

    def test_delayed_env_pickles_and_works(self, env):
        if _is_vectorized(env):
            pytest.skip("a vectorized env owns its workers: it does not pickle")
        names = keyword_names(getattr(env.clone, "__func__", env.clone))
        if names is not None and "delay_setup" not in names:
            pytest.skip("its clone() takes no delay_setup (a plangym 0.1 env overriding it)")
        delayed = env.clone(delay_setup=True)
        restored = pickle.loads(pickle.dumps(delayed))
        if env.SINGLETON:  # built in a new process: this one already holds the one allowed
            assert run_in_fresh_process(_setup_and_step, restored) == 6
        else:
            assert _setup_and_step(restored) == 6

    def test_close_is_idempotent(self, env):
        clone = env.clone(delay_setup=True) if env.SINGLETON else env.clone()
        clone.close()
        clone.close()


class TestPlangymEnv(TestPlanEnv):
    """Checks for gymnasium-backed environments (:class:`~plangym.core.PlangymEnv`)."""

    def test_spaces_and_attributes(self, env):
        assert env.obs_type in env.AVAILABLE_OBS_TYPES
        assert env.render_mode in env.AVAILABLE_RENDER_MODES
        assert env.observation_space.shape == env.obs_shape
        assert env.action_space.shape == env.action_shape
        assert isinstance(env.metadata, dict)
        assert len(env.reward_range) == 2
        assert isinstance(env.remove_time_limit, bool)
        # A vectorized singleton's local env lives in a worker: no gymnasium env here.
        assert env.gym_env is not None or (_is_vectorized(env) and env.SINGLETON)
        # A vectorized env's unwrapped is its local env (docs/compatibility.md).
        assert env.unwrapped is (env.plan_env if _is_vectorized(env) else env)

    def test_render_draws_the_picture_in_rgb_array_mode(self, env):
        if env.render_mode != "rgb_array":
            pytest.skip(f"render_mode={env.render_mode!r} draws no array")
        env.reset()
        env.step(env.sample_action())
        picture = env.render()
        assert isinstance(picture, np.ndarray), type(picture)
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[-1] == 3
        assert_identical(picture, env.get_image())

    def test_wrap_environment(self, env):
        # plangym 0.1's three ways to give a wrapper: with keywords, arguments, or one argument.
        if not isinstance(getattr(env, "gym_env", None), gymnasium.Env) or env.unwrapped is not env:
            pytest.skip("no gymnasium env of its own to wrap (dm_control, or a vectorized env)")
        if env.SINGLETON:
            pytest.skip("one simulator per process: a wrapped clone cannot be built here")
        from gymnasium.wrappers import TransformReward

        def same(reward: float) -> float:
            return reward

        for wrapper in (
            (TransformReward, {"func": same}),
            (TransformReward, [same]),
            (TransformReward, same),
        ):
            clone = env.clone(wrappers=[wrapper])
            try:
                assert isinstance(clone.gym_env, TransformReward)
                clone.reset()
                assert len(clone.step(clone.sample_action())) == 5
            finally:
                clone.close()

    def test_observations_fit_the_space(self, env):
        _, obs, _ = env.reset()
        stepped = env.step(env.sample_action())[0]
        space = env.observation_space
        for observation in (obs, stepped):
            if space.shape is None:  # a Dict or Tuple space: nothing to compare but the space
                assert space.contains(observation), f"{observation!r} is not in {space}"
            else:
                assert np.shape(observation) == space.shape
                assert np.asarray(observation).dtype == space.dtype

    def test_seed_makes_runs_repeatable(self, env):
        # A singleton repeats the run in itself: its process may hold only one instance.
        first, second = (env, env) if env.SINGLETON else (env.clone(), env.clone())
        try:
            runs = []
            for instance in (first, second):
                instance.seed(123)
                _, obs, _ = instance.reset()
                actions = [instance.sample_action() for _ in range(10)]
                runs.append((obs, actions, [instance.step(a) for a in actions]))
            assert_identical(runs[0], runs[1])
        finally:
            if not env.SINGLETON:
                first.close()
                second.close()

    def test_out_of_space_action_is_rejected(self, env):
        state = _warm_state(env)
        space = env.action_space
        if hasattr(space, "n"):
            bad: Any = -1
        elif space.shape is None:  # a Tuple or Dict space: a string is in none of them
            bad = "not an action"
        else:
            bad = np.full(space.shape, np.inf, dtype=np.float32)
        with pytest.raises((ValueError, TypeError), match="action"):
            env.step(bad, state=state)
        with pytest.raises((ValueError, TypeError), match=r"actions\[1\]"):
            env.step_batch([env.sample_action(), bad], states=[state, state])
        assert_identical(env.get_state(), state)

    @pytest.mark.parametrize(
        "bad_state",
        [np.zeros(3), np.zeros(3, dtype=np.uint8), "state", 7, np.zeros((2, 2, 2))],
        ids=["float3", "uint8-3", "str", "int", "cube"],
    )
    def test_foreign_state_is_rejected(self, env, bad_state):
        state = _warm_state(env)
        with pytest.raises((ValueError, TypeError), match="state"):
            env.step(env.sample_action(), state=bad_state)
        with pytest.raises((ValueError, TypeError), match=r"states\[1\]"):
            env.step_batch([env.sample_action()] * 2, states=[state, bad_state])
        with pytest.raises((ValueError, TypeError), match="state"):
            env.set_state(bad_state)
        assert_identical(env.get_state(), state)

    def test_invalid_constructor_choices_are_rejected(self, env):
        with pytest.raises(ValueError, match="obs_type"):
            env.clone(obs_type="voxels")
        with pytest.raises(ValueError, match="render_mode"):
            env.clone(render_mode="hologram")


class TestVideogameEnv(TestPlangymEnv):
    """Checks for emulated games (:class:`~plangym.videogames.env.VideogameEnv`)."""

    def test_ram_and_lives(self, env):
        env.reset()
        ram = env.get_ram()
        assert ram.dtype == np.uint8 and ram.ndim == 1
        assert isinstance(env.lives(), int)
        assert env.n_actions == env.action_space.n

    def test_step_info_reports_lives(self, env):
        env.reset()
        *_, info = env.step(env.sample_action())
        assert "lost_life" in info
        assert env.get_lifes_from_info(info) == env.lives()


def _is_vectorized(env: Any) -> bool:
    """Whether ``env`` steps its batches on workers (a ``ParallelEnv`` or ``RayEnv``)."""
    from plangym.vectorization import VectorizedEnv

    return isinstance(env, VectorizedEnv)
