"""The reference planners: they plan well, repeat themselves exactly, and check inputs."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import plangym
from plangym.planning import FMCPlanner, SwarmPlanner, play, random_scores
from plangym.planning.batches import offers_arrays, split_states, step_states, take_states
from plangym.planning.common import ActionSampler, Decision, same_state
from plangym.planning.uct import UCTPlanner
from plangym.selfcheck import check_fresh_instance, check_same_instance
from tests.helpers.corridor_env import Corridor


@pytest.fixture
def cartpole():
    env = plangym.make("CartPole-v1")
    yield env
    env.close()


def play_500_cartpole_steps(env, planner, seed: int):
    """Play 500 steps; check the pole stayed up and the cart on the track all along."""
    trajectory = play(env, planner, max_steps=500, seed=seed)
    assert trajectory.score == 500 and not trajectory.ended
    positions = np.array([state["physics"][0] for state in trajectory.states])
    assert np.abs(positions).max() < 2.4
    return trajectory


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_swarm_keeps_the_pole_up_for_500_steps(cartpole, seed):
    planner = SwarmPlanner(cartpole, n_walkers=16, horizon=8, dt=8, seed=seed)
    play_500_cartpole_steps(cartpole, planner, seed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_uct_keeps_the_pole_up_for_500_steps(cartpole, seed):
    planner = UCTPlanner(cartpole, waves=2, wave_size=16, rollout_depth=30, seed=seed)
    trajectory = play_500_cartpole_steps(cartpole, planner, seed)
    # A small budget: fewer transitions per decision than the swarm test's 1,024.
    assert trajectory.frames_simulated / trajectory.agent_steps < 600


each_planner = pytest.mark.parametrize(
    "make_planner",
    [
        lambda env, seed: SwarmPlanner(env, n_walkers=8, horizon=4, dt=2, seed=seed),
        lambda env, seed: UCTPlanner(env, waves=2, wave_size=8, rollout_depth=4, seed=seed),
    ],
    ids=["swarm", "uct"],
)


@each_planner
def test_same_seed_plays_the_same_game(cartpole, make_planner):
    games = [play(cartpole, make_planner(cartpole, 3), max_steps=60, seed=3) for _ in range(2)]
    assert games[0].actions == games[1].actions
    assert games[0].score == games[1].score
    assert games[0].frames_simulated == games[1].frames_simulated
    assert all(same_state(a, b) for a, b in zip(games[0].states, games[1].states, strict=True))


class ListsOnly:
    """An env whose ``step_batch`` takes no ``arrays=`` (a user's env written for plangym 0.1)."""

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        return getattr(self.env, name)

    def step_batch(self, actions, states=None, dt=1, return_state=None):
        return self.env.step_batch(actions, states=states, dt=dt, return_state=return_state)


@each_planner
@pytest.mark.parametrize("name", ["CartPole-v1", "Acrobot-v1"])
def test_the_array_and_list_forms_play_the_same_game(make_planner, name):
    env = plangym.make(name)
    games = [play(e, make_planner(e, 4), max_steps=40, seed=4) for e in (env, ListsOnly(env))]
    assert games[0].actions == games[1].actions and games[0].rewards == games[1].rewards
    assert games[0].frames_simulated == games[1].frames_simulated
    assert offers_arrays(env) and not offers_arrays(ListsOnly(env))


def test_step_states_reads_lost_lives_and_frames_in_either_form(mspacman_after_intro):
    env, state = mspacman_after_intro
    rng = np.random.default_rng(0)
    states, lives_lost = [state] * 16, 0
    for _ in range(150):
        actions = rng.integers(env.action_space.n, size=16)
        dts = rng.integers(1, 4, size=16).tolist()
        arrays = step_states(env, actions, states, dt=dts)
        lists = step_states(ListsOnly(env), actions, states, dt=dts)
        columns = env.step_batch(actions, states=states, dt=dts)
        lost = np.array([info["lost_life"] for info in columns[-1]])
        ended = np.logical_or(columns[3], columns[4])
        for stepped in (arrays, lists):
            assert stepped.rewards.tolist() == columns[2]
            assert stepped.ended.tolist() == ended.tolist()
            assert stepped.dead.tolist() == (ended | lost).tolist()
            assert stepped.frames == sum(info["n_step"] for info in columns[-1]) == 5 * sum(dts)
        assert all(same_state(a, b) for a, b in zip(arrays.states, columns[0], strict=True))
        lives_lost += int(lost.sum())
        alive = np.flatnonzero(~arrays.dead)
        states = take_states(arrays.states, rng.choice(alive, size=16) if len(alive) else alive)
        if not len(alive) or lives_lost >= 3:
            break
    assert lives_lost >= 1  # the check above saw deaths, not only quiet steps


def test_workers_play_the_same_game_as_one_process(cartpole):
    parallel = plangym.make("CartPole-v1", n_workers=2)
    try:
        games = [
            play(env, SwarmPlanner(env, n_walkers=8, horizon=4, seed=5), max_steps=30, seed=5)
            for env in (cartpole, parallel)
        ]
    finally:
        parallel.close()
    assert games[0].actions == games[1].actions
    assert games[0].frames_simulated == games[1].frames_simulated


def test_trajectory_records_states_rewards_and_frames(cartpole):
    planner = SwarmPlanner(cartpole, n_walkers=4, horizon=2, dt=1)
    trajectory = play(cartpole, planner, 10, seed=0)
    assert len(trajectory.states) == trajectory.agent_steps + 1 == 11
    replayed = cartpole.clone()
    for t, action in enumerate(trajectory.actions):
        state, *_ = replayed.step(action, state=trajectory.states[t])
        assert same_state(state, trajectory.states[t + 1])
    # Each swarm decision steps 4 walkers for 2 rounds (fewer when walkers die), plus the move.
    assert trajectory.agent_steps < trajectory.frames_simulated <= 10 * (4 * 2 + 1)


def test_progress_is_reported_after_every_step(cartpole):
    seen = []
    play(cartpole, SwarmPlanner(cartpole, n_walkers=4, horizon=2), 5, on_step=seen.append)
    assert [p.step for p in seen] == [1, 2, 3, 4, 5]
    assert all(p.max_steps == 5 for p in seen)


def test_a_progress_bar_follows_play_from_the_planning_package(cartpole):
    # What a notebook uses: a tqdm widget there (here stderr is no terminal: no bar drawn).
    from plangym.planning import PlanProgress

    with PlanProgress(5) as progress:
        play(cartpole, SwarmPlanner(cartpole, n_walkers=4, horizon=2), 5, on_step=progress)
    assert progress.step == 5
    assert progress.postfix.startswith("score ")


def test_swarm_plans_continuous_actions():
    env = plangym.make("Pendulum-v1")
    trajectory = play(env, SwarmPlanner(env, n_walkers=8, horizon=4, seed=0), 5, seed=0)
    assert trajectory.agent_steps == 5
    assert all(env.action_space.contains(action) for action in trajectory.actions)


def test_uct_rejects_continuous_actions():
    with pytest.raises(TypeError, match="Discrete"):
        UCTPlanner(plangym.make("Pendulum-v1"))


@pytest.mark.parametrize(
    ("planner", "kwargs", "error"),
    [
        (SwarmPlanner, {"n_walkers": 0}, ValueError),
        (SwarmPlanner, {"horizon": 1.5}, TypeError),
        (SwarmPlanner, {"dt": -1}, ValueError),
        (SwarmPlanner, {"dt": 2**31}, ValueError),  # refused before the first batch
        (SwarmPlanner, {"repeat_probability": 2.0}, ValueError),
        (UCTPlanner, {"waves": 0}, ValueError),
        (UCTPlanner, {"wave_size": 0}, ValueError),
        (UCTPlanner, {"rollout_depth": -1}, ValueError),
        (UCTPlanner, {"rollout_dt": 0}, ValueError),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "-".join(value),
)
def test_planners_check_their_parameters(cartpole, planner, kwargs, error):
    with pytest.raises(error):
        planner(cartpole, **kwargs)


@pytest.fixture(scope="module")
def mspacman_after_intro():
    """Ms. Pac-Man once the intro tune is over and the ghosts move (about 45 steps)."""
    env = plangym.make("ALE/MsPacman-v5", obs_type="ram")
    env.seed(0)
    state, *_ = env.reset()
    state, *_ = env.step(0, state=state, dt=45)
    yield env, state
    env.close()


@pytest.mark.parametrize("planner_name", ["swarm", "uct"])
def test_short_atari_game_beats_random_play(mspacman_after_intro, planner_name):
    env, state = mspacman_after_intro
    if planner_name == "swarm":
        planner = SwarmPlanner(env, n_walkers=16, horizon=4, dt=2, seed=0)
    else:
        planner = UCTPlanner(env, waves=2, wave_size=16, rollout_depth=2, rollout_dt=2, seed=0)
    trajectory = play(env, planner, max_steps=40, start_state=state)
    sampler = ActionSampler(env.action_space, np.random.default_rng(0))
    random_games = []
    for _ in range(4):
        score, current = 0.0, state
        for action in sampler.sample(40):
            current, _, reward, *_ = env.step(action, state=current)
            score += reward
        random_games.append(score)
    # 40 steps of 5 frames: the planners eat a pellet (10 points) every few steps.
    assert trajectory.score >= 100
    assert trajectory.score > max(random_games)
    assert trajectory.score >= 1.5 * np.mean(random_games)


def test_random_scores_stop_counting_at_the_episode_end(cartpole):
    scores = random_scores(cartpole, steps=300, episodes=6, seed=1)
    assert len(scores) == 6
    assert all(1 <= score < 300 for score in scores)  # random play drops the pole early
    assert scores == random_scores(cartpole, steps=300, episodes=6, seed=1)


def test_play_accepts_any_planner_with_decide(cartpole):
    class Alternate:
        name = "alternate"

        def __init__(self):
            self.calls = 0

        def decide(self, state):
            self.calls += 1
            return Decision(action=self.calls % 2, frames=0)

    trajectory = play(cartpole, Alternate(), max_steps=20, seed=0)
    assert trajectory.actions[:4] == [1, 0, 1, 0]
    assert trajectory.frames_simulated == trajectory.agent_steps


class LeakyCorridor(Corridor):
    """A corridor whose get_state forgets the wind generator: replays drift."""

    def set_state(self, state):
        self.check_state(state)
        self._position, self._t = int(state[0]), int(state[1])


def test_self_checks_catch_a_state_that_leaves_something_out():
    env = LeakyCorridor(slip=0.5, seed=0, max_steps=10_000, length=1001)
    # The first step's state differs: said by name ("steps[0][0]" told the tuple's index).
    assert check_same_instance(env, 30, 0) == "steps[0].state: contents differ"
    assert check_fresh_instance(env, 30, 0) == "steps[0].state: contents differ"
    assert (
        check_same_instance(Corridor(slip=0.5, seed=0, max_steps=10_000, length=1001), 30, 0)
        is None
    )


class SeedHidingCorridor(Corridor):
    """A corridor that keeps its constructor's seed as ``self.seed``, hiding the method."""

    def setup(self):
        super().setup()
        self.action_space = gymnasium.spaces.Discrete(2)
        self.seed = None


def test_play_refuses_an_env_whose_seed_attribute_hides_the_method():
    # Skipping the seed would play another game for the same seed, with no word said.
    env = SeedHidingCorridor(slip=0.5)
    planner = SwarmPlanner(env, n_walkers=4, horizon=2, seed=0)
    for call in (lambda: play(env, planner, max_steps=5, seed=0), lambda: random_scores(env, 5, 2)):
        with pytest.raises(TypeError, match=r"^seed: expected SeedHidingCorridor to have a seed"):
            call()
    assert play(env, planner, max_steps=3, seed=None).agent_steps == 3  # no seed: no need


def test_play_tells_a_time_limit_from_a_game_over():
    class Idle:
        def decide(self, state):
            return Decision(action=1, frames=0)  # MountainCar's "do nothing": never at the flag

    env = plangym.make("MountainCar-v0", remove_time_limit=False)
    try:
        cut = play(env, Idle(), max_steps=1000, seed=0)
    finally:
        env.close()
    assert (cut.agent_steps, cut.ended, cut.truncated) == (200, True, True)
    env = plangym.make("CartPole-v1")
    try:
        over = play(env, Idle(), max_steps=1000, seed=0)  # pushing right: the pole falls
    finally:
        env.close()
    assert over.ended and not over.truncated and over.agent_steps < 200


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda env: SwarmPlanner(env, seed=-1), ValueError, "seed: expected None or an int"),
        (lambda env: UCTPlanner(env, seed=-1), ValueError, "seed: expected None or an int"),
        (lambda env: random_scores(env, 3, 2, seed=-1), ValueError, "seed: expected"),
        (lambda env: UCTPlanner(env, rollout_depth=1.5), TypeError, "rollout_depth"),
        (lambda env: UCTPlanner(env, rollout_depth=True), TypeError, "rollout_depth"),
        (lambda env: UCTPlanner(env, rollout_depth="3"), TypeError, "rollout_depth"),
        (lambda env: UCTPlanner(env, rollout_depth=None), TypeError, "rollout_depth"),
        (lambda env: UCTPlanner(env, exploration=float("nan")), ValueError, "exploration"),
        (lambda env: UCTPlanner(env, discount=float("inf")), ValueError, "discount"),
        (lambda env: play(env, SwarmPlanner(env), max_steps=0), ValueError, "max_steps"),
        (lambda env: play(env, SwarmPlanner(env), max_steps=2.5), TypeError, "max_steps"),
    ],
    ids=[
        "swarm-seed",
        "uct-seed",
        "random-seed",
        "depth-float",
        "depth-bool",
        "depth-str",
        "depth-none",
        "exploration-nan",
        "discount-inf",
        "max-steps-0",
        "max-steps-float",
    ],
)
def test_planner_arguments_are_checked_naming_them(call, error, message):
    env = plangym.make("CartPole-v1")
    env.reset(seed=0)
    before = env.get_state()
    with pytest.raises(error, match=message):
        call(env)
    assert bool(env.get_state() == before)  # refused before the env was reset or stepped
    env.close()


