"""Fractal Monte Carlo (Hernández, Durán et al., 2018) as published with the FractalAI code.

To choose one action, ``n_walkers`` walkers start at the current state and each takes a
uniformly random first action. Then, round after round, until the *budget* of samples
for the action is spent, ``horizon`` rounds have been played or every walker is dead:

1. **Virtual reward.** Each walker's score (reward collected since the root) and its
   distance (on observations) to a walker picked by a random permutation are both
   *relativized* across the swarm (:func:`relativize`); the virtual reward is
   ``score ** reward_weight * distance ** distance_weight``.
2. **Clone.** Each walker draws a random *live* companion and jumps to its state (taking
   its score and its first action) with probability
   ``(VR_companion - VR_walker) / VR_walker``; dead walkers (episode over or a life lost)
   always jump.
3. **Step.** The walkers apply uniformly random actions: one ``step_batch`` call. The last
   round steps only as many walkers (chosen at random) as the budget has samples left.

A *sample* is one walker step: one agent step, ``frameskip`` emulator frames for Atari. The
budget is counted exactly: a decision never simulates more than ``budget`` samples, and
``Decision.samples`` says how many it did. The planner plays the first action held by
most walkers (the lowest action among ties, as FractalAI's ``argmax`` of the counts); for
continuous actions, the mean of the walkers' first actions.

>>> import plangym
>>> from plangym.planning.common import play
>>> env = plangym.make("CartPole-v1")
>>> planner = FMCPlanner(env, n_walkers=16, horizon=10, budget=100, seed=0)
>>> trajectory = play(env, planner, max_steps=30, seed=0)
>>> trajectory.score, trajectory.samples_simulated
(30.0, 3000)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from plangym.planning.batches import step_states
from plangym.planning.checks import (
    check_decide_state,
    check_feature_rows,
    check_features,
    check_plan_env,
    planner_repr,
)
from plangym.planning.common import ActionSampler, Decision, as_action, features_of
from plangym.planning.swarm import _Swarm, winners
from plangym.validation import check_number, check_positive_int, check_seed


def relativize(values: np.ndarray) -> np.ndarray:
    """FractalAI's normalisation: standardise, then ``1 + log(1 + z)`` above 0, ``exp(z)`` below.

    Every value comes out positive, the mean maps to 1, and large outliers are damped by
    the logarithm. All values equal: all ones.

    >>> relativize(np.array([0.0, 1.0, 2.0])).round(4).tolist()
    [0.2938, 1.0, 1.7996]
    >>> relativize(np.array([3.0, 3.0])).tolist()
    [1.0, 1.0]
    """
    values = np.asarray(values, dtype=np.float64)
    std = values.std()
    if not std > 0:
        return np.ones(len(values))
    z = (values - values.mean()) / std
    # np.where evaluates both branches: clip the arguments so neither warns.
    return np.where(z > 0, 1.0 + np.log1p(np.maximum(z, 0.0)), np.exp(np.minimum(z, 0.0)))


def clone_probabilities(virtual: np.ndarray, companions: np.ndarray) -> np.ndarray:
    """``(VR[companion] - VR) / VR``, FractalAI's cloning probability (unclipped).

    A walker whose virtual reward is not positive is compared as if it were 1e-8.

    >>> clone_probabilities(np.array([1.0, 2.0, 4.0]), np.array([2, 2, 0])).tolist()
    [3.0, 1.0, -0.75]
    """
    safe = np.where(virtual > 0, virtual, 1e-8)
    return (virtual[companions] - virtual) / safe


def vote(first_actions: np.ndarray, n_actions: int, start: int = 0) -> int:
    """Return the first action held by most walkers; the lowest such action among ties.

    >>> vote(np.array([2, 0, 2, 1, 0]), n_actions=3)
    0
    >>> vote(np.array([2, 2, 1]), n_actions=3)
    2
    """
    counts = np.bincount(np.asarray(first_actions) - start, minlength=n_actions)
    return start + int(np.argmax(counts))


class FMCPlanner:
    """Fractal Monte Carlo with an exact budget of samples per action.

    Args:
        env: The environment (a ``ParallelEnv`` steps the walkers on its workers).
        n_walkers: Walkers in the swarm (FractalAI's "max walkers").
        horizon: Rounds at most per decision (FractalAI's "time horizon"): with the budget
            this gives FractalAI's limit of ``min(max samples, walkers * horizon)``.
        budget: Samples per action at most (default ``n_walkers * horizon``); at least
            ``n_walkers``, the cost of the first round.
        seed: Seed of the planner's random generator.
        reward_weight: Exponent of the relativized score in the virtual reward.
        distance_weight: Exponent of the relativized distance in the virtual reward.
        features: Turns the walkers' observations into one float row per walker for the
            distances: anything ``np.asarray`` reads as an array of shape ``(walkers, k)``
            (a list of rows too); by default the flattened (subsampled) observations.
    """

    name = "fmc"

    def __init__(
        self,
        env: Any,
        n_walkers: int = 32,
        horizon: int = 25,
        budget: int | None = None,
        seed: int = 0,
        reward_weight: float = 1.0,
        distance_weight: float = 1.0,
        features: Callable[[list | np.ndarray], npt.ArrayLike] = features_of,
    ):
        self.env = check_plan_env(env)
        self.n_walkers = check_positive_int("n_walkers", n_walkers)
        self.horizon = check_positive_int("horizon", horizon)
        budget = self.n_walkers * self.horizon if budget is None else budget
        self.budget = check_positive_int("budget", budget)
        if self.budget < self.n_walkers:
            raise ValueError(
                f"budget: expected at least n_walkers = {self.n_walkers} samples per action "
                f"(one step of every walker), received {budget}"
            )
        self.reward_weight = check_number("reward_weight", reward_weight, low=0)
        self.distance_weight = check_number("distance_weight", distance_weight, low=0)
        self.features = check_features(features, env, default=features_of)
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self.sampler = ActionSampler(env.action_space, self.rng)

    def __repr__(self) -> str:
        main = ("n_walkers", "horizon", "budget", "seed")
        return planner_repr(self, main, extra=("reward_weight", "distance_weight", "features"))

    def decide(self, state: Any) -> Decision:
        """Run the swarm from ``state`` within the budget; return the most held first action."""
        check_decide_state(state)
        n = self.n_walkers
        first_actions = self.sampler.sample(n)
        swarm = self._step(_Swarm.at_root(state, n), first_actions, np.arange(n))
        frames, samples = swarm.frames, n
        for _ in range(self.horizon - 1):
            if samples >= self.budget or swarm.dead.all():
                break
            swarm = swarm.take(self._clone_targets(swarm))
            stepping = np.flatnonzero(~winners(swarm))  # a finished win is not played on
            movers = stepping
            if self.budget - samples < len(stepping):  # the last round: the samples left
                chosen = self.rng.choice(len(stepping), self.budget - samples, replace=False)
                movers = stepping[np.sort(chosen)]
            swarm = self._step(swarm, self.sampler.sample(len(movers)), movers)
            frames += swarm.frames
            samples += len(movers)
        return Decision(action=self._decide(swarm, first_actions), frames=frames, samples=samples)

    def _step(self, swarm: _Swarm, actions: np.ndarray, movers: np.ndarray) -> _Swarm:
        """Step the walkers ``movers`` (one ``step_batch`` call); the others stay put."""
        stepped = step_states(self.env, actions, swarm.states_of(movers))
        width = None if swarm.features is None else swarm.features.shape[1]
        features = check_feature_rows(self.features(stepped.observs), len(movers), width)
        return swarm.moved(movers, stepped, features, actions)

    def virtual_rewards(self, swarm: _Swarm) -> np.ndarray:
        """Relativized score and distance to a random-permutation partner, weighted."""
        assert swarm.features is not None  # set by every step
        partners = self.rng.permutation(self.n_walkers)
        distances = np.linalg.norm(swarm.features - swarm.features[partners], axis=1)
        rewards = relativize(swarm.scores) ** self.reward_weight
        return rewards * relativize(distances) ** self.distance_weight

    def _clone_targets(self, swarm: _Swarm) -> np.ndarray:
        """For each walker, the index of the walker whose place it takes (itself if none)."""
        n = self.n_walkers
        virtual = self.virtual_rewards(swarm)
        alive = np.flatnonzero(~swarm.dead)
        companions = alive[self.rng.integers(len(alive), size=n)]
        clones = swarm.dead | (self.rng.random(n) < clone_probabilities(virtual, companions))
        clones &= ~winners(swarm)  # a won episode stays in the swarm, and decides
        return np.where(clones, companions, np.arange(n))

    def _decide(self, swarm: _Swarm, first_actions: np.ndarray) -> Any:
        won = np.flatnonzero(winners(swarm))
        if len(won):  # the first action of the best finished win
            return as_action(first_actions[swarm.origin[won[np.argmax(swarm.scores[won])]]])
        held = first_actions[swarm.origin]
        if not self.sampler.is_discrete:
            return held.mean(axis=0).astype(first_actions.dtype)
        space = self.sampler.space
        assert isinstance(space, spaces.Discrete)  # is_discrete
        return vote(held, int(space.n), int(space.start))

    def get_planner_state(self) -> dict[str, Any]:
        """Return what a checkpoint needs to continue exactly: the generator's state."""
        return {"rng": self.rng.bit_generator.state}

    def set_planner_state(self, saved: dict[str, Any]) -> None:
        """Continue from :meth:`get_planner_state`'s result."""
        self.rng.bit_generator.state = saved["rng"]
