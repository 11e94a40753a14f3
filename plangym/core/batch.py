"""A checked batch, as the batch paths of :class:`~plangym.core.PlanEnv` receive it.

:meth:`~plangym.core.PlanEnv.run_batch_columns` hands it to the path that setup chose
(:attr:`~plangym.core.PlanEnv.batch_path`): ``run_batch_generic`` steps it element by
element through every method, a family's ``run_batch_fast`` in one loop or one NumPy pass.

>>> batch = Batch(actions=[0, 1], states=None, dts=[1, 1], want_state=False)
>>> len(batch.actions), batch.observs_out is None
(2, True)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class Batch(NamedTuple):
    """What one checked batch asks for (see :meth:`~plangym.core.PlanEnv.step_batch`)."""

    actions: Any  # one checked action per element
    states: list | np.ndarray | None  # None, a list of checked states, or a record array
    dts: list[int]  # one dt per element
    want_state: bool  # return the new states
    # An array with one row per element that the env may write the observations into.
    observs_out: np.ndarray | None = None
