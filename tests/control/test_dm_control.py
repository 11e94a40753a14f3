"""DMControlEnv: conformance, exact restore-and-replay across episodes, workers, input checks.

Everything runs the real dm_control suite. Sweeps over all 51 tasks are marked slow (run
them with ``--run-slow``).
"""

import numpy as np
import pytest

import plangym
from plangym.api_tests import TestPlangymEnv, assert_identical, replay  # noqa: F401
from plangym.control.dm_control import EPISODE_MODEL_FIELDS, DMControlEnv
from plangym.environment_names import DM_CONTROL_NAMES
from plangym.selfcheck import run_checks

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(
    params=[("walker-walk", {}), ("reacher-easy", {"frameskip": 2, "visualize_reward": False})],
    ids=["walker-walk", "reacher-easy-frameskip2"],
)
def env(request):
    name, kwargs = request.param
    env = DMControlEnv(name, seed=3, **kwargs)
    env.api_test_steps = 15
    yield env
    env.close()


def random_actions(env: DMControlEnv, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    space = env.action_space
    return [rng.uniform(space.low, space.high).astype(np.float32) for _ in range(n)]


def state_before_the_end(env: DMControlEnv, margin: int) -> np.ndarray:
    """A state ``margin`` steps before the time limit ends the episode (played, not forged)."""
    env.reset()
    limit = int(env.gym_env._step_limit)
    for action in random_actions(env, 1000, seed=1):
        remaining = limit - margin - env.gym_env._step_count
        if remaining <= 0:
            break
        env.step(action, dt=min(100, remaining))
    return env.get_state()


def part(env: DMControlEnv, state: np.ndarray, name: str) -> np.ndarray:
    """The slice ``name`` of a state (see ``DMControlEnv.state_layout``)."""
    ((start, stop),) = [(a, b) for key, a, b in env.state_layout if key == name]
    return state[start:stop]


def needs_pictures(env: DMControlEnv) -> None:
    """Skip, naming the cause, when no OpenGL backend can draw on this machine."""
    try:
        env.get_image()
    except Exception as error:
        pytest.skip(f"no working OpenGL backend for dm_control (MUJOCO_GL): {error}")


def check_replays(env: DMControlEnv, state: np.ndarray, actions: list, dt: int = 1) -> list:
    """Replay in the same instance (after playing elsewhere) and in a fresh one, seeded apart."""
    first = replay(env, state, actions, dt=dt)
    for action in actions[:5]:
        env.step(action)
    assert_identical(replay(env, state, actions, dt=dt), first)
    fresh = env.clone(seed=None)
    try:
        assert_identical(replay(fresh, state, actions, dt=dt), first)
    finally:
        fresh.close()
    return first


# Exactness -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name", ["walker-walk", "reacher-easy", "finger-spin", "point_mass-hard", "fish-swim"]
)
def test_replay_is_exact_across_an_episode_end(name):
    env = DMControlEnv(name, seed=5)
    state = state_before_the_end(env, margin=8)
    steps = check_replays(env, state, random_actions(env, 20, seed=2))
    ends = [i for i, (*_, terminal, truncated, _) in enumerate(steps) if terminal or truncated]
    assert ends == [7]  # the time limit, then the autoreset's new episode in the window
    assert steps[7][4] and not steps[7][3]  # the time limit truncates
    assert part(env, steps[8][0], "step_count").tolist() == [1.0]
    env.close()


def test_a_state_restores_its_episode_target():
    """reacher keeps the target in the model: a state of another episode brings it back."""
    env = DMControlEnv("reacher-easy", seed=0)
    first_episode, *_ = env.reset()
    target = env.physics.named.model.geom_pos["target"].copy()
    env.reset()
    assert not np.array_equal(env.physics.named.model.geom_pos["target"], target)
    env.set_state(first_episode)
    assert np.array_equal(env.physics.named.model.geom_pos["target"], target)
    assert_identical(env.get_state(), first_episode)
    env.close()


