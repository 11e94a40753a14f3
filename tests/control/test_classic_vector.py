"""The vector entry point of the classic control tasks, against gymnasium's and plangym's sync envs.

Every check steps real gymnasium envs side by side with ``ClassicVectorEnv`` and compares
each element bit for bit.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import plangym
from plangym.control.classic_control.vector_env import KERNEL_TASKS, ClassicVectorEnv
from plangym.vector import AsyncVectorEnv, SyncVectorEnv

MODES = list(AutoresetMode)
TASKS = ["CartPole-v0", "CartPole-v1", "Acrobot-v1", "MountainCar-v0"]
TASKS += ["MountainCarContinuous-v0", "Pendulum-v1"]
N = 3


@pytest.fixture
def built():
    envs: list = []
    yield envs
    for env in envs:
        env.close()


def trio(built, name, n=N, mode=AutoresetMode.NEXT_STEP):
    ours = plangym.make_vec(name, n, "vector_entry_point", autoreset_mode=mode)
    sync = plangym.make_vec(name, n, "sync", autoreset_mode=mode)
    gym = gymnasium.make_vec(name, n, "sync", vector_kwargs={"autoreset_mode": mode})
    built.extend([ours, sync, gym])
    return ours, sync, gym


def same(a, b, where=""):
    """Assert two step or reset results are equal, bit for bit, infos included."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (where, a.keys(), b.keys())
        for key in a:
            same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert b.dtype == object and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert (x is None) == (y is None), where
            if x is not None:
                same(np.asarray(x), np.asarray(y), f"{where}[{i}]")
    elif isinstance(a, tuple):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.tobytes() == np.asarray(b, a.dtype).tobytes(), (where, a, b)
        assert a.dtype == b.dtype or a.dtype.kind == b.dtype.kind == "f", (where, a.dtype, b.dtype)


def balancing(obs: np.ndarray) -> np.ndarray:
    """A CartPole controller that keeps the pole up (and so runs into the time limit)."""
    return (obs[:, 2] + 0.3 * obs[:, 3] + 0.01 * obs[:, 1] > 0).astype(np.int64)


def run(envs, name, mode, steps, seed=0):
    """Step the envs with the same actions; return how many episodes ended and truncated."""
    outputs = [env.reset(seed=seed) for env in envs]
    for out in outputs[1:]:
        same(outputs[0], out, "reset")
    space = envs[0].action_space
    space.seed(seed)
    ended = truncated = 0
    obs = outputs[0][0]
    for step in range(steps):
        controlled = name.startswith("CartPole") and step % 3
        actions = balancing(obs) if controlled else space.sample()
        outputs = [env.step(actions) for env in envs]
        for out in outputs[1:]:
            same(outputs[0], out, f"step {step}")
        obs, _, terms, truncs, _ = outputs[0]
        ended += int((terms | truncs).sum())
        truncated += int(truncs.sum())
        if mode is AutoresetMode.DISABLED and (terms | truncs).any():
            mask = terms | truncs
            outputs = [env.reset(options={"reset_mask": mask.copy()}) for env in envs]
            for out in outputs[1:]:
                same(outputs[0], out, f"masked reset {step}")
            obs = outputs[0][0]
    return ended, truncated


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("name", TASKS)
def test_bit_identical_to_gymnasium_and_the_sync_mode(built, name, mode):
    envs = trio(built, name, mode=mode)
    steps = gymnasium.spec(name).max_episode_steps + 20
    ended, truncated = run(envs, name, mode, steps)
    assert truncated > 0  # episodes ended at the time limit and restarted
    if name == "CartPole-v1":
        assert ended > truncated  # and some ended before
    same(envs[0].np_random_seed, envs[2].np_random_seed)
    assert list(envs[0].get_states()) == envs[1].get_states()


def test_cartpole_v1_truncates_at_500(built):
    ours, _, gym = trio(built, "CartPole-v1", n=2)
    obs, _ = ours.reset(seed=5)
    gym.reset(seed=5)
    for step in range(1, 501):
        actions = balancing(obs)
        result = ours.step(actions)
        same(result, gym.step(actions))
        obs, _, terms, truncs, _ = result
        assert truncs.any() == (step == 500)
    assert truncs.all() and not terms.any()
    assert (ours.get_states()["elapsed_steps"] == 500).all()


