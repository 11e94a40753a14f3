"""ClassicControl: what the states hold, rendering observations, continuous actions."""

import threading
import warnings

import gymnasium
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.columns import states_to_records
from plangym.control import ClassicControl
from plangym.control.classic_control.state import FEW_STATES


def test_state_records_everything_that_decides_the_future():
    env = ClassicControl("CartPole-v1", remove_time_limit=False)
    env.seed(5)
    env.reset()
    for _ in range(7):
        env.step(0)
    state = env.get_state()
    unwrapped = env.gym_env.unwrapped
    assert np.array_equal(state["physics"], unwrapped.state)
    assert state["elapsed_steps"] == 7
    assert state["steps_beyond_terminated"] == -1
    words = state["rng"]
    generator_state = unwrapped.np_random.bit_generator.state["state"]["state"]
    assert (int(words[0]) << 64) | int(words[1]) == generator_state


def test_time_limit_counter_is_restored():
    env = ClassicControl("Pendulum-v1", remove_time_limit=False)
    env.reset()
    for _ in range(198):
        env.step(env.sample_action())
    near_limit = env.get_state()
    env.reset()
    env.set_state(near_limit)
    *_, truncated, _ = env.step(np.zeros(1, dtype=np.float32))
    assert not truncated
    *_, truncated, info = env.step(np.zeros(1, dtype=np.float32))
    assert truncated and info["n_step"] == 1


def test_steps_beyond_terminated_is_restored():
    env = ClassicControl("CartPole-v1", autoreset=False)
    env.reset()
    terminal = False
    while not terminal:
        *_, terminal, _, _ = env.step(1)
    env.step(1)
    after_end = env.get_state()
    assert after_end["steps_beyond_terminated"] == 1
    env.reset()
    env.set_state(after_end)
    assert env.gym_env.unwrapped.steps_beyond_terminated == 1


def terminal_cartpole_state(env: ClassicControl) -> np.ndarray:
    """The state a CartPole episode ends in (steps_beyond_terminated == 0)."""
    state, *_ = env.reset()
    while True:
        state, _, _, terminal, *_ = env.step(1, state=state)
        if terminal:
            return state


