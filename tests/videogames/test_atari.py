"""AtariEnv: fidelity to ale-py, frame accounting, episodic life, parameters and bad input."""

import gc
import os
import pickle
import subprocess
import sys
import warnings
import weakref

import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.vectorization.costs import DispatchCosts
from plangym.videogames import AtariEnv
from tests.helpers.random_play import state_after_random_play


@pytest.fixture(scope="module")
def pong():
    env = plangym.make("ALE/Pong-v5")
    yield env
    env.close()


@pytest.mark.parametrize("obs_type", ["rgb", "grayscale", "ram"])
def test_observations_match_ale_py(obs_type):
    """Stepping through plangym shows what ale-py itself shows for the same frames."""
    env = AtariEnv("ALE/Breakout-v5", obs_type=obs_type, frameskip=4)
    reference = gym.make(
        "ALE/Breakout-v5", obs_type=obs_type, frameskip=4, repeat_action_probability=0.0
    )
    env.seed(7)
    _, obs, _ = env.reset()
    ref_obs, _ = reference.reset(seed=7)
    assert_identical(obs, ref_obs)
    assert obs.shape == env.obs_shape == env.observation_space.shape
    for action in [1, 2, 3, 2, 0, 3, 3, 1] * 4:
        obs, reward, terminal, truncated, info = env.step(action)
        ref = reference.step(action)
        assert_identical(obs, ref[0])
        assert reward == ref[1] and terminal == ref[2] and truncated == ref[3]
        assert info["lives"] == ref[4]["lives"]
        assert info["episode_frame_number"] == ref[4]["episode_frame_number"]
    env.close()
    reference.close()


def test_frameskip_is_applied_once():
    """plangym 0.1 let the ALE skip frames too: 25 frames for frameskip 5. Here: 5."""
    env = AtariEnv("ALE/MsPacman-v5", frameskip=5)
    assert env.gym_env.unwrapped._frameskip == 1
    env.reset()
    before = env.ale.getEpisodeFrameNumber()
    *_, info = env.step(0)
    assert env.ale.getEpisodeFrameNumber() - before == 5 == info["n_step"]
    *_, info = env.step(0, dt=3)
    assert env.ale.getEpisodeFrameNumber() - before == 20
    assert info["n_step"] == 15 and info["dt"] == 3


def test_random_frameskip_ids_get_a_fixed_frameskip():
    env = plangym.make("Pong-v4", frameskip=3)  # registered with frameskip=(2, 5)
    env.reset()
    before = env.ale.getEpisodeFrameNumber()
    for _ in range(5):
        env.step(env.sample_action())
    assert env.ale.getEpisodeFrameNumber() - before == 15


def play_until_life_lost(env, max_steps=2000):
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(max_steps):
        data = env.step(int(rng.integers(env.n_actions)), return_state=True)
        if data[-1]["lost_life"] or data[3]:
            return data
    raise AssertionError("no life lost")


def test_episodic_life_ends_the_episode_at_a_lost_life():
    env = AtariEnv("ALE/Breakout-v5", episodic_life=True)
    state, obs, reward, terminal, truncated, info = play_until_life_lost(env)
    assert info["lost_life"] and terminal and not truncated
    assert info["lives"] == 4
    # autoreset ran after the step returned its own data: the game starts over
    assert env.lives() == 5
    assert not np.array_equal(env.get_state(), state)
    # the returned terminal state is the game at the lost life, restorable
    env.set_state(state)
    assert env.lives() == 4


def test_without_episodic_life_a_lost_life_is_not_terminal():
    env = AtariEnv("ALE/Breakout-v5", episodic_life=False)
    *_, terminal, _, info = play_until_life_lost(env)
    assert info["lost_life"] and not terminal
    assert env.lives() == 4


def test_autoreset_returns_the_terminal_step_unchanged():
    env = AtariEnv("ALE/Breakout-v5", episodic_life=True, return_image=True)
    data = play_until_life_lost(env)
    env_after_reset = env.get_state()
    env.set_state(data[0])
    assert env.lives() == data[-1]["lives"]
    assert data[-1]["rgb"].shape == (210, 160, 3)
    assert not np.array_equal(env_after_reset, data[0])


def test_frame_limit_follows_remove_time_limit():
    assert AtariEnv("ALE/Pong-v5").ale.getInt("max_num_frames_per_episode") == 0
    limited = AtariEnv("ALE/Pong-v5", remove_time_limit=False)
    assert limited.ale.getInt("max_num_frames_per_episode") == 108000


