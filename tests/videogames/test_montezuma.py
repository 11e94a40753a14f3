"""MontezumaEnv: conformance, exact replay with its bookkeeping, workers, coords against RAM."""

import warnings

import numpy as np
import pytest

import plangym
from plangym import api_tests
from plangym.api_tests import assert_identical
from plangym.exactness import replay
from plangym.selfcheck import run_checks
from plangym.videogames.atari import AtariEnv
from plangym.videogames.montezuma import (
    HEADER_SIZE,
    PYRAMID,
    RESET_NOOPS,
    CustomMontezuma,
    MontezumaEnv,
    MontezumaPosLevel,
    room_xy,
)

RIGHT, LEFT = 3, 4


class TestMontezumaConformance(api_tests.TestVideogameEnv):
    """The conformance suite on the coords observation (the one Go-Explore uses)."""

    @pytest.fixture
    def env(self):
        env = MontezumaEnv(obs_type="coords", frameskip=2, repeat_action_probability=0.25)
        env.api_test_steps = 20
        yield env
        env.close()


@pytest.fixture(scope="module")
def coords_env():
    env = plangym.make("PlanMontezuma-v0", obs_type="coords", frameskip=4)
    yield env
    env.close()


def random_walk(env, n: int, seed: int) -> list:
    """States along a seeded random walk (restarting from a reset when Joe dies)."""
    rng = np.random.default_rng(seed)
    env.reset()
    states = []
    for _ in range(n):
        *_, terminal, _, _ = env.step(int(rng.integers(env.n_actions)))
        if terminal:
            env.reset()
        states.append(env.get_state())
    return states


@pytest.mark.parametrize("sticky", [0.0, 0.25])
def test_replay_of_150_steps_is_exact(sticky):
    env = MontezumaEnv(obs_type="coords", frameskip=3, repeat_action_probability=sticky)
    fresh = env.clone()
    try:
        state = random_walk(env, 10, seed=1)[-1]
        actions = np.random.default_rng(2).integers(env.n_actions, size=160).tolist()
        first = replay(env, state, actions)
        for action in actions[:7]:  # leave the env elsewhere
            env.step(action)
        assert_identical(replay(env, state, actions), first)
        assert_identical(replay(fresh, state, actions), first)
    finally:
        env.close()
        fresh.close()


def test_bookkeeping_is_restored(coords_env):
    env = coords_env
    env.reset()
    for _ in range(5):
        env.step(RIGHT)
    state = env.get_state()
    tracker = env.tracker
    before = (env.pos, tracker.rooms_visited, tracker.bookkeeping(), env.get_coords().tolist())
    env.tracker.restore_bookkeeping((123.0, 7, 1, 0b111))  # scramble what the RAM does not hold
    env.reset()
    env.set_state(state)
    after = (env.pos, tracker.rooms_visited, tracker.bookkeeping(), env.get_coords().tolist())
    assert after == before
    assert_identical(env.get_state(), state)
    assert env.tracker.bookkeeping()[1] == 5 * 4  # frames since the reset's NOOPs, as 0.1


def test_restore_refuses_what_is_not_its_snapshot_before_changing_anything():
    ram_mode, pixel_mode = CustomMontezuma(), CustomMontezuma(objects_from_pixels=True)
    for tracker in (ram_mode, pixel_mode):
        tracker.reset(seed=0)
    for _ in range(20):
        ram_mode.step(RIGHT)
    snapshot = ram_mode.get_restore()
    pixel_snapshot = pixel_mode.get_restore()
    for _ in range(5):  # both now differ from their snapshots
        ram_mode.step(RIGHT)
        pixel_mode.step(RIGHT)

    def altered(data: tuple, kept: tuple | None = None, ale_state=None, score=None) -> tuple:
        state = np.array([ale_state or data[0][0], kept or data[0][1]], dtype=object)
        return (state, data[1] if score is None else score, *data[2:])

    pacman = AtariEnv("ALE/MsPacman-v5")
    pacman.reset(seed=0)
    other_game = pacman.gym_env.unwrapped.ale.cloneState(include_rng=True)
    pacman.close()
    before = [(t.get_ram().tolist(), t.bookkeeping()) for t in (ram_mode, pixel_mode)]
    for tracker, data, problem in [
        (pixel_mode, snapshot, "4 values, not pixel mode's 6"),  # another mode's snapshot
        (ram_mode, snapshot[:5], "tuple of 5 values, not 0.1's 6"),
        (ram_mode, "snapshot", "not 0.1's 6 values"),
        (ram_mode, (None, *snapshot[1:]), "not state_to_numpy"),
        # Each of these used to get in: ale-py's SystemError, or an env broken from then on.
        (ram_mode, altered(snapshot, ale_state=other_game), "an ALE state of another game"),
        (ram_mode, altered(snapshot, kept=("a", "b", "c", "d")), "'a' .str.*not numbers"),
        (pixel_mode, altered(pixel_snapshot, kept=(*pixel_snapshot[0][1][:4], None, 0)), "None"),
        (ram_mode, (np.array([snapshot[0][0], None]), "10", *snapshot[2:]), "not numbers"),
    ]:
        with pytest.raises(ValueError, match=rf"data: expected a snapshot.*{problem}"):
            tracker.restore(data)
    assert [(t.get_ram().tolist(), t.bookkeeping()) for t in (ram_mode, pixel_mode)] == before
    ram_mode.close()
    pixel_mode.close()


