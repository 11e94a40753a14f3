"""Atari states: one length per env, exact round trip to the ALE's bytes, exact restores.

The ALE writes its random generators as decimal text, so its raw states of one game differ
in length; plangym's states keep the generators as binary words and must rebuild the ALE's
bytes exactly, for every state of random play with sticky actions and resets.
"""

import re

import ale_py
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.videogames import AtariEnv
from plangym.videogames.atari.state import _PASSED_KEPT, TRAILER_SIZE, StateCodec

GAMES = [
    "ALE/MsPacman-v5",
    "ALE/Pong-v5",
    "ALE/Breakout-v5",
    "ALE/Pitfall-v5",
    "ALE/MontezumaRevenge-v5",
]


def random_play(env: AtariEnv, steps: int, seed: int) -> list[tuple]:
    """``(state, action, live step, ALE bytes after it)`` of random play with resets."""
    rng = np.random.default_rng(seed)
    env.seed(seed)
    state, *_ = env.reset()
    record = []
    for i in range(steps):
        action = int(rng.integers(env.n_actions))
        dt = int(rng.integers(1, 4))
        live = env.step(action, dt=dt, return_state=True)
        raw = env.ale.cloneState(include_rng=env.clone_seeds).serialize()
        record.append((state, action, dt, live, raw))
        state = live[0]
        if live[3] or live[4] or i % 70 == 69:
            state, *_ = env.reset()
    return record


@pytest.fixture(scope="module", params=GAMES)
def played(request):
    # With the ALE's generator, which moves every frame: its text varies in length.
    env = AtariEnv(request.param, repeat_action_probability=0.25, autoreset=False, clone_seeds=True)
    yield env, random_play(env, 240, seed=GAMES.index(request.param))
    env.close()


def test_every_state_of_an_env_has_one_shape(played):
    env, record = played
    states = [state for state, *_ in record] + [live[0] for *_, live, _ in record]
    assert {state.shape for state in states} == {env.get_state().shape}
    stacked = np.stack(states)
    assert stacked.dtype == np.uint8 and stacked.shape == (len(states), len(states[0]))
    raw_lengths = {len(raw) for *_, raw in record}
    assert len(raw_lengths) > 1, "the ALE's own states should vary in length"
    assert len(states[0]) < min(raw_lengths)


def test_states_hold_the_ale_bytes_exactly(played):
    env, record = played
    for *_, live, raw in record:
        assert env.ale_bytes(live[0]) == raw


def test_restoring_any_state_replays_the_live_run(played):
    env, record = played
    for state, action, dt, live, _ in record[::3]:
        assert_identical(env.step(action, state=state, dt=dt, return_state=True), live)
    fresh = env.clone()
    for state, action, dt, live, _ in record[1::11]:
        assert_identical(fresh.step(action, state=state, dt=dt, return_state=True), live)
    fresh.close()


def test_without_the_ale_generator_states_also_have_one_shape():
    env = AtariEnv("ALE/MsPacman-v5", repeat_action_probability=0.25, autoreset=False)
    record = random_play(env, 60, seed=1)
    states = np.stack([live[0] for *_, live, _ in record])
    assert len(states[0]) < len(AtariEnv("ALE/MsPacman-v5", clone_seeds=True).get_state())
    for state, action, dt, live, raw in record[::4]:
        assert env.ale_bytes(live[0]) == raw
        assert_identical(env.step(action, state=state, dt=dt, return_state=True), live)


def test_truncated_corrupt_and_foreign_states_are_refused():
    env = AtariEnv("ALE/Breakout-v5", repeat_action_probability=0.25)
    state, *_ = env.reset()
    env.step(1)
    now = env.get_state()
    with pytest.raises(
        ValueError, match=r"state: expected a state of ALE/Breakout-v5 of \d+ bytes"
    ):
        env.set_state(state[:-1])
    with pytest.raises(ValueError, match="state of another game"):
        env.set_state(AtariEnv("ALE/Pong-v5").get_state())
    older = np.frombuffer(env.ale_bytes(state) + bytes(TRAILER_SIZE), np.uint8)
    with pytest.raises(ValueError, match="older plangym"):  # a raw ALE state plus the trailer
        env.set_state(older)
    corrupt = state.copy()
    # The last generator's index, just before the trailer: more digits than recorded.
    corrupt[-TRAILER_SIZE - 4 : -TRAILER_SIZE] = np.frombuffer(
        (10**9).to_bytes(4, "little"), np.uint8
    )
    with pytest.raises(ValueError, match=r"states\[1\]: .*corrupt"):
        env.step_batch([0, 0], states=[state, corrupt])
    assert_identical(env.get_state(), now)


def test_the_codec_refuses_text_it_could_not_rebuild():
    """A generator index spelt "0624" is valid for the ALE but would come back as "624"."""
    env = AtariEnv("ALE/Pong-v5")
    raw = env.ale.cloneState(include_rng=True).serialize()
    codec = StateCodec(raw, "ALE/Pong-v5", generators=2)
    words = bytes(TRAILER_SIZE - 8)
    assert codec.decode(codec.encode(b"", raw, 0, words))[0] == raw
    body, tail = raw[:-8], raw[-8:]  # the ALE's generator ends just before two ints
    start = re.search(rb"[0-9 ]+\Z", body).start()
    numbers, index = body[start:].rsplit(b" ", 1)
    text = numbers + b" 0" + index
    spelt = body[: start - 4] + len(text).to_bytes(4, "little") + text + tail
    spelt = spelt[:24] + (len(spelt) - 36).to_bytes(4, "little") + spelt[28:]
    env.ale.restoreState(ale_py.ALEState(spelt))  # the ALE reads it
    assert env.ale.cloneState(include_rng=True).serialize() == raw
    with pytest.raises(RuntimeError, match=r"ALE/Pong-v5: .* cannot rebuild byte for byte"):
        codec.encode(b"", spelt, 0, words)