def test_max_episode_steps_is_the_emulators_frame_limit_and_travels_in_states():
    # A TimeLimit would count steps outside the state; the ALE's frame count is inside.
    env = plangym.make("ALE/Pong-v5", max_episode_steps=10)
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    state = env.get_state()
    assert [t for t in range(1, 8) if env.step(0)[3]] == [5]  # step 10 of the episode
    fresh = plangym.make("ALE/Pong-v5", max_episode_steps=10)
    fresh.set_state(state)
    assert [t for t in range(1, 8) if fresh.step(0)[3]] == [5]
    with pytest.raises(ValueError, match="max_episode_steps: expected an integer >= 1"):
        plangym.make("ALE/Pong-v5", max_episode_steps=0)


def test_clone_keeps_every_parameter():
    wrappers = [(gym.wrappers.TransformReward, {"func": lambda r: 2 * r})]
    env = AtariEnv(
        "ALE/Breakout-v5",
        frameskip=3,
        episodic_life=True,
        obs_type="grayscale",
        mode=0,
        difficulty=1,
        repeat_action_probability=0.1,
        full_action_space=True,
        wrappers=wrappers,
        return_image=True,
        remove_time_limit=False,
        autoreset=False,
    )
    clone = env.clone()
    for attribute in [
        "name",
        "frameskip",
        "episodic_life",
        "obs_type",
        "mode",
        "difficulty",
        "repeat_action_probability",
        "full_action_space",
        "render_mode",
        "return_image",
        "remove_time_limit",
        "autoreset",
        "n_actions",
    ]:
        assert getattr(clone, attribute) == getattr(env, attribute), attribute
    assert clone._wrappers == env._wrappers
    assert clone.n_actions == 18
    assert clone.clone(frameskip=2).frameskip == 2
    assert AtariEnv("ALE/Pong-v5", render_mode=None).clone().render_mode is None


def test_wrappers_see_every_frame_and_replay_stays_exact():
    wrappers = [(gym.wrappers.TransformReward, {"func": lambda r: 10 * r})]
    wrapped = AtariEnv("ALE/Breakout-v5", wrappers=wrappers, repeat_action_probability=0.25)
    plain = AtariEnv("ALE/Breakout-v5", repeat_action_probability=0.25)
    state, *_ = plain.reset()
    actions = [1, 3, 3, 2, 2, 2, 3, 3, 3, 2] * 20
    rewards = {"plain": 0.0, "wrapped": 0.0}
    for label, env in (("plain", plain), ("wrapped", wrapped)):
        env.set_state(state)
        for action in actions:
            new_state, obs, reward, *_ = env.step(action, return_state=True)
            rewards[label] += reward
        rewards[label + "_state"] = new_state
    assert rewards["wrapped"] == 10 * rewards["plain"] > 0
    assert_identical(rewards["wrapped_state"], rewards["plain_state"])


def test_states_pickle_and_envs_pickle_with_their_state(pong):
    pong.reset()
    for _ in range(10):
        pong.step(pong.sample_action())
    state = pong.get_state()
    restored = pickle.loads(pickle.dumps(pong))
    assert_identical(restored.get_state(), state)
    assert_identical(restored.step(2, state=state), pong.step(2, state=state))
    restored.close()


def test_game_options_reach_the_emulator():
    env = AtariEnv("ALE/Pong-v5", mode=1, difficulty=1)
    assert env.ale.cloneState().getCurrentMode() == 1
    assert env.ale.cloneState().getDifficulty() == 1


@pytest.mark.parametrize(
    ("action", "error"),
    [
        (-1, ValueError),
        (6, ValueError),
        (1.5, TypeError),
        (True, TypeError),
        ("1", TypeError),
        (np.array([1, 2]), TypeError),
    ],
)
def test_bad_actions_are_rejected_before_stepping(pong, action, error):
    state, *_ = pong.reset()
    with pytest.raises(error, match="action: expected an integer in \\[0, 6\\)"):
        pong.step(action, state=state)
    with pytest.raises(error, match=r"actions\[2\]"):
        pong.step_batch([0, 1, action], states=[state] * 3)
    assert_identical(pong.get_state(), state)
    assert pong.ale.getEpisodeFrameNumber() == 0