def test_state_kept_keeps_the_rooms_too():
    """A ParallelEnv runs small batches with states here, inside state_kept, or on workers.

    Either way the local env's rooms (pictures outside states) must stay as they were.
    """
    env = plangym.make("PlanMontezuma-v0", frameskip=4)
    state, *_ = env.reset(seed=0)
    with env.state_kept():
        for action, repeats in TO_ROOM_0:
            for _ in range(repeats):
                env.step(action)
        assert 0 in env.rooms
    assert sorted(env.rooms) == [1]
    assert_identical(env.get_state(), state)
    env.close()


@pytest.mark.parametrize("objects_from_pixels", [False, True])
def test_get_restore_and_restore_put_the_game_back_as_in_0_1(objects_from_pixels):
    """0.1's snapshot: its tuple, and a restore of the emulator with the bookkeeping."""
    tracker = CustomMontezuma(objects_from_pixels=objects_from_pixels, score_objects=True)
    tracker.reset(seed=0)
    for _ in range(30):
        tracker.step(RIGHT)
    snapshot = tracker.get_restore()
    state, score, steps, pos, score_objects, lives = snapshot
    assert (score, steps, pos, score_objects, lives) == (
        tracker.cur_score,
        tracker.cur_steps,
        tracker.pos,
        True,
        tracker.cur_lives,
    )
    assert state.dtype == object and len(state) == 2
    ahead = [tracker.step(LEFT) for _ in range(40)]
    moved = (tracker.pos, tracker.bookkeeping())
    tracker.restore(snapshot)
    assert (tracker.pos, tracker.bookkeeping()) == (pos, state[1]) != moved
    again = [tracker.step(LEFT) for _ in range(40)]
    assert_identical(again, ahead)
    tracker.close()


@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_workers_match_the_single_env(backend, request, coords_env):
    kwargs = {"obs_type": "coords", "frameskip": 4, "repeat_action_probability": 0.25}
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        workers = plangym.make(
            "PlanMontezuma-v0", n_workers=2, ray=True, inline_small_batches=False, **kwargs
        )
    else:
        workers = plangym.make(
            "PlanMontezuma-v0", n_workers=2, inline_small_batches=False, **kwargs
        )
    single = plangym.make("PlanMontezuma-v0", **kwargs)
    try:
        states = random_walk(single, 12, seed=3)
        actions = np.random.default_rng(4).integers(single.n_actions, size=12).tolist()
        dts = [1 + i % 3 for i in range(12)]
        expected = single.step_batch(actions, states=states, dt=dts)
        assert_identical(workers.step_batch(actions, states=states, dt=dts), expected)
    finally:
        workers.close()
        single.close()


def test_bad_actions_and_foreign_states_are_rejected_before_stepping(coords_env):
    env = coords_env
    state = random_walk(env, 5, seed=5)[-1]
    atari = AtariEnv("ALE/MontezumaRevenge-v5", frameskip=1)
    try:
        atari_state, *_ = atari.reset()
        # A plain Atari Montezuma state lacks the bookkeeping: refused, and vice versa.
        with pytest.raises(ValueError, match=r"states\[1\].*plain Atari"):
            env.step_batch([0, 0], states=[state, atari_state])
        with pytest.raises(ValueError, match="state"):
            atari.set_state(state)
        with pytest.raises(ValueError, match="state"):
            env.set_state(state[HEADER_SIZE:])
        with pytest.raises((ValueError, TypeError), match=r"actions\[1\]"):
            env.step_batch([0, env.n_actions], states=[state, state])
        assert_identical(env.get_state(), state)
    finally:
        atari.close()