def test_reset_masks_and_seeds_follow_gymnasium(built):
    ours, sync, gym = trio(built, "CartPole-v1", n=4)
    for env in (ours, sync, gym):
        env.reset(seed=3)
    actions = np.array([0, 1, 1, 0])
    for _ in range(4):
        same(ours.step(actions), gym.step(actions))
        sync.step(actions)
    mask = np.array([True, False, True, False])
    seeds = [11, None, 12, None]
    results = [
        env.reset(seed=seeds, options={"reset_mask": mask.copy()}) for env in (ours, sync, gym)
    ]
    same(results[0], results[1])
    same(results[0], results[2])
    assert ours.np_random_seed[::2] == gym.np_random_seed[::2] == (11, 12)
    for _ in range(30):
        out = [env.step(actions) for env in (ours, sync, gym)]
        same(out[0], out[1])
        same(out[0], out[2])


def test_reset_bounds_options_as_gymnasium(built):
    # plangym's sync mode takes them too (it ignored them).
    for name, options in (
        ("Pendulum-v1", {"x_init": 0.5, "y_init": 0.25}),
        ("CartPole-v1", {"low": -0.2, "high": 0.2}),
    ):
        ours, sync, gym = trio(built, name)
        expected = gym.reset(seed=1, options=dict(options))
        same(ours.reset(seed=1, options=dict(options)), expected, name)
        same(sync.reset(seed=1, options=dict(options)), expected, f"{name} sync")


@pytest.mark.parametrize("name", TASKS)
def test_clone_and_restore(built, name):
    envs = plangym.make_vec(name, 5, "vector_entry_point")
    built.append(envs)
    envs.reset(seed=2)
    space = envs.action_space
    space.seed(0)
    for _ in range(30):
        envs.step(space.sample())
    states = envs.get_states()
    actions = [space.sample() for _ in range(40)]
    first = [envs.step(a) for a in actions]
    envs.set_states(states)
    again = [envs.step(a) for a in actions]
    for a, b in zip(first, again, strict=True):
        same(a, b)
    # A list of 0-d records and indices work too; the rows left out keep their states.
    after = envs.get_states()
    envs.set_states([states[4], states[0]], indices=[1, 3])
    now = envs.get_states()
    assert now[1] == states[4] and now[3] == states[0] and now[0] == after[0]


@pytest.mark.parametrize("name", ["CartPole-v1", "Pendulum-v1", "MountainCarContinuous-v0"])
def test_states_move_between_the_sync_mode_and_this_one(built, name):
    ours = plangym.make_vec(name, 2, "vector_entry_point", autoreset_mode="SameStep")
    sync = plangym.make_vec(name, 2, "sync", autoreset_mode="SameStep")
    built.extend([ours, sync])
    sync.reset(seed=4)
    space = sync.action_space
    space.seed(1)
    for _ in range(25):
        sync.step(space.sample())
    ours.set_states(sync.get_states())
    assert list(ours.get_states()) == sync.get_states()
    for _ in range(60):
        actions = space.sample()
        same(ours.step(actions), sync.step(actions))


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_a_sub_env_restored_after_its_episode_ended_steps_on_past_the_end(built, mode):
    """CartPole's rewards and steps_beyond_terminated past the end, as the per-env path."""
    ours = plangym.make_vec("CartPole-v1", 4, "vector_entry_point", autoreset_mode=mode)
    sync = plangym.make_vec("CartPole-v1", 4, "sync", autoreset_mode=mode)
    built.extend([ours, sync])
    source = plangym.make_vec("CartPole-v1", 4, "sync")  # NEXT_STEP: ended states are seen
    built.append(source)
    source.reset(seed=3)
    actions = np.ones(4, dtype=np.int64)  # pushing one way: the poles fall within steps
    for _ in range(100):
        _, _, terminated, _, _ = source.step(actions)
        if terminated.any():
            break
    states = source.get_states()  # 0-d records, some of episodes over
    assert any(state["steps_beyond_terminated"] >= 0 for state in states)
    ours.reset(seed=3)
    sync.reset(seed=3)
    for envs in (ours, sync):
        envs.set_states(states)

    def step_both(label):
        for step in range(40):
            out = ours.step(actions)
            same(out, sync.step(actions), f"{label}, step {step}")
            assert list(ours.get_states()) == sync.get_states()
            if mode is AutoresetMode.DISABLED and (out[2] | out[3]).any():
                return  # stepping an ended sub-env raises in this mode

    step_both("restored")
    ours.reset(seed=5)  # every sub-env reset: none is past its end any more
    sync.reset(seed=5)
    step_both("after reset")


