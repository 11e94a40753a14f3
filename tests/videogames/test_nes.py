"""MarioEnv: conformance, exact replay across deaths, workers, input checks, settings."""

import os

import numpy as np
import pytest

from plangym.videogames.nes.env import entry_points_by_group

with entry_points_by_group():  # the fork's gym reads its plugins the Python 3.11 way
    pytest.importorskip("nes_py", reason="needs the 'nes' extra")

import plangym
from plangym.api_tests import (
    TestVideogameEnv,  # noqa: F401  (collected by pytest)
    assert_identical,
)
from plangym.exactness import difference, replay
from plangym.rng import N_WORDS
from plangym.selfcheck import run_checks
from plangym.videogames.nes import (
    COMPLEX_MOVEMENT,
    RIGHT_ONLY,
    SIMPLE_MOVEMENT,
    JoypadSpace,
    MarioEnv,
    NesEnv,
)
from plangym.videogames.nes import state as nes_state
from tests.helpers.worker_parity import MIXED_DTS, assert_batch_like_single, make_workers

NAME = "SuperMarioBros-1-1-v0"


@pytest.fixture(scope="module")
def env():
    env = MarioEnv(NAME, frameskip=2)
    env.api_test_steps = 10
    yield env
    env.close()


def running_right(n: int, seed: int = 0) -> list[int]:
    """Mostly right, sometimes jumping: Mario meets goombas and pits, and dies."""
    return np.random.default_rng(seed).choice([1, 3, 1, 3, 2, 0, 5], n).tolist()


def test_replay_of_1500_frames_with_deaths_is_exact():
    """300 steps of 5 frames through 4 deaths and a game over, replayed twice and fresh."""
    env = MarioEnv("SuperMarioBros-v0", frameskip=5)
    state, *_ = env.reset()
    actions = running_right(300)
    env.set_state(state)
    first = [env.step(action, return_state=True) for action in actions]
    assert sum(row[-1]["n_step"] for row in first) >= 1490
    assert sum(row[-1]["lost_life"] for row in first) >= 3
    assert any(row[3] for row in first)  # the game ended (and autoreset started another)
    for other in (env, env.clone()):
        other.set_state(state)
        again = [other.step(action, return_state=True) for action in actions]
        assert difference(first, again, "steps") is None
    env.close()


def test_a_step_from_a_finished_game_plays_no_frame_and_loses_no_life():
    env = MarioEnv("SuperMarioBros-v0", frameskip=5, autoreset=False)
    state, *_ = env.reset()
    for action in running_right(300):
        state, *_, terminal, _, info = env.step(action, state=state)
        if terminal:
            break
    assert terminal and info["lives"] == 0
    after = env.step(1, state=state)
    assert after[3] and after[-1]["n_step"] == 0 and after[-1]["lives"] == 0
    assert not after[-1]["lost_life"]  # its lives did not change
    assert_identical(after[0], state)
    env.close()


def test_reset_infos_have_gymnasiums_lives_only_as_every_familys(env):
    """0.1's ``lifes`` is a step entry; a vector env's reset infos had it from Mario only."""
    _, _, info = env.reset()
    assert info["lives"] > 0 and "lifes" not in info
    step_info = env.step(1)[-1]
    assert step_info["lifes"] == step_info["lives"] == info["lives"]


def test_a_step_from_an_ended_game_shows_a_black_screen_whatever_was_drawn():
    """No frame is played and states hold no screen: the last one drawn is history."""
    env = MarioEnv(NAME, frameskip=5, autoreset=False)
    start, *_ = env.reset()
    state, terminal = start, False
    for action in running_right(300):
        state, _, _, terminal, _, _ = env.step(action, state=state)
        if terminal:
            break
    assert terminal
    observations = []
    for elsewhere_dt in (10, 3):
        env.step(1, state=start, dt=elsewhere_dt)  # something else on the screen
        _, obs, _, terminal, _, info = env.step(0, state=state)
        assert terminal and info["n_step"] == 0
        observations += [obs, env.get_image()]
    for obs in observations:
        assert obs.shape == (240, 256, 3) and not obs.any()
    env.set_state(state)  # as the ALE: the last frame drawn, on every reader
    assert env.get_image().any()
    assert_identical(env.get_image(), env.render())
    assert env.step(1, state=start)[1].any()  # a step that plays frames draws again
    env.close()