def test_quadruped_escape_restores_its_terrain():
    env = DMControlEnv("quadruped-escape", seed=0)
    first_episode, *_ = env.reset()
    terrain = env.physics.model.hfield_data.copy()
    actions = random_actions(env, 6, seed=0)
    expected = replay(env, first_episode, actions)
    env.reset()
    assert not np.array_equal(env.physics.model.hfield_data, terrain)
    assert_identical(replay(env, first_episode, actions), expected)
    assert np.array_equal(env.physics.model.hfield_data, terrain)
    env.close()


def test_lqr_divergence_ends_the_episode_exactly():
    """lqr's actions are unbounded (±1e10): random ones make the physics diverge."""
    env = DMControlEnv("lqr-lqr_2_1", seed=0, autoreset=False)
    damping = env.physics.model.dof_damping
    assert np.array_equal(env.clone(seed=1).physics.model.dof_damping, damping)  # same model
    env.action_space.seed(0)
    env.reset()
    history = []
    for _ in range(5000):
        action = env.action_space.sample()
        history.append((env.get_state(), action))
        *_, terminal, _, info = env.step(action)
        if terminal:
            break
    assert "physics_error" in info
    start, _ = history[-5]
    actions = [action for _, action in history[-5:]] + [history[0][1]] * 3
    steps = check_replays(env, start, actions)
    assert [bool(step[3]) for step in steps][:5] == [False] * 4 + [True]
    assert steps[4][2] == 0.0
    env.close()


@pytest.mark.parametrize("dt", [1, 3])
def test_rewards_are_summed_per_underlying_step(dt):
    single = DMControlEnv("walker-walk", seed=0)
    skipped = DMControlEnv("walker-walk", seed=0, frameskip=2)
    single.reset()
    for action in random_actions(single, 5, seed=1):
        single.step(action)
    state = single.get_state()
    action = random_actions(single, 1, seed=0)[0]
    single.set_state(state)
    rewards = [single.step(action)[1] for _ in range(2 * dt)]
    *_, reward, _, _, info = skipped.step(action, state=state, dt=dt)
    assert info["n_step"] == 2 * dt
    assert reward == sum(rewards, 0.0) and reward > 0


def test_stepping_past_the_end_continues_the_simulation():
    env = DMControlEnv("walker-walk", seed=1, autoreset=False)
    state = state_before_the_end(env, margin=1)
    action = random_actions(env, 1, seed=0)[0]
    ended, *_, truncated, _ = env.step(action, state=state)
    assert truncated and part(env, ended, "reset_next_step").tolist() == [1.0]
    after, _, _, terminal, truncated, info = env.step(action, state=ended)
    assert truncated and not terminal and info["n_step"] == 1
    assert part(env, after, "step_count") == part(env, ended, "step_count") + 1
    assert part(env, after, "physics")[0] > part(env, ended, "physics")[0]  # the time went on
    env.close()


# Pictures ------------------------------------------------------------------------------------
def test_rgb_observations_replay_exactly():
    env = DMControlEnv("cartpole-swingup", obs_type="rgb", seed=0)
    needs_pictures(env)
    state, obs, _ = env.reset()
    assert obs.shape == (240, 320, 3) and obs.dtype == np.uint8 and obs.std() > 0
    steps = check_replays(env, state, random_actions(env, 3, seed=0))
    assert steps[-1][1].shape == env.observation_space.shape
    gray = env.clone(obs_type="grayscale", return_image=True)
    assert gray.reset()[1].shape == (240, 320)
    *_, info = gray.step_batch(random_actions(env, 1, seed=0), states=[state])
    assert info[0]["rgb"].shape == (240, 320, 3)
    gray.close()
    env.close()


