"""Box2D states are immutable ReplayState objects (``STATE_IS_ARRAY = False``).

Real Box2D simulators throughout (no mocks): the contract plangym 0.1's suite checks, value
semantics, exact restores, transport through pickle, workers and make_vec, and errors.
"""

import copy
import pickle

import cloudpickle
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical, step_batch_tuple_test, step_tuple_test
from plangym.control.box_2d import Box2DEnv, ReplayState
from plangym.control.box_2d.replay_state import HEADER_BYTES

GAMES = ["LunarLander-v3", "BipedalWalker-v3", "CarRacing-v3"]


@pytest.fixture(params=GAMES, scope="module")
def env(request):
    env = plangym.make(request.param, autoreset=False)
    yield env
    env.close()


def walk(env, n: int, seed: int) -> list:
    """Step ``n`` seeded random actions from a seeded reset; return every step's result."""
    env.seed(seed)
    env.reset()
    env.action_space.seed(seed)
    return [env.step(env.sample_action(), return_state=True) for _ in range(n)]


def test_states_are_not_arrays(env):
    assert Box2DEnv.STATE_IS_ARRAY is False and env.STATE_IS_ARRAY is False
    state, *_ = env.reset()
    action = env.sample_action()
    returned = [
        state,
        env.get_state(),
        env.step(action, state=state)[0],
        *env.step_batch([action] * 2, states=[state] * 2)[0],
        *env.step_batch([action] * 2, states=[state] * 2, arrays=True)[0],
    ]
    for value in returned:
        assert isinstance(value, ReplayState) and not isinstance(value, np.ndarray)
    # What plangym 0.1's suite asks of an env whose states are not arrays.
    *_, obs, reward, terminal, _truncated, info = env.step(action, state=state, dt=2)
    step_tuple_test(env, obs, reward, terminal, info, dt=2)
    _, observs, rewards, terminals, _, infos = env.step_batch([action] * 3, states=[state] * 3)
    step_batch_tuple_test(env, 3, observs, rewards, terminals, infos, dt=1)


