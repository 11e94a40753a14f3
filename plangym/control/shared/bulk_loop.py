"""The bulk batch loop the physics families share: a checked batch stepped in one loop.

The generic path (:meth:`plangym.core.PlanEnv.run_batch_generic`) steps each element
through a chain of calls (``_step_checked`` → ``step_with_dt`` → ``repeat_frames`` →
``_underlying_step`` → ``apply_action`` → ``process_step``), which for a simulator stepping
in tens of microseconds is a good part of the cost. When nothing in that chain does work for
an env (its class declares ``FAST_PATHS``, no user wrappers, no pictures, identity
``process_*`` hooks: :func:`runs_in_bulk`), :func:`step_in_bulk` performs the same operations
in one loop, with bit-identical results: restore, step ``dt * frameskip`` times summing the
rewards, record the new state, autoreset. Each family says how it restores and records
states (whole records, record fields, raw bytes).

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> runs_in_bulk(env)
True
>>> env.batch_path, env.clone(return_image=True, render_mode="rgb_array").batch_path
('kernel', 'generic')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from plangym.core.frame_loop import repeat_frames


def runs_in_bulk(env: Any) -> bool:
    """Whether ``env``'s batches may run in the bulk loop: it would skip nothing that works.

    True when the env's class declares ``FAST_PATHS`` (a subclass that does not is stepped
    through its methods), there are no user wrappers and no pictures to add, and the
    ``process_*`` hooks are identities for its settings.
    """
    wrappers = getattr(env, "_wrappers", None)
    return (
        env.has_fast_paths()
        and not wrappers
        and not env.return_image
        and env.step_hooks_are_identity()
    )


def step_in_bulk(
    items: Iterable,
    actions: Any,
    dts: list[int],
    *,
    restore: Callable[[Any], None],
    step: Callable[[Any], tuple],
    record: Callable[[], None] | None,
    repeats: int,
    autoreset: Callable[[], Any] | None,
) -> tuple[list, list, list, list, list]:
    """Step one element per item, as the generic path would; return the result columns.

    Args:
        items: Per element, what ``restore`` takes (a record's fields, its bytes...).
        actions: One checked action per element.
        dts: One dt per element.
        restore: Puts an element's state in the simulator.
        step: One underlying step: ``(obs, reward, terminal, truncated, info)``.
        record: Records the state after an element's steps (None: states not wanted).
        repeats: The env's frameskip.
        autoreset: Starts a new episode after one ends (None: ``autoreset=False``).

    Returns:
        ``(observs, rewards, terminals, truncateds, infos)``.
    """
    observs, rewards, terminals, truncateds, infos = [], [], [], [], []
    for action, dt, item in zip(actions, dts, items, strict=True):
        restore(item)
        if dt * repeats == 1:  # the frame loop's work without the call: the same values
            obs, reward, terminal, truncated, info = step(action)
            reward = float(reward)  # as the frame loop sums it
            info = {**info, "n_step": 1, "dt": dt}
        else:
            run = repeat_frames(step, action, dt * repeats)
            obs, reward, terminal, truncated = run.obs, run.reward, run.terminal, run.truncated
            info = {**run.info, "n_step": run.n_step, "dt": dt}
        observs.append(obs)
        rewards.append(reward)
        terminals.append(terminal)
        truncateds.append(truncated)
        infos.append(info)
        if record is not None:
            record()
        if autoreset is not None and (terminal or truncated):
            autoreset()
    return observs, rewards, terminals, truncateds, infos


def fill_rows(out: np.ndarray | None, rows: list) -> np.ndarray | list:
    """Return ``out`` holding ``rows`` when each is an array of its row's shape and dtype.

    Otherwise (or without ``out``) return ``rows`` unchanged: the caller's observations
    then travel as a list.

    >>> out = np.zeros((2, 3))
    >>> fill_rows(out, [np.ones(3), np.ones(3)]) is out
    True
    >>> fill_rows(out, [np.ones(3), np.ones(2)])[1].shape
    (2,)
    """
    if out is None:
        return rows
    shape, dtype = out.shape[1:], out.dtype
    if len(rows) != len(out) or not all(
        type(row) is np.ndarray
        and (row.dtype is dtype or row.dtype == dtype)
        and row.shape == shape
        for row in rows
    ):
        return rows
    if rows:
        out[:] = rows
    return out
