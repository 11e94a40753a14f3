"""How a checked batch is stepped: the batch paths of :class:`~plangym.core.PlanEnv`.

:meth:`~plangym.core.PlanEnv.step_batch` checks a batch, then hands it to
:meth:`BatchPaths.run_batch_columns`, which sends it down the path that setup chose
(:attr:`BatchPaths.batch_path`): ``run_batch_generic`` steps it element by element through
every method; a family's ``run_batch_fast`` steps it in one loop or one NumPy pass. Every
path gives bit-identical results.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> state, *_ = env.reset()
>>> columns = env.run_batch_columns([0, 1], [state, state], [1, 2], want_state=False)
>>> env.batch_path, [info["n_step"] for info in columns.infos]
('kernel', [1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.columns import BatchColumns, is_record_block, records_to_states
from plangym.core.batch import Batch


class BatchPaths:
    """The batch paths of :class:`~plangym.core.PlanEnv`; families add a ``run_batch_fast``."""

    _batch_path = "generic"  # what setup chose: see batch_path

    @property
    def batch_path(self) -> str:
        """How :meth:`step_batch` steps this env's batches, chosen once at setup.

        "generic": element by element through every method (what a subclass overrides
        runs); "bulk": one loop over the simulator (:mod:`plangym.control.shared.bulk_loop`);
        "kernel": NumPy passes over the whole batch (classic control); "in_place": frames
        straight to the emulator, observations written into the caller's rows (Atari).
        Every path gives bit-identical results.
        """
        return self._batch_path

    def _step_checked(self, action: Any, state: Any, dt: int, want_state: bool) -> tuple:
        """Step one checked element as ``step`` does (:class:`~plangym.core.PlanEnv`)."""
        raise NotImplementedError

    def run_batch(
        self, actions: Any, states: list | None, dts: list[int], want_state: bool
    ) -> tuple[list, ...]:
        """Step a batch whose inputs were already checked (see :meth:`step_batch`)."""
        return self.run_batch_columns(actions, states, dts, want_state).as_lists()

    def run_batch_columns(
        self,
        actions: Any,
        states: list | np.ndarray | None,
        dts: list[int],
        want_state: bool,
        observs_out: np.ndarray | None = None,
        copy: bool = True,
    ) -> BatchColumns:
        """Step a checked batch and return its results as :class:`BatchColumns`.

        The batch goes to the path setup chose (:attr:`batch_path`): every path gives
        bit-identical results.

        Args:
            actions: One checked action per element.
            states: None, a list of checked states, or a 1-D record array of them.
            dts: One dt per element.
            want_state: Return the new states.
            observs_out: An array with one row per element that an env may write the
                observations into (then ``observs`` is that array); envs that cannot
                write there in place return a list, as the generic path does.
            copy: False allows observations that are views of buffers the env writes
                again at its next call (see :meth:`step_batch`); a single env's
                observations are always its own.
        """
        batch = Batch(actions, states, dts, want_state, observs_out)
        if self._batch_path == "generic":
            return self.run_batch_generic(batch)
        return self.run_batch_fast(batch)

    def run_batch_generic(self, batch: Batch) -> BatchColumns:
        """Step a batch element by element through :meth:`step`'s methods (the generic path)."""
        states = batch.states
        if states is None:
            states = [None] * len(batch.actions)
        elif is_record_block(states):
            states = records_to_states(states)
        rows = [
            self._step_checked(action, state, step_dt, batch.want_state)
            for action, state, step_dt in zip(batch.actions, states, batch.dts, strict=True)
        ]
        return BatchColumns.from_rows(rows, batch.want_state)

    def run_batch_fast(self, batch: Batch) -> BatchColumns:
        """Step a batch on the family's fast path (:attr:`batch_path`); generic here."""
        return self.run_batch_generic(batch)
