"""Code written for gymnasium's vector API runs unchanged on ``plangym.vector``, alike.

Each test drives gymnasium's own class (``gymnasium.vector.AsyncVectorEnv``,
``SyncVectorEnv``, ``gymnasium.make_vec``) and ours side by side, with real gymnasium envs and
real worker processes, and compares what user code can see: seeds, warnings and logs, errors,
actions handed to the sub-envs, attributes, and the dynamics of ``make_vec``.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import time
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.error import CustomSpaceError

import plangym
from plangym.vector import AsyncVectorEnv, SyncVectorEnv
from tests.helpers.vector_checks import assert_same
from tests.helpers.vector_envs import make_gym_env
from tests.helpers.vector_faulty_env import RAISE, FaultError, make_faulty_env

N = 3
SEED = 97
CARTPOLE = functools.partial(make_gym_env, "CartPole-v1")
# flavour: (ours, gymnasium's)
PAIRS = {
    "sync": (SyncVectorEnv, gymnasium.vector.SyncVectorEnv),
    "async": (AsyncVectorEnv, gymnasium.vector.AsyncVectorEnv),
}


@pytest.fixture
def built():
    """A list to put vector envs in; each is closed at teardown (pending calls dropped)."""
    envs: list = []
    yield envs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for env in envs:
            env.close(terminate=True) if hasattr(env, "processes") else env.close()


def make_pair(built: list, flavour: str, env_fn=CARTPOLE, **kwargs) -> tuple:
    """Build ``(ours, gymnasium's)`` of ``flavour`` over ``N`` copies of ``env_fn``."""
    ours_class, their_class = PAIRS[flavour]
    pair = ours_class([env_fn] * N, **kwargs), their_class([env_fn] * N, **kwargs)
    built.extend(pair)
    return pair


def recorded(call) -> list[str]:
    """Run ``call()``; return the text of every warning it emitted (gymnasium's logger's)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(warning.message) for warning in caught]


# 1. np_random_seed ---------------------------------------------------------------------------
@pytest.mark.parametrize("flavour", list(PAIRS))
def test_np_random_seed_is_a_tuple_of_the_sub_envs_seeds(built, flavour):
    ours, theirs = make_pair(built, flavour)
    for envs in (ours, theirs):  # unseeded: one random seed per sub-env
        seeds = envs.np_random_seed
        assert isinstance(seeds, tuple)
        assert len(seeds) == N
        assert all(isinstance(seed, int) for seed in seeds)
    ours.reset(seed=SEED)
    theirs.reset(seed=SEED)
    assert ours.np_random_seed == theirs.np_random_seed == (SEED, SEED + 1, SEED + 2)
    assert ours.reset(seed=[5, None, 7]) is not None
    theirs.reset(seed=[5, None, 7])
    assert ours.np_random_seed[::2] == theirs.np_random_seed[::2] == (5, 7)
    generators = ours.np_random
    assert len(generators) == N
    assert all(isinstance(generator, np.random.Generator) for generator in generators)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_reports_the_seeds_its_sub_envs_draw_from(built, mode):
    envs = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode=mode)
    built.append(envs)
    envs.reset(seed=SEED)
    assert envs.np_random_seed == (SEED, SEED + 1)
    reference = gymnasium.make("CartPole-v1")
    reference.reset(seed=SEED)
    # The generator reported is the one the episodes draw from: it is where gymnasium's is.
    assert envs.np_random[0].bit_generator.state == reference.np_random.bit_generator.state


# 2. close() while a call is pending ----------------------------------------------------------
@pytest.mark.parametrize("terminate", [False, True])
@pytest.mark.parametrize("pending", ["step", "reset", "call"])
def test_close_while_a_call_is_pending_warns_as_gymnasium_does(built, pending, terminate):
    ours, theirs = make_pair(built, "async")
    texts = []
    for envs in (ours, theirs):
        envs.reset(seed=SEED)
        start = {
            "step": lambda envs=envs: envs.step_async(np.zeros(N, np.int64)),
            "reset": lambda envs=envs: envs.reset_async(seed=SEED),
            "call": lambda envs=envs: envs.call_async("render"),
        }[pending]
        start()
        texts.append(recorded(functools.partial(envs.close, terminate=terminate)))
        assert envs.closed
    expected = f"Calling `close` while waiting for a pending call to `{pending}` to complete."
    assert texts[0] == texts[1]
    assert len(texts[0]) == 1
    assert expected in texts[0][0]


def test_close_when_idle_is_quiet(built):
    ours, _ = make_pair(built, "async")
    ours.reset(seed=SEED)
    assert recorded(ours.close) == []


# 3. shared memory and custom spaces ----------------------------------------------------------
class Anything(gymnasium.Space):
    """A custom space: gymnasium's shared memory has no layout for it."""

    def __init__(self):
        super().__init__(shape=None, dtype=None)

    def sample(self, mask=None, probability=None):
        return {"any": "thing"}

    def contains(self, x):
        return True

    def __eq__(self, other):
        return isinstance(other, Anything)

    def __hash__(self):
        return hash(Anything)


class AnythingEnv(gymnasium.Env):
    """Observes an :class:`Anything`."""

    def __init__(self):
        self.observation_space = Anything()
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return {"any": "thing"}, {}

    def step(self, action):
        return {"any": int(action)}, 1.0, False, False, {}


def nested_anything_env() -> gymnasium.Env:
    env = AnythingEnv()
    box = gymnasium.spaces.Box(0, 1, (2,))
    env.observation_space = gymnasium.spaces.Dict({"box": box, "other": Anything()})
    return env


@pytest.mark.parametrize("env_fn", [AnythingEnv, nested_anything_env])
def test_a_custom_space_in_shared_memory_is_refused_before_any_worker_starts(env_fn):
    errors = []
    for cls in (AsyncVectorEnv, gymnasium.vector.AsyncVectorEnv):
        before = multiprocessing.active_children()
        with pytest.raises(ValueError, match="shared_memory=False") as caught:
            cls([env_fn] * 2, shared_memory=True)
        errors.append(caught.value)
        assert multiprocessing.active_children() == before
    for error in errors:
        assert isinstance(error.__cause__, CustomSpaceError)


def test_a_custom_space_goes_without_shared_memory():
    envs = AsyncVectorEnv([AnythingEnv] * 2, shared_memory=False)
    try:
        envs.reset(seed=SEED)
        obs = envs.step(np.array([0, 1]))[0]
    finally:
        envs.close()
    assert obs == ({"any": 0}, {"any": 1})


# 4. A sub-env's error is logged, then raised -------------------------------------------------
class RefusalError(ValueError):
    """What :class:`RefusingEnv` raises."""


class RefusingEnv(gymnasium.Wrapper):
    """CartPole that raises :class:`RefusalError` on ``reset(options={"refuse": True})``."""

    def __init__(self):
        super().__init__(gymnasium.make("CartPole-v1"))

    def reset(self, *, seed=None, options=None):
        if options and options.get("refuse"):
            raise RefusalError("this sub-env refuses to reset")
        return super().reset(seed=seed)


FAILING_CALLS = {
    # where: (env_fn, the call that makes sub-env 1 raise, its error, its message)
    "step": (make_faulty_env, lambda envs: envs.step(np.array([0, RAISE, 1])), FaultError),
    "reset": (
        RefusingEnv,
        lambda envs: envs.reset(
            options={"refuse": True, "reset_mask": np.array([False, True, False])}
        ),
        RefusalError,
    ),
}


@pytest.mark.parametrize("where", list(FAILING_CALLS))
def test_a_sub_envs_error_is_logged_as_gymnasium_logs_it_then_raised(built, where):
    env_fn, call, error = FAILING_CALLS[where]
    ours, theirs = make_pair(built, "async", env_fn)
    for envs in (ours, theirs):
        envs.reset(seed=SEED)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(error) as raised:
                call(envs)
        log = "\n".join(str(warning.message) for warning in caught)
        assert "ERROR:" in log
        assert "Worker-1" in log
        assert "Traceback (most recent call last)" in log
        assert f"{error.__name__}: {raised.value.args[0]}" in log
        # The worker's own traceback: the line in the sub-env that raised.
        assert "test_gymnasium_compat.py" in log or "vector_faulty_env.py" in log
    ours.reset(seed=SEED)  # ours stays usable


def test_sync_vector_envs_raise_without_logging(built):
    ours, theirs = make_pair(built, "sync", make_faulty_env)
    for envs in (ours, theirs):
        envs.reset(seed=SEED)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(FaultError):
                envs.step(np.array([0, RAISE, 1]))
        assert caught == []


# 5. Actions outside the action space ---------------------------------------------------------
OUT_OF_SPACE = {
    "too-big": np.array([10, 11, 2]),
    "negative": np.array([-1, 0, -3]),
    "floats": np.array([0.0, 1.0, 2.0]),
    "list": [12, -2, 1],
}


@pytest.mark.parametrize("flavour", list(PAIRS))
def test_user_envs_get_actions_outside_the_space_as_gymnasium_hands_them_on(built, flavour):
    # FaultyEnv takes any number as an action (Discrete(10) says otherwise).
    ours, theirs = make_pair(built, flavour, make_faulty_env)
    assert_same(ours.reset(seed=SEED), theirs.reset(seed=SEED), "reset")
    for name, actions in OUT_OF_SPACE.items():
        got, want = ours.step(actions), theirs.step(actions)
        assert_same(got, want, name)


WRONG_LENGTH = {
    "array-too-long": (np.zeros(N + 1, np.int64), r"expected an array of shape \(3,\)"),
    "array-too-short": (np.zeros(N - 1, np.int64), r"got shape \(2,\)"),
    "list-too-short": ([0, 1], "expected 3 actions"),
}


@pytest.mark.parametrize("case", list(WRONG_LENGTH))
@pytest.mark.parametrize("flavour", ["sync", "async", "make_vec"])
def test_a_batch_of_the_wrong_length_is_refused_for_every_env(built, flavour, case):
    if flavour == "make_vec":
        envs = plangym.make_vec("CartPole-v1", num_envs=N, vectorization_mode="async")
        built.append(envs)
    else:
        envs = make_pair(built, flavour)[0]
    envs.reset(seed=SEED)
    actions, match = WRONG_LENGTH[case]
    with pytest.raises(ValueError, match=match):
        envs.step(actions)
    envs.step(np.zeros(N, np.int64))  # nothing was sent: the env steps on


@pytest.mark.parametrize("action", [0, np.int64(1)], ids=["int", "numpy-int"])
@pytest.mark.parametrize("flavour", list(PAIRS))
def test_a_single_action_for_a_batch_is_gymnasiums_type_error(built, flavour, action):
    ours, theirs = make_pair(built, flavour)
    ours.reset(seed=SEED)
    theirs.reset(seed=SEED)
    with pytest.raises(TypeError):
        theirs.step(action)
    with pytest.raises(TypeError, match=r"actions: expected a batch of 3 actions of Discrete\(2\)"):
        ours.step(action)
    ours.step(np.zeros(N, np.int64))  # nothing was sent: the env steps on


ACROBOT = functools.partial(make_gym_env, "Acrobot-v1")  # other spaces than CartPole's


class CountedCartPole(gymnasium.Wrapper):
    """CartPole that counts, in this process, the envs built and closed."""

    built = closed = 0

    def __init__(self):
        super().__init__(CARTPOLE())
        CountedCartPole.built += 1

    def close(self):
        CountedCartPole.closed += 1
        super().close()


@pytest.mark.parametrize("flavour", list(PAIRS))
def test_observation_mode_different_closes_every_env_it_builds(flavour):
    """Reading each sub-env's space must not leave envs open in the caller (the sync face
    built N - 1 more envs for it and never closed them)."""
    ours_class, _ = PAIRS[flavour]
    CountedCartPole.built = CountedCartPole.closed = 0
    envs = ours_class([CountedCartPole] * N, observation_mode="different")
    try:
        assert envs.single_observation_space == CARTPOLE().observation_space
        in_caller = N if flavour == "sync" else 0  # the sync sub-envs; async ones are away
        assert CountedCartPole.built - CountedCartPole.closed == in_caller
        assert flavour != "sync" or CountedCartPole.built == N  # as gymnasium's: no extra
    finally:
        envs.close()
    assert CountedCartPole.built == CountedCartPole.closed


@pytest.mark.parametrize("flavour", list(PAIRS))
def test_sub_envs_with_other_spaces_are_refused_naming_both(flavour):
    ours_class, their_class = PAIRS[flavour]
    # gymnasium < 1.2's SyncVectorEnv asserts instead: ours raises as gymnasium 1.4 does.
    with pytest.raises((RuntimeError, AssertionError), match="observation_mode='different'"):
        their_class([CARTPOLE, ACROBOT])
    message = (  # gymnasium's words, with the sub-env's index
        r"observation spaces are not equivalent\. single_observation_space=Box\(.*\(4,\), "
        r"float32\), sub-environment observation_space=Box\(.*\(6,\), float32\) \(sub-env 1\)"
        r"\. If this is intentional, use `observation_mode='different'` instead\."
    )
    with pytest.raises(RuntimeError, match=message):
        ours_class([CARTPOLE, ACROBOT])
    if flavour == "sync":  # a lambda: this process only
        three_actions = lambda: gymnasium.wrappers.TransformAction(  # noqa: E731
            CARTPOLE(), lambda action: action % 2, gymnasium.spaces.Discrete(3)
        )
        with pytest.raises(
            RuntimeError,
            match=r"action_space=Discrete\(3\) \(sub-env 1\), single_action_space=Discrete\(2\)",
        ):
            ours_class([CARTPOLE, three_actions])


PLANGYM_REFUSES = {
    "too-big": (np.array([0, 2, 1]), ValueError, r"actions\[1\]: expected an integer in \[0, 2\)"),
    "negative": (np.array([0, 1, -1]), ValueError, r"actions\[2\]: .* received -1"),
    "floats": (np.array([0.0, 1.0, 1.0]), TypeError, r"actions\[0\]: expected an integer"),
    "row-shape": (np.zeros((N, 1), np.int64), ValueError, r"expected an array of shape \(3,\)"),
}


@pytest.mark.parametrize("case", list(PLANGYM_REFUSES))
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_plangym_envs_refuse_actions_outside_the_space_before_any_step(built, mode, case):
    envs = plangym.make_vec("CartPole-v1", num_envs=N, vectorization_mode=mode)
    built.append(envs)
    envs.reset(seed=SEED)
    before = [state.tobytes() for state in envs.get_states()]
    actions, error, match = PLANGYM_REFUSES[case]
    with pytest.raises(error, match=match):
        envs.step(actions)
    assert [state.tobytes() for state in envs.get_states()] == before


# 6. make_vec's first parameter, and the plangym env's attributes ------------------------------
@pytest.mark.parametrize(
    "call",
    [
        lambda: plangym.make_vec(id="CartPole-v1", num_envs=2, vectorization_mode="sync"),
        lambda: plangym.make_vec(name="CartPole-v1", num_envs=2, vectorization_mode="sync"),
        lambda: plangym.make_vec("CartPole-v1", 2, "sync"),
        lambda: gymnasium.make_vec(id="CartPole-v1", num_envs=2, vectorization_mode="sync"),
    ],
    ids=["id", "name", "positional", "gymnasium"],
)
def test_make_vec_takes_the_id_as_gymnasium_names_it(built, call):
    envs = call()
    built.append(envs)
    assert envs.num_envs == 2
    assert envs.reset(seed=SEED)[0].shape == (2, 4)


def test_make_vec_refuses_two_different_names():
    with pytest.raises(ValueError, match="id, name: expected one environment name"):
        plangym.make_vec(id="CartPole-v1", name="Pendulum-v1", num_envs=1)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_plangym_envs_attributes_are_reachable(built, mode):
    envs = plangym.make_vec(id="CartPole-v1", num_envs=2, vectorization_mode=mode)
    built.append(envs)
    assert envs.get_attr("frameskip") == (1, 1)
    assert envs.get_attr("name") == ("CartPole-v1", "CartPole-v1")
    envs.set_attr("frameskip", [2, 3])
    assert envs.get_attr("frameskip") == (2, 3)
    assert envs.call("get_state")[0].dtype == envs.get_states()[0].dtype
    assert envs.get_attr("action_space") == (envs.single_action_space,) * 2  # the face's own
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        envs.get_attr("no_such_thing")
    envs.set_attr("a_new_one", 5)  # as gymnasium: set on the sub-env itself
    assert envs.get_attr("a_new_one") == (5, 5)


# 7. make_vec's dynamics are gymnasium's ------------------------------------------------------
def test_make_vec_follows_the_ids_registered_kwargs(built):
    registered = gymnasium.spec("ALE/MsPacman-v5").kwargs
    envs = plangym.make_vec("ALE/MsPacman-v5", num_envs=1, vectorization_mode="sync")
    built.append(envs)
    assert envs.get_attr("frameskip") == (registered["frameskip"],) == (4,)
    assert envs.get_attr("repeat_action_probability") == (registered["repeat_action_probability"],)
    assert envs.get_attr("repeat_action_probability") == (0.25,)


def test_make_vec_kwargs_win_over_the_registered_ones(built):
    envs = plangym.make_vec(
        "ALE/MsPacman-v5", 1, "sync", frameskip=2, repeat_action_probability=0.0
    )
    built.append(envs)
    assert envs.get_attr("frameskip") == (2,)
    assert envs.get_attr("repeat_action_probability") == (0.0,)


CLASSIC = ["CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0"]


@pytest.mark.parametrize("name", CLASSIC)
def test_make_vec_is_bit_identical_to_gymnasiums_from_the_first_seeded_reset(built, name):
    ours = plangym.make_vec(name, num_envs=N, vectorization_mode="async")
    theirs = gymnasium.make_vec(name, num_envs=N, vectorization_mode="async")
    built.extend([ours, theirs])
    theirs.action_space.seed(SEED)
    assert_same(ours.reset(seed=SEED), theirs.reset(seed=SEED), "reset")
    ended = 0
    for step in range(200):
        actions = theirs.action_space.sample()
        got, want = ours.step(actions), theirs.step(actions)
        assert_same(got, want, f"step {step}")
        ended += int(np.sum(got[2] | got[3]))
    if name == "CartPole-v1":  # its episodes end within the run: autoresets draw alike too
        assert ended > 0


# gymnasium's constructor arguments --------------------------------------------------------------
class SlowStepEnv(gymnasium.Wrapper):
    """CartPole whose steps take a while and report when they ran (a system-wide clock)."""

    def step(self, action):
        started = time.monotonic()
        time.sleep(0.05)
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "ran": (started, time.monotonic())}


