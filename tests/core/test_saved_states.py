"""Saved states that other code hands back: archive rows, strided views, foreign states.

A Go-Explore archive keeps states in NumPy arrays (``np.stack``, ``np.save``, Fortran order)
and hands back rows of them; each family takes any array that holds one of its states,
names a foreign state for what it is, and returns read-only batches of record states.
"""

import re

import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.validation.values import counted, with_article


def strided(state: np.ndarray) -> np.ndarray:
    """The same values as ``state``, in a view with a stride of two elements."""
    view = np.empty(2 * state.size, dtype=state.dtype)[::2]
    view[:] = state
    assert not view.flags.c_contiguous
    return view


def fortran_archive(states: list[np.ndarray]) -> np.ndarray:
    """The states stacked as a Go-Explore archive, in Fortran order: its rows are strided."""
    archive = np.asfortranarray(np.stack(states))
    assert not archive[0].flags.c_contiguous
    return archive


def assert_strided_states_replay(env, action) -> None:
    """``env`` takes strided copies of its states everywhere, with the same results."""
    state, *_ = env.reset(seed=0)
    state = env.step(action, state=state)[0]
    other = env.step(action, state=state)[0]
    expected = env.step(action, state=state)
    assert_identical(env.step(action, state=strided(state)), expected)
    env.set_state(strided(state))
    assert_identical(env.get_state(), state)
    archive = fortran_archive([state, other])
    batch = env.step_batch([action, action], [state, other])
    assert_identical(env.step_batch([action, action], list(archive)), batch)
    assert_identical(env.step_batch([action, action], archive), batch)
    corrupt = strided(state)
    corrupt[:8] = 0  # the header's magic
    with pytest.raises(ValueError, match=r"^state: expected a state of .*, received bytes"):
        env.set_state(corrupt)


def test_retro_takes_strided_states():
    pytest.importorskip("stable_retro")
    env = plangym.make("Airstriker-Genesis-v0")
    try:
        assert_strided_states_replay(env, 0)
    finally:
        env.close()


def test_nes_takes_strided_states():
    from plangym.videogames.nes.env import entry_points_by_group

    with entry_points_by_group():  # the fork's gym reads its plugins the Python 3.11 way
        pytest.importorskip("nes_py", reason="needs the 'nes' extra")
    env = plangym.make("SuperMarioBros-v0")
    try:
        assert_strided_states_replay(env, 0)
    finally:
        env.close()


@pytest.mark.parametrize("name", ["FastLunarLander-v0", "CartPole-v1"])
def test_a_row_of_a_record_archive_is_a_state(name):
    """``np.stack`` of record states has rows of type ``np.void``: each is a state."""
    env = plangym.make(name)
    state, *_ = env.reset(seed=0)
    other = env.step(0, state=state)[0]
    archive = np.stack([state, other])
    row = archive[1]
    assert type(row) is np.void
    env.set_state(row)
    assert env.get_state().tobytes() == other.tobytes()
    assert_identical(env.step(1, state=row), env.step(1, state=other))
    assert_identical(env.step_batch([1, 0], list(archive)), env.step_batch([1, 0], [state, other]))
    env.close()


def test_a_row_of_a_record_archive_steps_on_workers():
    env = plangym.make("FastLunarLander-v0", n_workers=2)
    try:
        state, *_ = env.reset(seed=0)
        archive = np.stack([state, env.step(0, state=state)[0]] * 2)
        expected = env.step_batch([0, 1, 2, 3], [np.asarray(row) for row in archive])
        assert_identical(env.step_batch([0, 1, 2, 3], list(archive)), expected)
    finally:
        env.close()


def test_fast_lunar_lander_names_what_it_takes():
    env = plangym.make("FastLunarLander-v0")
    with pytest.raises(TypeError, match=r"^states\[0\]: expected a FastLunarLander-v0 state .*"):
        env.step_batch([0], [np.zeros(3)])
    record = np.stack([plangym.make("CartPole-v1").get_state()])[0]  # another env's row
    with pytest.raises(TypeError, match="or a record of a record array of states"):
        env.set_state(record)


# Foreign states: what the error says they are ---------------------------------------------
def test_mujoco_names_the_model_tag_as_a_number():
    pytest.importorskip("mujoco")
    cheetah = plangym.make("HalfCheetah-v5", render_mode=None)
    walker = plangym.make("Walker2d-v5", render_mode=None)
    cheetah.reset(seed=0)
    with pytest.raises(ValueError) as error:
        walker.set_state(cheetah.get_state())
    message = str(error.value)
    assert re.search(r"another MuJoCo model \(model tag \d+, not \d+\)$", message), message
    cheetah.close()
    walker.close()


