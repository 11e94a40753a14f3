"""MujocoEnv: gymnasium's MuJoCo envs, exact on every id, every backend, with pictures."""

import pickle
import subprocess
import sys

import mujoco
import numpy as np
import pytest

import plangym
from plangym.api_tests import TestPlangymEnv, assert_identical  # noqa: F401
from plangym.control import MujocoEnv
from plangym.environment_names import MUJOCO
from plangym.exactness import replay
from plangym.selfcheck import run_checks
from tests.helpers.vectorized_contract import random_states
from tests.helpers.worker_parity import MIXED_DTS, assert_batch_like_single, single_and_workers

pytestmark = pytest.mark.filterwarnings("ignore:MuJoCo. compiler attribute:RuntimeWarning")


@pytest.fixture(params=["Hopper-v5", "Reacher-v4"])
def env(request):
    env = plangym.make(request.param, render_mode=None)
    yield env
    env.close()


def warm_state(env, seed: int, n_steps: int = 20) -> np.ndarray:
    env.seed(seed)
    env.action_space.seed(seed)
    env.reset()
    for _ in range(n_steps):
        env.step(env.sample_action())
    return env.get_state()


@pytest.mark.parametrize("name", MUJOCO)
def test_every_id_replays_exactly_in_the_same_and_a_fresh_instance(name):
    env = plangym.make(name, render_mode=None)
    fresh = plangym.make(name, render_mode=None)
    try:
        state = warm_state(env, seed=len(name))
        actions = [env.sample_action() for _ in range(30)]
        expected = replay(env, state, actions, dt=2)
        for _ in range(5):  # leave the env somewhere else
            env.step(env.sample_action())
        assert_identical(replay(env, state, actions, dt=2), expected)
        assert_identical(replay(fresh, state, actions, dt=2), expected)
    finally:
        env.close()
        fresh.close()


@pytest.mark.parametrize("noise", [None, 0.3], ids=["default-noise", "reset_noise_scale=0.3"])
def test_an_episode_boundary_replays_exactly(noise):
    """Hopper falls, autoreset draws the new episode's noise from the restored generator."""
    kwargs = {} if noise is None else {"reset_noise_scale": noise}
    env = plangym.make("Hopper-v5", render_mode=None, remove_time_limit=False, **kwargs)
    fresh = env.clone()
    state = warm_state(env, seed=1, n_steps=2)
    rng = np.random.default_rng(1)
    actions = list(rng.uniform(-1, 1, size=(150, 3)).astype(np.float32))  # falls in ~20-40
    expected = replay(env, state, actions)
    terminals = [step[3] for step in expected]
    assert sum(terminals) >= 2, "the window must cross episode ends"
    assert_identical(replay(fresh, state, actions), expected)
    env.close()
    fresh.close()


def test_state_records_the_generator_and_the_time_limit():
    env = plangym.make("Swimmer-v5", render_mode=None, remove_time_limit=False)
    env.seed(4)
    env.reset()
    for _ in range(998):  # the limit is 1,000 steps
        env.step(env.sample_action())
    near_limit = env.get_state()
    assert env.state_fields(near_limit)["elapsed_steps"] == 998
    fresh = env.clone()
    fresh.set_state(near_limit)
    zero = np.zeros(2, dtype=np.float32)
    assert not fresh.step(zero)[3]
    *_, truncated, info = fresh.step(zero)
    assert truncated and info["n_step"] == 1
    # The next reset's noise comes from the generator the state recorded.
    fresh.set_state(near_limit)
    env.set_state(near_limit)
    assert_identical(fresh.reset(), env.reset())
    env.close()
    fresh.close()


def test_without_the_lagging_body_positions_ant_gets_another_reward():
    """Why xpos/xipos are in the state: recomputing them from qpos changes Ant's reward."""
    env = plangym.make("Ant-v5", render_mode=None)
    state = warm_state(env, seed=2)
    action = env.sample_action()
    *_, reward, _, _, _ = env.step(action, state=state)
    env.set_state(state)
    mujoco.mj_kinematics(env.model, env.data)  # body positions from qpos, as a naive restore
    _, recomputed_reward, *_ = env.step(action)
    assert recomputed_reward != reward
    env.close()


