"""Fractal Monte Carlo: its pieces, its exact budget, the presets, and planner checkpoints."""

from __future__ import annotations

import numpy as np
import pytest

import plangym
from plangym.planning import SwarmPlanner, play
from plangym.planning.fmc import FMCPlanner, clone_probabilities, relativize, vote
from plangym.planning.presets import FMC_PRESETS, fmc_preset, game_of
from plangym.planning.uct import UCTPlanner


@pytest.fixture
def cartpole():
    env = plangym.make("CartPole-v1")
    yield env
    env.close()


@pytest.fixture(scope="module")
def boxing():
    env = plangym.make("ALE/Boxing-v5", frameskip=3, obs_type="ram")
    yield env
    env.close()


def test_relativize_standardises_then_logs_above_and_exponentiates_below():
    values = np.array([-3.0, 0.0, 1.0, 10.0])
    z = (values - values.mean()) / values.std()
    expected = np.where(z > 0, 1 + np.log(1 + np.abs(z)), np.exp(np.minimum(z, 0)))
    assert np.allclose(relativize(values), expected)
    assert relativize(np.array([0.0, 1.0, 2.0])).round(6).tolist() == [
        round(float(np.exp(-np.sqrt(1.5))), 6),
        1.0,
        round(1 + float(np.log(1 + np.sqrt(1.5))), 6),
    ]
    assert (relativize(np.array([-1e9, 0.0, 1e9])) > 0).all()  # always positive
    assert relativize(np.array([5.0, 5.0, 5.0])).tolist() == [1.0, 1.0, 1.0]
    # The order of the values is kept, and a shift or a scale changes nothing.
    rng = np.random.default_rng(0)
    values = rng.normal(size=50)
    out = relativize(values)
    assert (np.argsort(out) == np.argsort(values)).all()
    assert np.allclose(out, relativize(3 * values + 7))


def test_clone_probabilities_compare_with_the_companion():
    virtual = np.array([1.0, 2.0, 0.5, 0.0])
    companions = np.array([1, 0, 0, 1])
    assert clone_probabilities(virtual, companions).tolist() == [1.0, -0.5, 1.0, 2.0 / 1e-8]


def test_vote_counts_walkers_per_first_action_lowest_among_ties():
    assert vote(np.array([3, 1, 3, 1, 2]), n_actions=4) == 1
    assert vote(np.array([3, 3, 0]), n_actions=4) == 3
    assert vote(np.array([5, 6, 6]), n_actions=3, start=4) == 6


@pytest.mark.parametrize(("walkers", "budget"), [(8, 8), (8, 30), (16, 100), (5, 12)])
def test_the_budget_is_spent_exactly_on_boxing(boxing, walkers, budget):
    planner = FMCPlanner(boxing, n_walkers=walkers, horizon=50, budget=budget, seed=1)
    state, *_ = boxing.reset()
    decision = planner.decide(state)
    assert decision.samples == budget
    assert decision.frames == budget * 3  # every sample is one agent step of 3 frames
    # The horizon caps the rounds: FractalAI's min(max samples, walkers * horizon).
    short = FMCPlanner(boxing, n_walkers=walkers, horizon=2, budget=budget, seed=1)
    assert short.decide(state).samples == min(budget, 2 * walkers)


def test_a_game_counts_samples_per_action_exactly(boxing):
    planner = FMCPlanner(boxing, n_walkers=6, horizon=4, budget=20, seed=0)
    trajectory = play(boxing, planner, max_steps=12, seed=0)
    assert trajectory.samples_simulated == 12 * 20
    assert trajectory.samples_per_action == 20
    assert trajectory.frames_simulated == (12 * 20 + 12) * 3  # planning plus playing


def test_all_walkers_dead_stops_the_decision_early(cartpole):
    """A CartPole state about to fall: every walker dies within a few rounds."""
    state, *_ = cartpole.reset()
    falling = state.copy()
    falling["physics"] = (0.0, 0.0, 0.2, 2.0)  # pole far over and falling fast
    planner = FMCPlanner(cartpole, n_walkers=8, horizon=50, budget=400, seed=0)
    decision = planner.decide(falling)
    assert decision.samples < 400 and decision.samples % 8 == 0


def test_same_seed_same_game_and_fmc_keeps_cartpole_up(cartpole):
    games = [
        play(cartpole, FMCPlanner(cartpole, n_walkers=16, horizon=10, seed=4), 150, seed=4)
        for _ in range(2)
    ]
    assert games[0].actions == games[1].actions
    assert games[0].score == 150 and not games[0].ended