# Workers -------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_workers_step_like_the_single_env(backend, request):
    name, kwargs = "point_mass-hard", {"seed": 2}
    single = DMControlEnv(name, **kwargs)
    state = state_before_the_end(single, margin=4)  # crosses an episode end in the batch
    states = [state]
    for action in random_actions(single, 7, seed=3):
        single.step(action)
        states.append(single.get_state())
    actions = random_actions(single, len(states), seed=4)
    dts = [1 + i % 3 for i in range(len(states))]
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        vectorized = plangym.make(name, n_workers=2, ray=True, inline_small_batches=False, **kwargs)
    else:
        vectorized = plangym.make(name, n_workers=2, inline_small_batches=False, **kwargs)
    try:
        expected = single.step_batch(actions, states=states, dt=dts)
        assert any(expected[4])  # an episode ended inside the batch
        assert_identical(vectorized.step_batch(actions, states=states, dt=dts), expected)
    finally:
        vectorized.close()
        single.close()


# Inputs and names ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "error", "expected"),
    [
        (np.full(6, np.inf, dtype=np.float32), ValueError, "finite"),
        (np.full(6, np.nan, dtype=np.float32), ValueError, "finite"),
        (np.zeros(5, dtype=np.float32), TypeError, r"shape \(6,\)"),
        ("left", TypeError, "numeric array"),
    ],
    ids=["infinite", "nan", "wrong-shape", "string"],
)
def test_bad_actions_are_rejected_before_stepping(bad, error, expected):
    env = DMControlEnv("walker-walk", seed=0)
    state, *_ = env.reset()
    good = random_actions(env, 1, seed=0)[0]
    with pytest.raises(error, match=rf"action: expected .*{expected}.*received"):
        env.step(bad, state=state)
    with pytest.raises(error, match=r"actions\[1\]: expected"):
        env.step_batch([good, bad], states=[state, state])
    assert_identical(env.get_state(), state)
    env.close()


def test_names_and_constructor_keywords():
    env = plangym.make(domain_name="walker", task_name="walk")
    assert isinstance(env, DMControlEnv) and env.name == "walker-walk"
    assert (env.domain_name, env.task_name) == ("walker", "walk")
    assert [key for key, *_ in env.obs_layout] == ["orientations", "height", "velocity"]
    assert env.obs_layout[-1][2] == env.obs_shape[0]
    assert DMControlEnv(domain_name="cheetah", task_name="run").name == "cheetah-run"
    # plangym 0.1's make took the domain as the name, with the task apart (its own tests do).
    walker_run = plangym.make("walker", task_name="run")
    assert isinstance(walker_run, DMControlEnv) and walker_run.name == "walker-run"
    walker_run.close()
    with pytest.raises(ValueError, match="'walker-walk' contradicts"):
        plangym.make("walker-walk", task_name="run")
    with pytest.raises(ValueError, match="closest known names: walker-walk"):
        DMControlEnv("walker-wlak")
    # An unknown task is named by the parameters that named it, with the values received.
    with pytest.raises(ValueError, match=r"^name: expected .*, received 'cartpole';"):
        DMControlEnv(name="cartpole")
    with pytest.raises(ValueError, match=r"^domain_name, task_name: .* domain_name='cartpole'"):
        DMControlEnv(name=None, domain_name="cartpole")
    with pytest.raises(TypeError, match=r"^name: expected .*\(str\), received 3"):
        DMControlEnv(name=3)
    with pytest.raises(ValueError, match="wrappers"):
        DMControlEnv("walker-walk", wrappers=[object])
    with pytest.raises(ValueError, match="render_mode"):
        DMControlEnv("walker-walk", render_mode="human")
    with pytest.raises(TypeError, match=r"^visualize_reward: expected True or False"):
        DMControlEnv("walker-walk", visualize_reward="no")  # read as True before


def test_plangym_check_passes():
    results = run_checks("walker-walk", n_steps=15)
    assert {result.status for result in results} <= {"PASS", "n/a"}, results