def test_restore_updates_what_mujoco_derives_from_the_state():
    env = plangym.make("Hopper-v5", render_mode=None)
    state = warm_state(env, seed=3)
    expected = env.data.geom_xpos.copy()
    env.step(env.sample_action())
    env.set_state(state)
    qpos = env.data.qpos.copy()
    mujoco.mj_kinematics(env.model, env.data)
    assert np.array_equal(env.data.qpos, qpos)
    assert np.array_equal(env.data.geom_xpos, expected) or not np.array_equal(env.data.geom_xpos, 0)
    env.close()


@pytest.mark.parametrize(
    ("action", "error", "message"),
    [
        (np.full(3, np.nan, dtype=np.float32), ValueError, "expected finite values"),
        (np.array([0.0, np.inf, 0.0], dtype=np.float32), ValueError, "expected finite values"),
        (np.zeros(4, dtype=np.float32), TypeError, r"shape \(3,\)"),
        (np.zeros((1, 3), dtype=np.float32), TypeError, r"shape \(3,\)"),
        ("left", TypeError, "numeric array"),
    ],
    ids=["nan", "out-of-box", "too-long", "2-d", "str"],
)
def test_bad_actions_are_rejected_before_stepping(action, error, message):
    env = plangym.make("Hopper-v5", render_mode=None)
    state = warm_state(env, seed=5, n_steps=3)
    good = np.zeros(3, dtype=np.float32)
    with pytest.raises(error, match=message):
        env.step(action, state=state)
    with pytest.raises(error, match=r"actions\[2\]"):
        env.step_batch([good, good, action], states=[state] * 3)
    assert_identical(env.get_state(), state)
    env.close()


def test_a_whole_batch_of_bad_actions_names_the_first_bad_one():
    env = plangym.make("Hopper-v5", render_mode=None)
    state, *_ = env.reset()
    actions = np.zeros((5, 3), dtype=np.float32)
    actions[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"actions\[3\]"):
        env.step_batch(actions, states=[state] * 5)
    env.close()


def test_foreign_states_name_the_env():
    hopper = plangym.make("Hopper-v5", render_mode=None)
    walker = plangym.make("Walker2d-v5", render_mode=None)
    cheetah = plangym.make("HalfCheetah-v5", render_mode=None)
    state, *_ = walker.reset()
    with pytest.raises(ValueError, match=r"expected a Hopper-v5 state \(a float64 vector of 103"):
        hopper.set_state(state)
    # HalfCheetah's states have Walker2d's length: the model tag tells them apart.
    assert cheetah.state_size == walker.state_size
    with pytest.raises(
        ValueError, match=r"expected a HalfCheetah-v5 state .* another MuJoCo model"
    ):
        cheetah.set_state(state)
    for env in (hopper, walker, cheetah):
        env.close()


def test_states_pickle_and_cross_processes_as_flat_vectors():
    env = plangym.make("Ant-v5", render_mode=None)
    state = warm_state(env, seed=6)
    copy = pickle.loads(pickle.dumps(state))
    assert copy.dtype == env.state_dtype == np.float64 and copy.shape == (env.state_size,)
    assert_identical(copy, state)
    env.close()


def test_states_kept_in_an_object_array_restore_as_in_plangym_01(env):
    # plangym 0.1 code keeps states in np.asarray(states, dtype=object): rows of floats.
    states = [warm_state(env, seed) for seed in (1, 2)]
    rows = np.asarray(states, dtype=object)
    actions = [env.sample_action() for _ in states]
    assert_identical(env.step_batch(actions, states=rows), env.step_batch(actions, states=states))
    assert_identical(env.step(actions[0], state=rows[0]), env.step(actions[0], state=states[0]))
    env.set_state(rows[1])
    assert_identical(env.get_state(), states[1])
    # A list of such rows (list(rows)), as 0.1 walkers hand them over one by one.
    assert_identical(
        env.step_batch(actions, states=list(rows)), env.step_batch(actions, states=states)
    )


