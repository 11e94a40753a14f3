"""RetroEnv: conformance, 1,200-frame exactness, workers, bad input, one emulator per process.

stable-retro allows one emulator per process, so every test builds its env and closes it
before the next test (creating one costs about 25 ms); fresh instances run in new processes.
"""

import hashlib
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_retro")

import plangym
from plangym.api_tests import TestVideogameEnv, assert_identical  # noqa: F401 (collected)
from plangym.registry import UnknownEnvironmentError
from plangym.selfcheck import run_checks, run_in_fresh_process
from plangym.videogames.retro import ActionDiscretizer, RetroEnv
from plangym.videogames.retro.state import HEADER_SIZE, decode_state, find_written_bytes
from tests.helpers.random_play import state_after_random_play

NAME = "Airstriker-Genesis-v0"


@pytest.fixture
def env():
    environment = RetroEnv(NAME)
    environment.api_test_steps = 15
    yield environment
    environment.close()


def random_states(env, n, seed=0):
    env.reset()
    rng = np.random.default_rng(seed)
    states = []
    for action in rng.integers(env.n_actions, size=n):
        states.append(env.step(int(action), return_state=True)[0])
    return states


def digests(env, state, actions):
    """Each frame's result, with screens and states as digests (1,200 screens are 260 MB)."""
    env.set_state(state)
    rows = []
    for action in actions:
        new_state, obs, reward, terminal, truncated, info = env.step(action, return_state=True)
        rows.append(
            (
                hashlib.sha1(obs.tobytes()).hexdigest(),
                hashlib.sha1(new_state.tobytes()).hexdigest(),
                reward,
                terminal,
                truncated,
                info,
            )
        )
    return rows


def digests_in_new_env(blueprint, state, actions):
    blueprint.setup()
    try:
        return digests(blueprint, state, actions)
    finally:
        blueprint.close()


def test_1200_frames_with_a_game_over_replay_exactly():
    env = RetroEnv(NAME, frameskip=1)
    try:
        state, actions = state_after_random_play(env, np.random.default_rng(0), 300, n_next=1200)
        first = digests(env, state, actions)
        for action in actions[:37]:  # leave the emulator somewhere else
            env.step(action)
        assert_identical(digests(env, state, actions), first)
        assert any(row[3] for row in first), "the window should include a game over"
        assert sum(row[2] for row in first) > 0
        other = run_in_fresh_process(
            digests_in_new_env, env.clone(delay_setup=True), state, actions
        )
        assert_identical(other, first)
    finally:
        env.close()


@pytest.fixture
def batch_and_single():
    env = RetroEnv(NAME)
    states = random_states(env, 8, seed=3)
    actions = [int(a) for a in np.random.default_rng(4).integers(env.n_actions, size=8)]
    dts = [1, 2, 3, 1, 2, 3, 1, 2]
    single = env.step_batch(actions, states=states, dt=dts)
    env.close()  # the tests that use it build other emulators in this process
    return actions, states, dts, single


def assert_same_with_0d_actions(env, actions, states, dts, expected):
    # stable-retro divides a Discrete action in place: 0-d arrays once played other buttons
    # from the second frame on (and came back changed), and Ray's read-only ones failed.
    as_arrays = [np.array(action) for action in actions]
    assert_identical(env.step_batch(as_arrays, states=states, dt=dts), expected)
    assert [int(action) for action in as_arrays] == actions


def test_0d_array_actions_step_as_their_integers(batch_and_single):
    actions, states, dts, single = batch_and_single
    env = RetroEnv(NAME)
    try:
        assert_same_with_0d_actions(env, actions, states, dts, single)
    finally:
        env.close()


def test_parallel_env_matches_the_single_env(batch_and_single):
    actions, states, dts, single = batch_and_single
    env = plangym.make(NAME, n_workers=2, inline_small_batches=False)
    try:
        assert env.SINGLETON
        assert_identical(env.step_batch(actions, states=states, dt=dts), single)
        assert_same_with_0d_actions(env, actions, states, dts, single)
    finally:
        env.close()


def test_ray_env_matches_the_single_env(ray_cluster, batch_and_single):
    actions, states, dts, single = batch_and_single
    env = plangym.make(NAME, n_workers=2, ray=True, inline_small_batches=False)
    try:
        assert_identical(env.step_batch(actions, states=states, dt=dts), single)
        assert_same_with_0d_actions(env, actions, states, dts, single)
    finally:
        env.close()


