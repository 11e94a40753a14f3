"""A population planner in the spirit of Fractal Monte Carlo (Hernández et al., 2018).

To choose one action, a swarm of walkers starts at the current state. Each walker takes a
random first action, and the swarm then repeats two moves for ``horizon - 1`` rounds:

1. **Clone.** Every walker compares its *virtual reward* with a random companion's. The
   virtual reward multiplies the walker's score (reward collected since the root) by its
   distance to another random walker, both rescaled to [1, 2] across the swarm: it favours
   walkers that score well *and* walkers in sparsely visited places. A walker jumps to its
   companion's state with probability ``(VR_companion - VR_walker) / VR_walker``. Walkers
   that died (episode ended or a life lost) always jump to a live companion, except
   :func:`winners`: an episode ended, no life lost, ahead of every walker playing (a goal
   reached) stays, is not stepped on, and decides.
2. **Step.** Every walker applies a random action: the whole swarm is one ``step_batch``
   call, which a ``ParallelEnv`` spreads over its workers.

A walker that clones copies its companion's state, score and *first action*. After the
last round the planner plays the first action held by most live walkers: the population
has migrated towards the branches that led somewhere good.

The planner uses only ``step_batch`` with explicit states and its own seeded generator,
so the same seed plays the same game in one process or on any number of workers.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> planner = SwarmPlanner(env, n_walkers=8, horizon=8, seed=0)
>>> from plangym.planning.common import play
>>> trajectory = play(env, planner, max_steps=40, seed=0)
>>> trajectory.score, trajectory.ended
(40.0, False)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from plangym.planning.batches import SteppedStates, put_states, step_states, take_states
from plangym.planning.checks import (
    check_decide_state,
    check_feature_rows,
    check_features,
    check_plan_env,
    planner_repr,
)
from plangym.planning.common import ActionSampler, Decision, as_action, features_of
from plangym.validation import check_dt, check_number, check_positive_int, check_seed


def rescale(values: np.ndarray) -> np.ndarray:
    """Map ``values`` linearly onto [1, 2] (all ones when they are all equal).

    >>> rescale(np.array([0.0, 5.0, 10.0])).tolist()
    [1.0, 1.5, 2.0]
    """
    low, high = float(values.min()), float(values.max())
    if high <= low:
        return np.ones_like(values, dtype=np.float64)
    return 1.0 + (values - low) / (high - low)


class SwarmPlanner:
    """Chooses each action by letting a swarm of cloning walkers explore from the state.

    Args:
        env: The environment to plan in (any plangym env; a ``ParallelEnv`` steps the
            swarm on its workers).
        n_walkers: Walkers in the swarm: the batch size of every ``step_batch`` call.
        horizon: Rounds per decision, so every decision simulates
            ``n_walkers * horizon * dt`` agent steps.
        dt: Agent steps a walker takes per round (longer look-ahead for the same calls).
        seed: Seed of the planner's random generator.
        reward_weight: Exponent of the rescaled score in the virtual reward.
        distance_weight: Exponent of the rescaled distance in the virtual reward.
        features: Turns the walkers' observations (a list, or one array stacking them
            when they share a shape) into one float row per walker for the distances:
            anything ``np.asarray`` reads as an array of shape ``(walkers, k)`` (a list of
            rows too); by default the flattened (subsampled) observations.
        repeat_probability: Chance that a walker repeats its previous action instead of
            drawing a new one: walkers travel further (along a maze corridor, say) for
            the same number of steps.
    """

    name = "swarm"

    def __init__(
        self,
        env: Any,
        n_walkers: int = 32,
        horizon: int = 8,
        dt: int = 2,
        seed: int = 0,
        reward_weight: float = 1.0,
        distance_weight: float = 1.0,
        features: Callable[[list | np.ndarray], npt.ArrayLike] = features_of,
        repeat_probability: float = 0.5,
    ):
        self.env = check_plan_env(env)
        self.n_walkers = check_positive_int("n_walkers", n_walkers)
        self.horizon = check_positive_int("horizon", horizon)
        self.dt = check_dt(dt)  # refused here, not in the first batch
        self.reward_weight = check_number("reward_weight", reward_weight, low=0)
        self.distance_weight = check_number("distance_weight", distance_weight, low=0)
        self.features = check_features(features, env, default=features_of)
        self.repeat_probability = check_number("repeat_probability", repeat_probability, 0, 1)
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self.sampler = ActionSampler(env.action_space, self.rng)

    def __repr__(self) -> str:
        main = ("n_walkers", "horizon", "dt", "repeat_probability", "seed")
        return planner_repr(self, main, extra=("reward_weight", "distance_weight", "features"))

    def decide(self, state: Any) -> Decision:
        """Run the swarm from ``state`` and return the action most live walkers began with."""
        check_decide_state(state)
        n = self.n_walkers
        first_actions = self.sampler.sample(n)
        swarm = self._step(_Swarm.at_root(state, n), first_actions, np.arange(n))
        frames, samples = swarm.frames, n * self.dt
        for _ in range(self.horizon - 1):
            if swarm.dead.all():
                break
            swarm = swarm.take(self._clone_targets(swarm))
            movers = np.flatnonzero(~winners(swarm))  # a finished win is not played on
            swarm = self._step(swarm, self._next_actions(swarm)[movers], movers)
            frames += swarm.frames
            samples += len(movers) * self.dt
        return Decision(
            action=as_action(self._vote(swarm, first_actions)), frames=frames, samples=samples
        )

    def get_planner_state(self) -> dict[str, Any]:
        """Return what a checkpoint needs to continue exactly: the generator's state."""
        return {"rng": self.rng.bit_generator.state}

    def set_planner_state(self, saved: dict[str, Any]) -> None:
        """Continue from :meth:`get_planner_state`'s result."""
        self.rng.bit_generator.state = saved["rng"]

    def _next_actions(self, swarm: _Swarm) -> np.ndarray:
        """Fresh random actions, except where a walker repeats its last one."""
        actions = self.sampler.sample(self.n_walkers)
        if self.repeat_probability > 0.0:
            assert swarm.last_actions is not None  # set by every step
            repeat = self.rng.random(self.n_walkers) < self.repeat_probability
            actions[repeat] = swarm.last_actions[repeat]
        return actions

    def _step(self, swarm: _Swarm, actions: np.ndarray, movers: np.ndarray) -> _Swarm:
        """Apply one action per walker of ``movers`` in a single ``step_batch`` call."""
        stepped = step_states(self.env, actions, swarm.states_of(movers), dt=self.dt)
        features = check_feature_rows(self.features(stepped.observs), len(actions))
        return swarm.moved(movers, stepped, features, actions)

    def _clone_targets(self, swarm: _Swarm) -> np.ndarray:
        """For each walker, the index of the walker whose place it takes (itself if none)."""
        n = self.n_walkers
        assert swarm.features is not None  # set by every step
        alive = np.flatnonzero(~swarm.dead)
        others = self.rng.integers(n, size=n)
        distances = np.linalg.norm(swarm.features - swarm.features[others], axis=1)
        virtual = rescale(swarm.scores) ** self.reward_weight
        virtual = virtual * rescale(distances) ** self.distance_weight
        companions = alive[self.rng.integers(len(alive), size=n)]
        probability = (virtual[companions] - virtual) / virtual
        clones = swarm.dead | (self.rng.random(n) < probability)
        clones &= ~winners(swarm)  # a won episode stays in the swarm, and decides
        return np.where(clones, companions, np.arange(n))

    def _vote(self, swarm: _Swarm, first_actions: np.ndarray) -> Any:
        """Return the first action of most live walkers (the best one's for continuous actions).

        A walker that won (see :func:`winners`) decides alone: the best one's first action.
        """
        won = np.flatnonzero(winners(swarm))
        if len(won):
            return first_actions[swarm.origin[won[np.argmax(swarm.scores[won])]]]
        alive = np.flatnonzero(~swarm.dead)
        voters = alive if len(alive) else np.arange(self.n_walkers)
        if not self.sampler.is_discrete:
            best = voters[np.argmax(swarm.scores[voters])]
            return first_actions[swarm.origin[best]]
        votes = first_actions[swarm.origin[voters]]
        values, counts = np.unique(votes, return_counts=True)
        # Break ties by score, then by the planner's generator, never by action order.
        tied = values[counts == counts.max()]
        if len(tied) > 1:
            best_score = {a: swarm.scores[voters][votes == a].max() for a in tied.tolist()}
            top = max(best_score.values())
            tied = np.array([a for a, score in best_score.items() if score == top])
        return tied[self.rng.integers(len(tied))]