def test_a_camera_the_model_lacks_is_refused_before_the_first_picture():
    # MuJoCo would end the interpreter (status 1, no exception) at the first picture.
    with pytest.raises(ValueError, match=r"^camera_id: expected -1 \(the free camera\) or"):
        MujocoEnv("Hopper-v5", camera_id=99, obs_type="rgb")
    env = MujocoEnv("Hopper-v5", camera_id=-1, obs_type="rgb")
    assert env.get_image().shape == env.obs_shape
    env.close()


def test_a_state_without_a_time_limit_starts_a_limited_envs_count_afresh():
    limited = MujocoEnv("Reacher-v5", remove_time_limit=False, render_mode=None)
    unlimited = MujocoEnv("Reacher-v5", render_mode=None)
    state, *_ = unlimited.reset(seed=0)
    limited.reset(seed=0)
    steps, truncated = 0, False
    while not truncated and steps < 60:
        state, _, _, _, truncated, _ = limited.step(0 * limited.sample_action(), state=state)
        steps += 1
    assert steps == 50  # Reacher-v5's limit, counted from the restored state (51 before)
    limited.close()
    unlimited.close()


@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_workers_step_batches_bit_identical_to_the_single_env(backend, request):
    kwargs = {"render_mode": None, "frameskip": 2, "remove_time_limit": False}
    with single_and_workers("Ant-v5", backend, request, **kwargs) as (single, workers):
        states = random_states(single, 8, seed=7)
        actions = [single.sample_action() for _ in states]
        assert_batch_like_single(single, workers, actions, states, dt=MIXED_DTS)


def test_rgb_observations_follow_the_state():
    env = plangym.make("InvertedPendulum-v5", obs_type="rgb", width=48, height=40)
    assert env.obs_shape == (40, 48, 3)
    state = warm_state(env, seed=8, n_steps=3)
    actions = [env.sample_action() for _ in range(5)]
    frames = replay(env, state, actions)
    assert frames[-1][1].shape == (40, 48, 3) and frames[-1][1].any()
    assert_identical(replay(env.clone(), state, actions), frames)
    env.set_state(state)
    picture = env.get_image()
    env.step(actions[0])
    env.set_state(state)
    assert np.array_equal(env.get_image(), picture)  # set_state brings the picture back too
    env.close()


def test_pictures_stay_exact_while_other_envs_draw_and_close():
    # Each env draws in its own GL context: another env's pictures, or its close (which
    # unbinds the current context), must not change what this one draws.
    env = plangym.make("Hopper-v5", obs_type="rgb", width=48, height=40)
    state = warm_state(env, seed=9, n_steps=3)
    action = env.sample_action()
    picture = env.step(action, state=state)[1]
    assert picture.any()
    other = plangym.make("HalfCheetah-v5", obs_type="rgb", width=48, height=40)
    other.reset()
    other.get_image()
    assert_identical(env.step(action, state=state)[1], picture)  # other's context was current
    other.close()
    assert_identical(env.step(action, state=state)[1], picture)  # no context was current
    env.close()


def test_pictures_need_a_render_mode():
    with pytest.raises(ValueError, match="render_mode"):
        plangym.make("Hopper-v5", render_mode=None, obs_type="rgb")
    env = plangym.make("Hopper-v5", render_mode=None)
    with pytest.raises(RuntimeError, match="render_mode"):
        env.get_image()
    env.close()


def test_names_and_errors():
    assert len(MUJOCO) == 21 and "Pusher-v4" not in MUJOCO
    with pytest.raises(ValueError, match="Pusher-v5"):
        plangym.make("Pusher-v4")
    env = MujocoEnv("Walker2d-v4", render_mode=None, delay_setup=True)
    assert env.state_dtype == np.float64 and env.state_size == 154  # builds the env
    fields = env.state_fields(env.get_state())
    assert list(fields) == ["integration", "xpos", "xipos", "rng", "elapsed_steps", "model_tag"]
    env.close()


MODEL_WITH_A_DEPRECATED_ATTRIBUTE = (
    '<mujoco><compiler settotalmass="2"/><worldbody><body><freejoint/><geom size=".1"/>'
    "</body></worldbody></mujoco>"
)


