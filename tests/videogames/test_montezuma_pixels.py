"""MontezumaEnv's pixel mode (0.1's ``objects_from_pixels``), on real frames of the game."""

import numpy as np
import pytest

import plangym
from plangym import api_tests
from plangym.api_tests import assert_identical
from plangym.exactness import replay
from plangym.selfcheck import run_checks
from plangym.videogames.montezuma import (
    HEADER_SIZE,
    OBJECT_PIXELS,
    PIXEL_HEADER_SIZE,
    CustomMontezuma,
    MontezumaEnv,
    MontezumaPosLevel,
)
from plangym.videogames.montezuma import pixels as px
from tests.videogames.test_montezuma import TO_ROOM_0

LEFT = 4
# The trip of test_montezuma in single frames: the key is picked up at frame 1003 (100
# points) and opens the door at 1992 (300 points); room 1 is left for room 0 at the end.
# The screen shows each in the next frame.
FRAMES = [action for action, times in TO_ROOM_0 for _ in range(4 * times)]
KEY_FRAME, DOOR_FRAME = 1003, 1992
PIXEL_KWARGS = {"obs_type": "coords", "score_objects": True, "objects_from_pixels": True}


def make(**kwargs) -> MontezumaEnv:
    return MontezumaEnv(**{"frameskip": 1, "render_mode": None, **PIXEL_KWARGS, **kwargs})


@pytest.fixture(scope="module")
def trip():
    """Each frame of the trip in pixel mode (rooms remembered): RAM before, step, screen."""
    env = make(objects_remember_rooms=True)
    env.reset()
    frames = []
    for action in FRAMES:
        ram_before = env.get_ram().astype(int)
        obs, reward, end, _, info = env.step(action)
        frames.append((ram_before, obs, reward, end, info, env.ale.getScreenRGB()))
        assert info["room"] == env.get_ram()[3]  # the room is always the RAM's
    env.close()
    return frames


def test_the_face_is_where_the_ram_put_joe(trip):
    """The screen shows the RAM's position of the frame before, within 2 pixels."""
    seen = 0
    for ram_before, obs, _, _, info, screen in trip:
        face = px.face_pixels(screen)
        if not face:
            continue
        seen += 1
        x, y = px.face_centre(face)
        assert (obs[0], obs[1]) == (np.float32(x), np.float32(y))
        assert (info["x"], info["y"]) == (x, y)
        assert abs(x - (ram_before[42] + 2)) <= 2 and abs(y - (264 - ram_before[43])) <= 2
    assert seen >= len(trip) - 2  # the face only leaves the screen between rooms


def test_the_inventory_bar_shows_the_ram_objects(trip):
    """Objects read from the screen are the inventory byte of the frame before, each frame."""
    for ram_before, obs, *_ in trip:
        assert obs[3] == ram_before[65]
    objects = [info["objects"] for _, _, _, _, info, _ in trip]
    assert objects[0] == objects[KEY_FRAME] == () and objects[DOOR_FRAME + 1 :] == [()] * 63
    assert set(objects[KEY_FRAME + 1 : DOOR_FRAME + 1]) == {((40, 1),)}  # key 1, from room 1
    assert (trip[KEY_FRAME][2], trip[DOOR_FRAME][2]) == (100, 300)
    assert trip[KEY_FRAME + 1][1][3] == 1 << OBJECT_PIXELS.index(40) == 2


def test_transitions_are_not_deaths_and_a_fall_is(trip):
    assert not any(end for _, _, _, end, *_ in trip)
    assert trip[-1][4]["room"] == 0 and trip[-1][4]["rooms_visited"] == (0, 1)
    empty = [screen for *_, screen in trip if not px.face_pixels(screen)]
    assert empty and all(px.is_transition_screen(screen) for screen in empty)
    env = make(autoreset=False)
    try:
        env.reset()
        for step in range(200):  # noqa: B007 - read after the loop
            *_, end, _, _ = env.step(LEFT)
            if end:
                break
        assert end and step < 100  # Joe walked off the top floor and died
    finally:
        env.close()


def test_blob_sizes_match_opencv_on_the_inventory_bar(trip):
    cv2 = pytest.importorskip("cv2")
    screens = [trip[0][-1], trip[KEY_FRAME + 1][-1]]
    rng = np.random.default_rng(0)
    masks = [s[px.INVENTORY[0], px.INVENTORY[1], 0] != 0 for s in screens]
    masks += [rng.random((20, 55)) < p for p in (0.1, 0.3, 0.5)]
    for mask in masks:
        _, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8) * 255)
        # The same sizes; OpenCV labels blobs in another order, which 0.1 did not use.
        assert sorted(px.component_areas(mask)) == sorted(int(area) for area in stats[1:, -1])
    assert px.inventory_areas(screens[1]) == (40,)


