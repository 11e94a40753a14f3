"""plangym.make_vec: gymnasium vector envs of plannable plangym envs, in every mode.

The vector semantics are checked against gymnasium's own SyncVectorEnv over the very same
sub-envs (plangym envs behind gymnasium's Env API), bit for bit; the planning calls
(get_states, set_states, step_batch) against a single plangym env.
"""

import copy
import functools
import gc
import pickle
import re

import cloudpickle
import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plangym
from plangym.api_tests import assert_identical
from plangym.control.classic_control import ClassicControl
from plangym.vector import AsyncVectorEnv, PlanVectorEnv, SyncVectorEnv
from plangym.vector.building import build_sub_env, sub_env_kwargs
from tests.helpers.vector_checks import assert_same
from tests.vector.test_vector_parity import run_both

MODES = list(AutoresetMode)
# name: (number of sub-envs, steps per run); the Atari run is shorter (120 x 4 frames each)
GAMES = {"CartPole-v1": (3, 500), "Pendulum-v1": (2, 500), "ALE/MsPacman-v5": (2, 120)}


def reference(name, num_envs, mode, **env_kwargs):
    """gymnasium's SyncVectorEnv over the sub-envs make_vec builds for ``name``."""
    env_fn = functools.partial(build_sub_env, name, sub_env_kwargs(name, env_kwargs))
    return gymnasium.vector.SyncVectorEnv([env_fn] * num_envs, autoreset_mode=mode)


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
@pytest.mark.parametrize("vectorization", ["sync", "async"])
@pytest.mark.parametrize("name", sorted(GAMES))
def test_make_vec_steps_as_gymnasiums_vector_env_over_the_same_sub_envs(name, vectorization, mode):
    num_envs, steps = GAMES[name]
    ours = plangym.make_vec(name, num_envs, vectorization, autoreset_mode=mode)
    theirs = reference(name, num_envs, mode)
    try:
        assert isinstance(ours, gymnasium.vector.VectorEnv)
        assert ours.metadata["autoreset_mode"] is mode
        assert ours.single_action_space == theirs.single_action_space
        assert ours.observation_space == theirs.observation_space
        seen = run_both(ours, theirs, mode, n_steps=steps)
    finally:
        ours.close()
        theirs.close()
    if name != "ALE/MsPacman-v5":  # episodes end within the run, so autoreset is exercised
        assert seen["terminated"] + seen["truncated"] > 0


def test_make_vec_keeps_the_registered_time_limit():
    envs = plangym.make_vec("Pendulum-v1", 1, "sync")
    envs.reset(seed=0)
    truncated_at = [t for t in range(201) if envs.step(np.zeros((1, 1), np.float32))[3][0]]
    envs.close()
    assert truncated_at == [199]  # Pendulum-v1 is registered with 200 steps per episode


def test_infos_are_gymnasiums_without_plangyms_own_keys():
    envs = plangym.make_vec("ALE/MsPacman-v5", 2, "sync")
    theirs = gymnasium.make_vec("ALE/MsPacman-v5", 2, "sync")
    envs.reset(seed=0)
    theirs.reset(seed=0)
    infos = envs.step(np.array([0, 0]))[4]
    expected = theirs.step(np.array([0, 0]))[4]
    envs.close()
    theirs.close()
    assert sorted(infos) == sorted(expected)  # lives, frame numbers and their masks
    assert "lives" in infos