# Sweeps over every task (slow) ---------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("name", DM_CONTROL_NAMES)
def test_every_task_replays_exactly_across_an_episode_end(name):
    env = DMControlEnv(name, seed=7)
    if env.gym_env._step_limit == float("inf"):  # lqr: no time limit
        env.reset()
        state = env.get_state()
    else:
        state = state_before_the_end(env, margin=12)
    check_replays(env, state, random_actions(env, 30, seed=8))
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", DM_CONTROL_NAMES)
def test_episode_model_fields_are_all_listed(name):
    """No model array other than the listed ones (and reward colours) changes across resets."""
    env = DMControlEnv(name, seed=0)
    model = env.physics.model

    def arrays() -> dict:
        values = {}
        for field in dir(model.ptr):
            value = getattr(model.ptr, field, None) if not field.startswith("_") else None
            if isinstance(value, np.ndarray):
                values[field] = value.copy()
        return values

    before = arrays()
    changed = set()
    for action in random_actions(env, 3, seed=0):
        env.reset()
        env.step(action)
        after = arrays()
        changed |= {field for field in before if not np.array_equal(before[field], after[field])}
    listed = EPISODE_MODEL_FIELDS.get(name) or EPISODE_MODEL_FIELDS.get(env.domain_name, ())
    assert changed <= {*listed, "mat_rgba"}
    env.close()


def test_a_seed_beyond_32_bits_is_refused_naming_the_seed():
    env = DMControlEnv("cartpole-balance")
    state, *_ = env.reset(seed=1)
    for call in (lambda: env.reset(seed=2**32), lambda: env.seed(2**32)):
        with pytest.raises(ValueError, match=r"seed: expected None or an int in \[0, 2\*\*32"):
            call()
        assert_identical(env.get_state(), state)
    env.reset(seed=2**32 - 1)
    env.close()
    for seed in (2**32, -1, "1"):
        with pytest.raises(ValueError, match="seed: expected None or an int"):
            DMControlEnv("cartpole-balance", seed=seed)


@pytest.mark.parametrize("name", ["walker-walk", "reacher-easy"])
def test_reset_with_a_seed_starts_dm_controls_first_episode_of_it(name):
    """As make(name, seed=s) does: not the episode after it (seed() drew one)."""
    from dm_control import suite

    domain, task = name.split("-")
    theirs = suite.load(domain, task, task_kwargs={"random": 5}).reset().observation
    env = DMControlEnv(name)
    env.reset()  # another episode first
    state, obs, _ = env.reset(seed=5)
    expected = np.concatenate([np.asarray(v, dtype=obs.dtype).ravel() for v in theirs.values()])
    assert_identical(obs, expected)
    built = DMControlEnv(name, seed=5)
    assert_identical(state, built.get_state())
    env.close()
    built.close()


def test_a_seeds_reset_state_and_picture_do_not_depend_on_the_episodes_before():
    """dm_control colours fish-swim's body at a reset from the last episode's target."""
    env = DMControlEnv("fish-swim")
    first, _, _ = env.reset(seed=7)
    picture = env.get_image()
    env.reset(seed=1)
    again, _, _ = env.reset(seed=7)
    assert_identical(again, first)
    assert_identical(env.get_image(), picture)
    env.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_vector_reset_refuses_a_seed_a_task_cannot_take_before_any_sub_env_resets(mode):
    envs = plangym.make_vec("cartpole-balance", 2, mode)
    try:
        envs.reset(seed=[100, 200])
        before = envs.get_states()
        for seed, name in [
            (2**32 - 1, r"seed \(sub-env 1 gets 4294967295 \+ 1\)"),
            ([7, 2**32], r"seed\[1\]"),
        ]:
            with pytest.raises(
                ValueError, match=rf"^{name}: expected None or an int in \[0, 2\*\*32"
            ):
                envs.reset(seed=seed)
            assert_identical(envs.get_states(), before)
    finally:
        envs.close()


def test_setup_again_frees_the_loaded_task():
    """As every family's setup(): the task loaded before is closed (about 2 MB each)."""
    env = DMControlEnv("walker-walk")
    old = env.gym_env
    env.setup()
    with pytest.raises(AttributeError):
        _ = old.physics.data  # freed
    state, *_ = env.reset(seed=1)
    assert env.step(env.sample_action(), state=state) is not None
    env.close()