@pytest.mark.parametrize("backend", ["parallel", "ray"])
def test_workers_are_bit_identical_to_the_single_env(backend, request, env):
    kwargs = {"frameskip": 2}
    vectorized = make_workers(NAME, backend, request, **kwargs)
    single = MarioEnv(NAME, **kwargs)
    try:
        single.reset()
        states = []
        for action in running_right(8, seed=1):
            states.append(single.get_state())
            single.step(action)
        actions = running_right(8, seed=2)
        assert_batch_like_single(single, vectorized, actions, states, dt=MIXED_DTS)
    finally:
        vectorized.close()
        single.close()


@pytest.mark.parametrize(
    ("action", "error"),
    [(-1, ValueError), (7, ValueError), (1.5, TypeError), ("1", TypeError), (None, TypeError)],
)
def test_bad_actions_are_rejected_before_stepping(env, action, error):
    state, *_ = env.reset()
    with pytest.raises(error, match="action"):
        env.step(action, state=state)
    with pytest.raises(error, match=r"actions\[1\]"):
        env.step_batch([1, action], states=[state, state])
    assert_identical(env.get_state(), state)


def test_foreign_states_are_rejected_with_what_was_expected(env):
    state, *_ = env.reset()
    other = MarioEnv("SuperMarioBros-1-2-v0")
    try:
        with pytest.raises(ValueError, match=r"expected a state of SuperMarioBros-1-1-v0.*1-2"):
            env.step(1, state=other.reset()[0])
    finally:
        other.close()
    with pytest.raises(ValueError, match="bytes"):
        env.set_state(state[:-1])
    bare = state.copy()
    bare[:8] = 0
    with pytest.raises(ValueError, match="header"):
        env.step_batch([1, 1], states=[state, bare])
    with pytest.raises(TypeError, match="uint8 vector"):
        env.set_state(state.astype(np.int16))
    no_generator = state.copy()  # the stage generator's words, all zeros
    start = nes_state._HEADER.fields["stage_rng"][1]
    no_generator[start : start + 8 * N_WORDS] = 0
    with pytest.raises(ValueError, match=r"^states\[1\]: .*even increment"):
        env.step_batch([1, 1], states=[state, no_generator])
    assert_identical(env.get_state(), state)


def test_states_leave_the_screen_out_and_replay_draws_it_whole():
    """nes-py's dump is 98% screen; a step draws every pixel again, so states hold none."""
    env = MarioEnv(NAME, frameskip=3)
    state, *_ = env.reset()
    for action in running_right(40):
        env.step(action)
    later = env.get_state()
    assert env.state_size < 5_000  # 250,404 bytes with the screen
    fresh = MarioEnv(NAME, frameskip=3)
    try:
        fresh.reset()
        shown = fresh.get_image()
        fresh.set_state(later)
        # As the ALE: a restore keeps the screen the emulator shows until the next step.
        assert_identical(fresh.get_image(), shown)
        assert difference(env.step(3, state=later), fresh.step(3, state=later), "step") is None
    finally:
        fresh.close()
        env.close()


def test_a_longer_dump_stays_inside_its_state():
    """A sprite on the scanline a frame ends on makes nes-py's dump a byte longer.

    Standing still, 5,710 frames in, Mario's game has one there: the state used to take a
    byte past its end (the next row of an array of states, or past its allocation).
    """
    env = MarioEnv("SuperMarioBros-v0", frameskip=1, obs_type="ram")
    env.reset()
    env.step(0, dt=5_710)
    rows = np.full((2, env.state_size), 7, dtype=np.uint8)
    state = env.get_state(rows[0])
    assert (rows[1] == 7).all()
    replays = [env.step(1, state=state, dt=40) for _ in range(2)]
    fresh = MarioEnv("SuperMarioBros-v0", frameskip=1, obs_type="ram")
    try:
        fresh.reset()
        replays.append(fresh.step(1, state=state.copy(), dt=40))
        fresh.set_state(state)
        assert_identical(fresh.get_state(), state)
    finally:
        fresh.close()
        env.close()
    assert difference(replays[0], replays[1], "step") is None
    assert difference(replays[0], replays[2], "step") is None


def test_a_state_of_the_earlier_format_is_refused_with_what_to_do(env):
    env.reset()
    old = np.zeros(250_404, dtype=np.uint8)
    old[:6] = np.frombuffer(b"PGNES1", dtype=np.uint8)
    with pytest.raises(ValueError, match=r"earlier NES format.*make it again"):
        env.set_state(old)