def slow_cartpole() -> gymnasium.Env:
    return SlowStepEnv(gymnasium.make("CartPole-v1"))


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of ``intervals`` that overlap at one moment."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


@pytest.mark.parametrize("limit", [None, 1, 2])
def test_max_concurrency_limits_the_sub_envs_stepping_at_once(built, limit):
    ours = AsyncVectorEnv([slow_cartpole] * 4, max_concurrency=limit)
    built.append(ours)
    theirs = gymnasium.vector.SyncVectorEnv([slow_cartpole] * 4)
    built.append(theirs)
    ours.reset(seed=SEED), theirs.reset(seed=SEED)
    intervals = []
    for actions in ([0, 1, 1, 0], [1, 1, 0, 0]):
        *results, infos = ours.step(np.array(actions))
        *expected, _ = theirs.step(np.array(actions))
        assert_same(results, expected)
        intervals += [tuple(ran) for ran in infos["ran"]]
    peak = most_at_once(intervals[:4]), most_at_once(intervals[4:])
    assert max(peak) <= (limit or 4)
    if limit is None:
        assert max(peak) > 2  # unlimited, the four sub-envs did run side by side


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", True])
def test_max_concurrency_must_be_a_positive_integer(value):
    with pytest.raises(ValueError, match="max_concurrency: expected None or an integer >= 1"):
        AsyncVectorEnv([CARTPOLE] * 2, max_concurrency=value)