@pytest.fixture
def moved_cartpole():
    """A CartPole one step into an episode: a reset or a step would change its state."""
    env = plangym.make("CartPole-v1")
    env.reset(seed=0)
    env.step(0)
    yield env, env.get_state()
    env.close()


def assert_refused_leaving_env_alone(env, before, call, error, message):
    """``call`` raises ``error`` matching ``message``, and ``env``'s state has not moved."""
    with pytest.raises(error, match=message):
        call()
    assert bool(env.get_state() == before)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda env: SwarmPlanner(env, reward_weight="abc"), TypeError, "^reward_weight: "),
        (lambda env: SwarmPlanner(env, reward_weight=float("nan")), ValueError, "^reward_weight"),
        (lambda env: SwarmPlanner(env, reward_weight=-1), ValueError, "^reward_weight: .*>= 0"),
        (lambda env: SwarmPlanner(env, distance_weight=None), TypeError, "^distance_weight: "),
        (lambda env: SwarmPlanner(env, distance_weight=float("inf")), ValueError, "^distance_"),
        (lambda env: SwarmPlanner(env, repeat_probability="x"), TypeError, "^repeat_probab"),
        (lambda env: SwarmPlanner(env, repeat_probability=np.ones(2)), TypeError, "^repeat_"),
        (lambda env: SwarmPlanner(env, repeat_probability=True), TypeError, "^repeat_probab"),
        (lambda env: SwarmPlanner(env, features=None), TypeError, "^features: .*callable"),
        (lambda env: FMCPlanner(env, reward_weight=-1), ValueError, "^reward_weight: .*>= 0"),
        (lambda env: FMCPlanner(env, distance_weight="1"), TypeError, "^distance_weight: "),
        (lambda env: FMCPlanner(env, features=3), TypeError, "^features: .*callable"),
        (lambda env: UCTPlanner(env, mix="a"), TypeError, "^mix: "),
        (lambda env: UCTPlanner(env, mix=None), TypeError, "^mix: "),
        (lambda env: UCTPlanner(env, mix=True), TypeError, "^mix: "),
        (lambda env: UCTPlanner(env, discount=-3), ValueError, r"^discount: .*\[0, 1\]"),
        (lambda env: UCTPlanner(env, discount=5), ValueError, r"^discount: .*\[0, 1\]"),
        (lambda env: UCTPlanner(env, discount="0.9"), TypeError, "^discount: "),
        (lambda env: UCTPlanner(env, exploration=-1), ValueError, "^exploration: .*>= 0"),
        (lambda env: UCTPlanner(env, exploration=[1.0]), TypeError, "^exploration: "),
    ],
    ids=[
        "swarm-reward-str",
        "swarm-reward-nan",
        "swarm-reward-negative",
        "swarm-distance-none",
        "swarm-distance-inf",
        "swarm-repeat-str",
        "swarm-repeat-array",
        "swarm-repeat-bool",
        "swarm-features-none",
        "fmc-reward-negative",
        "fmc-distance-str",
        "fmc-features-int",
        "uct-mix-str",
        "uct-mix-none",
        "uct-mix-bool",
        "uct-discount-negative",
        "uct-discount-5",
        "uct-discount-str",
        "uct-exploration-negative",
        "uct-exploration-list",
    ],
)
def test_float_options_are_checked_naming_them(moved_cartpole, call, error, message):
    env, before = moved_cartpole
    assert_refused_leaving_env_alone(env, before, lambda: call(env), error, message)