class TorsoHeight(gymnasium.Wrapper):
    """A wrapper reading the simulator through ``unwrapped``, as MuJoCo scripts do."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["torso_z"] = float(self.unwrapped.data.qpos[1])
        return obs, reward, terminated, truncated, info


def test_wrappers_read_the_simulator_through_unwrapped_as_on_gymnasiums_sub_envs():
    """The sub-envs' unwrapped had only plangym's members: data, model, state were missing."""
    ours = plangym.make_vec("Hopper-v5", 2, "sync", wrappers=[TorsoHeight])
    theirs = gymnasium.make_vec("Hopper-v5", 2, "sync", wrappers=[TorsoHeight])
    try:
        ours.reset(seed=0), theirs.reset(seed=0)
        action = np.zeros((2, 3), np.float32)
        assert_same(ours.step(action)[-1]["torso_z"], theirs.step(action)[-1]["torso_z"], "z")
        face = ours.envs[0].unwrapped
        assert face.model.nq == theirs.envs[0].unwrapped.model.nq
        with pytest.raises(AttributeError, match="no attribute 'not_there'"):
            face.not_there  # noqa: B018
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize(
    ("game", "frame_skip", "noop_max"),
    [("Breakout", 4, 30), ("Breakout", 1, 30), ("MsPacman", 4, 0)],
)
def test_gymnasiums_atari_preprocessing_wraps_the_sub_envs_as_ale_pys(game, frame_skip, noop_max):
    pytest.importorskip("cv2", reason="AtariPreprocessing resizes frames with OpenCV")
    # AtariPreprocessing reads ale-py's members from env.unwrapped: the emulator, its frames
    # per step (1, to skip frames itself), the action meanings and the generator. Without
    # no-ops it reads the reset's screen from the emulator: MsPacman's differed in 72 pixels.
    preprocess = functools.partial(
        gymnasium.wrappers.AtariPreprocessing, frame_skip=frame_skip, noop_max=noop_max
    )
    kwargs = {"frameskip": 1, "repeat_action_probability": 0.0, "wrappers": [preprocess]}
    ours = plangym.make_vec(f"ALE/{game}-v5", 2, "sync", **kwargs)
    theirs = gymnasium.make_vec(f"ALE/{game}-v5", 2, "sync", **kwargs)
    try:
        assert ours.single_observation_space == theirs.single_observation_space  # 84x84 gray
        (obs, info), (expected_obs, expected_info) = ours.reset(seed=3), theirs.reset(seed=3)
        assert_same(obs, expected_obs, "reset")
        for key in ("seeds", "_seeds"):  # ale-py's, not plangym's (docs/compatibility.md)
            expected_info.pop(key)
        assert_same(info, expected_info, "reset info")
        rng = np.random.default_rng(3)
        for t in range(150):
            action = rng.integers(ours.single_action_space.n, size=2)
            assert_same(ours.step(action), theirs.step(action), f"step {t}")
    finally:
        ours.close()
        theirs.close()


def elapsed_steps(envs):
    states = envs.get_states()
    if isinstance(states, np.ndarray):  # the vector entry point: one record array
        return states["elapsed_steps"].tolist()
    return [int(state["elapsed_steps"]) for state in states]


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
@pytest.mark.parametrize(
    ("name", "actions", "error", "message"),
    [
        ("Pendulum-v1", np.array([[0.5], [np.inf], [0.5]], np.float32), ValueError, "[1]: e"),
        ("Pendulum-v1", np.array([[0.5], [0.5], [np.nan]], np.float32), ValueError, "[2]: e"),
        ("Pendulum-v1", [np.zeros(1), np.zeros(1), np.full(1, -np.inf)], ValueError, "[2]: e"),
        ("CartPole-v1", np.array([0, 1, 2]), ValueError, "[2]: expected an integer in [0, 2)"),
        ("CartPole-v1", np.array([True, False, True]), TypeError, "[0]: expected an integer"),
        # Lists are checked as given: as one array, "a" made the 1 a string, blamed instead.
        ("CartPole-v1", [1, "a", 0], TypeError, "[1]: expected an integer in [0, 2) for"),
        ("CartPole-v1", [1, 1.5, 0], TypeError, "[1]: expected an integer in [0, 2) for"),
        ("CartPole-v1", [1, [1], 0], TypeError, "[1]: expected an integer in [0, 2) for"),
        # n actions of the wrong shape: each one's message (the entry point gave a shape's).
        ("CartPole-v1", [np.array([1])] * 3, TypeError, "[0]: expected an integer in [0, 2)"),
        ("Pendulum-v1", [0.25, -0.5, 0.1], TypeError, "[0]: expected a numeric array of sh"),
    ],
)
def test_a_batch_with_one_bad_action_is_refused_whole(mode, name, actions, error, message):
    envs = plangym.make_vec(name, 3, mode)
    envs.reset(seed=1)
    with pytest.raises(error, match=re.escape(f"actions{message}")) as refused:
        envs.step(actions)
    # The message step_batch gives for the same actions, whichever face the batch came by.
    single = plangym.make(name)
    state, *_ = single.reset()
    with pytest.raises(error) as refused_by_step_batch:
        single.step_batch(actions, [state] * 3)
    assert str(refused.value) == str(refused_by_step_batch.value)
    assert elapsed_steps(envs) == [0, 0, 0]  # no sub-env stepped
    envs.step(envs.action_space.sample())
    assert elapsed_steps(envs) == [1, 1, 1]
    envs.close()


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_python_bools_in_a_list_are_actions_as_in_gymnasium(mode):
    envs = plangym.make_vec("CartPole-v1", 3, mode)
    theirs = gymnasium.make_vec("CartPole-v1", 3, "sync")
    obs = [env.reset(seed=2)[0] for env in (envs, theirs)]
    steps = [env.step([0, True, False]) for env in (envs, theirs)]
    envs.close()
    theirs.close()
    assert obs[0].tobytes() == obs[1].tobytes()
    assert steps[0][0].tobytes() == steps[1][0].tobytes()


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_spec_is_gymnasiums_and_builds_the_env_again(mode):
    envs = plangym.make_vec("CartPole-v1", 3, mode, autoreset_mode=AutoresetMode.SAME_STEP)
    theirs = gymnasium.make_vec("CartPole-v1", 3, mode)
    assert envs.spec.id == theirs.spec.id == "CartPole-v1"
    assert envs.spec.max_episode_steps == theirs.spec.max_episode_steps
    assert envs.spec.kwargs["num_envs"] == 3
    assert envs.spec.kwargs["vectorization_mode"] == mode
    again = plangym.make_vec(envs.spec)
    assert type(again) is type(envs)
    assert (again.num_envs, again.autoreset_mode) == (3, AutoresetMode.SAME_STEP)
    for env in (envs, theirs, again):
        env.close()


def test_spec_holds_the_env_kwargs_and_is_none_for_unregistered_names():
    pong = plangym.make_vec("ALE/Pong-v5", 1, "sync", obs_type="ram", frameskip=2)
    lander = plangym.make_vec("FastLunarLander-v0", 1, "sync")  # plangym's own id
    assert (pong.spec.kwargs["obs_type"], pong.spec.kwargs["frameskip"]) == ("ram", 2)
    assert "num_envs" not in pong.spec.kwargs  # as gymnasium: only when not 1
    assert plangym.make_vec(pong.spec).get_attr("frameskip") == (2,)
    assert lander.spec is None
    pong.close()
    lander.close()


# Planning -------------------------------------------------------------------------------------
@pytest.fixture(params=["sync", "async"])
def cartpoles(request):
    envs = plangym.make_vec("CartPole-v1", 2, request.param)
    yield envs
    envs.close()


def test_step_batch_is_a_single_envs_step_batch_and_disturbs_nothing(cartpoles):
    cartpoles.reset(seed=11)
    for _ in range(3):
        cartpoles.step(np.array([1, 0]))
    states = cartpoles.get_states()
    # What the sub-envs would do next, from a twin that is not asked to plan.
    twin = plangym.make_vec("CartPole-v1", 2, "sync")
    twin.reset(seed=11)
    twin.set_states(states)
    expected_next = twin.step(np.array([0, 1]))
    twin.close()

    batch_states = [states[k % 2] for k in range(7)]
    actions = [k % 2 for k in range(7)]
    dts = [1, 2, 3, 1, 2, 3, 1]
    planned = cartpoles.step_batch(actions, batch_states, dts)
    single = ClassicControl("CartPole-v1", autoreset=False, remove_time_limit=False)
    expected_plan = single.step_batch(actions, batch_states, dts, return_state=True)
    single.close()
    assert_same(tuple(planned[1]), tuple(expected_plan[1]), "observations")
    assert planned[2] == expected_plan[2]
    for mine, theirs in zip(planned[0], expected_plan[0], strict=True):
        assert mine.tobytes() == theirs.tobytes()
    assert_same(cartpoles.step(np.array([0, 1])), expected_next, "the step after planning")


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_step_batch_takes_a_single_envs_return_state_and_arrays(mode):
    """One step_batch signature on every face: a planner moved between them runs."""
    envs = plangym.make_vec("CartPole-v1", 2, mode)
    single = ClassicControl("CartPole-v1", autoreset=False, remove_time_limit=False)
    try:
        state, *_ = single.reset(seed=3)
        actions, states = [0, 1, 1], [state] * 3
        for kwargs in (
            {"arrays": True},
            {"return_state": False},
            {"return_state": False, "arrays": True},
        ):
            assert_identical(
                envs.step_batch(actions, states, 2, **kwargs),
                single.step_batch(actions, states, 2, **kwargs),
            )
            # A swarm with no walker left: arrays of no row (and {} of infos) on both.
            assert_identical(envs.step_batch([], [], **kwargs), single.step_batch([], [], **kwargs))
        with pytest.raises(TypeError, match=r"^arrays: expected True or False"):
            envs.step_batch(actions, states, arrays="yes")
    finally:
        envs.close()
        single.close()


def test_a_batch_large_enough_for_the_kernels_equals_the_single_env(cartpoles):
    """40 states: each worker's 20 go through the NumPy kernels, packed both ways."""
    single = ClassicControl("CartPole-v1", autoreset=False, remove_time_limit=False)
    state, *_ = single.reset()
    rng = np.random.default_rng(2)
    batch_states = []
    for k in range(40):  # terminal states and steps past the end included
        state = single.step(int(rng.integers(2)), state=state)[0] if k % 13 else single.reset()[0]
        batch_states.append(state)
    actions = rng.integers(2, size=40).tolist()
    dts = rng.integers(1, 4, size=40).tolist()
    expected = single.step_batch(actions, batch_states, dts, return_state=True)
    single.close()
    for given in (batch_states, np.stack(batch_states)):  # a list or one record array
        planned = cartpoles.step_batch(actions, given, dts)
        assert [s.tobytes() for s in planned[0]] == [s.tobytes() for s in expected[0]]
        assert_same(tuple(planned[1]), tuple(expected[1]), "observations")
        assert planned[2:] == expected[2:]