def test_restores_and_replays_match_the_live_run(env):
    n = 15 if env.name == "CarRacing-v3" else 60
    live = walk(env, n, seed=11)
    start = live[0][0]
    env.action_space.seed(11)
    actions = [env.sample_action() for _ in range(n)]
    env.step(actions[0], state=live[-1][0], dt=3)  # go elsewhere first
    env.set_state(start)
    assert_identical([env.step(a, return_state=True) for a in actions[1:]], live[1:])
    # every state along the way restores to the same point, in a clone too
    clone = env.clone()
    for i in (0, n // 2, n - 2):
        clone.set_state(live[i][0])
        assert clone.get_state() == live[i][0]
        assert_identical(clone.step(actions[i + 1], return_state=True), live[i + 1])
    clone.close()


def crash(env: Box2DEnv, seed: int) -> ReplayState:
    """Play seeded random actions from a seeded reset until the episode ends; its last state."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    state = env.get_state()
    terminal = truncated = False
    while not (terminal or truncated):
        state, _, _, terminal, truncated, _ = env.step(int(rng.integers(4)), state=state)
    return state


def test_stepping_on_from_an_ended_episode_steps_once_and_autoresets_exactly(monkeypatch):
    """An autoreset used to start over in the env holding the state it handed out.

    So each step from that state replayed its whole episode (about 100 steps here); the new
    episode now starts in another live env, drawing from the same generator.
    """
    from gymnasium.envs.box2d.lunar_lander import LunarLander

    env, fresh = Box2DEnv("LunarLander-v3"), Box2DEnv("LunarLander-v3")
    ended = crash(env, seed=3)
    assert ended.n_steps > 50
    stepped = []
    original_step = LunarLander.step

    def counted_step(self, action):
        stepped.append(action)
        return original_step(self, action)

    monkeypatch.setattr(LunarLander, "step", counted_step)
    state = ended
    for _ in range(10):
        state, *_, terminal, _, _ = env.step(0, state=state)
        assert terminal
    assert len(stepped) == 2 * 10  # the step, and the one LunarLander's reset takes
    monkeypatch.undo()
    # The episode an autoreset starts is the one a fresh env's autoreset starts.
    for other in (env, fresh):
        other.step(0, state=ended)
    assert other.get_state() == env.get_state()
    assert env.get_state().n_steps == 0
    env.close()
    fresh.close()


def test_value_semantics(env):
    states = [step[0] for step in walk(env, 6, seed=1)]
    state = states[-1]
    again = [step[0] for step in walk(env, 6, seed=1)]  # another tape, same bytes
    assert again[-1] == state and hash(again[-1]) == hash(state)
    assert again[-1].array.base is not state.array.base
    assert states[2] != state and states[2] != states[3]
    assert len({*states, *again}) == len(states)
    assert (state == state.array) is False and state != bytes(state)
    in_object_array = np.array([states[2], state, states[3]], dtype=object)
    assert in_object_array.shape == (3,)  # no __array__: NumPy keeps one object per state
    assert (in_object_array == state).tolist() == [False, True, False]
    assert copy.copy(state) is state and copy.deepcopy(state) is state
    assert state.copy() is state  # plangym 0.1's README saves states with state.copy()
    assert copy.deepcopy([state])[0] == state
    with pytest.raises(AttributeError, match="immutable"):
        state._data = np.zeros(3, dtype=np.uint8)
    with pytest.raises(ValueError, match="read-only"):
        state.array[0] = 1
    assert repr(state) == f"ReplayState({env.name!r}, n_steps=6, nbytes={state.nbytes})"
    assert state.n_steps == 6 and state.env_name == env.name
    assert state.nbytes == HEADER_BYTES + 6 * state.step_bytes == len(bytes(state))


def test_states_share_their_tape_and_pickle_only_their_bytes(env):
    steps = walk(env, 40, seed=2)
    early, late = steps[0][0], steps[-1][0]
    assert np.shares_memory(early.array, steps[5][0].array)  # get_state copied nothing
    action = env.sample_action()
    for dumps in (pickle.dumps, cloudpickle.dumps):
        for state in (early, late):
            blob = dumps(state)
            assert len(blob) < state.nbytes + 120, len(blob)
            restored = pickle.loads(blob)
            assert restored == state and type(restored) is ReplayState
            assert not restored.array.flags.writeable
            assert_identical(
                env.step(action, state=restored),
                env.step(action, state=state),
            )
    # a batch pickles the env's name once
    batch = [step[0] for step in steps]
    overhead = len(pickle.dumps(batch)) - sum(state.nbytes for state in batch)
    assert overhead < 40 * 20 + 100, overhead


def test_step_batch_equals_repeated_step(env):
    states = [step[0] for step in walk(env, 8, seed=3)]
    env.action_space.seed(4)
    actions = [env.sample_action() for _ in states]
    dts = [1, 2, 3, 1, 2, 3, 1, 2]
    batch = env.step_batch(actions, states=states, dt=dts)
    single = [env.step(a, state=s, dt=d) for a, s, d in zip(actions, states, dts, strict=True)]
    assert_identical(batch, tuple(list(column) for column in zip(*single, strict=True)))


@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_workers_and_make_vec_are_exact(backend, request):
    name = "LunarLander-v3"
    single = plangym.make(name, autoreset=False)
    kwargs = {"n_workers": 2, "inline_small_batches": False, "autoreset": False}
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        kwargs["ray"] = True
    parallel = plangym.make(name, **kwargs)
    mode = "ray" if backend == "ray" else "async"
    vec = plangym.make_vec(name, num_envs=2, vectorization_mode=mode)
    try:
        assert parallel.STATE_IS_ARRAY is False
        states = [step[0] for step in walk(single, 10, seed=5)]
        single.action_space.seed(6)
        actions = [single.sample_action() for _ in states]
        expected = single.step_batch(actions, states=states, dt=2)
        found = parallel.step_batch(actions, states=states, dt=2)
        assert_identical(found, expected)
        assert all(type(state) is ReplayState for state in found[0])
        assert_identical(
            parallel.step_batch(actions, states=found[0]),
            single.step_batch(actions, states=expected[0]),
        )
        assert_identical(vec.step_batch(actions, states, dt=2), expected)
        vec.set_states([states[3], states[7]])
        assert vec.get_states() == [states[3], states[7]]
        parallel.set_state(states[5])
        assert parallel.get_state() == states[5]
    finally:
        vec.close()
        parallel.close()
        single.close()


def test_bare_arrays_are_rejected_and_convert_explicitly():
    env = Box2DEnv("LunarLander-v3")
    state = env.step(2, state=env.reset()[0], dt=4)[0]
    raw = state.array.copy()
    message = (
        r"^state: expected a LunarLander-v3 state \(a ReplayState from get_state\(\): a "
        r"56-byte header, then 1 byte per step\), received ndarray\(shape=\(60,\), "
        r"dtype=uint8\) \(a bare replay array, the states of earlier plangym versions: "
        r"convert it with env.state_from_array\(array\)\)$"
    )
    with pytest.raises(TypeError, match=message):
        env.set_state(raw)
    converted = env.state_from_array(raw)
    assert converted == state and converted.array.base is not raw
    raw[-1] = 0  # the state owns its copy
    assert converted == state
    for bad, error, text in [
        (raw.astype(np.int16), TypeError, "as a 1-D uint8 array, received ndarray"),
        ([1, 2], TypeError, r"received \[1, 2\] \(list\)"),
        (raw[:50], ValueError, "not a header plus whole steps"),
        (Box2DEnv("BipedalWalker-v3").get_state().array, ValueError, "fingerprint differs"),
    ]:
        with pytest.raises(error, match=f"^array: expected .*{text}"):
            env.state_from_array(bad)


def test_the_constructor_checks_its_arguments():
    assert ReplayState(np.zeros(57, dtype=np.uint8), "Demo", 1) == ReplayState(bytes(57), "D", 1)
    with pytest.raises(TypeError, match=r"^data: expected bytes or a 1-D uint8 array"):
        ReplayState(np.zeros(57), "Demo", 1)
    with pytest.raises(TypeError, match=r"^data: expected bytes .*received 'x' \(str\)"):
        ReplayState("x", "Demo", 1)
    with pytest.raises(TypeError, match=r"^env_name: expected a str"):
        ReplayState(bytes(57), 3, 1)
    with pytest.raises(ValueError, match=r"^step_bytes: expected a positive int"):
        ReplayState(bytes(57), "Demo", 0)