@pytest.mark.parametrize("planner_class", [SwarmPlanner, FMCPlanner, UCTPlanner])
def test_decide_none_is_refused_before_anything_is_stepped(moved_cartpole, planner_class):
    env, before = moved_cartpole
    planner = planner_class(env, seed=0)
    message = r"^state: expected a state of the env .*received None"
    assert_refused_leaving_env_alone(env, before, lambda: planner.decide(None), TypeError, message)


def test_step_states_asks_for_the_states(cartpole):
    cartpole.reset(seed=0)
    stepped = step_states(cartpole, [0, 1], [None, None])  # no states: the env's own, in turn
    assert len(split_states(stepped.states)) == 2


class GymOnly:
    """A gymnasium-style env without ``step_batch``: records what was called."""

    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        self.calls = []

    def reset(self, *args, **kwargs):
        self.calls.append("reset")
        return np.zeros(4), {}

    def step(self, *args, **kwargs):
        self.calls.append("step")
        return np.zeros(4), 0.0, False, False, {}


not_plangym_envs = pytest.mark.parametrize(
    "make_env",
    [
        lambda: gymnasium.make("CartPole-v1"),
        lambda: None,
        GymOnly,
        lambda: plangym.make_vec("Pendulum-v1", num_envs=2, vectorization_mode="sync"),
    ],
    ids=["gymnasium", "none", "gym-only", "vector-env"],
)


