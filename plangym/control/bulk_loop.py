"""The bulk batch loop the physics families share: a checked batch stepped in one loop.

The generic path (:meth:`plangym.core.PlanEnv.run_batch_columns`) steps each element
through a chain of calls (``_step_checked`` → ``step_with_dt`` → ``repeat_action`` →
``_underlying_step`` → ``apply_action`` → ``process_step``), which for a simulator stepping
in tens of microseconds is a good part of the cost. When nothing in that chain does work for
an env (no user wrappers, no pictures, identity ``process_*`` hooks and none of the methods
in :func:`bulk_loop_replaces` overridden), :func:`step_in_bulk` performs the same operations
in one loop, with bit-identical results: restore, step ``dt * frameskip`` times summing the
rewards, record the new state, autoreset. Each family says how it restores and records
states (whole records, record fields, raw bytes).

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> runs_in_bulk(env, type(env))
True
>>> env.clone(return_image=True, render_mode="rgb_array")._batch_in_bulk
False
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from plangym.core import PlanEnv, inherits_unchanged, repeat_action


def bulk_loop_replaces(family: type, family_owns: Iterable[str] = ()) -> dict[str, type]:
    """Return the methods the bulk loop skips or calls in a fixed way, with their owner.

    ``family`` is the class whose ``apply_action``, ``get_state``, ``set_state`` and
    ``apply_reset`` the loop reproduces, and whose versions of the methods named in
    ``family_owns`` too. A subclass overriding any method listed takes the generic path,
    so its override runs.
    """
    owners = {
        "_step_checked": PlanEnv,  # restore, step, process, record the state, autoreset
        "step_with_dt": PlanEnv,  # repeat the action dt * frameskip times
        "_underlying_step": PlanEnv,  # one step: apply_action, then process_apply_action
        "process_apply_action": PlanEnv,  # not called: an identity
        "process_step": PlanEnv,  # not called: the process_* hooks are identities
        "apply_action": family,  # the family's step, or what it wraps, is called
        "get_state": family,  # both done by the family's own codec
        "set_state": family,
        # Called by the loop on autoreset, as by the generic path; listed so that a subclass
        # changing how episodes start takes the generic path, as it always has.
        "reset": PlanEnv,
        "apply_reset": family,
    }
    return {**owners, **dict.fromkeys(family_owns, family)}


def runs_in_bulk(env: Any, family: type, family_owns: Iterable[str] = ()) -> bool:
    """Whether ``env``'s batches may run in the bulk loop: it would skip nothing that works.

    True when there are no user wrappers, no pictures to add, every ``process_*`` hook is an
    identity, and no method of :func:`bulk_loop_replaces` is overridden.
    """
    unchanged = inherits_unchanged(type(env), bulk_loop_replaces(family, family_owns))
    wrappers = getattr(env, "_wrappers", None)
    return unchanged and not wrappers and not env.return_image and env._identity_hooks


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
        if dt * repeats == 1:  # repeat_action's work without the call: the same values
            obs, reward, terminal, truncated, info = step(action)
            reward = 0.0 + reward
            info = {**info, "n_step": 1, "dt": dt}
        else:
            obs, reward, terminal, truncated, info = repeat_action(step, action, dt * repeats)
            info["dt"] = dt
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