def test_set_states_restores_chosen_sub_envs(cartpoles):
    cartpoles.reset(seed=5)
    saved = cartpoles.get_states()
    first = cartpoles.step(np.array([1, 1]))
    cartpoles.step(np.array([0, 0]))
    cartpoles.set_states([saved[1]], indices=[1])
    cartpoles.set_states([saved[0]], indices=[0])
    assert_same(cartpoles.step(np.array([1, 1])), first, "the step from the restored states")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda envs, s: envs.set_states(s, indices=[0, 2]), "indices"),
        (lambda envs, s: envs.set_states(s, indices=[0, 0]), "distinct"),
        (lambda envs, s: envs.set_states(s[:1]), "states: expected 2"),
        (lambda envs, s: envs.step_batch([0], s), "states: expected 1 states"),
        (lambda envs, s: envs.step_batch([0, 1], s, dt=[1]), "dt: expected 2 values"),
        (lambda envs, s: envs.step_batch([0, 1], s, dt=0), "dt: expected an integer >= 1"),
    ],
)
def test_planning_calls_refuse_bad_input(cartpoles, call, message):
    cartpoles.reset(seed=1)
    states = cartpoles.get_states()
    with pytest.raises(ValueError, match=message):
        call(cartpoles, states)
    assert len(cartpoles.step_batch([0, 1], states)[0]) == 2  # still usable