@not_plangym_envs
@pytest.mark.parametrize("planner_class", [SwarmPlanner, FMCPlanner, UCTPlanner])
def test_planners_refuse_an_env_that_is_not_plangym(make_env, planner_class):
    env = make_env()
    with pytest.raises(TypeError, match=r"^env: expected a plangym env, with step_batch"):
        planner_class(env)
    assert getattr(env, "calls", []) == []


@not_plangym_envs
def test_play_and_random_scores_refuse_an_env_that_is_not_plangym(cartpole, make_env):
    env = make_env()
    planner = SwarmPlanner(cartpole, n_walkers=4, horizon=2)
    with pytest.raises(TypeError, match=r"^env: expected a plangym env, with step_batch"):
        play(env, planner, max_steps=2)
    with pytest.raises(TypeError, match=r"^env: expected a plangym env, with step_batch"):
        random_scores(env, steps=2, episodes=2)
    assert getattr(env, "calls", []) == []  # refused before the env was reset


@pytest.mark.parametrize(
    "planner",
    [None, object(), type("NotCallable", (), {"decide": 3})()],
    ids=["none", "object", "decide-not-callable"],
)
def test_play_checks_the_planner_before_resetting(moved_cartpole, planner):
    env, before = moved_cartpole
    call = lambda: play(env, planner, max_steps=2, seed=3)  # noqa: E731
    assert_refused_leaving_env_alone(env, before, call, TypeError, r"^planner: .*decide")


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"on_step": 3}, "^on_step: expected None or a callable"),
        ({"record": []}, "^record: expected None or a Trajectory"),
    ],
    ids=["on-step", "record"],
)
def test_play_checks_on_step_and_record_before_resetting(moved_cartpole, keywords, message):
    env, before = moved_cartpole
    planner = SwarmPlanner(env, n_walkers=4, horizon=2)
    call = lambda: play(env, planner, max_steps=2, seed=3, **keywords)  # noqa: E731
    assert_refused_leaving_env_alone(env, before, call, TypeError, message)


