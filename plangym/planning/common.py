"""What every reference planner shares: seeded actions, the play loop and its record.

A planner is anything with a ``decide(state) -> Decision`` method. :func:`play` asks it for
one action per agent step, applies that action with ``env.step(action, state=state)`` and
records the states it went through, so the game can be replayed (and drawn) afterwards.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> class AlwaysLeft:
...     name = "left"
...     def decide(self, state):
...         return Decision(action=0, frames=0)
>>> trajectory = play(env, AlwaysLeft(), max_steps=50, seed=1)
>>> trajectory.ended, trajectory.agent_steps < 50, trajectory.score == trajectory.agent_steps
(True, True, True)
>>> record = Trajectory()  # filled step by step: kept if the game is stopped (Ctrl-C)
>>> play(env, AlwaysLeft(), max_steps=3, seed=1, record=record) is record, record.agent_steps
(True, 3)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from gymnasium import spaces

from plangym.planning.batches import step_states, take_states
from plangym.planning.checks import check_plan_env, check_planner
from plangym.validation import check_positive_int, check_seed, describe

if TYPE_CHECKING:
    from plangym.planning.display import Animation


@dataclass(frozen=True)
class Decision:
    """A planner's choice for one agent step.

    Attributes:
        action: The action to apply from the state the planner was given.
        frames: Underlying steps (emulator frames for Atari) the planner simulated to decide.
        samples: Agent steps the planner simulated to decide (each of ``frameskip`` frames
            for Atari), if it counts them.
    """

    action: Any
    frames: int
    samples: int | None = None


class Planner(Protocol):
    """What :func:`play` needs from a planner."""

    def decide(self, state: Any) -> Decision:
        """Return the action to apply from ``state``."""


@dataclass
class Trajectory:
    """The game a planner played.

    Attributes:
        states: ``states[0]`` is the start; ``states[t + 1]`` the state after ``actions[t]``.
        actions: The actions applied, one per agent step.
        rewards: The reward of each agent step.
        frames_simulated: Underlying steps simulated in total: planning plus playing.
        wall_s: Seconds the whole game took.
        ended: Whether the episode ended (terminal or truncated) before the step budget.
        truncated: Whether it ended cut by the env's time limit, the game not over.
        samples_simulated: Agent steps the planner simulated (planning only), or None if
            it does not count them.
    """

    states: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    frames_simulated: int = 0
    wall_s: float = 0.0
    ended: bool = False
    samples_simulated: int | None = None
    truncated: bool = False

    @property
    def score(self) -> float:
        """Sum of the rewards."""
        return float(sum(self.rewards))

    @property
    def agent_steps(self) -> int:
        """Number of actions applied."""
        return len(self.actions)

    @property
    def samples_per_action(self) -> float | None:
        """Mean agent steps simulated per action played (None if not counted)."""
        if self.samples_simulated is None or not self.actions:
            return None
        return self.samples_simulated / len(self.actions)

    def animation(
        self, env_or_name: Any, every: int = 1, frameskip: int | None = None
    ) -> Animation:
        """Replay the game and return its :class:`~plangym.planning.display.Animation`.

        It shows inline in Jupyter, at the game's speed (needs the ``viz`` extra).

        Args:
            env_or_name: An env that draws, or the game's name: an env is then built with
                ``return_image=True`` (and closed afterwards).
            every: Keep every ``every``-th picture.
            frameskip: For a name: the frameskip the game was played with (default: the
                env's default).
        """
        from plangym.planning.display import animate

        return animate(self, env_or_name, every=every, frameskip=frameskip)

    def _repr_html_(self) -> str:
        from plangym.planning.display import trajectory_html

        return trajectory_html(self)

    def __repr__(self) -> str:
        # The states can be thousands of arrays: the numbers tell what happened.
        return (
            f"{type(self).__name__}(score={self.score:g}, agent_steps={self.agent_steps}, "
            f"frames_simulated={self.frames_simulated}, wall_s={self.wall_s:.3g}, "
            f"ended={self.ended})"
        )


@dataclass(frozen=True)
class Progress:
    """What :func:`play` reports after each agent step (for progress bars)."""

    step: int
    max_steps: int
    score: float
    frames_simulated: int
    wall_s: float


def start_episode(env: Any, seed: int | None) -> Any:
    """Seed ``env`` (when it has a ``seed`` method) and return the state of a new episode.

    An env whose ``seed`` is not a method (an attribute that hides it) is refused: skipping
    the seed would play a different game for the same ``seed``.
    """
    if seed is not None:
        seed_env = getattr(env, "seed", None)
        if callable(seed_env):
            seed_env(seed)
        elif hasattr(env, "seed"):
            raise TypeError(
                f"seed: expected {type(env).__name__} to have a seed(seed) method to seed it "
                f"with, received the attribute seed={seed_env!r:.60}; keep that value under "
                "another name, or pass seed=None to play without seeding"
            )
    state, *_ = env.reset()
    return state


def play(
    env: Any,
    planner: Planner,
    max_steps: int,
    seed: int | None = 0,
    start_state: Any = None,
    on_step: Callable[[Progress], None] | None = None,
    record: Trajectory | None = None,
) -> Trajectory:
    """Let ``planner`` play ``env`` until ``max_steps`` agent steps have been played.

    Args:
        env: Any plangym environment (a ``ParallelEnv`` too).
        planner: Chooses the action of every agent step.
        max_steps: Agent steps to play unless the episode ends first.
        seed: Seeds the environment before its reset (ignored with ``start_state``).
        start_state: Play from this state instead of a new episode.
        on_step: Called with a :class:`Progress` after every agent step.
        record: A :class:`Trajectory` to record into (and return), so that a caller keeps
            the steps played when the game is stopped (Ctrl-C) before it returns. One that
            holds steps already (a game resumed from a checkpoint) is continued from its
            last state, up to ``max_steps`` steps in all; its times and counts go on.
    """
    # Everything is checked before the env is reset.
    check_plan_env(env, needs=("step_batch", "step", "reset"))
    check_planner(planner)
    check_positive_int("max_steps", max_steps)
    seed = check_seed(seed)
    if on_step is not None and not callable(on_step):
        raise TypeError(f"on_step: expected None or a callable, received {describe(on_step)}")
    if record is not None and not isinstance(record, Trajectory):
        raise TypeError(f"record: expected None or a Trajectory, received {describe(record)}")
    trajectory = Trajectory() if record is None else record
    start = time.perf_counter() - trajectory.wall_s
    if trajectory.actions:
        if start_state is not None:
            raise ValueError("start_state: a record with steps continues from its last state")
        if len(trajectory.states) != len(trajectory.actions) + 1:
            raise ValueError("record: expected one state more than actions")
        state = trajectory.states[-1]
    else:
        trajectory.states.clear()
        state = start_episode(env, seed) if start_state is None else start_state
        trajectory.states.append(state)
    for step in range(trajectory.agent_steps + 1, max_steps + 1):
        if trajectory.ended:
            break
        decision = planner.decide(state)
        if not isinstance(decision, Decision):
            raise TypeError(
                f"planner: expected decide() to return a Decision, received {describe(decision)}"
            )
        state, _, reward, terminal, truncated, info = env.step(decision.action, state=state)
        trajectory.states.append(state)
        trajectory.actions.append(decision.action)
        trajectory.rewards.append(float(reward))
        trajectory.frames_simulated += decision.frames + int(info.get("n_step", 1))
        if decision.samples is not None:
            trajectory.samples_simulated = (trajectory.samples_simulated or 0) + decision.samples
        trajectory.wall_s = time.perf_counter() - start
        trajectory.ended = bool(terminal or truncated)
        trajectory.truncated = bool(truncated and not terminal)
        if on_step is not None:
            on_step(
                Progress(
                    step=step,
                    max_steps=max_steps,
                    score=trajectory.score,
                    frames_simulated=trajectory.frames_simulated,
                    wall_s=trajectory.wall_s,
                )
            )
    trajectory.wall_s = time.perf_counter() - start
    return trajectory


class ActionSampler:
    """Draws actions from an action space with a seeded NumPy generator.

    ``space.sample()`` would draw from the space's own generator, which the environment
    may reseed; a planner's draws must depend on its seed alone.

    >>> sampler = ActionSampler(spaces.Discrete(4), np.random.default_rng(0))
    >>> sampler.sample(5).tolist()
    [3, 2, 2, 1, 1]
    """

    def __init__(self, space: spaces.Space, rng: np.random.Generator):
        if not isinstance(space, spaces.Discrete | spaces.Box):
            raise TypeError(
                f"action_space: expected a Discrete or Box space, received {type(space).__name__}"
            )
        self.space = space
        self.rng = rng

    @property
    def is_discrete(self) -> bool:
        """Whether the actions are integers (a Discrete space)."""
        return isinstance(self.space, spaces.Discrete)

    def sample(self, n: int) -> np.ndarray:
        """Return ``n`` actions: integers for Discrete spaces, arrays for Box spaces."""
        space = self.space
        if isinstance(space, spaces.Discrete):
            return space.start + self.rng.integers(space.n, size=n)
        low = np.broadcast_to(space.low, space.shape)
        high = np.broadcast_to(space.high, space.shape)
        draws = self.rng.uniform(low, high, size=(n, *space.shape))
        return draws.astype(space.dtype)

    def all_actions(self) -> np.ndarray:
        """Every action of a Discrete space, in order."""
        if not isinstance(self.space, spaces.Discrete):
            raise TypeError("all_actions: only a Discrete action space can be enumerated")
        return self.space.start + np.arange(self.space.n)


def as_action(action: Any) -> Any:
    """Turn a NumPy scalar action into a Python int so it prints and serialises plainly."""
    if isinstance(action, np.integer):
        return int(action)
    return action


def life_lost(info: dict) -> bool:
    """Whether a step lost a life (video games report it in ``info["lost_life"]``)."""
    return bool(info.get("lost_life", False))


def features_of(observs: Sequence | np.ndarray, max_size: int = 4096) -> np.ndarray:
    """Observations as float rows for distances; large ones are subsampled evenly.

    >>> features_of([np.zeros((210, 160, 3), np.uint8)] * 2).shape
    (2, 4032)
    """
    rows = np.asarray(observs).reshape(len(observs), -1)
    if rows.dtype.kind not in "fiub":
        received = type(observs[0]).__name__ if len(observs) else describe(observs)
        raise TypeError(
            "features: the default, features_of, reads observations as arrays of numbers, "
            f"received observations of type {received}: pass features=, a callable turning "
            "a list of them into one float row each"
        )
    if rows.shape[1] > max_size:
        stride = -(-rows.shape[1] // max_size)
        rows = rows[:, ::stride]
    return rows.astype(np.float32)


def same_state(first: Any, second: Any) -> bool:
    """Whether two states are the same bytes (any NumPy state) or equal (anything else)."""
    if isinstance(first, np.ndarray) and isinstance(second, np.ndarray):
        return (
            first.dtype == second.dtype
            and first.shape == second.shape
            and first.tobytes() == second.tobytes()
        )
    try:
        return bool(first == second)
    except Exception:
        return False


def random_scores(env: Any, steps: int, episodes: int, seed: int = 0) -> list[float]:
    """Scores of a uniformly random policy over ``steps`` agent steps, for ``episodes`` games.

    Every game starts from the same state as a game played with ``play(..., seed=seed)``;
    the games advance in lockstep, one ``step_batch`` call per agent step, and a game stops
    counting when its episode ends.

    >>> import plangym
    >>> scores = random_scores(plangym.make("CartPole-v1"), steps=500, episodes=4, seed=0)
    >>> len(scores), all(5 <= score < 100 for score in scores)
    (4, True)
    """
    check_plan_env(env, needs=("step_batch", "reset", "action_space"))
    check_positive_int("steps", steps)
    check_positive_int("episodes", episodes)
    sampler = ActionSampler(env.action_space, np.random.default_rng(check_seed(seed)))
    states: list | np.ndarray = [start_episode(env, seed)] * episodes  # games still playing
    scores = np.zeros(episodes)
    playing = np.arange(episodes)
    for _ in range(steps):
        actions = sampler.sample(episodes)[playing]
        stepped = step_states(env, actions, states)
        scores[playing] += stepped.rewards
        going = ~stepped.ended  # a lost life does not stop a game
        states = take_states(stepped.states, np.flatnonzero(going))
        playing = playing[going]
        if not len(playing):
            break
    return scores.tolist()