def test_a_custom_worker_function_is_refused_before_any_worker_starts():
    before = multiprocessing.active_children()
    with pytest.raises(ValueError, match="worker: expected None"):
        AsyncVectorEnv([CARTPOLE] * 2, worker=lambda *args: None)
    assert multiprocessing.active_children() == before


def test_the_constructor_takes_gymnasiums_arguments_in_gymnasiums_order(built):
    ours = AsyncVectorEnv([CARTPOLE] * 2, True, True, None, True, None, "same", "SameStep", 1)
    built.append(ours)
    assert ours.autoreset_mode is gymnasium.vector.AutoresetMode.SAME_STEP
    assert ours.max_concurrency == 1 and ours.worker is None


# make_vec's arguments, as gymnasium's ----------------------------------------------------------
def test_make_vec_takes_gymnasiums_arguments_in_gymnasiums_order(built):
    ours = plangym.make_vec(
        "CartPole-v1", 2, gymnasium.VectorizeMode.SYNC, {"autoreset_mode": "SameStep"}, None
    )
    built.append(ours)
    theirs = gymnasium.make_vec("CartPole-v1", 2, "sync", {"autoreset_mode": "SameStep"}, None)
    built.append(theirs)
    assert isinstance(ours, SyncVectorEnv)
    assert ours.autoreset_mode is theirs.autoreset_mode is gymnasium.vector.AutoresetMode.SAME_STEP