def test_play_names_a_planner_that_returns_no_decision(cartpole):
    class ReturnsAnInt:
        def decide(self, state):
            return 1

    with pytest.raises(TypeError, match=r"^planner: .*Decision.*received 1"):
        play(cartpole, ReturnsAnInt(), max_steps=2)


def test_planners_show_their_options(cartpole):
    assert repr(SwarmPlanner(cartpole)) == (
        "SwarmPlanner(env=CartPole-v1, n_walkers=32, horizon=8, dt=2, repeat_probability=0.5, "
        "seed=0)"
    )
    assert repr(SwarmPlanner(cartpole, reward_weight=np.float32(2), seed=None)) == (
        "SwarmPlanner(env=CartPole-v1, n_walkers=32, horizon=8, dt=2, repeat_probability=0.5, "
        "seed=None, reward_weight=2.0)"
    )
    assert repr(FMCPlanner(cartpole, budget=300)) == (
        "FMCPlanner(env=CartPole-v1, n_walkers=32, horizon=25, budget=300, seed=0)"
    )
    assert repr(UCTPlanner(cartpole, mix=0.5)) == (
        "UCTPlanner(env=CartPole-v1, waves=2, wave_size=32, rollout_depth=6, seed=0, mix=0.5)"
    )
    assert repr(UCTPlanner(cartpole, budget=100)).startswith(
        "UCTPlanner(env=CartPole-v1, budget=100, wave_size=32,"
    )


