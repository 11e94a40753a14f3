"""A batch of classic control states stepped by a vectorized kernel, in NumPy passes.

:mod:`plangym.control.classic_control.kernels` steps every row of a batch at once, bit for
bit as gymnasium's env steps one. This module does the rest of what the bulk loop does per
element (:func:`plangym.control.shared.bulk_loop.step_in_bulk`), for whole columns: repeat
the action ``dt * frameskip`` times while the episode goes on, sum the rewards, count the
time limit's steps and truncate at its end, and write the new states as one record array.

The results are those of the bulk loop: the same observations, rewards (summed in the same
order), flags, infos (``n_step`` and ``dt``) and states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from plangym.columns import BatchColumns


def kernel_actions(actions: Any) -> np.ndarray | None:
    """Return the batch's actions as one array; None when that would change what a row gets.

    Rows of one dtype stack into the values each element would have been given; a batch
    mixing dtypes (a float64 action among float32 ones) is stepped element by element.
    """
    if isinstance(actions, np.ndarray):
        return actions
    if not len(actions):
        return None
    first = actions[0]
    if isinstance(first, np.ndarray):
        dtype, shape = first.dtype, first.shape
        if all(
            isinstance(a, np.ndarray) and a.dtype == dtype and a.shape == shape for a in actions
        ):
            return np.stack(actions)
        return None
    # Discrete actions arrive as one int64 array already (PlanEnv.check_batch).
    return None


def int64_column(values: list[int]) -> np.ndarray:
    """``values`` as an int64 array; one value repeated (the usual ``dt``) is filled in.

    Converting a list of Python ints costs about twice what ``list.count`` over it does
    (``benchmarks/design_figures.py``), and most batches repeat one ``dt``.

    >>> int64_column([2, 2, 2]), int64_column([1, 3])
    (array([2, 2, 2]), array([1, 3]))
    """
    if values and values.count(values[0]) == len(values):
        return np.full(len(values), values[0], dtype=np.int64)
    return np.asarray(values, dtype=np.int64)


@dataclass
class Rows:
    """The fields of a batch of states that a step changes, one array per field."""

    physics: np.ndarray  # (B, n) float64
    kinds: np.ndarray  # how each row's physics is held (see classic_state)
    steps_beyond: np.ndarray | None  # CartPole's, -1 for None
    last_u: np.ndarray | None  # Pendulum's
    has_last_u: np.ndarray
    elapsed: np.ndarray | None  # the time limit's count, without a limit None

    @classmethod
    def of(cls, records: np.ndarray, kernel: Any, timed: bool) -> Rows:
        """Copy the fields out of ``records`` (the inputs stay untouched)."""
        return cls(
            records["physics"].astype(np.float64),
            records["physics_kind"].copy(),
            records["steps_beyond_terminated"].copy() if kernel.has_steps_beyond else None,
            records["last_u"].copy() if kernel.has_last_u else None,
            records["has_last_u"].copy(),
            np.maximum(records["elapsed_steps"], 0) if timed else None,
        )

    def records(self, records: np.ndarray) -> np.ndarray:
        """Return ``records`` with these fields (a new record array)."""
        new = records.copy()
        new["physics"], new["physics_kind"] = self.physics, self.kinds
        if self.steps_beyond is not None:
            new["steps_beyond_terminated"] = self.steps_beyond
        if self.elapsed is not None:
            new["elapsed_steps"] = self.elapsed
        if self.last_u is not None:
            new["last_u"], new["has_last_u"] = self.last_u, self.has_last_u
        return new

    def step(self, kernel: Any, actions: np.ndarray, rows: np.ndarray) -> tuple:
        """Step the rows ``rows`` once: ``(rewards, terminated)`` of those rows."""
        whole = rows.size == len(self.kinds)  # most passes: every row, no gathering
        take = slice(None) if whole else rows
        steps_beyond, last_u = self.steps_beyond, self.last_u
        beyond = None if steps_beyond is None else steps_beyond[take]
        torque = None if last_u is None else last_u[take]
        if not whole:  # fancy indexing copied them: the kernel updates the copies
            beyond = None if beyond is None else beyond.copy()
            torque = None if torque is None else torque.copy()
        new_physics, rewards, ended = kernel.step(
            self.physics[take], actions[take], beyond, torque, kinds=self.kinds[take]
        )
        self.physics[take] = new_physics
        if steps_beyond is not None and not whole:  # beyond is then the updated copy
            steps_beyond[rows] = beyond
        if last_u is not None:  # torque is then last_u's rows
            if not whole:
                last_u[rows] = torque
            self.has_last_u[take] = True
        self.kinds[take] = kernel.physics_kind
        return rewards, ended


def step_records(
    kernel: Any,
    records: np.ndarray,
    actions: np.ndarray,
    dts: list[int],
    repeats: int,
    max_episode_steps: int | None,
    want_state: bool,
    observs_out: np.ndarray | None = None,
) -> BatchColumns:
    """Step every record ``dt * repeats`` times (fewer if its episode ends) with ``kernel``.

    Args:
        kernel: The env's kernel (see
            :func:`plangym.control.classic_control.kernels.kernel_for`).
        records: The states, a 1-D record array of the env's state dtype.
        actions: One action per row (see :func:`kernel_actions`).
        dts: One dt per row.
        repeats: The env's frameskip.
        max_episode_steps: The time limit, or None without one.
        want_state: Return the new states (one record array).
        observs_out: Where to write the observations, if given.
    """
    n = len(records)
    state = Rows.of(records, kernel, max_episode_steps is not None)
    dt_column = int64_column(dts)
    budget = dt_column * repeats
    rewards = np.zeros(n, dtype=np.float64)
    n_step = np.zeros(n, dtype=np.int64)
    terminated = np.zeros(n, dtype=np.bool_)
    truncated = np.zeros(n, dtype=np.bool_)
    active = budget > 0
    while (rows := np.flatnonzero(active)).size:
        take = slice(None) if rows.size == n else rows
        step_rewards, ended = state.step(kernel, actions, rows)
        rewards[take] += step_rewards  # summed in the bulk loop's order: 0.0 + r1 + r2 ...
        n_step[take] += 1
        terminated[take] = ended
        stop = ended
        if state.elapsed is not None:
            state.elapsed[take] += 1
            truncated[take] = cut = state.elapsed[take] >= max_episode_steps
            stop = ended | cut
        active[take] = ~stop & (n_step[take] < budget[take])
    observs = kernel.observe(state.physics)
    if observs_out is not None and observs_out.shape == observs.shape:
        observs_out[...] = observs
        observs = observs_out
    infos = {"n_step": n_step, "dt": dt_column}  # see info_list
    return BatchColumns(
        state.records(records) if want_state else None,
        observs,
        rewards,
        terminated,
        truncated,
        infos,
    )
