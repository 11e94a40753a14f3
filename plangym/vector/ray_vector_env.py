"""The vector env on Ray actors, for users who outgrow one machine.

Same API and results as :class:`~plangym.vector.AsyncVectorEnv`; each sub-env lives in a
Ray actor. Connects to ``address`` (or ``RAY_ADDRESS``, or a local cluster) unless this
process is connected already.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
from gymnasium.vector import AutoresetMode

from plangym.vector.ray_workers import RayWorkers
from plangym.vector.vector_env import PlanVectorEnv
from plangym.vectorization.ray import connect


class RayVectorEnv(PlanVectorEnv):
    """Each sub-env on a Ray actor of its own.

    Args:
        env_fns: One constructor per sub-env.
        copy: Return copies of the observations (else the batch buffer itself).
        observation_mode: "same", "different", or ``(batched_space, single_space)``.
        autoreset_mode: An :class:`~gymnasium.vector.AutoresetMode` or its value.
        address: The Ray cluster (``"HOST:PORT"``); see :func:`plangym.vectorization.ray.connect`.
        actor_options: Passed to each actor's ``.options()`` (e.g. ``num_cpus``).
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        copy: bool = True,
        observation_mode: str | tuple = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        address: str | None = None,
        actor_options: dict | None = None,
    ):
        self._take_arguments(env_fns, copy, observation_mode, autoreset_mode)
        ray = connect(address)
        self._start_from_probe(
            observation_mode,
            lambda single: RayWorkers(ray, env_fns, self.autoreset_mode, single, actor_options),
        )