def test_foreign_states_are_rejected(pong):
    state, *_ = pong.reset()
    cartpole_state = plangym.make("CartPole-v1").get_state()
    with pytest.raises(TypeError, match="state: expected an ALE/Pong-v5 state"):
        pong.step(0, state=cartpole_state)
    pacman_state = AtariEnv("ALE/MsPacman-v5").get_state()
    with pytest.raises(ValueError, match="state of another game"):
        pong.set_state(pacman_state)
    with pytest.raises(ValueError, match="corrupt"):
        pong.set_state(state[:50])
    assert_identical(pong.get_state(), state)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="obs_type: expected one of"):
        AtariEnv("ALE/Pong-v5", obs_type="coords")
    with pytest.raises(ValueError, match="repeat_action_probability"):
        AtariEnv("ALE/Pong-v5", repeat_action_probability=1.5)
    with pytest.raises(ValueError, match="frameskip: expected an integer >= 1, received 0"):
        AtariEnv("ALE/Pong-v5", frameskip=0)
    with pytest.raises(ValueError, match="array_state"):
        AtariEnv("ALE/Pong-v5", array_state=False)
    # 0.1's docs show make("ALE/MsPacman-v5", difficulty=2, mode=1): MsPacman has one
    # difficulty, which ale-py says only as "Invalid difficulty requested".
    with pytest.raises(
        ValueError, match=r"difficulty: expected one of the game's \[0\] .*, received 2"
    ):
        plangym.make("ALE/MsPacman-v5", difficulty=2, mode=1)
    with pytest.raises(ValueError, match=r"mode: expected one of the game's \[0, 1, 2, 3\]"):
        plangym.make("ALE/MsPacman-v5", mode=9, n_workers=2)  # refused before any worker
    # ale-py's own errors for these named nothing (a pybind TypeError for difficulty=-1).
    with pytest.raises(ValueError, match=r"^difficulty: expected None or .*, received -1"):
        AtariEnv("ALE/Pong-v5", difficulty=-1)
    with pytest.raises(TypeError, match=r"^mode: expected None or .*, received 1.5 \(float\)"):
        AtariEnv("ALE/Pong-v5", mode=1.5)
    with pytest.raises(TypeError, match=r"^repeat_action_probability: expected a finite"):
        AtariEnv("ALE/Pong-v5", repeat_action_probability="x")
    with pytest.raises(TypeError, match=r"^full_action_space: expected True or False"):
        AtariEnv("ALE/Pong-v5", full_action_space="yes")


@pytest.mark.parametrize("name", ["ALE/MsPacman-v5", "PlanMontezuma-v0"])
def test_the_reset_shows_the_reset_screen_not_the_frame_after(name):
    """A reset plays one frame more and undoes it (see _settle_after_reset): the emulator's
    screen is that frame's, 172 pixels off on MsPacman; the reset's picture is shown."""
    env = plangym.make(name, return_image=True)
    try:
        state, obs, info = env.reset(seed=0)
        assert np.array_equal(env.get_image(), obs) and np.array_equal(env.render(), obs)
        assert np.array_equal(info["rgb"], obs)
        state, obs, *_ = env.step(3, state=state)
        assert np.array_equal(env.get_image(), obs) and np.array_equal(env.render(), obs)
    finally:
        env.close()


class UpsideDown(gym.Wrapper):
    def render(self):
        return self.env.render()[::-1]


def test_render_goes_through_the_users_wrappers():
    env = plangym.make("ALE/MsPacman-v5", wrappers=[UpsideDown])
    try:
        _, obs, *_ = env.step(3, state=env.reset()[0])
        assert np.array_equal(env.render(), obs[::-1])
    finally:
        env.close()


def test_render_mode_none_still_observes_and_shows_the_screen():
    """As in plangym 0.1.32: the emulator's screen is the observation and get_image()'s
    picture without a render mode; return_image=True needs one."""
    env = AtariEnv("ALE/Pong-v5", render_mode=None)
    obs, *_ = env.step(0)
    assert obs.shape == (210, 160, 3) and obs.any()
    assert np.array_equal(env.get_image(), obs) and env.img_shape == (210, 160, 3)
    with pytest.raises(
        ValueError,
        match="render_mode: return_image=True requires render_mode='rgb_array' or 'human'",
    ):
        AtariEnv("ALE/Pong-v5", render_mode=None, return_image=True)
    with pytest.raises(ValueError, match="Invalid render_mode: expected one of"):
        AtariEnv("ALE/Pong-v5", render_mode="rgb")
    drawn = AtariEnv("ALE/Pong-v5", return_image=True)
    *_, info = drawn.step(0)
    assert info["rgb"].shape == (210, 160, 3) == drawn.img_shape


