"""The vector env on Ray actors, for users who outgrow one machine.

Same API and results as :class:`~plangym.vector.AsyncVectorEnv`; each sub-env lives in a
Ray actor. Connects to ``address`` (or ``RAY_ADDRESS``, or a local cluster) unless this
process is connected already.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import cloudpickle
import gymnasium
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.sub_env import SubEnvHandler
from plangym.vector.vector_env import PlanVectorEnv
from plangym.vectorization.handler import HandlerFactory
from plangym.vectorization.lifecycle import idle_only
from plangym.vectorization.messages import Location
from plangym.vectorization.ray import checked_actor_options, connect
from plangym.vectorization.ray_backend import RayBackend


class RayVectorEnv(PlanVectorEnv):
    """Each sub-env on a Ray actor of its own.

    Takes the arguments every :class:`PlanVectorEnv` takes, then:

    Args:
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
        self._actor_options = checked_actor_options(actor_options)
        self._ray = connect(address)
        self._start_from_probe(self._start_actors)

    LOG_WORKER_ERRORS = True

    @property
    def workers(self) -> list:
        """The actor handles, one per sub-env (as :attr:`RayEnv.workers`), e.g. for ``ray.kill``."""
        self.call_state.check_running()
        backend = self._backend
        assert isinstance(backend, RayBackend)  # what _start_actors started
        return list(backend.actors)

    @idle_only
    def locations(self) -> list[dict[str, Any]]:
        """Where each sub-env's actor runs (node, address, pid), in sub-env order.

        See :meth:`plangym.vectorization.ray_actor.RemoteEnv.location`.
        """
        return self._run_now(self._to_all(Location()), "location")

    def _start_actors(self, single: Space) -> tuple[RayBackend, BatchOutputs]:
        blobs = [
            cloudpickle.dumps(HandlerFactory(SubEnvHandler, (env_fn, index, self.autoreset_mode)))
            for index, env_fn in enumerate(self.env_fns)
        ]
        backend = RayBackend(self._ray, blobs, self._actor_options, unit="sub-env")
        return backend, BatchOutputs(single, len(blobs))