@pytest.fixture(scope="module")
def key_states():
    """States holding the key (rooms remembered or not), reached without sticky actions."""
    states = {}
    for remember in (False, True):
        env = make(objects_remember_rooms=remember, frameskip=4)
        env.reset()
        for action in FRAMES[: KEY_FRAME + 20 : 4]:
            env.step(action)
        assert env.pos.score == (((40, 1),) if remember else 2)
        states[remember] = env.get_state()
        env.close()
    return states


@pytest.mark.parametrize("sticky", [0.0, 0.25])
@pytest.mark.parametrize("remember", [False, True])
def test_restored_pixel_states_replay_exactly(remember, sticky, key_states):
    env = make(objects_remember_rooms=remember, frameskip=4, repeat_action_probability=sticky)
    fresh = env.clone()
    try:
        state = key_states[remember]
        assert len(state) > PIXEL_HEADER_SIZE and bytes(state[:8]) == b"PLANMZP2"
        actions = FRAMES[KEY_FRAME + 20 : KEY_FRAME + 260 : 4]
        first = replay(env, state, actions)
        for action in actions[:7]:  # leave the env elsewhere
            env.step(action)
        assert_identical(replay(env, state, actions), first)
        assert_identical(replay(fresh, state, actions), first)
        assert_identical(env.get_state(), fresh.get_state())
    finally:
        env.close()
        fresh.close()


def test_where_joe_was_last_seen_travels_in_the_state(key_states):
    env = make(objects_remember_rooms=True, frameskip=4)
    try:
        state = key_states[True]
        env.set_state(state)
        before = (env.pos, env.tracker.bookkeeping(), env.get_coords().tolist())
        assert before[0].score == ((40, 1),) and before[2][3] == 2
        elsewhere = MontezumaPosLevel(1, ((42, 3), (50, 4)), 3, 1.0, 2.0)
        env.tracker.restore_bookkeeping((5.0, 3, 5, 2, elsewhere, 65))  # scramble the bookkeeping
        env.set_state(state)
        assert (env.pos, env.tracker.bookkeeping(), env.get_coords().tolist()) == before
        assert_identical(env.get_state(), state)
    finally:
        env.close()


def test_modes_refuse_each_others_states():
    pixel, ram = make(), MontezumaEnv(obs_type="coords")
    try:
        pixel_state, *_ = pixel.reset()
        ram_state, *_ = ram.reset()
        assert len(pixel_state) - PIXEL_HEADER_SIZE == len(ram_state) - HEADER_SIZE
        with pytest.raises(ValueError, match=r"pixel-mode.*other mode \(starting with b'PLANMZ01'"):
            pixel.set_state(ram_state)
        with pytest.raises(ValueError, match=r"RAM-mode.*other mode \(starting with b'PLANMZP2'"):
            ram.set_state(pixel_state)
    finally:
        pixel.close()
        ram.close()


@pytest.mark.parametrize(
    "reading",
    [
        {"score_objects": False},
        {"objects_remember_rooms": False},
        {"only_keys": True},
        {"x_repeat": 2},
    ],
)
def test_a_pixel_mode_env_refuses_states_of_one_reading_joe_otherwise(reading):
    """What a pixel-mode state saw of Joe means what its env's reading made of it (the
    kind of his objects value, the scale of his x): another reading is refused."""
    options = {"score_objects": True, "objects_remember_rooms": True}
    source, target = make(**options), make(**{**options, **reading})
    try:
        state, *_ = source.reset()
        own, *_ = target.reset()
        (name, value), *_ = reading.items()
        with pytest.raises(ValueError, match=rf"reading Joe with .*{name}={value}.*received"):
            target.step_batch([0, 0], [own, state])
        assert_identical(target.get_state(), own)  # refused before anything stepped
        source.set_state(state)  # the source takes its own
    finally:
        source.close()
        target.close()


def test_a_cut_state_is_refused_with_its_own_length():
    for env in (make(), MontezumaEnv(obs_type="coords")):
        state, *_ = env.reset()
        with pytest.raises(ValueError, match=rf"of {len(state)} bytes, received {len(state) - 1}"):
            env.set_state(state[:-1])
        env.close()