@dataclass(eq=False)  # arrays: compared by identity, as before
class _Swarm:
    """The walkers of one decision: a value object, each move returns a new one."""

    states: list | np.ndarray  # a record array for envs whose states are 0-d records
    features: np.ndarray | None
    scores: np.ndarray
    dead: np.ndarray
    origin: np.ndarray  # origin[i]: the walker whose first action walker i inherited
    last_actions: np.ndarray | None = None
    frames: int = 0
    ended: np.ndarray | None = None  # whose episode ended (FMCPlanner keeps it; see winners)

    @classmethod
    def at_root(cls, state: Any, n: int) -> _Swarm:
        return cls(
            states=[state] * n,
            features=None,
            scores=np.zeros(n),
            dead=np.zeros(n, dtype=bool),
            origin=np.arange(n),
        )

    def states_of(self, movers: np.ndarray) -> list | np.ndarray:
        """Return the states of walkers ``movers``: all as they are (no copy) when all move."""
        return self.states if len(movers) == len(self.scores) else take_states(self.states, movers)

    def moved(
        self, movers: np.ndarray, stepped: SteppedStates, features: np.ndarray, actions: Any
    ) -> _Swarm:
        """Return the swarm after walkers ``movers`` took ``actions``; the others stay.

        ``stepped`` holds the movers' results, ``features`` their rows.
        """
        n = len(self.scores)
        scores, dead = self.scores.copy(), self.dead.copy()
        ended = np.zeros(n, dtype=bool) if self.ended is None else self.ended.copy()
        scores[movers] += stepped.rewards
        dead[movers] |= stepped.dead
        # An end without a lost life: a game finished, not lost (see winners).
        assert stepped.lost is not None  # step_states sets it
        ended[movers] |= stepped.ended & ~stepped.lost
        last: np.ndarray | None = np.asarray(actions)
        if len(movers) == n:
            states, all_features = stepped.states, features
        else:
            states = put_states(self.states, movers, stepped.states)
            assert self.features is not None  # set by the first round, where all move
            all_features = self.features.copy()
            all_features[movers] = features
            last = None if self.last_actions is None else self.last_actions.copy()
            if last is not None:
                last[movers] = actions
        return _Swarm(states, all_features, scores, dead, self.origin, last, stepped.frames, ended)

    def take(self, index: np.ndarray) -> _Swarm:
        """Return the swarm where walker i becomes a copy of walker ``index[i]``."""
        return _Swarm(
            states=take_states(self.states, index),
            features=None if self.features is None else self.features[index],
            scores=self.scores[index],
            dead=self.dead[index],
            origin=self.origin[index],
            last_actions=None if self.last_actions is None else self.last_actions[index],
            ended=None if self.ended is None else self.ended[index],
        )


def winners(swarm: _Swarm) -> np.ndarray:
    """Walkers whose game finished (no life lost) with a score above every walker playing.

    FractalAI counts every end of an episode as a death, so its swarm never keeps a
    finished game: a knockout in Boxing ends the episode, the walker that landed it clones
    away, and the swarm steers clear of winning (measured: stuck at 99 for 1,000+ steps).
    An episode that ends, without a lost life, ahead of everything still playing is a goal
    reached instead (``swarm.ended`` holds such ends only).

    >>> swarm = _Swarm(states=[], features=None, scores=np.array([1.0, 0.0, 1.0]),
    ...     dead=np.array([True, False, True]), origin=np.arange(3),
    ...     ended=np.array([True, False, False]))
    >>> winners(swarm).tolist()
    [True, False, False]
    """
    if swarm.ended is None or not swarm.ended.any():
        return np.zeros(len(swarm.scores), dtype=bool)
    playing = ~swarm.dead
    best_playing = swarm.scores[playing].max() if playing.any() else -np.inf
    return swarm.ended & (swarm.scores > best_playing)