@pytest.mark.parametrize("n_steps", [15, 16])
def test_box2d_names_the_env_of_a_foreign_replay_whatever_its_length(n_steps):
    """15 steps of 1 byte leave a length BipedalWalker's 16-byte steps cannot make."""
    pytest.importorskip("Box2D")
    lander, walker = plangym.make("LunarLander-v3"), plangym.make("BipedalWalker-v3")
    state, *_ = lander.reset(seed=0)
    state = lander.step(0, state=state, dt=n_steps)[0]
    assert state.n_steps == n_steps
    with pytest.raises(ValueError) as error:
        walker.set_state(state)
    assert str(error.value).startswith("state: expected a BipedalWalker-v3 state")
    assert str(error.value).endswith(
        "received a state of another environment, LunarLander-v3 (its fingerprint differs)"
    )
    lander.close()
    walker.close()


def test_box2d_names_a_state_of_the_same_env_with_other_settings():
    pytest.importorskip("Box2D")
    discrete = plangym.make("LunarLander-v3")
    continuous = plangym.make("LunarLander-v3", continuous=True)
    state, *_ = continuous.reset(seed=0)
    state = continuous.step(np.zeros(2, np.float32), state=state, dt=3)[0]
    with pytest.raises(ValueError, match="a LunarLander-v3 state made with other dynamics"):
        discrete.set_state(state)
    # Bare bytes say nothing of their env.
    with pytest.raises(ValueError, match="another environment or of other settings"):
        discrete.state_from_array(state.array.copy())
    # One byte per step: "1 byte", not "1 bytes".
    with pytest.raises(TypeError, match=r"a 56-byte header, then 1 byte per step\)"):
        discrete.set_state(np.zeros(3))
    discrete.close()
    continuous.close()


def test_the_ale_names_a_plan_montezuma_state():
    montezuma = plangym.make("PlanMontezuma-v0")
    ale = plangym.make("ALE/MontezumaRevenge-v5")
    state, *_ = montezuma.reset(seed=0)
    with pytest.raises(ValueError) as error:
        ale.set_state(state)
    assert "received a PlanMontezuma state in RAM mode (starting with b'PLANMZ01'" in str(
        error.value
    )
    ale.reset(seed=0)
    with pytest.raises(ValueError, match="received a state of another game or corrupt bytes"):
        ale.set_state(np.zeros_like(ale.get_state()))
    montezuma.close()
    ale.close()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Acrobot-v1", "state: expected an Acrobot-v1 state"),
        ("CartPole-v1", "state: expected a CartPole-v1 state"),
        ("ALE/Pong-v5", "state: expected an ALE/Pong-v5 state"),
        ("FastLunarLander-v0", "state: expected a FastLunarLander-v0 state"),
    ],
)
def test_the_article_before_an_env_name_goes_by_sound(name, expected):
    env = plangym.make(name)
    with pytest.raises(TypeError) as error:
        env.set_state([1, 2])
    assert str(error.value).startswith(expected)
    env.close()


@pytest.mark.parametrize(
    ("name", "article"),
    [
        ("Acrobot-v1", "an"),
        ("ALE/MsPacman-v5", "an"),
        ("InvertedPendulum-v5", "an"),
        ("Airstriker-Genesis-v0", "an"),
        ("NES game", "an"),
        ("CartPole-v1", "a"),
        ("HalfCheetah-v5", "a"),
        ("SuperMarioBros-v0", "a"),
        ("cartpole-balance", "a"),
        ("acrobot-swingup", "an"),
        ("uniform", "a"),
        ("8-bit", "an"),
        ("18-wheeler", "an"),
        ("1-ring", "a"),
        ("", "a"),
    ],
)
def test_with_article(name, article):
    assert with_article(name) == f"{article} {name}"


def test_counted():
    assert [counted(n, "step") for n in (0, 1, 2)] == ["0 steps", "1 step", "2 steps"]


# Read-only batches of record states -------------------------------------------------------
def records_of(env, n: int) -> np.ndarray:
    state, *_ = env.reset(seed=0)
    return np.stack([state] * n)


@pytest.mark.parametrize("n", [2, 16, 300])  # the element loop, the kernels
def test_record_batches_are_read_only_on_the_single_env(n):
    env = plangym.make("CartPole-v1")
    new_states, *_ = env.step_batch(np.zeros(n, int), records_of(env, n), arrays=True)
    assert new_states.shape == (n,) and not new_states.flags.writeable
    # And they go back in as they are.
    again, *_ = env.step_batch(np.zeros(n, int), new_states, arrays=True)
    assert not again.flags.writeable
    env.close()


@pytest.mark.parametrize("n", [2, 16, 300])
def test_record_batches_are_read_only_on_workers(n):
    env = plangym.make("CartPole-v1", n_workers=2)
    try:
        new_states, *_ = env.step_batch(np.zeros(n, int), records_of(env, n), arrays=True)
        assert new_states.shape == (n,) and not new_states.flags.writeable
    finally:
        env.close()


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
def test_record_batches_are_read_only_on_the_vector_faces(mode):
    env = plangym.make_vec("CartPole-v1", num_envs=2, vectorization_mode=mode)
    try:
        env.reset(seed=0)
        state = plangym.make("CartPole-v1").get_state()
        records = np.stack([state] * 16)
        new_states, *_ = env.step_batch(np.zeros(16, int), records, arrays=True)
        assert new_states.shape == (16,) and not new_states.flags.writeable
    finally:
        env.close()