def test_the_observation_type_does_not_change_what_is_seen():
    infos = []
    for obs_type in ("coords", "ram", "rgb"):
        env = make(obs_type=obs_type)
        env.reset()
        infos.append([env.step(a)[-1] for a in FRAMES[:40]])
        env.close()
    assert_identical(infos[0], infos[1])
    assert_identical(infos[0], infos[2])


def test_remembered_rooms_without_pixels_change_nothing_as_in_0_1():
    plain = plangym.make("PlanMontezuma-v0", obs_type="coords", score_objects=True)
    remember = plangym.make(
        "PlanMontezuma-v0", obs_type="coords", score_objects=True, objects_remember_rooms=True
    )
    try:
        steps = [replay(env, env.reset()[0], FRAMES[:30]) for env in (remember, plain)]
        # The same steps; the states differ only in the (unseeded) sticky-action generator.
        assert_identical(*[[step[1:] for step in run] for run in steps])
        assert isinstance(remember.step(0)[-1]["x"], int)  # RAM mode: x from RAM[42]
    finally:
        plain.close()
        remember.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"objects_from_pixels": "yes"}, TypeError, "objects_from_pixels: expected True or False"),
        ({"objects_remember_rooms": 1}, TypeError, "objects_remember_rooms: expected True or"),
        ({"only_keys": None}, TypeError, r"only_keys: expected True or False, received None"),
        ({"x_repeat": 0}, ValueError, r"x_repeat: expected an integer >= 1, received 0"),
        ({"x_repeat": 1.5}, TypeError, r"x_repeat: expected an integer >= 1, received 1.5"),
    ],
)
def test_bad_tracker_options_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        MontezumaEnv(delay_setup=True, **kwargs)
    with pytest.raises(error, match=message):
        CustomMontezuma(**kwargs)


def test_01_helpers_of_the_tracker():
    tracker = CustomMontezuma(objects_from_pixels=True, score_objects=True, only_keys=True)
    try:
        obs, info = tracker.reset(seed=0, return_info=True)
        face = tracker.get_face_pixels(obs)
        assert tracker.pos_from_obs(face, obs) == tracker.pos
        assert tracker.pos_from_obs(set(), obs) is tracker.pos  # no face: as last seen
        assert not tracker.is_pixel_death(obs, face) and not tracker.is_ram_death()
        assert tracker.is_pixel_death(obs, set()) and not tracker.is_transition_screen(obs)
        assert tracker.get_objects_from_pixels(obs, 1, ()) == 0
        assert np.array_equal(tracker.render(mode="human"), obs)
        saved = tracker.state_to_numpy()
        assert saved.dtype == object and saved.shape == (2,) and saved[1] is None
        frames = [tracker.step(3)[0] for _ in range(5)]
        tracker.unwrapped.ale.restoreState(saved[0])
        assert all(np.array_equal(tracker.step(3)[0], frame) for frame in frames)
    finally:
        tracker.close()


class TestMontezumaPixelConformance(api_tests.TestVideogameEnv):
    """The conformance suite in pixel mode, rooms remembered."""

    @pytest.fixture
    def env(self):
        env = make(objects_remember_rooms=True, frameskip=2, repeat_action_probability=0.25)
        env.api_test_steps = 20
        yield env
        env.close()


def test_selfcheck_passes_in_pixel_mode():
    kwargs = {**PIXEL_KWARGS, "objects_remember_rooms": True}
    results = run_checks("PlanMontezuma-v0", n_steps=20, env_kwargs=kwargs)
    assert {r.status for r in results} == {"PASS"}, [r for r in results if r.status != "PASS"]


def test_process_workers_match_the_single_env(key_states):
    kwargs = {**PIXEL_KWARGS, "frameskip": 4, "repeat_action_probability": 0.25}
    workers = plangym.make("PlanMontezuma-v0", n_workers=2, inline_small_batches=False, **kwargs)
    single = plangym.make("PlanMontezuma-v0", **kwargs)
    try:
        start = single.step_batch([0, 0], states=[key_states[False]] * 2)[0]
        states = [start[0], start[1], key_states[False], start[0]]
        actions, dts = [3, 4, 11, 0], [1, 2, 3, 1]
        expected = single.step_batch(actions, states=states, dt=dts)
        assert_identical(workers.step_batch(actions, states=states, dt=dts), expected)
    finally:
        workers.close()
        single.close()
