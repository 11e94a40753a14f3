"""Atari's fast batch path: the emulator writes each observation where it is returned.

Into its row of the batch's ``observs_out`` when given (a worker's shared output buffer),
else into an array of the env's :class:`~plangym.core.obs_pool.ObservationPool`: no
screen is copied, and no fresh memory is taken for one while the caller drops the
observations of earlier batches. The steps are those of the generic path, so results
are bit-identical; only the autoreset after an element that another element with a state
follows is left out (that state undoes it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plangym.columns import BatchColumns
from plangym.core.batch import Batch

if TYPE_CHECKING:
    from plangym.videogames.atari.env import AtariEnv


def rows_for(env: AtariEnv, batch: Batch) -> Any:
    """Return where ``env`` writes the observations of ``batch``, or None (the generic path).

    The rows of the batch's ``observs_out`` when they fit the observation space; without
    it, arrays of the env's pool, one per element.
    """
    space, observs_out = env.observation_space, batch.observs_out
    if observs_out is None:
        return env._observation_pool.arrays(len(batch.actions), env.obs_shape, space.dtype)
    fits = (
        observs_out.shape[1:] == space.shape
        and observs_out.dtype == space.dtype
        and observs_out.flags.c_contiguous
    )
    return observs_out if fits else None


def step_in_place(env: AtariEnv, batch: Batch, rows: Any) -> BatchColumns:
    """Step a checked batch of ``env``, writing observation ``i`` into ``rows[i]``.

    ``rows``: what :func:`rows_for` returned.
    """
    actions, states, dts, want_state, _ = batch
    new_states, rewards, terminals, truncateds, infos = [], [], [], [], []
    last = len(actions) - 1
    for i, (action, dt) in enumerate(zip(actions, dts, strict=True)):
        if states is not None:  # checked with the batch
            env._set_checked_state(states[i])
        run = env.play(action, dt)
        env.observe(rows[i])
        infos.append(env.step_info(run, dt))
        if want_state:
            new_states.append(env.get_state())
        rewards.append(run.reward)
        terminals.append(run.terminal)
        truncateds.append(run.truncated)
        # The next element restores a whole state of its own, which would undo a reset
        # (a Montezuma reset costs about 25 steps): only the last element's ending resets the env.
        ended = run.terminal or run.truncated
        if env.autoreset and ended and (states is None or i == last):
            env.reset(return_state=False)
    return BatchColumns(
        new_states if want_state else None, rows, rewards, terminals, truncateds, infos
    )