def test_lossy_cartridge_saves_do_not_split_the_timeline():
    """Pitfall II's DPC chip rounds its sound clock when saved: the live game must follow
    the saved state, or stepping on differs from stepping a restored copy."""
    env = AtariEnv("ALE/Pitfall2-v5", repeat_action_probability=0.25)
    state, actions = state_after_random_play(env, np.random.default_rng(3), 20, n_next=30)
    live = [env.step(a, return_state=True) for a in actions]
    env.set_state(state)
    assert_identical([env.step(a, return_state=True) for a in actions], live)


@pytest.mark.parametrize("obs_type", ["rgb", "grayscale", "ram"])
def test_observations_written_in_place_equal_the_generic_path(obs_type):
    """The emulator writes screens into shared memory or pooled arrays; nothing may change."""
    from plangym.core.batch import Batch

    env = AtariEnv("ALE/MsPacman-v5", obs_type=obs_type, repeat_action_probability=0.25)
    env.seed(3)
    env.reset()
    states = []
    for action in np.random.default_rng(0).integers(env.n_actions, size=40).tolist():
        env.step(action)
        states.append(env.get_state())
    actions = np.random.default_rng(1).integers(env.n_actions, size=40).tolist()
    dts = np.random.default_rng(2).integers(1, 4, size=40).tolist()
    generic = env.run_batch_generic(Batch(actions, states, dts, True, None)).as_lists()
    observs_out = np.zeros((40, *env.obs_shape), np.uint8)
    columns = env.run_batch_columns(actions, states, dts, True, observs_out)
    assert columns.observs is observs_out
    assert_identical(columns.as_lists(), generic)
    assert_identical(env.step_batch(actions, states, dts), generic)  # into pooled arrays
    env.close()


def test_batch_observations_are_the_callers_and_recycled_once_dropped():
    env = AtariEnv("ALE/Pong-v5")
    states = [env.step(action, return_state=True)[0] for action in [0, 1, 2, 3, 4, 5]]
    first = env.step_batch([1] * 6, states)[1]
    assert len({id(obs) for obs in first}) == 6 and all(obs.base is None for obs in first)
    kept, kept_bytes, seen = first[2], first[2].tobytes(), {id(obs) for obs in first}
    del first
    second = env.step_batch([2] * 6, states)[1]
    assert kept.tobytes() == kept_bytes  # what the caller holds is never written again
    assert id(kept) not in {id(obs) for obs in second}
    assert len(seen & {id(obs) for obs in second}) == 5  # the dropped ones were reused
    env.close()


def pong_game_over(**kwargs):
    """Return an env of Pong, the state where its game is over, and the last screen."""
    env = AtariEnv("ALE/Pong-v5", frameskip=20, autoreset=False, **kwargs)
    state, *_ = env.reset()
    terminal = False
    while not terminal:  # the CPU wins 21-0 in about 3,000 frames
        state, obs, _, terminal, *_ = env.step(0, state=state)
    return env, state, obs


def test_stepping_on_after_game_over_is_exact_and_quiet():
    """Planners expand terminal leaves: the ALE steps on after a game over without a
    warning, and plangym adds none; the step is as exact as any other."""
    env, state, _ = pong_game_over(obs_type="ram")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        after = env.step_batch([0, 3], [state, state], dt=2)
    assert all(after[3])
    assert_identical(
        after,
        AtariEnv("ALE/Pong-v5", obs_type="ram", frameskip=20, autoreset=False).step_batch(
            [0, 3], [state, state], dt=2
        ),
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"obs_type": "grayscale"},
        {"return_image": True},
        {"wrappers": [(gym.wrappers.TransformReward, {"func": float})]},  # via gym_env.step
    ],
    ids=["rgb", "grayscale", "return_image", "wrapped"],
)
def test_a_step_from_a_game_over_shows_a_black_screen_whatever_came_before(kwargs):
    """The ALE plays no frame once its game is over, so its screen is the last one it
    drew: after a restore, one of another history. Such a step shows a black screen, the
    one its state determines; the step that ends the game shows its real last screen."""
    env, over, last = pong_game_over(**kwargs)
    assert last.any()
    start, *_ = env.reset()
    for history in (start, over):  # the screen before the step differs each time
        env.step(3, state=history)
        _, obs, _, terminal, _, info = env.step(0, state=over)
        assert terminal and not obs.any() and obs.shape == last.shape
        assert info["n_step"] == 0  # no frame played
        if env.return_image:
            assert not info["rgb"].any() and not env.get_image().any()
        batch = env.step_batch([0, 2], [over, over])
        assert not any(obs.any() for obs in batch[1])
    env.step(0, state=start)
    assert env.observe().any()  # a played frame shows the screen again
    env.close()