@pytest.mark.parametrize("name", TASKS)
def test_step_batch_is_classic_controls(built, name):
    envs = plangym.make_vec(name, 2, "vector_entry_point")
    built.append(envs)
    envs.reset(seed=0)
    plan = plangym.make(name, autoreset=False, remove_time_limit=False)
    states = np.concatenate([envs.get_states()] * 20)
    space = envs.single_action_space
    space.seed(0)
    actions = np.stack([space.sample() for _ in range(len(states))])
    ours = envs.step_batch(actions, states, dt=2, arrays=True)
    theirs = plan.step_batch(actions, states, dt=2, return_state=True, arrays=True)
    same(ours, theirs)
    as_lists = envs.step_batch(list(actions), list(states))
    sync = plangym.make_vec(name, 2, "sync")
    built.append(sync)
    sync.reset(seed=0)
    expected = sync.step_batch(list(actions), list(states))
    assert [type(part) for part in as_lists] == [list] * 6
    same(
        tuple(np.asarray(part) for part in as_lists[1:5]),
        tuple(np.asarray(p) for p in expected[1:5]),
    )
    assert as_lists[0] == expected[0] and as_lists[5] == expected[5]


def test_frameskip_as_the_sync_mode(built):
    ours = plangym.make_vec("CartPole-v1", 3, "vector_entry_point", frameskip=3)
    sync = plangym.make_vec("CartPole-v1", 3, "sync", frameskip=3)
    built.extend([ours, sync])
    same(ours.reset(seed=9), sync.reset(seed=9))
    for step in range(60):
        actions = np.array([step % 2, 1, 0])
        same(ours.step(actions), sync.step(actions))


# Bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "actions", "message"),
    [
        ("CartPole-v1", np.array([0, 1]), "shape"),
        ("CartPole-v1", np.array([0, 1, 2]), "actions[2]: expected an integer in [0, 2)"),
        ("CartPole-v1", np.array([0.0, 1.0, 1.0]), "actions[0]: expected an integer"),
        ("Pendulum-v1", np.zeros((3, 2), np.float32), "shape"),
        ("Pendulum-v1", np.array([[0.0], [np.inf], [0.0]], np.float32), "finite"),
        ("Pendulum-v1", np.array([[0.0], [np.nan], [0.0]], np.float32), "finite"),
    ],
)
def test_bad_actions_are_refused_before_anything_steps(built, name, actions, message):
    envs = plangym.make_vec(name, 3, "vector_entry_point")
    built.append(envs)
    envs.reset(seed=0)
    before = envs.get_states()
    with pytest.raises((TypeError, ValueError), match="actions") as error:
        envs.step(actions)
    assert message in str(error.value)
    assert (envs.get_states() == before).all()


@pytest.mark.parametrize("action", [0, np.int64(1)], ids=["int", "numpy-int"])
def test_a_single_action_for_a_batch_is_a_type_error_as_in_the_other_modes(built, action):
    envs = plangym.make_vec("CartPole-v1", 3, "vector_entry_point")
    built.append(envs)
    envs.reset(seed=0)
    with pytest.raises(TypeError, match=r"actions: expected an array of shape \(3,\)"):
        envs.step(action)
    envs.step(np.zeros(3, np.int64))


def test_an_integer_action_is_its_value_whatever_its_dtype(built):
    # gymnasium's MountainCar computes action - 1: as a uint8, action 0 wrapped around to 255.
    single = plangym.make("MountainCar-v0")
    state, *_ = single.reset(seed=0)
    pushed = single.step(0, state=state)[1]
    assert (single.step(np.uint8(0), state=state)[1] == pushed).all()
    assert (single.step_batch(np.zeros(2, np.uint8), [state, state])[1][1] == pushed).all()
    single.close()
    for mode in ("vector_entry_point", "sync"):
        envs = plangym.make_vec("MountainCar-v0", 2, mode)
        built.append(envs)
        envs.set_states([state, state])
        assert (envs.step(np.zeros(2, np.uint8))[0] == pushed).all(), mode