def test_selfcheck_passes():
    results = run_checks("PlanMontezuma-v0", n_steps=20)
    assert {r.status for r in results} == {"PASS"}, [r for r in results if r.status != "PASS"]


def test_coords_follow_the_ram_and_movement(coords_env):
    env = coords_env
    _, obs, info = env.reset()
    assert obs.tolist() == [79.0, 29.0, 1.0, 0.0]  # Joe on the top of room 1
    for action, sign in ((RIGHT, 1), (LEFT, -1)):  # 3 steps more would drop Joe off
        _, obs, info = env.reset()
        x_before = obs[0]
        for _ in range(3):
            obs, _, terminal, _, info = env.step(action)
            assert not terminal
        ram = env.get_ram().astype(int)
        assert obs.tolist() == [ram[42] + 2, 264 - ram[43], ram[3], 0.0]
        assert (info["x"], info["y"], info["room"], info["level"]) == (
            ram[42] + 2,
            264 - ram[43],
            ram[3],
            ram[57],
        )
        assert sign * (obs[0] - x_before) == 12  # one pixel a frame


def test_a_fall_ends_the_episode():
    env = MontezumaEnv(obs_type="coords", frameskip=4, autoreset=False)
    try:
        env.reset()
        for step in range(50):  # noqa: B007 - read after the loop; walk off the left edge of the top floor: Joe falls
            *_, terminal, _, info = env.step(LEFT)
            if terminal:
                break
        assert terminal and 3 <= step < 20
    finally:
        env.close()


def test_max_episode_steps_counts_the_steps_after_the_reset_noops():
    # The reset plays 0.1's three NOOP frames: a limit that counted them truncated every
    # step of an episode of up to three frames at once, and played nothing.
    env = MontezumaEnv(obs_type="coords", frameskip=2, autoreset=False, max_episode_steps=3)
    try:
        env.reset()
        truncations, n_steps = [], []
        for _ in range(4):
            *_, truncated, info = env.step(0)
            truncations.append(truncated)
            n_steps.append(info["n_step"])
        assert truncations == [False, False, True, True]
        assert n_steps == [2, 2, 2, 0]  # nothing is played past the limit
        assert info["episode_frame_number"] == RESET_NOOPS + 3 * 2
    finally:
        env.close()


def test_rooms_are_01s_pictures_kept_across_episodes_and_restores():
    env = MontezumaEnv(obs_type="coords", frameskip=4)
    try:
        state, *_ = env.reset()
        start = env.rooms[1]  # the start room's screen: rows 50 on, x_repeat=1 (0.1's)
        assert isinstance(start, np.ndarray)
        assert (start.shape, start.dtype) == ((160, 160, 3), np.uint8)
        assert env.gym_env.rooms is env.rooms is env.tracker.rooms
        for _ in range(5):
            env.step(RIGHT)
        env.reset()
        env.set_state(state)
        env.step(RIGHT)
        assert list(env.rooms) == [1] and env.rooms[1] is start  # not pictured again
    finally:
        env.close()
    tracker = CustomMontezuma(x_repeat=2)
    assert tracker._x_repeat == 2  # 0.1's name, which code written for it reads
    obs, info = tracker.reset()
    assert info["rooms_visited"] == (1,) and tracker.rooms_visited == (1,)
    assert tracker.rooms[1].shape == (160, 320, 3)  # 0.1's stretched screens
    assert_identical(tracker.rooms[1], obs[50:].repeat(2, axis=1))


def test_pyramid_and_position_types():
    assert room_xy(1) == (4, 0) and PYRAMID[0][4] == 1
    assert all(room_xy(room) is not None for room in range(24))
    pos = MontezumaPosLevel(0, 0, 1, 79, 29)
    assert {pos: 1}[MontezumaPosLevel(0, 0, 1, 79, 29)] == 1
    assert CustomMontezuma(objects_from_pixels=True).objects_from_pixels  # pixel mode, 0.1's