def test_make_vec_steps_in_this_process_by_default_as_gymnasium_does(built):
    # A task with kernels gets its vector entry point, as gymnasium's rule for a registered
    # one; with wrappers (which that mode does not take), the sync mode.
    from plangym.control.classic_control.vector_env import ClassicVectorEnv

    envs = plangym.make_vec("Pendulum-v1", 2)
    wrapped = plangym.make_vec("Pendulum-v1", 2, wrappers=[gymnasium.wrappers.ClipAction])
    built.extend([envs, wrapped])
    assert isinstance(envs, ClassicVectorEnv)
    assert isinstance(wrapped, SyncVectorEnv)


def test_make_vec_refuses_two_different_autoreset_modes():
    with pytest.raises(ValueError, match="autoreset_mode: given twice"):
        plangym.make_vec(
            "CartPole-v1", 1, "sync", {"autoreset_mode": "SameStep"}, autoreset_mode="NextStep"
        )


def test_make_vec_takes_an_env_spec_with_its_kwargs(built):
    registered = gymnasium.spec("ALE/Pong-v5")  # frameskip 4, sticky actions 0.25
    spec = dataclasses.replace(registered, kwargs={**registered.kwargs, "frameskip": 2})
    envs = plangym.make_vec(spec, 1, "sync")
    built.append(envs)
    assert envs.get_attr("frameskip") == (2,)
    assert envs.get_attr("repeat_action_probability") == (0.25,)