def test_a_state_is_checked_in_full_once_and_other_bytes_always():
    env = AtariEnv("ALE/Pong-v5")
    state, *_ = env.reset()
    codec = env._codec
    env.check_state(state)  # made by get_state: a whole bytes object, now remembered
    assert codec._passed.get(id(state.base)) is state.base
    env.check_state(state)
    # The same content in other bytes is checked in full: corrupt bytes are still refused.
    corrupt = bytearray(state.tobytes())
    corrupt[-TRAILER_SIZE - 4 : -TRAILER_SIZE] = (10**9).to_bytes(4, "little")
    with pytest.raises(ValueError, match="corrupt"):
        env.check_state(np.frombuffer(bytes(corrupt), np.uint8))
    with pytest.raises(ValueError, match="corrupt"):
        env.check_state(np.frombuffer(bytes(corrupt), np.uint8)[::-1][::-1])  # a view
    # At most _PASSED_KEPT states are remembered; the oldest go first.
    copies = [np.frombuffer(state.tobytes(), np.uint8) for _ in range(_PASSED_KEPT + 10)]
    env.check_states(copies)
    assert len(codec._passed) == _PASSED_KEPT
    assert id(copies[0].base) not in codec._passed and id(copies[-1].base) in codec._passed


def test_a_state_means_the_same_with_the_full_or_the_minimal_action_set():
    """The state holds the ALE's number of the last action, which a sticky frame repeats."""
    full = AtariEnv("ALE/MsPacman-v5", full_action_space=True, repeat_action_probability=1.0)
    minimal = AtariEnv("ALE/MsPacman-v5", repeat_action_probability=1.0)
    right = [a.value for a in minimal.gym_env.unwrapped._action_set].index(3)  # Action.RIGHT
    assert full.gym_env.unwrapped._action_set[3] == ale_py.Action.RIGHT and right != 3
    full.reset()
    state = full.step(3, return_state=True)[0]  # the console last received RIGHT
    # Every frame repeats the last action: both envs go on pressing RIGHT.
    expected = full.step(0, state=state, dt=20, return_state=True)
    assert_identical(minimal.step(0, state=state, dt=20, return_state=True), expected)
    # UPFIRE (ALE 10) is not in MsPacman's minimal set: its state is refused, nothing moves.
    plain = AtariEnv("ALE/MsPacman-v5", full_action_space=True, repeat_action_probability=0.0)
    other = plain.step(10, state=state, return_state=True)[0]
    before = minimal.get_state()
    with pytest.raises(ValueError, match=r"state: .*last action is 10: .*another action set"):
        minimal.set_state(other)
    with pytest.raises(ValueError, match=r"states\[1\]: .*another action set"):
        minimal.step_batch([0, 0], states=[state, other])
    assert_identical(minimal.get_state(), before)


def test_corrupt_trailers_and_ale_bytes_are_value_errors():
    env = AtariEnv("ALE/Pong-v5")
    env.reset()
    state, before = env.get_state(), env.get_state()
    words = state.copy()
    words[-8 * 6 :] = 255  # the sticky-action generator's words
    with pytest.raises(ValueError, match=r"sticky-action generator .* corrupt"):
        env.set_state(words)
    assert_identical(env.get_state(), before)
    emulator = state.copy()
    emulator[100:200] = 255  # the console's registers: only the ALE can tell
    with pytest.raises(ValueError, match="the ALE could not load"):
        env.set_state(emulator)
    env.set_state(state)  # usable again
    assert_identical(env.get_state(), before)


@pytest.mark.parametrize("n_workers", [None, 2])
def test_states_kept_in_an_object_array_restore_as_in_plangym_01(n_workers):
    # plangym 0.1 code (fragile's walkers) keeps states in np.asarray(states, dtype=object):
    # numpy makes the uint8 vectors rows of Python ints, which 0.1 restored.
    workers = {"n_workers": n_workers, "inline_small_batches": False} if n_workers else {}
    env = plangym.make("ALE/Pong-v5", **workers)
    try:
        state, *_ = env.reset()
        actions = [1, 2, 3, 4]
        states = env.step_batch(actions, states=[state] * 4, dt=3)[0]
        rows = np.asarray(states, dtype=object)
        assert rows.shape == (4, len(state)) and rows[0].dtype == object
        expected = env.step_batch(actions, states=states)
        assert_identical(env.step_batch(actions, states=rows), expected)
        assert_identical(
            env.step_batch(actions, states=rows[[3, 2, 1, 0]]),
            env.step_batch(actions, states=states[::-1]),
        )
        assert_identical(env.step(2, state=rows[1]), env.step(2, state=states[1]))
        mixed = [*states[:2], *rows[2:]]  # an archive of rows extended with new states
        assert_identical(env.step_batch(actions, states=mixed), expected)
        env.set_state(rows[2])
        assert_identical(env.get_state(), states[2])
        bad = rows[0].copy()
        bad[-60] = 300  # no byte: refused as any foreign state is
        with pytest.raises(TypeError, match=r"state: expected an ALE/Pong-v5 state"):
            env.set_state(bad)
        with pytest.raises(TypeError, match=r"states\[1\]: expected"):
            env.step_batch([0, 0], states=np.asarray([states[0], bad], dtype=object))
    finally:
        env.close()