def float_rows(observs) -> list[list[float]]:
    """A ``features`` callable returning a list of float rows, one per walker."""
    return [[float(value) for value in np.ravel(observ)] for observ in observs]


def byte_rows(observs) -> np.ndarray:
    """Observations as uint8 rows: distances between them must not wrap around."""
    return np.clip(np.asarray(observs) * 40 + 128, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("planner_class", [SwarmPlanner, FMCPlanner])
def test_features_may_be_a_list_of_rows_or_integer_rows(cartpole, planner_class):
    def game(features):
        planner = planner_class(cartpole, n_walkers=6, horizon=3, features=features, seed=1)
        return play(cartpole, planner, max_steps=12, seed=0).actions

    assert game(float_rows) == game(lambda observs: np.array(float_rows(observs)))
    assert game(byte_rows) == game(lambda observs: byte_rows(observs).astype(np.float64))


@pytest.mark.parametrize(
    ("features", "error", "received"),
    [
        (lambda observs: np.zeros(3), ValueError, r"received ndarray\(shape=\(3,\)"),
        (lambda observs: [[1.0, 2.0]] * 3, ValueError, r"received list of shape \(3, 2\)"),
        (lambda observs: [[1.0], [1.0, 2.0]] * 2, ValueError, "rows of different lengths"),
        (lambda observs: [["a"]] * 4, TypeError, r"of numbers, received list of shape \(4, 1\)"),
        (lambda observs: None, TypeError, "received NoneType of shape"),
    ],
    ids=["one-row", "three-rows", "ragged", "text", "none"],
)
@pytest.mark.parametrize("planner_class", [SwarmPlanner, FMCPlanner])
def test_bad_feature_rows_are_refused_naming_features(
    cartpole, planner_class, features, error, received
):
    planner = planner_class(cartpole, n_walkers=4, horizon=3, features=features)
    expected = r"^features: expected one float row per walker, an array of shape \(4, k\)"
    with pytest.raises(error, match=f"{expected}.*{received}"):
        play(cartpole, planner, max_steps=2, seed=0)


def test_the_swarm_plays_to_a_goal_that_ends_the_episode():
    """Acrobot's episode ends when the goal is reached: such walkers used to count as dead,
    clone away and never vote, so the game scored a random policy's -300 in 300 steps."""
    env = plangym.make("Acrobot-v1")
    planner = SwarmPlanner(env, n_walkers=32, horizon=8, dt=5, seed=0)
    trajectory = play(env, planner, max_steps=300, seed=0)
    assert trajectory.ended and trajectory.score > -300
    env.close()