def test_actions_and_states_are_taken_as_the_other_modes_take_them(built):
    pendulums = plangym.make_vec("Pendulum-v1", 2, "vector_entry_point")
    cartpoles = plangym.make_vec("CartPole-v1", 2, "vector_entry_point")
    built.extend([pendulums, cartpoles])
    pendulums.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: expected an array of shape \(2, 1\)"):
        pendulums.step(np.array([0.5, 0.5], np.float32))  # was a TypeError here only
    cartpoles.reset(seed=0)
    before = cartpoles.get_states()
    cartpoles.set_states([], indices=[])  # no sub-env: nothing changes
    assert (cartpoles.get_states() == before).all()
    stepped = cartpoles.step(action for action in (0, 1))  # gymnasium iterates a generator
    cartpoles.set_states(before)
    same(stepped, cartpoles.step(np.array([0, 1])), "generator")


def test_bad_states_are_refused_before_anything_changes(built):
    envs = plangym.make_vec("CartPole-v1", 2, "vector_entry_point")
    other = plangym.make_vec("Pendulum-v1", 2, "vector_entry_point")
    built.extend([envs, other])
    envs.reset(seed=0)
    other.reset(seed=0)
    before = envs.get_states()
    assert not before.flags.writeable  # read-only, as the other modes' states
    with pytest.raises(TypeError, match="states: expected a record array of CartPole-v1"):
        envs.set_states(other.get_states())
    with pytest.raises(TypeError, match="states"):
        envs.set_states([np.zeros(4), np.zeros(4)])
    with pytest.raises(ValueError, match="states: expected 1 states"):
        envs.set_states(before, indices=[0])
    with pytest.raises(ValueError, match="indices"):
        envs.set_states(before[:1], indices=[5])
    float32 = before.copy()
    float32["physics_kind"] = 1  # CartPole never holds a float32 state: no kernel steps it
    with pytest.raises(ValueError, match="physics_kind"):
        envs.set_states(float32)
    no_generator = before.copy()
    no_generator["rng"][1] = 0  # every reset of that sub-env would give one observation
    with pytest.raises(ValueError, match=r"^states\[1\]: .*even increment \(0\)"):
        envs.set_states(no_generator)
    with pytest.raises(ValueError, match=r"even increment \(0\)"):  # found as restored
        envs.step_batch(np.array([0, 1]), no_generator)
    assert (envs.get_states() == before).all()


def test_step_before_reset_and_after_close_raise(built):
    envs = plangym.make_vec("Acrobot-v1", 2, "vector_entry_point")
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.array([0, 1]))
    envs.close()
    with pytest.raises(RuntimeError, match="after a call to `close"):
        envs.reset()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError):  # as the other modes
        envs.step(np.array([0, 1]))


def test_disabled_mode_refuses_to_step_ended_envs(built):
    envs = plangym.make_vec("CartPole-v1", 2, "vector_entry_point", autoreset_mode="Disabled")
    built.append(envs)
    envs.reset(seed=0)
    for _ in range(200):
        *_, terms, truncs, _ = envs.step(np.array([1, 1]))
        if (terms | truncs).any():
            break
    with pytest.raises(RuntimeError, match="reset_mask"):
        envs.step(np.array([1, 1]))


# make_vec ---------------------------------------------------------------------------------------
def test_make_vec_uses_the_entry_point_by_default_for_tasks_with_kernels(built):
    for name in KERNEL_TASKS:
        envs = plangym.make_vec(name, 2)
        built.append(envs)
        assert isinstance(envs, ClassicVectorEnv), name
        assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    wrapped = plangym.make_vec(
        "CartPole-v1", 2, wrappers=[gymnasium.wrappers.RecordEpisodeStatistics]
    )
    built.append(wrapped)
    assert isinstance(wrapped, SyncVectorEnv)
    pictures = plangym.make_vec("Acrobot-v1", 2, obs_type="rgb")  # no kernel draws pictures
    built.append(pictures)
    assert isinstance(pictures, SyncVectorEnv)
    same_step = plangym.make_vec("CartPole-v1", 2, vector_kwargs={"autoreset_mode": "SameStep"})
    built.append(same_step)
    assert isinstance(same_step, ClassicVectorEnv)  # the entry point takes the mode
    for name in ("CartPole-v1", "ALE/Pong-v5"):  # keywords only AsyncVectorEnv takes
        unshared = plangym.make_vec(name, 2, vector_kwargs={"shared_memory": False})
        built.append(unshared)
        assert isinstance(unshared, AsyncVectorEnv) and not unshared.shared_memory