def test_a_bad_state_changes_no_sub_env_and_is_named_as_the_single_env_names_it(cartpoles):
    cartpoles.reset(seed=3)
    saved = cartpoles.get_states()
    cartpoles.step(np.array([1, 1]))
    moved = cartpoles.get_states()
    other = ClassicControl("MountainCar-v0")
    wrong = other.reset()[0]
    other.close()
    with pytest.raises(TypeError, match=r"^states\[1\]: expected a CartPole-v1 state"):
        cartpoles.set_states([saved[0], wrong])
    with pytest.raises(TypeError, match=r"^states: expected a list of states, received 5"):
        cartpoles.set_states(5)
    with pytest.raises(TypeError, match=r"^indices: expected a sequence of sub-env indices"):
        cartpoles.set_states([saved[1]], indices=1)  # was "'int' object is not iterable"
    assert [s.tobytes() for s in cartpoles.get_states()] == [s.tobytes() for s in moved]
    # step_batch: refused in the caller with the words of the single env (and ParallelEnv).
    batch = [saved[0]] * 5 + [wrong] + [saved[1]] * 2
    single = ClassicControl("CartPole-v1", autoreset=False, remove_time_limit=False)
    with pytest.raises(TypeError) as expected:
        single.step_batch([0] * 8, batch)
    single.close()
    with pytest.raises(TypeError) as refused:
        cartpoles.step_batch([0] * 8, batch)
    assert str(refused.value) == str(expected.value)
    assert not getattr(refused.value, "__notes__", None)  # no worker saw it