def test_make_vec_wraps_each_sub_env_and_keeps_its_states(built):
    double = functools.partial(
        gymnasium.wrappers.TransformObservation, func=lambda obs: 2 * obs, observation_space=None
    )
    plain = plangym.make_vec("CartPole-v1", 2, "async")
    built.append(plain)
    wrapped = plangym.make_vec("CartPole-v1", 2, "async", wrappers=[double])
    built.append(wrapped)
    obs, _ = wrapped.reset(seed=SEED)
    expected, _ = plain.reset(seed=SEED)
    assert np.array_equal(obs, 2 * expected)
    states = wrapped.get_states()
    wrapped.step(np.array([0, 1]))
    wrapped.set_states(states)
    plain.set_states(states)
    assert np.array_equal(wrapped.step(np.array([1, 1]))[0], 2 * plain.step(np.array([1, 1]))[0])


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_attributes_of_the_gymnasium_env_are_read_and_set_as_on_gymnasiums(built, mode):
    # CartPole's physics constants live on gymnasium's env, under the plangym env.
    ours = plangym.make_vec("CartPole-v1", 2, mode)
    theirs = gymnasium.make_vec("CartPole-v1", 2, mode)
    built.extend([ours, theirs])
    assert ours.get_attr("force_mag") == theirs.get_attr("force_mag") == (10.0, 10.0)
    for envs in (ours, theirs):
        envs.set_attr("force_mag", [30.0, 5.0])
        envs.reset(seed=SEED)
    assert ours.get_attr("force_mag") == (30.0, 5.0)
    for t in range(40):  # the new forces push the carts as gymnasium's
        action = np.array([t % 2, 1])
        assert_same(ours.step(action), theirs.step(action), f"step {t}")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_sub_envs_spec_is_the_ids_so_wrappers_find_its_time_limit(built, mode):
    wrappers = [gymnasium.wrappers.TimeAwareObservation]
    ours = plangym.make_vec("CartPole-v1", 2, mode, wrappers=wrappers)
    theirs = gymnasium.make_vec("CartPole-v1", 2, mode, wrappers=wrappers)
    built.extend([ours, theirs])
    spec = ours.get_attr("spec")[0]
    assert (spec.id, spec.max_episode_steps) == ("CartPole-v1", 500)
    assert ours.single_observation_space == theirs.single_observation_space  # time appended
    assert_same(ours.reset(seed=SEED), theirs.reset(seed=SEED), "reset")
    for t in range(60):
        action = np.array([t % 2, (t // 3) % 2])
        assert_same(ours.step(action), theirs.step(action), f"step {t}")
    unlimited = plangym.make_vec("CartPole-v1", 1, "sync", remove_time_limit=True)
    built.append(unlimited)
    assert unlimited.get_attr("spec")[0].max_episode_steps is None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_episode_steps_truncates_and_reaches_the_spec_as_on_gymnasiums(built, mode):
    wrappers = [functools.partial(gymnasium.wrappers.TimeAwareObservation, normalize_time=True)]
    kwargs = {"max_episode_steps": 50, "wrappers": wrappers}
    ours = plangym.make_vec("Pendulum-v1", 2, mode, **kwargs)
    theirs = gymnasium.make_vec("Pendulum-v1", 2, mode, **kwargs)
    built.extend([ours, theirs])
    assert ours.get_attr("spec")[0].max_episode_steps == 50
    assert_same(ours.reset(seed=SEED), theirs.reset(seed=SEED), "reset")
    for t in range(60):  # a truncation at 50 and an autoreset
        action = np.full((2, 1), 0.5 - t % 3 / 2, np.float32)
        assert_same(ours.step(action), theirs.step(action), f"step {t}")


def test_max_episode_steps_truncates_atari_as_on_gymnasiums(built):
    kwargs = {"max_episode_steps": 10, "repeat_action_probability": 0.0}
    ours = plangym.make_vec("ALE/Pong-v5", 2, "sync", **kwargs)
    theirs = gymnasium.make_vec("ALE/Pong-v5", 2, "sync", **kwargs)
    built.extend([ours, theirs])
    ours.reset(seed=SEED)
    theirs.reset(seed=SEED)
    truncated_at = []
    for t in range(12):  # a truncation at step 10 and an autoreset
        action = np.array([t % 6, 1])
        ours_step, their_step = ours.step(action), theirs.step(action)
        assert_same(ours_step[:4], their_step[:4], f"step {t}")
        truncated_at += [t + 1] if ours_step[3].all() else []
    assert truncated_at == [10]


def test_make_vec_refuses_a_wrapper_that_is_not_callable():
    with pytest.raises(TypeError, match=r"wrappers\[1\]: expected a callable"):
        plangym.make_vec("CartPole-v1", 1, "sync", wrappers=[lambda env: env, "double"])


@pytest.mark.parametrize("flavour", PAIRS)
def test_a_reset_mask_leaves_the_callers_options_as_gymnasiums_envs_leave_them(built, flavour):
    # gymnasium's envs pop the mask from the dict they are given, and its
    # RecordEpisodeStatistics reads that dict after the reset: the statistics (and the
    # "_episode" flags a loop logs after resetting) differed while plangym copied the dict.
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    logs = []
    for vector_env in make_pair(
        built, flavour, autoreset_mode=gymnasium.vector.AutoresetMode.DISABLED
    ):
        envs = RecordEpisodeStatistics(vector_env)
        envs.reset(seed=7)
        rng, log = np.random.default_rng(0), []
        for _ in range(40):
            *_, terminations, truncations, infos = envs.step(rng.integers(2, size=N))
            done = terminations | truncations
            if done.any():
                options = {"reset_mask": done}
                envs.reset(options=options)
                log.append((options, infos["_episode"].tolist(), infos["episode"]["r"].tolist()))
        logs.append(log)
    assert len(logs[0]) > 2 and logs[0] == logs[1]
    assert logs[0][0][0] == {}


@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1", "ALE/Pong-v5"])
def test_gymnasiums_env_checker_passes_on_a_sub_env(built, name):
    # check_env reads the generator's field itself: it was None on every sub-env but
    # dm_control's, and the seed checks failed at once.
    from gymnasium.utils.env_checker import check_env

    envs = plangym.make_vec(name, 1, "sync")
    built.append(envs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's own remarks on infinite bounds
        check_env(envs.envs[0], skip_render_check=True)