def test_make_vec_refuses_the_entry_point_where_there_is_none():
    with pytest.raises(ValueError, match="CartPole-v1, Acrobot-v1") as error:
        plangym.make_vec("ALE/Pong-v5", 1, "vector_entry_point")
    assert "'ALE/Pong-v5'" in str(error.value)
    with pytest.raises(ValueError, match="no wrappers"):
        plangym.make_vec("CartPole-v1", 1, "vector_entry_point", wrappers=[lambda env: env])
    with pytest.raises(ValueError, match="no kernel"):
        plangym.make_vec("Acrobot-v1", 1, "vector_entry_point", obs_type="rgb")


def test_render_and_spaces(built):
    envs = plangym.make_vec("CartPole-v1", 2, "vector_entry_point")
    theirs = gymnasium.make_vec("CartPole-v1", 2, "sync")
    built.extend([envs, theirs])
    assert envs.single_observation_space == theirs.single_observation_space
    assert envs.observation_space == theirs.observation_space
    assert envs.action_space == theirs.action_space
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 2 and frames[0].shape == (400, 600, 3)


def test_observations_returned_are_never_written_again(built):
    envs = plangym.make_vec("CartPole-v1", 4, "vector_entry_point", autoreset_mode="Disabled")
    built.append(envs)
    first, _ = envs.reset(seed=0)
    kept_first = first.copy()
    stepped = envs.step(np.array([0, 1, 0, 1]))[0]
    kept_stepped = stepped.copy()
    envs.reset(seed=5, options={"reset_mask": np.array([True, False, True, False])})
    envs.step(np.array([1, 1, 1, 1]))
    assert first.tobytes() == kept_first.tobytes()
    assert stepped.tobytes() == kept_stepped.tobytes()


@pytest.mark.parametrize("name", TASKS)
def test_a_masked_reset_observes_the_other_rows_from_their_states(built, name):
    """Neither the caller's edits of returned arrays nor set_states fool a masked reset."""
    ours, sync, gym = trio(built, name, n=4)
    actions = ours.action_space.sample()
    mask = np.array([True, False, True, False])
    for env in (ours, sync, gym):
        env.reset(seed=7)
        returned = env.step(actions)[0]
        returned -= 1.0  # what a caller normalising in place does
    results = [env.reset(options={"reset_mask": mask.copy()})[0] for env in (ours, sync, gym)]
    assert results[0][~mask].tobytes() == results[1][~mask].tobytes()
    assert results[0][~mask].tobytes() == results[2][~mask].tobytes()
    states = ours.get_states()  # rows 0 and 2 just reset, rows 1 and 3 stepped
    ours.step(actions)
    sync.set_states(list(states))
    ours.set_states(states)
    mask = np.array([False, True, False, True])
    restored = [env.reset(seed=9, options={"reset_mask": mask.copy()})[0] for env in (ours, sync)]
    assert restored[0].tobytes() == restored[1].tobytes()


def test_a_first_reset_must_reset_every_sub_env(built):
    envs = plangym.make_vec("CartPole-v1", 3, "vector_entry_point")
    built.append(envs)
    with pytest.raises(ValueError, match="first reset must reset every sub-env"):
        envs.reset(seed=0, options={"reset_mask": np.array([True, False, True])})
    envs.reset(seed=0)
    obs, _ = envs.reset(seed=1, options={"reset_mask": np.array([True, False, True])})
    assert obs.shape == (3, 4)


def test_threads_sharing_the_kernel_vector_env_get_whole_steps():
    """It had no lock: two threads stepping it got observations of no sequential run."""
    import threading

    n_steps, actions = 300, np.ones(8, dtype=np.int64)
    reference = plangym.make_vec("CartPole-v1", 8)
    reference.reset(seed=1)
    expected = [reference.step(actions)[0].tobytes() for _ in range(2 * n_steps)]
    envs = plangym.make_vec("CartPole-v1", 8)
    envs.reset(seed=1)
    seen: list[bytes] = []

    def play() -> None:
        for _ in range(n_steps):
            seen.append(envs.step(actions)[0].tobytes())

    threads = [threading.Thread(target=play) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == sorted(expected)
    assert np.array_equal(envs.get_states(), reference.get_states())