def test_mujoco_warnings_become_python_warnings(tmp_path):
    """In a fresh process (dm_control, once imported, installs its own handler).

    gymnasium's HalfCheetah model sets the deprecated attribute too: plangym keeps that
    note (about gymnasium's file) to itself, but the user's own models still warn.
    """
    code = (
        "import mujoco, plangym\n"
        "plangym.make('HalfCheetah-v5', render_mode=None).close()\n"
        "print('built', flush=True)\n"
        f"mujoco.MjModel.from_xml_string({MODEL_WITH_A_DEPRECATED_ATTRIBUTE!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout == "built\n"
    assert done.stderr.count("RuntimeWarning: MuJoCo: compiler attribute 'settotalmass'") == 1
    assert done.stderr.startswith("<string>:4:")  # the user's model warned (line 4), not line 2
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_halfcheetahs_note_stays_quiet_after_dm_control_took_the_warnings(tmp_path):
    """dm_control sends MuJoCo's warnings to absl's log: the note must stay out of it too."""
    pytest.importorskip("dm_control")
    code = (
        "import mujoco, plangym\n"
        "plangym.make('cartpole-balance').close()\n"
        "plangym.make('HalfCheetah-v5', render_mode=None).close()\n"
        "print('built', flush=True)\n"
        f"mujoco.MjModel.from_xml_string({MODEL_WITH_A_DEPRECATED_ATTRIBUTE!r})\n"
    )
    command = [sys.executable, "-c", code]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "built\n"
    assert done.stderr.count("compiler attribute 'settotalmass'") == 1  # the user's model


def test_plangym_check_passes():
    results = run_checks("Walker2d-v5", n_steps=20, env_kwargs={"render_mode": None})
    assert {r.status for r in results} <= {"PASS", "n/a"}, [r for r in results if r.detail]


class _GenericPath(MujocoEnv):
    """Overrides a method the bulk loop replaces, so its batches take the generic path."""

    def process_apply_action(self, obs, reward, terminal, truncated, info):
        return obs, reward, terminal, truncated, info


@pytest.mark.parametrize("name", ["Hopper-v5", "Walker2d-v4"])
def test_bulk_batches_equal_the_generic_path(name):
    kwargs = {"render_mode": None, "remove_time_limit": False, "frameskip": 2}
    bulk, generic = MujocoEnv(name, **kwargs), _GenericPath(name, **kwargs)
    assert bulk.batch_path == "bulk" and generic.batch_path == "generic"
    states = random_states(bulk, 40, seed=9)
    actions = np.ones((40, *bulk.action_shape), dtype=np.float32)  # falls: episode ends
    dts = [1 + i % 12 for i in range(40)]
    expected = generic.step_batch(actions, states=states, dt=dts)
    assert any(expected[3]), "the batch must end episodes (autoreset)"
    assert_identical(bulk.step_batch(actions, states=states, dt=dts), expected)
    assert_identical(
        bulk.step_batch(actions, states=states, dt=dts, return_state=False), expected[1:]
    )
    bulk.close()
    generic.close()


LIVE_RUN_IDS = ["Hopper-v5", "HalfCheetah-v5", "Humanoid-v4", "Humanoid-v5", "Ant-v5"]


@pytest.mark.parametrize("name", [*LIVE_RUN_IDS, "Reacher-v4", "Pusher-v5"])
def test_a_restored_state_steps_as_the_live_env_would_have(name):
    """plangym 0.1.32 recomputed the bodies' positions on restore: these four then differed
    from the live run on the first step."""
    env = plangym.make(name, render_mode=None)
    state = warm_state(env, seed=10, n_steps=10)
    actions = [env.sample_action() for _ in range(20)]
    live = [env.step(action) for action in actions]
    first = env.step(actions[0], state=state, return_state=False)
    assert_identical([first] + [env.step(action) for action in actions[1:]], live)
    env.close()


def test_human_rendering_without_a_display_is_a_value_error(monkeypatch):
    """GLFW aborts the interpreter without a display: the constructor refuses first."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ValueError, match=r"render_mode: 'human' .* needs a display"):
        plangym.make("Hopper-v5", render_mode="human")


def test_workers_start_after_the_caller_drew_a_picture():
    """OSMesa's threads do not survive fork: forked workers deadlocked while drawing."""
    from plangym.utils import fork_safety

    single = plangym.make("Hopper-v5", obs_type="rgb", width=32, height=24)
    single.reset()  # a picture drawn in this process: an OpenGL context exists
    assert fork_safety.start_method_for(None) == "spawn"
    assert fork_safety.start_method_for("fork") == "fork"  # the user's choice is kept
    env = plangym.make("Hopper-v5", n_workers=2, obs_type="rgb", width=32, height=24)
    try:
        state = single.get_state()
        actions = [single.sample_action() for _ in range(4)]
        assert_identical(
            env.step_batch(actions, [state] * 4), single.step_batch(actions, [state] * 4)
        )
    finally:
        env.close()
        single.close()


def run_in_a_fresh_process(source: str) -> subprocess.CompletedProcess:
    """Run ``source`` in a new interpreter: no earlier test's OpenGL threads run there."""
    return subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=240, check=False
    )