def raw_step_past_the_end(state: np.ndarray, dt: int) -> tuple[np.ndarray, float, int]:
    """gymnasium's own CartPole stepped ``dt`` times on from ``state`` (its warning ignored)."""
    raw = gymnasium.make("CartPole-v1").unwrapped
    raw.reset()
    raw.state = state["physics"].copy()
    raw.steps_beyond_terminated = int(state["steps_beyond_terminated"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(dt):
            obs, reward, *_ = raw.step(0)
    return obs, reward, raw.steps_beyond_terminated


@pytest.mark.parametrize("size", [1, 40])  # one packed state, and the column path
def test_stepping_past_the_end_is_exact_and_quiet(size):
    """Planners expand terminal leaves: CartPole's "already returned terminated" warning
    stays out of step and step_batch, and the step is gymnasium's own."""
    env = ClassicControl("CartPole-v1", autoreset=False)
    state = terminal_cartpole_state(env)
    assert state["steps_beyond_terminated"] == 0
    obs, reward, steps_beyond = raw_step_past_the_end(state, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        new_state, new_obs, new_reward, terminal, *_ = env.step(0, state=state)
        states, observs, rewards, terminals, *_ = env.step_batch([0] * size, [state] * size)
    assert (new_obs == obs).all() and new_reward == reward == 0.0 and terminal
    assert new_state["steps_beyond_terminated"] == steps_beyond == 1
    assert all(bool(s == new_state) for s in states) and all(terminals)


def test_a_step_from_the_end_that_ends_the_episode_no_more_is_gymnasiums():
    """A pole past its limit may swing back: the step is not terminal, and CartPole's
    counter stays 0 (plangym steps with it past the warning, then sets gymnasium's value)."""
    env = ClassicControl("CartPole-v1", autoreset=False)
    state = terminal_cartpole_state(env).copy()
    state["physics"] = [0.0, 0.0, 0.21, -1.0]  # 0.21 rad is past the 0.2095 rad limit
    obs, reward, steps_beyond = raw_step_past_the_end(state, 1)
    new_state, new_obs, new_reward, terminal, *_ = env.step(0, state=state)
    assert not terminal and new_reward == reward == 1.0 and (new_obs == obs).all()
    assert new_state["steps_beyond_terminated"] == steps_beyond == 0


class NeverTerminated(gymnasium.Wrapper):
    def step(self, action):
        obs, reward, _, truncated, info = self.env.step(action)
        return obs, reward, False, truncated, info


class TwiceAStep(gymnasium.Wrapper):
    def step(self, action):
        self.env.step(action)
        return self.env.step(action)


@pytest.mark.parametrize(
    ("wrapper", "seed", "action"),
    # TwiceAStep ending its step right at the end (seed 0, action 1) makes its next step
    # start past it: 0, 2, 4... where an off-by-one gave 0, 1, 3...
    [(NeverTerminated, 5, 0), (TwiceAStep, 5, 0), (TwiceAStep, 0, 1)],
)
def test_past_the_end_under_a_wrapper_counts_as_gymnasium_does(wrapper, seed, action):
    """The counter is CartPole's, not the wrapper's flag: 1, 2, 3... past the end (2, 4,
    6... when the wrapper steps twice)."""
    env = plangym.make("CartPole-v1", wrappers=[wrapper], autoreset=False)
    reference = wrapper(gymnasium.make("CartPole-v1").unwrapped)
    state, *_ = env.reset(seed=seed)
    reference.reset(seed=seed)
    counted, reference_counted = [], []
    for _ in range(40):
        state, *_ = env.step(action, state=state)
        counted.append(int(state["steps_beyond_terminated"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # gymnasium's own warning past the end
            reference.step(action)
        beyond = reference.unwrapped.steps_beyond_terminated
        reference_counted.append(-1 if beyond is None else beyond)
    assert counted == reference_counted and counted[-1] > 1


def test_acrobots_torque_noise_set_after_setup_is_in_the_states():
    """With torque_noise_max set, Acrobot's step draws from its generator: a state must hold
    the generator as it is then, and batches leave the kernel (which refuses the noise)."""
    env = plangym.make("Acrobot-v1")
    state, *_ = env.reset(seed=0)
    env.gym_env.unwrapped.torque_noise_max = 0.5  # as users do, at any time
    for _ in range(3):
        state, *_ = env.step(1, state=state)
    first = [env.step(1)[0] for _ in range(5)]
    env.set_state(state)
    assert all(np.array_equal(obs, env.step(1)[0]) for obs in first)
    batch = env.step_batch([1] * 8, [state] * 8)  # the kernel's min_batch
    single = [env.step(1, state=state) for _ in range(8)]
    assert_identical(batch, tuple(map(list, zip(*single, strict=True))))
    assert np.array_equal(batch[1][0], first[0])
    env.get_state()  # read while the noise is on
    env.step(1)  # draws
    env.gym_env.unwrapped.torque_noise_max = 0.0  # off again: nothing read before is current
    state = env.get_state()
    fresh = plangym.make("Acrobot-v1")
    fresh.reset(seed=1)
    fresh.set_state(state)
    assert_identical(env.reset(), fresh.reset())  # the next episode draws from the generator


def test_stepping_past_the_end_leaves_other_threads_warnings_alone():
    """Warning filters are the whole process's: silencing CartPole's warning with them
    dropped other threads' warnings (8,424 of 20,000 in a probe)."""
    env = ClassicControl("CartPole-v1", autoreset=False)
    state = terminal_cartpole_state(env)
    stop = threading.Event()

    def expand_leaves():
        while not stop.is_set():
            env.step(0, state=state)

    leaves = threading.Thread(target=expand_leaves)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        leaves.start()
        try:
            for index in range(20_000):
                warnings.warn(f"the user's warning {index}", UserWarning, stacklevel=1)
        finally:
            stop.set()
            leaves.join(60)
    assert len(caught) == 20_000


def test_workers_step_past_the_end_quietly(capfd):
    env = plangym.make("CartPole-v1", n_workers=2, autoreset=False, inline_small_batches=False)
    try:
        state = terminal_cartpole_state(env.plan_env)
        capfd.readouterr()
        _, _, rewards, terminals, *_ = env.step_batch([0, 1, 0, 1], [state] * 4, dt=2)
        assert rewards == [0.0] * 4 and all(terminals)
    finally:
        env.close()
    assert "already returned terminated" not in capfd.readouterr().err


def test_reset_after_restore_draws_from_the_restored_generator():
    env = ClassicControl("CartPole-v1")
    state, *_ = env.reset()
    first = env.reset(return_state=False)[0]
    env.set_state(state)
    assert_identical(env.reset(return_state=False)[0], first)


def test_float32_physics_stays_float32():
    """MountainCarContinuous steps in float32: a restored state must too."""
    env = ClassicControl("MountainCarContinuous-v0")
    env.reset()
    env.step(np.array([0.5], dtype=np.float32))
    state = env.get_state()
    env.reset()
    env.set_state(state)
    assert env.gym_env.unwrapped.state.dtype == np.float32


def test_plangym_01_physics_vectors_are_accepted():
    env = ClassicControl("CartPole-v1")
    env.reset()
    env.set_state(np.array([0.1, 0.0, 0.02, 0.0]))
    obs, *_ = env.step(0)
    assert obs.shape == (4,)
    assert env.gym_env.unwrapped.state[0] == pytest.approx(0.1, abs=1e-3)


@pytest.mark.parametrize(
    ("state", "error"),
    [(np.zeros(3), TypeError), (np.zeros(4, dtype=np.int64), TypeError), ([0, 0, 0, 0], TypeError)],
)
def test_wrong_states_are_rejected(state, error):
    env = ClassicControl("CartPole-v1")
    good, *_ = env.reset()
    with pytest.raises(error, match=r"state: expected a CartPole-v1 state .* shape \(4,\)"):
        env.step(0, state=state)
    pendulum_state = ClassicControl("Pendulum-v1").get_state()
    with pytest.raises(TypeError, match="state"):
        env.set_state(pendulum_state)
    assert_identical(env.get_state(), good)


@pytest.mark.parametrize(
    ("words", "message"),
    [([0] * 6, r"even increment \(0\)"), ([1, 2, 3, 5, 7, 1], "has_uint32=7")],
)
@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1", "FastLunarLander-v0"])
def test_corrupt_generator_words_are_refused_and_change_nothing(name, words, message):
    # Random bytes there raised numpy's bare OverflowError, zeros gave a generator no
    # get_state() records.
    env = plangym.make(name)
    good, *_ = env.reset(seed=2)
    bad = good.copy()
    bad["rng"] = words
    with pytest.raises(
        ValueError, match=rf"^state: expected a state from get_state\(\).*{message}"
    ):
        env.set_state(bad)
    assert_identical(env.get_state(), good)
    with pytest.raises(ValueError, match=message):
        env.step(env.sample_action(), state=bad)
    assert_identical(env.get_state(), good)
    env.close()


@pytest.mark.parametrize(
    ("action", "error", "message"),
    [
        (np.array([np.inf], dtype=np.float32), ValueError, "finite values"),
        (np.array([np.nan], dtype=np.float32), ValueError, "finite values"),
        (np.zeros(2, dtype=np.float32), TypeError, r"shape \(1,\)"),
        (0.5, TypeError, r"shape \(1,\)"),
        ("a", TypeError, r"shape \(1,\)"),
    ],
)
def test_continuous_actions_that_are_no_numbers_are_rejected(action, error, message):
    env = ClassicControl("Pendulum-v1")
    state, *_ = env.reset()
    with pytest.raises(error, match=f"action: expected .*{message}"):
        env.step(action, state=state)
    assert_identical(env.get_state(), state)


@pytest.mark.parametrize("obs_type", ["rgb", "grayscale"])
def test_image_observations(obs_type):
    env = ClassicControl("CartPole-v1", obs_type=obs_type)
    _, obs, _ = env.reset()
    expected = (400, 600, 3) if obs_type == "rgb" else (400, 600)
    assert obs.shape == expected == env.obs_shape
    obs, *_ = env.step(0)
    assert obs.dtype == np.uint8 and obs.shape == expected
    env.close()


def test_return_image_adds_pictures_that_follow_the_state():
    env = ClassicControl("Pendulum-v1", return_image=True)
    state, _, info = env.reset()
    assert info["rgb"].shape == (500, 500, 3)
    *_, info_a = env.step(np.array([2.0], dtype=np.float32), state=state, dt=5)
    *_, info_b = env.step(np.array([-2.0], dtype=np.float32), state=state, dt=5)
    assert not np.array_equal(info_a["rgb"], info_b["rgb"])
    env.close()


def test_images_need_an_rgb_render_mode():
    with pytest.raises(
        ValueError, match="render_mode: obs_type='rgb' requires render_mode='rgb_array'"
    ):
        ClassicControl("CartPole-v1", obs_type="rgb", render_mode=None)
    with pytest.raises(ValueError, match="return_image=True"):
        ClassicControl("CartPole-v1", return_image=True, render_mode=None)
    env = ClassicControl("CartPole-v1", render_mode=None)
    with pytest.raises(
        RuntimeError, match="get_image: Cannot get image when render_mode=None; create the env with"
    ):
        env.get_image()
    assert env.img_shape is None


@pytest.mark.parametrize("name", ["CartPole-v1", "LunarLander-v3"])
def test_get_image_in_human_mode_draws_the_window_and_returns_none(name, monkeypatch):
    """As in plangym 0.1 (it raised RuntimeError): 0.1 code refreshed windows with it."""
    if name.startswith("LunarLander"):
        pytest.importorskip("Box2D")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # a window without a display
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    env = plangym.make(name, render_mode="human")
    try:
        env.reset()
        env.step(env.sample_action())
        assert env.get_image() is None
    finally:
        env.close()


def test_seeds_decide_resets():
    first, second = plangym.make("Acrobot-v1"), plangym.make("Acrobot-v1")
    first.seed(11)
    second.seed(11)
    assert_identical(first.reset()[1], second.reset()[1])
    second.seed(12)
    assert not np.array_equal(first.reset()[1], second.reset()[1])


def test_early_termination_counts_the_steps_applied():
    env = ClassicControl("CartPole-v1", frameskip=4)
    state, *_ = env.reset()
    *_, terminal, _, info = env.step(1, state=state, dt=100)
    assert terminal
    assert 1 <= info["n_step"] < 400 and info["dt"] == 100


# Physics from which the next step terminates the episode; Pendulum never terminates.
TERMINATING_PHYSICS = {
    "CartPole-v0": [0.0, 0.0, 0.25, 0.0],  # the pole has fallen past 12 degrees
    "CartPole-v1": [0.0, 0.0, 0.25, 0.0],
    "MountainCar-v0": [0.49, 0.07],  # at the flag's edge, at full speed towards it
    "MountainCarContinuous-v0": [0.44, 0.07],
    "Acrobot-v1": [np.pi, 0.0, 0.0, 0.0],  # the tip straight up, above the line
}


def states_that_end_episodes(env: ClassicControl, name: str) -> list[np.ndarray]:
    """States from which the next step ends the episode, in every way ``env`` can end one."""
    state, *_ = env.reset()
    ends = []
    if name in TERMINATING_PHYSICS:
        terminating = state.copy()
        terminating["physics"] = TERMINATING_PHYSICS[name]
        ends.append(terminating)
    if not env.remove_time_limit:
        at_the_limit = state.copy()
        at_the_limit["elapsed_steps"] = gymnasium.spec(name).max_episode_steps - 1
        ends.append(at_the_limit)
    return ends


@pytest.mark.parametrize("name", plangym.environment_names.CLASSIC_CONTROL)
@pytest.mark.parametrize("remove_time_limit", [True, False])
def test_bulk_batches_equal_the_generic_path(name, remove_time_limit):
    """Plain classic-control batches skip per-step dispatch; results must not change, and
    episodes end (terminal, truncated, then autoreset) in them as in the generic path."""
    from plangym.core import PlanEnv

    env = ClassicControl(name, frameskip=2, remove_time_limit=remove_time_limit)
    assert env.batch_path in ("bulk", "kernel")
    env.seed(1)
    env.reset()
    states = []
    for _ in range(300):
        env.step(env.sample_action())  # autoreset starts a new episode after an end
        states.append(env.get_state())
    ends = states_that_end_episodes(env, name)
    states[7 - len(ends) : 7] = ends  # last in the small batch: the env is left reset
    actions = [env.sample_action() for _ in range(300)]
    dts = np.random.default_rng(0).integers(1, 5, size=300).tolist()
    for size in (7, 300):  # small batches pack each new state, large ones whole columns
        env.set_state(states[0])
        bulk = env.step_batch(actions[:size], states=states[:size], dt=dts[:size])
        left_by_bulk = env.get_state()
        env.set_state(states[0])
        generic = PlanEnv.run_batch_columns(env, actions[:size], states[:size], dts[:size], True)
        generic = generic.as_lists()
        assert_identical(bulk, generic)
        assert_identical(left_by_bulk, env.get_state())
        assert any(bulk[3]) == (name in TERMINATING_PHYSICS)
        assert any(bulk[4]) == (not remove_time_limit)
    # As a worker runs it: states as one record array, observations into a given buffer.
    env.set_state(states[0])
    records = states_to_records(states, env.state_dtype)
    observs_out = np.zeros((300, *env.obs_shape), env.observation_space.dtype)
    columns = env.run_batch_columns(actions, records, dts, True, observs_out)
    assert columns.observs is observs_out
    assert_identical(columns.as_lists(), generic)


def test_bulk_batches_give_the_env_its_action_space_back():
    env = ClassicControl("CartPole-v1")
    space = env.gym_env.unwrapped.action_space
    state, *_ = env.reset()
    env.step_batch([0, 1, 1], states=[state] * 3)
    assert env.gym_env.unwrapped.action_space is space
    with pytest.raises(ValueError, match="actions"):
        env.step_batch([0, 2], states=[state] * 2)  # checked before any step
    assert env.gym_env.unwrapped.action_space is space
    with pytest.raises(AssertionError, match="invalid"):
        env.gym_env.step(2)  # gymnasium's own check is back in place


def test_overridden_hooks_take_the_generic_path():
    class Doubled(ClassicControl):
        def process_reward(self, reward, **kwargs):
            return 2 * reward

    env = Doubled("CartPole-v1")
    assert env.batch_path == "generic"
    state, *_ = env.reset()
    assert env.step_batch([0, 1], states=[state, state])[2] == [2.0, 2.0]


@pytest.mark.parametrize(
    "method",
    [
        "_step_checked",
        "step_with_dt",
        "_underlying_step",
        "process_apply_action",
        "process_step",
        "apply_action",
        "get_state",
        "set_state",
        "reset",
        "apply_reset",
    ],
)
def test_subclasses_overriding_what_the_bulk_loop_replaces_take_the_generic_path(method):
    """The bulk loop skips these methods or calls them in a fixed way: a subclass that
    overrides one takes the generic path, where its override runs (here, in a batch whose
    steps end episodes, so that autoreset runs too)."""
    calls = []

    def override(self, *args, **kwargs):
        calls.append(method)
        return getattr(super(counting, self), method)(*args, **kwargs)

    counting = type("Counting", (ClassicControl,), {method: override})
    env = counting("CartPole-v1")
    assert env.batch_path == "generic"
    state = terminal_cartpole_state(env)  # stepping it ends the episode: autoreset runs
    calls.clear()
    states, _, rewards, terminals, *_ = env.step_batch([0, 1], states=[state, state])
    assert calls and all(terminals) and rewards == [0.0, 0.0]


@pytest.mark.parametrize("name", ["CartPole-v1", "MountainCarContinuous-v0", "Pendulum-v1"])
def test_state_columns_agree_with_single_states(name):
    """Batches read and write their states as columns of a record array; the records must
    be those that get_state returns and set_state restores one at a time."""
    env = ClassicControl(name, remove_time_limit=False, autoreset=False)
    env.seed(3)
    state, *_ = env.reset()  # Pendulum's last_u is None here, a torque afterwards
    states = [state]
    for _ in range(39):  # CartPole also runs past its end: steps_beyond_terminated 0, 1, ...
        env.step(env.sample_action())
        states.append(env.get_state())
    codec = env._codec
    records = states_to_records(states, env.state_dtype)
    for size in (FEW_STATES, len(records)):  # one state at a time, then whole columns
        columns = ([], [], [], [], [])
        for state, row in zip(states[:size], codec.rows(records[:size]), strict=True):
            codec.write(row)
            assert_identical(env.get_state(), state)
            codec.read_into(columns)
            action = env.sample_action()
            stepped = env.step(action)
            env.set_state(state)
            assert_identical(stepped, env.step(action))  # the env is as set_state leaves it
        assert codec.records(columns).tobytes() == records[:size].tobytes()
    if name == "CartPole-v1":
        assert {0, 1} <= set(records["steps_beyond_terminated"].tolist())
    if name == "Pendulum-v1":
        assert not records["has_last_u"][0] and records["has_last_u"][1:].all()


@pytest.mark.parametrize(
    ("name", "other"),
    [
        ("CartPole-v1", "Acrobot-v1"),
        ("MountainCar-v0", "MountainCarContinuous-v0"),
        ("CartPole-v1", "CartPole-v0"),
    ],
)
def test_a_state_of_another_task_is_refused_even_of_the_same_size(name, other):
    env, foreign = ClassicControl(name), ClassicControl(other)
    state, *_ = env.reset(seed=0)
    alien, *_ = foreign.reset(seed=0)
    assert alien["physics"].shape == state["physics"].shape
    action = env.sample_action()
    with pytest.raises(TypeError, match=f"state: expected a {name} state"):
        env.set_state(alien)
    with pytest.raises(TypeError, match=rf"states\[1\]: expected a {name} state"):
        env.step_batch([action] * 2, [state, alien])
    with pytest.raises(TypeError, match=f"expected a {name} state"):
        env.step_batch([action] * 20, [alien] * 20)  # the kernels' path
    assert_identical(env.get_state(), state)
    env.close()
    foreign.close()


@pytest.mark.parametrize("size", [4, 20])  # the bulk loop, then the kernel
def test_bare_physics_in_a_batch_take_the_rest_from_the_env_at_the_start(size):
    """plangym 0.1's states: the same batch gives the same results here and on workers."""
    kwargs = {"remove_time_limit": False}
    env = plangym.make("CartPole-v1", **kwargs)
    workers = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False, **kwargs)
    state, *_ = env.reset(seed=0)
    for action in (0, 1, 0, 1, 0):
        state = env.step(action, state=state)[0]  # elapsed_steps 5
    physics = [np.array(state["physics"])] * size
    env.set_state(state)
    workers.set_state(state)
    single = env.step_batch([1] * size, physics)
    assert [int(new["elapsed_steps"]) for new in single[0]] == [6] * size
    assert_identical(single, workers.step_batch([1] * size, physics))
    env.close()
    workers.close()


@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1"])
def test_states_export_their_bytes_as_other_states_do(name):
    """bytes(state) and memoryview work on one state and on a stack of them (an archive
    written to a file, a socket or shared memory), and the bytes read back exactly."""
    env = ClassicControl(name)
    state, *_ = env.reset(seed=0)
    archive = np.stack([state, env.step(env.sample_action(), return_state=True)[0]])
    assert bytes(state) == state.tobytes() and memoryview(archive).nbytes == archive.nbytes
    back = np.frombuffer(bytes(archive), dtype=env.state_dtype)
    actions = [env.sample_action()] * 2
    assert_identical(env.step_batch(actions, back), env.step_batch(actions, archive))
    env.close()


def test_a_step_checks_its_action_once_and_leaves_gymnasiums_space_in_place():
    """step checked the action: gymnasium's own assertion is skipped while it runs, and the
    env's space is back afterwards, also when the step raised or went through apply_action."""
    env = ClassicControl("CartPole-v1")
    state, *_ = env.reset(seed=0)
    space = env.gym_env.unwrapped.action_space
    calls = []

    class Seen(gymnasium.spaces.Discrete):
        def contains(self, action):
            calls.append(action)
            return super().contains(action)

    env.gym_env.unwrapped.action_space = seen = Seen(2)
    env.step(1, state=state)
    env.step_batch([0, 1], [state, state])
    assert calls == [] and env.gym_env.unwrapped.action_space is seen
    with pytest.raises(ValueError, match=r"^action: expected an integer in \[0, 2\)"):
        env.step(2, state=state)
    with pytest.raises(AssertionError):  # unchecked: gymnasium's assertion is there
        env.apply_action(2)
    assert calls == [2] and env.gym_env.unwrapped.action_space is seen
    env.gym_env.unwrapped.action_space = space
    env.close()