def test_states_are_values():
    env = MarioEnv(NAME, frameskip=3)
    state, *_ = env.reset()
    new_state, *_ = env.step(1, state=state)
    assert not np.shares_memory(state, new_state)
    assert env.get_state().tobytes() == new_state.tobytes()
    assert bytes(state[8:29]) == NAME.encode()  # the header names the game
    env.close()


@pytest.mark.parametrize(
    ("movement_type", "buttons"),
    [("right", RIGHT_ONLY), ("simple", SIMPLE_MOVEMENT), ("complex", COMPLEX_MOVEMENT)],
)
def test_movement_type_is_honoured(movement_type, buttons):
    env = MarioEnv(NAME, movement_type=movement_type, delay_setup=True)
    assert (
        env.action_space.n
        == len(buttons)
        == {"right": 5, "simple": 7, "complex": 12}[movement_type]
    )
    assert env.gym_env.action_bytes == [JoypadSpace.byte(b) for b in buttons]
    env.close()
    with pytest.raises(ValueError, match="movement_type"):
        MarioEnv(NAME, movement_type="diagonal")


def test_info_reports_the_true_x_position():
    """The fork's x_pos forgets the page (wraps at 256); plangym's does not."""
    env = MarioEnv(NAME, movement_type="right", frameskip=4, autoreset=False)
    env.reset()
    positions = []
    for action in [4] * 60:  # run right and jump: past the first pipes
        *_, terminal, _, info = env.step(action)
        ram = env.get_ram()
        assert info["x_pos"] == int(ram[0x6D]) * 256 + int(ram[0x86])
        assert env.nes_env._get_info()["x_pos"] == int(ram[0x86])
        positions.append(info["x_pos"])
        if terminal:
            break
    assert max(positions) > 300
    env.close()


def test_plangym_reward_is_the_position_score(env):
    state, _, info = env.reset()
    *_, reward, _, _, info = env.step(1, state=state, dt=2)
    assert reward == 25000 * 1 + 5000 * 1 + info["x_pos"]


@pytest.mark.parametrize(("obs_type", "shape"), [("grayscale", (240, 256)), ("ram", (2048,))])
def test_observation_types(obs_type, shape):
    env = MarioEnv(NAME, obs_type=obs_type, frameskip=2, delay_setup=True)
    state, obs, _ = env.reset()
    assert obs.shape == shape == env.obs_shape
    assert_identical(env.step(1, state=state), env.step(1, state=state))
    env.close()


def test_coords_observation():
    env = MarioEnv(NAME, obs_type="coords", frameskip=2)
    _, obs, info = env.reset()
    assert obs.tolist()[:4] == [info["x_pos"], info["y_pos"], 1, 1]
    env.close()


def test_selfcheck_passes():
    results = run_checks(NAME, n_steps=15)
    assert results and all(result.status in ("PASS", "n/a") for result in results), results


def test_random_stages_replay_exactly_across_a_new_game():
    """The next game's stage is drawn from a generator the state carries."""
    env = plangym.make("SuperMarioBrosRandomStages-v0", movement_type="right")
    fresh = plangym.make("SuperMarioBrosRandomStages-v0", movement_type="right")
    env.seed(3)
    stages = set()
    for _ in range(3):
        state, _, info = env.reset()
        stages.add((info["world"], info["stage"]))
    assert len(stages) > 1
    actions = [1] * 60  # runs right into the first enemy: the game ends, a new one starts
    expected = replay(env, state, actions)
    assert any(step[3] or step[4] for step in expected)
    assert_identical(replay(env, state, actions), expected)
    assert_identical(replay(fresh, state, actions), expected)
    env.close()
    fresh.close()


def test_any_nes_rom_plays_with_every_controller_byte_and_replays_exactly():
    """NesEnv takes an iNES ROM path; its actions are the 256 controller bytes."""
    gym_super_mario_bros = pytest.importorskip("gym_super_mario_bros")
    rom = os.path.join(
        os.path.dirname(gym_super_mario_bros.__file__), "_roms", "super-mario-bros.nes"
    )
    env, fresh = NesEnv(rom), NesEnv(rom)
    assert env.action_space.n == 256
    state, *_ = env.reset()
    actions = [int(a) for a in np.random.default_rng(0).integers(256, size=40)]
    expected = replay(env, state, actions)
    assert_identical(replay(fresh, state, actions), expected)
    with pytest.raises(ValueError, match="action"):
        env.step(256, state=state)
    env.close()
    fresh.close()


def test_original_reward_must_be_a_flag():
    with pytest.raises(TypeError, match=r"^original_reward: expected True or False"):
        MarioEnv(NAME, original_reward="x")  # read as True before