def test_set_states_takes_states_stacked_in_an_array():
    envs = plangym.make_vec("ALE/Pong-v5", 2, "sync")
    envs.reset(seed=0)
    saved = envs.get_states()
    envs.step(np.array([2, 3]))
    for given in (np.stack(saved), np.asarray(saved, dtype=object)):  # 0.1 code's too
        envs.set_states(given)
        assert [s.tobytes() for s in envs.get_states()] == [s.tobytes() for s in saved]
        envs.step(np.array([2, 3]))
    envs.close()


def test_planning_on_gymnasium_sub_envs_says_what_is_missing():
    envs = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")])
    envs.reset(seed=0)
    with pytest.raises(AttributeError, match="not a plangym env"):
        envs.get_states()
    envs.close()


# Arguments ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_envs": 0}, ValueError, "num_envs"),
        ({"vectorization_mode": "threads"}, ValueError, "vectorization_mode"),
        ({"autoreset_mode": "sometimes"}, ValueError, "autoreset_mode"),
        ({"autoreset": True}, ValueError, "autoreset"),
        ({"name": "NoSuchGame-v9"}, Exception, "NoSuchGame-v9"),
        ({"vector_kwargs": 5}, TypeError, "vector_kwargs: expected None or a dict"),
        ({"wrappers": 5}, TypeError, "wrappers: expected None or a list of wrappers"),
        ({"wrappers": [5]}, TypeError, r"wrappers\[0\]: expected a callable"),
        (
            {"num_envs": 10**6, "vectorization_mode": "async"},
            ValueError,
            "num_envs: expected at most .* worker processes",
        ),
        (
            {"vectorization_mode": "async", "vector_kwargs": {"context": "bogus"}},
            ValueError,
            "context",
        ),
    ],
)
def test_make_vec_refuses_bad_arguments_before_starting_workers(kwargs, error, message):
    arguments = {"name": "CartPole-v1", "num_envs": 2, **kwargs}
    with pytest.raises(error, match=message):
        plangym.make_vec(**arguments)


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_seeds_in_an_array_are_taken_as_gymnasium_takes_them(mode):
    envs = plangym.make_vec("CartPole-v1", 2, mode)
    listed = envs.reset(seed=[3, 9])[0]
    assert_same(envs.reset(seed=np.array([3, 9]))[0], listed, "observations")
    envs.close()


def test_sync_vector_env_takes_a_generator_of_env_fns_as_gymnasiums():
    envs = SyncVectorEnv(functools.partial(gymnasium.make, "CartPole-v1") for _ in range(2))
    assert envs.num_envs == len(envs.env_fns) == 2
    assert envs.reset(seed=0)[0].shape == (2, 4)
    envs.close()


def test_make_vec_modes_build_the_expected_classes():
    for mode, cls in (("sync", SyncVectorEnv), ("async", AsyncVectorEnv)):
        envs = plangym.make_vec("CartPole-v1", 1, mode, vector_kwargs={"copy": False})
        assert isinstance(envs, cls)
        assert isinstance(envs, PlanVectorEnv)
        assert envs.copy is False
        envs.close()


def test_make_vec_on_ray_is_exact(ray_cluster):
    mode = AutoresetMode.SAME_STEP
    ours = plangym.make_vec("CartPole-v1", 2, "ray", autoreset_mode=mode)
    theirs = reference("CartPole-v1", 2, mode)
    try:
        seen = run_both(ours, theirs, mode, n_steps=150)
        states = ours.get_states()
        planned = ours.step_batch([0, 1, 1], [states[0], states[1], states[0]])
        again = ours.step_batch([0, 1, 1], [states[0], states[1], states[0]])
        assert_same(tuple(planned[1]), tuple(again[1]), "planning twice")
    finally:
        ours.close()
        theirs.close()
    assert seen["final_obs"] > 0