def test_continuous_actions_play_the_mean_first_action():
    env = plangym.make("Pendulum-v1")
    planner = FMCPlanner(env, n_walkers=6, horizon=3, seed=0)
    state, *_ = env.reset()
    decision = planner.decide(state)
    assert decision.action.shape == env.action_space.shape and decision.samples == 18
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_walkers": 0}, "n_walkers"),
        ({"horizon": 0}, "horizon"),
        ({"n_walkers": 8, "budget": 5}, "budget: expected at least n_walkers = 8"),
    ],
)
def test_bad_parameters_name_themselves(cartpole, kwargs, message):
    with pytest.raises(ValueError, match=message):
        FMCPlanner(cartpole, **kwargs)


def test_presets_hold_the_published_rows():
    boxing = FMC_PRESETS["Boxing"]
    assert (boxing.repeat, boxing.horizon, boxing.walkers, boxing.budget) == (3, 30, 150, 2000)
    # A sample of the published -v0 games: `repeat` steps of 2-4 frames, 3 on average.
    assert boxing.frameskip == 9 and fmc_preset("Alien").frameskip == 15
    assert fmc_preset("ALE/Alien-v5").budget == 1190  # min(2,000, 50 x 25, published mean)
    assert fmc_preset("MsPacmanNoFrameskip-v4").budget == 5000  # min(20,000, 250 x 20)
    qbert = fmc_preset("qbert")
    assert qbert.budget <= qbert.samples_mean and qbert.repeat == 5
    assert all(preset.budget <= preset.samples_mean for preset in FMC_PRESETS.values())
    assert game_of("ALE/MsPacman-v5") == "MsPacman"
    with pytest.raises(ValueError, match=r"no published parameters for 'ALE/Pong-v5'.*Boxing"):
        fmc_preset("ALE/Pong-v5")


def test_uct_budget_is_spent_exactly(boxing):
    planner = UCTPlanner(boxing, wave_size=8, rollout_depth=3, budget=50, seed=0)
    trajectory = play(boxing, planner, max_steps=6, seed=0)
    assert trajectory.samples_simulated == 6 * 50


@pytest.mark.parametrize(
    "make_planner",
    [
        lambda env: SwarmPlanner(env, n_walkers=4, horizon=3, seed=2),
        lambda env: FMCPlanner(env, n_walkers=4, horizon=3, seed=2),
        lambda env: UCTPlanner(env, wave_size=4, rollout_depth=2, budget=20, seed=2),
    ],
    ids=["swarm", "fmc", "uct"],
)
def test_a_restored_planner_state_continues_the_same_game(boxing, make_planner):
    whole = play(boxing, make_planner(boxing), max_steps=16, seed=0)
    first = make_planner(boxing)
    half = play(boxing, first, max_steps=8, seed=0)
    saved = first.get_planner_state()
    assert saved.get("kept", [None])  # UCT's kept subtree travels with the generator
    second = make_planner(boxing)  # a fresh planner, then the saved state
    second.set_planner_state(saved)
    rest = play(boxing, second, max_steps=8, start_state=half.states[-1])
    assert half.actions + rest.actions == whole.actions


@pytest.mark.parametrize("planner_class", [FMCPlanner, SwarmPlanner])
def test_a_won_game_stays_in_the_swarm_and_decides(boxing, planner_class):
    """A walker whose game ended ahead of every walker playing never clones away, and wins
    (the swarm planner cloned it away as dead: it never finished Acrobot, say)."""
    from plangym.planning.swarm import _Swarm

    planner = planner_class(boxing, n_walkers=4, horizon=3, seed=0)
    decide = planner._decide if planner_class is FMCPlanner else planner._vote
    first_actions = np.array([3, 5, 5, 5])
    swarm = _Swarm(
        states=[None] * 4,
        features=np.zeros((4, 2)),
        scores=np.array([2.0, 1.0, 1.0, 0.0]),
        dead=np.array([True, False, False, False]),
        origin=np.arange(4),
        ended=np.array([True, False, False, False]),
    )
    for _ in range(20):
        assert planner._clone_targets(swarm)[0] == 0
    action = decide(swarm, first_actions)
    assert action == 3  # the win's action, not the vote's 5
    assert type(action) is int or planner_class is SwarmPlanner  # its decide() converts
    swarm.scores[1] = 2.0  # a walker still playing has as much: no win yet
    assert decide(swarm, first_actions) == 5


def test_fmc_refuses_feature_rows_that_change_width_within_a_decision(cartpole):
    """The last round steps only the walkers the budget pays for: their rows join the others."""

    def narrower_for_fewer(observs):
        return np.zeros((len(observs), 2 if len(observs) == 4 else 3))

    planner = FMCPlanner(cartpole, n_walkers=4, horizon=3, budget=10, features=narrower_for_fewer)
    with pytest.raises(ValueError, match=r"^features: .*\(2, k\) with k = 2 as before, received"):
        play(cartpole, planner, max_steps=1, seed=0)
