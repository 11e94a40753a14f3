"""UCT spends its whole budget (or runs all its waves) unless no line of play can be saved.

A decision may only stop early when every node of its tree is closed: every line below
the root was followed to a lost life or the episode's end. On CartPole that is checkable
from outside: from such a state no sequence of actions keeps the pole up, and the action
played is one whose line lasts longest.
"""

from __future__ import annotations

from typing import Any

import pytest

import plangym
from plangym.planning import play
from plangym.planning.common import Decision
from plangym.planning.uct import UCTPlanner

# Farther than any UCT tree of these tests reaches: a line that lasts this long is alive.
HORIZON = 40


@pytest.fixture
def cartpole():
    env = plangym.make("CartPole-v1")
    yield env
    env.close()


def longest_line(env: Any, state: Any, cap: int = HORIZON) -> int:
    """Return the agent steps of the longest line of play from ``state``, at most ``cap``.

    Every action sequence is tried (depth first, stopping at the first line that reaches
    ``cap``): exhaustive where the game is lost, quick where it is not.
    """
    if cap == 0:
        return 0
    longest = 0
    for action in range(env.action_space.n):
        longest = max(longest, line_after(env, state, action, cap))
        if longest == cap:
            break
    return longest


def line_after(env: Any, state: Any, action: int, cap: int = HORIZON) -> int:
    """Return the agent steps of the longest line that starts with ``action``, at most ``cap``."""
    after, _, _, terminated, truncated, _ = env.step(action, state=state)
    if terminated or truncated:
        return 1
    return 1 + longest_line(env, after, cap - 1)


def play_decisions(env: Any, planner: UCTPlanner, seed: int, max_steps: int) -> list[tuple]:
    """Play with ``planner``; return (state, decision) for every step, to the game's end."""
    state, *_ = env.reset(seed=seed)
    played: list[tuple[Any, Decision]] = []
    for _ in range(max_steps):
        decision = planner.decide(state)
        played.append((state, decision))
        state, _, _, terminated, truncated, _ = env.step(decision.action, state=state)
        if terminated or truncated:
            break
    return played


def check_short_decisions_are_lost_games(env: Any, played: list[tuple], full: int) -> int:
    """Check every decision that simulated fewer than ``full`` samples; return their count.

    Such a decision is only allowed where the game is lost whatever is played, and it must
    still play an action whose line lasts as long as any.
    """
    short = 0
    for step, (state, decision) in enumerate(played):
        assert decision.samples <= full, f"step {step}: {decision.samples} samples > {full}"
        if decision.samples == full:
            continue
        short += 1
        longest = longest_line(env, state)
        assert longest < HORIZON, (
            f"step {step}: {decision.samples} of {full} samples, but a line of play "
            f"lasts {HORIZON} steps or more from this state"
        )
        assert line_after(env, state, decision.action) == longest, f"step {step}"
    return short


@pytest.mark.parametrize(("budget", "seed"), [(7, 0), (13, 0), (7, 2)])
def test_a_budget_is_spent_unless_the_game_is_lost(cartpole, budget, seed):
    # rollout_depth 6: a leaf costs up to 7 samples, so the last waves are a single leaf.
    planner = UCTPlanner(cartpole, budget=budget, wave_size=4, seed=seed)
    played = play_decisions(cartpole, planner, seed, max_steps=300)
    short = check_short_decisions_are_lost_games(cartpole, played, budget)
    assert short < 10 and len(played) > 50  # searched to the end, not stopped at once


def test_all_waves_run_unless_the_game_is_lost(cartpole):
    # No rollouts and one leaf a wave: every wave simulates exactly one sample.
    planner = UCTPlanner(cartpole, waves=8, wave_size=1, rollout_depth=0, seed=0)
    played = play_decisions(cartpole, planner, seed=0, max_steps=300)
    short = check_short_decisions_are_lost_games(cartpole, played, full=8)
    assert short < 10 and len(played) > 20


def test_a_lost_game_is_decided_from_the_tree_without_samples(cartpole):
    """Once every line is lost and in the tree, the decision costs nothing and still chooses."""
    planner = UCTPlanner(cartpole, budget=7, wave_size=4, seed=0)
    played = play_decisions(cartpole, planner, seed=0, max_steps=300)
    state, last = played[-1]
    assert last.samples == 0 and len(played) < 300  # the game was lost, with a closed tree
    assert line_after(cartpole, state, last.action) == longest_line(cartpole, state) == 1


def test_qbert_spends_the_budget_through_lost_lives():
    """Qbert's lines end in lost lives, which used to end decisions (33.7 of 50 samples)."""
    env = plangym.make("ALE/Qbert-v5", frameskip=15, obs_type="ram")
    try:
        planner = UCTPlanner(env, budget=50, wave_size=8, seed=0)
        samples = []

        class Counting:
            name = planner.name

            def decide(self, state: Any) -> Decision:
                decision = planner.decide(state)
                samples.append(decision.samples)
                return decision

        trajectory = play(env, Counting(), max_steps=15, seed=0)
    finally:
        env.close()
    assert samples == [50] * 15
    assert trajectory.samples_simulated == 15 * 50


def test_budget_games_repeat_on_two_workers(cartpole):
    """Closed subtrees change which leaves a wave takes, not the determinism of the game."""
    parallel = plangym.make("CartPole-v1", n_workers=2)
    try:
        games = [
            play(env, UCTPlanner(env, budget=13, wave_size=4, seed=3), max_steps=300, seed=3)
            for env in (cartpole, cartpole, parallel)
        ]
    finally:
        parallel.close()
    assert games[0].ended  # played to its lost end, through closed subtrees
    for game in games[1:]:
        assert game.actions == games[0].actions
        assert game.samples_simulated == games[0].samples_simulated


def test_a_restored_tree_knows_its_closed_nodes(cartpole):
    """A checkpoint taken near a lost end (closed nodes in the kept tree) resumes the game."""
    whole = play(cartpole, UCTPlanner(cartpole, budget=7, wave_size=4, seed=0), 300, seed=0)
    assert whole.ended
    first = UCTPlanner(cartpole, budget=7, wave_size=4, seed=0)
    split = whole.agent_steps - 6  # the last decisions are made from closed trees
    half = play(cartpole, first, max_steps=split, seed=0)
    second = UCTPlanner(cartpole, budget=7, wave_size=4, seed=0)
    second.set_planner_state(first.get_planner_state())
    rest = play(cartpole, second, max_steps=300, start_state=half.states[-1])
    assert half.actions + rest.actions == whole.actions
    assert half.samples_simulated + rest.samples_simulated == whole.samples_simulated