@pytest.mark.parametrize("mode", ["async", "ray"])
def test_a_vector_env_owning_workers_refuses_to_be_copied(mode, request):
    """A copy would share the workers, and its collection would stop them under the env."""
    if mode == "ray":
        request.getfixturevalue("ray_cluster")
    envs = plangym.make_vec("CartPole-v1", 2, mode)
    try:
        envs.reset(seed=0)
        for copy_it in (pickle.dumps, cloudpickle.dumps, copy.deepcopy):
            with pytest.raises(TypeError, match="cannot be pickled or deep-copied: its sub-envs"):
                copy_it(envs)
        gc.collect()
        _, rewards, _, truncated, infos = envs.step(np.array([0, 1]))
        assert rewards.tolist() == [1.0, 1.0] and not truncated.any()
        assert "worker_restarted" not in infos
    finally:
        envs.close()


def test_a_vector_env_stepping_in_this_process_pickles_as_gymnasiums_does():
    # Its scheduler held a lambda: pickle failed where gymnasium's SyncVectorEnv pickles.
    envs = plangym.make_vec("CartPole-v1", 2, "sync")
    try:
        envs.reset(seed=0)
        copied = pickle.loads(pickle.dumps(envs))
        for _ in range(3):
            assert_same(copied.step(np.array([0, 1])), envs.step(np.array([0, 1])), "step")
        copied.close()
    finally:
        envs.close()


def test_a_seeded_reset_leaves_the_action_spaces_generator_as_gymnasium_does():
    """reset(seed=...) seeds the env, not its action space: the sync and async modes (whose
    single action space is sub-env 0's, or one built in the caller) sample alike, and as a
    plangym env whose own seed() (plangym 0.1's) does seed its action space."""
    samples = []
    for mode in ("sync", "async"):
        envs = plangym.make_vec("CartPole-v1", 2, mode)
        envs.single_action_space.seed(42)
        envs.reset(seed=0)
        samples.append([int(envs.single_action_space.sample()) for _ in range(20)])
        envs.close()
    theirs = gymnasium.spaces.Discrete(2, seed=42)
    assert samples[0] == samples[1] == [int(theirs.sample()) for _ in range(20)]
    env = plangym.make("CartPole-v1")
    env.action_space.seed(42)
    env.reset(seed=0)
    assert [int(env.sample_action()) for _ in range(20)] == samples[0]
    env.seed(7)  # plangym 0.1's seed(): the action space too
    seeded = gymnasium.spaces.Discrete(2, seed=7)
    assert [int(env.sample_action()) for _ in range(20)] == [
        int(seeded.sample()) for _ in range(20)
    ]
    env.close()


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_a_list_of_python_bools_steps_as_their_ints_in_every_mode(mode):
    # gymnasium's spaces take a Python bool for an int; the vector entry point refused a
    # list made only of them ("received np.True_"), the other modes stepped it.
    envs = plangym.make_vec("MountainCar-v0", 2, mode)
    twin = plangym.make_vec("MountainCar-v0", 2, mode)
    try:
        envs.reset(seed=4)
        twin.reset(seed=4)
        assert_same(envs.step([True, False]), twin.step(np.array([1, 0])))
        with pytest.raises(TypeError, match=r"actions\[0\]: expected an integer"):
            envs.step(np.array([True, False]))  # an array of flags: refused in every mode
    finally:
        envs.close()
        twin.close()


def test_make_vec_is_importable_from_plangym_vector_with_the_other_vector_names():
    # The module that defines it is not the attribute: plangym.vector.make_vec(...) once
    # raised "'module' object is not callable".
    import plangym.vector

    assert plangym.vector.make_vec is plangym.make_vec
    assert "make_vec" in plangym.vector.__all__
    envs = plangym.vector.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync")
    try:
        obs, _ = envs.reset(seed=3)
        assert obs.shape == (2, 4)
    finally:
        envs.close()


@pytest.mark.parametrize("mode", ["sync", "async", "vector_entry_point"])
def test_step_batch_without_states_is_refused_in_every_mode(mode):
    # Nones were taken: sync/async chained each sub-env's chunk from its own state (and
    # returned states), the vector entry point stepped a hidden env of its own.
    envs = plangym.make_vec("CartPole-v1", 2, mode)
    try:
        envs.reset(seed=0)
        states = envs.get_states()
        state = states[0]
        with pytest.raises(ValueError, match=r"states\[1\]: expected a state .* received None"):
            envs.step_batch([0, 1], [state, None])
        with pytest.raises(TypeError, match="states: expected one state per action, received None"):
            envs.step_batch([0, 1], None)
        assert len(envs.step_batch([0, 1], [state, state])) == 6
    finally:
        envs.close()
