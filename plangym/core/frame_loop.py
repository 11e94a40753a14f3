"""The one frame loop: an action repeated ``dt * frameskip`` underlying steps, for every family.

A family supplies one small primitive, ``advance(action)``: move the simulator or emulator
one underlying step and say what happened, as ``(obs, reward, terminal, truncated, info)``.
A primitive that does not read the observation or build an info for every frame returns
None for them; the family then reads both once, after the last frame.
:func:`repeat_frames` does the rest for all of them: it repeats the primitive, sums the
rewards, stops at the end of the episode, and counts lives for ``episodic_life``.

>>> rewards = iter([1.0, 2.0, 3.0])
>>> def advance(action):
...     reward = next(rewards)
...     return None, reward, reward == 2.0, False, None
>>> run = repeat_frames(advance, action=0, n_frames=3)
>>> run.reward, run.terminal, run.n_step
(3.0, True, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

Advance = Callable[[Any], tuple[Any, float, bool, bool, Any]]


class FrameRun(NamedTuple):
    """What a run of frames did: the last frame's obs and info, and the run's totals."""

    obs: Any
    reward: float
    terminal: bool
    truncated: bool
    info: Any
    n_step: int  # underlying steps applied: fewer than asked when the episode ended
    lost_life: bool  # fewer lives after the run than before it


_new_run = tuple.__new__


def repeat_frames(
    advance: Advance,
    action: Any,
    n_frames: int,
    lives: Callable[[], int] | None = None,
    episodic_life: bool = False,
) -> FrameRun:
    """Call ``advance(action)`` up to ``n_frames`` times, stopping when the episode ends.

    Args:
        advance: The family's primitive (see the module docstring).
        action: The action every frame applies.
        n_frames: How many underlying steps to apply (at least 1).
        lives: Lives left now (None: the env has no lives; ``lost_life`` is then False).
        episodic_life: End the episode (``terminal=True``) at the first frame that loses a
            life.
    """
    lives_before = lives() if lives is not None else 0
    watch = lives if episodic_life else None
    reward = 0.0
    n_step = 0
    for n_step in range(1, n_frames + 1):  # noqa: B007 - n_step is the count of frames run
        obs, frame_reward, terminal, truncated, info = advance(action)
        # A Python float whatever the env gives (BipedalWalker: float32, summed as float32).
        reward += float(frame_reward)
        if watch is not None and watch() < lives_before:
            terminal = True
        if terminal or truncated:
            break
    lost_life = lives is not None and lives() < lives_before
    # tuple.__new__ skips the Python-level __new__ of a NamedTuple: this runs once per step.
    return _new_run(FrameRun, (obs, reward, terminal, truncated, info, n_step, lost_life))