def test_a_second_emulator_in_one_process_is_refused(env):
    with pytest.raises(RuntimeError, match="one emulator per process") as refused:
        RetroEnv(NAME)
    assert "holds this process's; close() that env first" in str(refused.value)
    env.reset()  # the first one is untouched
    env.close()
    other = RetroEnv(NAME)  # closing frees the process's emulator
    other.close()


def test_a_sync_vector_env_of_two_games_says_where_the_emulators_would_be():
    """The caller holds no emulator: the message must not tell it to close one of its own;
    the mode is refused before any sub-env is built."""
    with pytest.raises(ValueError, match=r"^vectorization_mode: .*one simulator per process"):
        plangym.make_vec(NAME, 2, vectorization_mode="sync")
    RetroEnv(NAME).close()  # the process's emulator is free


def test_reset_builds_a_delayed_emulator_and_setup_rebuilds_it_as_in_plangym_01(env):
    state, obs, _ = env.reset()
    env.setup()  # a new emulator in place of its own (0.1's TestRetro.test_init_env)
    assert_identical(env.step(0, state=state), env.step(0, state=state))
    env.close()
    delayed = RetroEnv(NAME, delay_setup=True)
    with pytest.raises(RuntimeError, match="call setup\\(\\) first"):
        delayed.get_state()  # no attribute read builds it behind your back
    again, new_obs, _ = delayed.reset()  # reset does (0.1's TestRetro.test_clone)
    assert_identical(new_obs, obs)
    delayed.close()


def test_foreign_and_corrupt_states_are_rejected_before_stepping(env):
    state = random_states(env, 3)[-1]
    renamed = state.copy()
    renamed[8:12] = np.frombuffer(b"Pong", np.uint8)
    cut = state[:-5]
    bad_index = state.copy()
    bad_index[HEADER_SIZE : HEADER_SIZE + 4] = 255
    for bad, message in [
        (renamed, "a state of Pongtriker"),
        (cut, "corrupt"),
        (bad_index, "corrupt"),
        (np.zeros(HEADER_SIZE, np.uint8), "header"),
    ]:
        with pytest.raises(ValueError, match=message):
            env.step(0, state=bad)
        with pytest.raises(ValueError, match=r"states\[1\]"):
            env.step_batch([0, 0], states=[state, bad])
        assert_identical(env.get_state(), state)


def test_bad_actions_are_rejected_before_stepping(env):
    state = random_states(env, 3)[-1]
    for bad in (-1, 126, 1.5, "3", np.zeros(12)):
        with pytest.raises((ValueError, TypeError), match="action"):
            env.step(bad, state=state)
    assert_identical(env.get_state(), state)


def test_states_keep_only_what_the_emulator_writes(env):
    state = random_states(env, 5)[-1]
    raw = decode_state(state)
    assert len(raw) == len(env.em.get_state()) and state.nbytes < 60_000
    size, gaps = find_written_bytes(env.em)
    assert size == env._content_size and np.isin(gaps, env._volatile).all()
    env.set_state(state)
    assert_identical(env.get_state(), state)


def test_what_the_emulator_writes_is_found_after_other_saves_were_freed(env):
    """Earlier envs leave free chunks of a save's size holding old bytes: the allocator
    may hand one to the next save. The written part is still found, every time."""
    found = find_written_bytes(env.em)
    size = len(env.em.get_state())
    rng = np.random.default_rng(0)
    for _ in range(30):
        held = [bytearray(rng.bytes(size + int(rng.integers(-32, 128)))) for _ in range(3)]
        old = [bytearray(rng.bytes(size)) for _ in range(int(rng.integers(1, 6)))]
        del old  # freed: garbage of exactly a save's size
        again = find_written_bytes(env.em)
        assert again[0] == found[0] and np.array_equal(again[1], found[1])
        del held


@pytest.mark.parametrize(("obs_type", "shape"), [("ram", (65536,)), ("grayscale", (224, 320))])
def test_observation_types(obs_type, shape):
    env = RetroEnv(NAME, obs_type=obs_type)
    try:
        state, obs, _ = env.reset()
        assert obs.shape == shape == env.obs_shape and obs.dtype == np.uint8
        first = env.step(3, state=state, dt=2)
        assert_identical(env.step(3, state=state, dt=2), first)
        if obs_type == "ram":
            assert_identical(first[1], env.get_ram())
    finally:
        env.close()