# Actions (action, times) that take Joe from the start into room 0, found by
# examples/go_explore.py (seed 0) with its ENV_KWARGS; 514 agent steps of 4 frames.
TO_ROOM_0 = [
    (14, 2),
    (12, 10),
    (10, 2),
    (4, 21),
    (11, 1),
    (10, 33),
    (14, 1),
    (5, 8),
    (14, 11),
    (15, 1),
    (4, 5),
    (10, 2),
    (11, 13),
    (9, 14),
    (10, 1),
    (9, 1),
    (2, 20),
    (17, 13),
    (15, 9),
    (2, 5),
    (9, 26),
    (6, 13),
    (12, 2),
    (11, 1),
    (2, 6),
    (10, 8),
    (17, 2),
    (13, 5),
    (9, 11),
    (7, 3),
    (16, 5),
    (17, 1),
    (12, 7),
    (3, 2),
    (0, 3),
    (13, 8),
    (14, 11),
    (3, 5),
    (5, 7),
    (2, 2),
    (14, 11),
    (3, 5),
    (8, 17),
    (14, 1),
    (1, 3),
    (0, 2),
    (5, 19),
    (11, 4),
    (2, 10),
    (6, 7),
    (4, 5),
    (1, 1),
    (6, 5),
    (17, 10),
    (9, 1),
    (6, 20),
    (17, 9),
    (3, 4),
    (10, 40),
    (16, 1),
    (4, 4),
    (15, 6),
    (1, 7),
    (9, 2),
    (15, 5),
    (2, 10),
    (4, 4),
]


def test_joe_walks_out_of_the_first_room_and_the_trip_replays_exactly():
    env = plangym.make(
        "PlanMontezuma-v0", obs_type="coords", frameskip=4, score_objects=True, render_mode=None
    )
    env.reset()
    actions = [action for action, times in TO_ROOM_0 for _ in range(times)]
    halfway = None
    rooms = []
    for i, action in enumerate(actions):
        if i == len(actions) // 2:
            halfway = env.get_state()
        obs, _, end, _, info = env.step(action)
        assert not end
        rooms.append(info["room"])
        assert obs[2] == info["room"] == env.get_ram()[3]
    assert rooms[0] == 1 and rooms[-1] == 0 and set(rooms) == {0, 1}
    # 0.1's picture of room 0: the first screen after the doorway with Joe's face in it.
    pictures = dict(env.rooms)
    assert sorted(pictures) == [0, 1] and info["rooms_visited"] == (0, 1)
    assert (pictures[0][:, :, 0] == 228).any() and not np.array_equal(pictures[0], pictures[1])
    fresh = env.clone()
    rest = actions[len(actions) // 2 :]
    assert_identical(replay(fresh, halfway, rest), replay(env, halfway, rest))
    # Pictures are not in states: restoring and resetting keep them; a restored trip that
    # enters room 0 takes the same picture.
    env.set_state(halfway)
    env.reset()
    assert sorted(env.rooms) == [0, 1] and all(env.rooms[r] is pictures[r] for r in (0, 1))
    assert sorted(fresh.rooms) == [0, 1]
    assert_identical(fresh.rooms[0], pictures[0])
    env.close()
    fresh.close()


def test_custom_montezuma_passes_gymnasiums_env_checker_and_rebuilds_from_its_spec():
    # Usable on its own as a gymnasium env: check_env's last step, spec.make(), failed
    # ("does not inherit from gymnasium.utils.RecordConstructorArgs").
    from gymnasium.utils.env_checker import check_env

    tracker = CustomMontezuma(obs_type="coords", score_objects=True, check_death=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice on the ALE's spaces
        check_env(tracker, skip_render_check=True)
    rebuilt = tracker.spec.make()
    try:
        assert isinstance(rebuilt, CustomMontezuma)
        assert (rebuilt.coords_obs, rebuilt.score_objects, rebuilt.check_death) == (
            True,
            True,
            False,
        )
        assert np.array_equal(rebuilt.reset(seed=1)[0], tracker.reset(seed=1)[0])
    finally:
        rebuilt.close()
        tracker.close()


def test_the_tracker_hands_other_names_to_the_game_as_plangym_01s_did():
    # 0.1's (gym) wrapper passed them on: env.gym_env.ale, env.gym_env.get_action_meanings().
    env = plangym.make("PlanMontezuma-v0")
    try:
        assert env.gym_env.ale is env.gym_env.unwrapped.ale
        assert env.gym_env.get_action_meanings()[:3] == ["NOOP", "FIRE", "UP"]
        with pytest.raises(AttributeError, match=r"'CustomMontezuma' object .* 'no_such_name'"):
            env.gym_env.no_such_name  # noqa: B018
    finally:
        env.close()