RESTART_AFTER_A_PICTURE = """
import os, signal
import plangym
from plangym.api_tests import assert_identical
pictures = {"render_mode": "rgb_array", "return_image": True}
env = plangym.make("Hopper-v5", n_workers=2, inline_small_batches=False, **pictures)
single = plangym.make("Hopper-v5", **pictures)
state, *_ = single.reset()  # a picture: OpenGL's threads now run in this process
batch = [single.sample_action() for _ in range(4)], [state] * 4
assert_identical(env.step_batch(*batch), single.step_batch(*batch))
os.kill(env.batch_env.workers[0].pid, signal.SIGKILL)
env.step_batch_async(*batch)
assert_identical(env.step_batch_wait(timeout=60), single.step_batch(*batch))
env.close()
print("exact", flush=True)
"""


def test_a_worker_restarted_after_the_caller_drew_a_picture_is_spawned():
    """The pool was forked before any picture; its replacement worker comes after one, and
    a forked one deadlocked at its first picture: it is spawned (in a fresh process, so
    that no earlier test's OpenGL threads are there before the pool starts)."""
    done = run_in_a_fresh_process(RESTART_AFTER_A_PICTURE)
    assert done.returncode == 0 and done.stdout == "exact\n", done.stderr[-2000:]


DRAWN_BY_GYMNASIUM = """
import gymnasium
import plangym
from plangym.utils import fork_safety
assert not fork_safety.rendering_threads_run()
drawer = gymnasium.make("Hopper-v5", render_mode="rgb_array")
drawer.reset(seed=0)
drawer.render()  # OpenGL's threads now run here, and plangym drew nothing
assert fork_safety.rendering_threads_run() and fork_safety.start_method_for(None) == "spawn"
envs = plangym.make_vec("Hopper-v5", 2, vectorization_mode="async")
envs.reset(seed=0)
pictures = list(envs.render())
env = plangym.make("Hopper-v5", n_workers=2)
env.reset()
pictures += env.call("render")
print([picture.shape for picture in pictures], flush=True)
envs.close()
env.close()
drawer.close()
"""


def test_workers_start_after_another_library_drew_a_picture():
    """Forked after gymnasium's own MuJoCo env drew, workers froze at their first picture."""
    done = run_in_a_fresh_process(DRAWN_BY_GYMNASIUM)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "[(480, 480, 3), (480, 480, 3), (480, 480, 3), (480, 480, 3)]\n"


def test_render_aims_the_camera_as_get_image():
    """gymnasium aims its camera at the bodies of the first picture: render() must not."""
    first = plangym.make("Ant-v5", width=32, height=24)
    second = plangym.make("Ant-v5", width=32, height=24)
    first.reset(seed=1)
    for _ in range(20):
        first.step(first.sample_action())
    state, action = first.get_state(), first.sample_action()
    first.step(action, state=state)
    picture = first.render()  # the first picture, in a pose unlike the initial one
    second.step(action, state=state)
    assert picture.tobytes() == second.get_image().tobytes() == first.get_image().tobytes()