def test_frames_through_wrappers_equal_direct_frames():
    """Direct emulator frames do what stable-retro's own step does."""
    actions = [int(a) for a in np.random.default_rng(5).integers(126, size=40)]
    direct = RetroEnv(NAME, episodic_life=True)
    state = direct.reset()[0]
    expected = [direct.step(a, return_state=True) for a in actions]
    direct.close()
    wrapped = RetroEnv(NAME, episodic_life=True, wrappers=[gym.Wrapper])
    try:
        assert not wrapped._direct
        wrapped.set_state(state)
        assert_identical([wrapped.step(a, return_state=True) for a in actions], expected)
    finally:
        wrapped.close()


def test_action_discretizer():
    env = RetroEnv(NAME, wrappers=[(ActionDiscretizer, {"actions": [["LEFT"], ["RIGHT", "B"]]})])
    try:
        assert env.action_space == gym.spaces.Discrete(2)
        state, *_ = env.reset()
        first = env.step(1, state=state, dt=3)
        assert_identical(env.step(1, state=state, dt=3), first)
        with pytest.raises(ValueError, match="action"):
            env.step(2, state=state)
    finally:
        env.close()
    with pytest.raises(ValueError, match="button names"):
        RetroEnv(NAME, wrappers=[(ActionDiscretizer, {"actions": [["JUMP"]]})])


def test_names_and_save_states():
    env = plangym.make("Airstriker-Genesis", state="Level1")
    try:
        assert isinstance(env, RetroEnv)
        assert env.game == NAME and env.save_state == "Level1"
        level1 = env.reset()[1]
    finally:
        env.close()
    env = plangym.make(NAME)
    try:
        assert_identical(env.reset()[1], level1)  # Level1 is the game's default
    finally:
        env.close()
    with pytest.raises(ValueError, match="stable-retro game"):
        RetroEnv("Airstriker-Genesis-v7")
    with pytest.raises(ValueError, match=r"^state: expected None or one of .*\['Level1'\]"):
        RetroEnv(NAME, state="NoSuchState")
    with pytest.raises(ValueError, match=r"^scenario: expected one of .*\['scenario'\]"):
        RetroEnv(NAME, scenario="nope.json")
    with pytest.raises(TypeError, match=r"^scenario: expected None, a scenario name"):
        RetroEnv(NAME, scenario=5)


def test_lua_scripted_games_are_refused():
    with pytest.raises(ValueError, match="Lua"):
        RetroEnv("1942-Nes-v0")


def test_selfcheck_passes():
    results = run_checks(NAME, n_steps=15)
    assert {r.status for r in results} <= {"PASS", "n/a"}, results


def test_plangym_01s_rom_import_command_still_runs(tmp_path):
    """``python -m plangym.scripts.import_retro_roms DIR``, from plangym 0.1's README."""
    import subprocess
    import sys

    (tmp_path / "not-a-rom.bin").write_bytes(b"\0" * 64)
    command = [sys.executable, "-W", "default", "-m", "plangym.scripts.import_retro_roms"]
    run = subprocess.run(
        [*command, str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert "Imported 0 games" in run.stdout
    assert "DeprecationWarning: This script is deprecated" in run.stderr


def test_a_misspelt_game_name_suggests_the_retro_games():
    """Suggestions were drawn from the other families only (Asterix for Airstriker)."""
    with pytest.raises(UnknownEnvironmentError, match=r"closest known names: " + NAME):
        plangym.make("Airstriker")


def test_replays_run_at_the_consoles_speed():
    """stable-retro gives its 60 fps under gym's old metadata key: GIFs ran at half speed."""
    from plangym.planning.display import real_time_delay_cs

    env = RetroEnv(NAME, frameskip=5)
    assert real_time_delay_cs(env) == round(100 * 5 / 60)
    env.close()


def test_an_allocator_that_fills_freed_memory_is_named_in_the_error():
    """The save-state probe needs freed buffers back as left; debug allocators break it."""
    code = "import plangym; plangym.make('Airstriker-Genesis-v0').reset()"
    environment = {**os.environ, "PYTHONMALLOC": "debug", "SDL_VIDEODRIVER": "dummy"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "which PYTHONMALLOC=debug prevents; run without it" in done.stderr