def test_after_a_black_step_a_restore_shows_the_last_frame_drawn_on_every_reader():
    """get_image() stayed black after set_state while render() showed the last frame."""
    env, over, last = pong_game_over()
    env.step(0, state=over)
    assert not env.get_image().any()
    env.set_state(over)
    assert_identical(env.get_image(), env.render())
    assert_identical(env.get_image(), last)
    env.close()


def test_steps_from_a_game_over_are_identical_on_workers():
    _, over, _ = pong_game_over()
    single = AtariEnv("ALE/Pong-v5", frameskip=20, autoreset=False)
    to_workers = DispatchCosts(2, smoothing=0.0, per_element=1.0, overhead=1e-9)
    parallel = plangym.make(
        "ALE/Pong-v5", frameskip=20, autoreset=False, n_workers=2, dispatch_costs=to_workers
    )
    try:
        start, *_ = single.reset()
        moved = single.step(2, state=start, dt=3)[0]  # the paddle moved: another screen
        parallel.step_batch([3] * 4, [moved] * 4)  # each worker draws that screen first
        actions, states = [0, 1, 2, 3], [over, start, over, start]
        assert_identical(parallel.step_batch(actions, states), single.step_batch(actions, states))
    finally:
        parallel.close()
        single.close()


def test_a_batch_resets_only_where_no_state_follows():
    """With autoreset, an element that ends the game is followed by a reset, which the next
    element's state would undo: the in-place path leaves those out, and gives what a loop
    of steps gives, and leaves the env where that loop leaves it."""
    env, over, _ = pong_game_over(obs_type="ram")
    env.autoreset = True
    start, *_ = env.reset()
    states = [over, start, over, over]
    resets = []
    reset = env.reset
    env.reset = lambda **kwargs: resets.append(1) or reset(**kwargs)
    batch = env.step_batch([0] * 4, states)
    assert len(resets) == 1 and env.batch_path == "in_place"  # after the last element only
    after = env.get_state()
    env.reset = reset
    rows = [env.step(0, state=state) for state in states]
    assert_identical(list(zip(*batch, strict=True)), rows)
    assert_identical(after, env.get_state())
    env.close()


@pytest.mark.parametrize("wrapped", [False, True])
def test_an_env_goes_with_its_last_reference(wrapped):
    # The frame primitive is looked up per step: nothing the env keeps refers back to it,
    # so its emulator is released at once, without waiting for the garbage collector.
    wrappers = [gym.wrappers.RecordEpisodeStatistics] if wrapped else None
    env = AtariEnv("ALE/Pong-v5", wrappers=wrappers)
    state, *_ = env.reset()
    env.step_batch([0, 1], states=[state, state])
    assert env.batch_path == ("generic" if wrapped else "in_place")
    gone = weakref.ref(env)
    gc.disable()
    try:
        del env
        assert gone() is None
    finally:
        gc.enable()


HUMAN_TWICE = """
import plangym
for _ in range(3):  # a notebook cell run three times
    env = plangym.make("ALE/Pong-v5", render_mode="human")
    env.reset()
    env.step(0, dt=3)
    env.setup()  # built again, as plangym 0.1's tests do: the open emulator is closed first
    env.reset()
    env.step(0, dt=3)
    env.close()
print("played")
"""


def test_human_mode_envs_made_again_after_close_play():
    """ale-py 0.12.1 segfaulted in the next human-mode emulator once one was destroyed."""
    environ = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    command = [sys.executable, "-c", HUMAN_TWICE]
    done = subprocess.run(
        command, check=False, env=environ, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "played" in done.stdout, done.stderr[-2000:]
