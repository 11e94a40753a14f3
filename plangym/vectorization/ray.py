"""Step batches on a Ray cluster: :class:`RayEnv`, whose workers are :class:`RemoteEnv` actors.

Ray is an optional dependency (``pip install "plangym[ray]"``): this module imports
without it and only building a ``RayEnv`` needs it.

>>> import plangym
>>> env = plangym.make("CartPole-v1", n_workers=2, ray=True)  # doctest: +SKIP
>>> state, obs, info = env.reset()  # doctest: +SKIP
>>> states, observs, rewards, terminals, truncateds, infos = env.step_batch(
...     actions=[0, 1, 0], states=[state] * 3)  # doctest: +SKIP
>>> env.close()  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import cloudpickle

from plangym.constructor import takes_parameters_of
from plangym.validation import describe
from plangym.vectorization.backend import Backend
from plangym.vectorization.env import VectorizedEnv
from plangym.vectorization.lifecycle import idle_only
from plangym.vectorization.messages import Location
from plangym.vectorization.ray_actor import RemoteEnv, import_ray
from plangym.vectorization.ray_backend import RayBackend

__all__ = [
    "RAY_AVAILABLE",
    "RayEnv",
    "RemoteEnv",
    "checked_actor_options",
    "connect",
    "import_ray",
]

# plangym 0.1's flag: whether Ray is installed (found without importing it: Ray is slow to load).
RAY_AVAILABLE = importlib.util.find_spec("ray") is not None


def __getattr__(name: str) -> Any:
    # plangym 0.1's module attribute ``ray`` (None without Ray), loaded on first use.
    if name == "ray":
        return import_ray() if RAY_AVAILABLE else None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Actors spread over the nodes and reserve no CPU, so more actors than cores still start.
DEFAULT_ACTOR_OPTIONS: dict[str, Any] = {"scheduling_strategy": "SPREAD"}


def checked_actor_options(options: Any) -> dict:
    """``options`` for the actors' ``.options()`` as a dict (None: none), or a TypeError."""
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(
            "actor_options: expected None or a dict of Ray actor options (e.g. "
            f"{{'num_cpus': 1}}), received {describe(options)}"
        )
    return dict(options or {})


_CONNECTING = threading.Lock()  # held while this process connects to Ray


def connect(address: str | None = None) -> ModuleType:
    """Connect this process to Ray unless it already is; return the ``ray`` module.

    ``address`` (else ``RAY_ADDRESS``) names a cluster, e.g. ``"10.0.0.5:6379"``; without
    either, Ray finds one started here with ``ray start`` or starts a local one. A process
    already connected keeps its connection and ``address`` is ignored.
    """
    check_address(address)
    ray = import_ray()
    with _CONNECTING:  # two threads' first envs would each start a cluster
        if not ray.is_initialized():
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), ignore_reinit_error=True)
    return ray


def check_address(address: Any) -> None:
    """Raise TypeError unless ``address`` is None or a string (Ray's message names nothing)."""
    if address is not None and not isinstance(address, str):
        raise TypeError(
            f"address: expected None or a Ray address such as 'HOST:PORT', received "
            f"{describe(address)}"
        )


class RayEnv(VectorizedEnv):
    """Steps batches on ``n_workers`` Ray actors, with the single env's exact results.

    A local env serves single steps, properties and input checks; each actor
    (:class:`RemoteEnv`) builds its own env, on any node of the cluster.

    Takes :class:`VectorizedEnv`'s parameters (``env_class, name, frameskip, autoreset,
    delay_setup, n_workers, blocking``, then the env's keywords), plus:

    Args:
        args: :class:`VectorizedEnv`'s parameters, in its order.
        address: Address of the Ray cluster (``"HOST:PORT"``); None uses ``RAY_ADDRESS``,
            else a cluster started on this machine, else a new local one (see
            :func:`connect`). A process already connected to Ray stays connected.
        actor_options: Passed to Ray's ``.options()`` when an actor is created, e.g.
            ``{"num_cpus": 1}`` to reserve one core per actor; the default spreads the
            actors over the nodes without reserving cores.
        kwargs: :class:`VectorizedEnv`'s parameters by name, and the env's keywords.
    """

    @takes_parameters_of(VectorizedEnv.__init__)
    def __init__(
        self,
        *args: Any,
        address: str | None = None,
        actor_options: dict | None = None,
        **kwargs: Any,
    ):
        check_address(address)  # before any env is built
        self._address = address
        options = DEFAULT_ACTOR_OPTIONS if actor_options is None else actor_options
        self._actor_options = checked_actor_options(options)
        super().__init__(*args, **kwargs)

    def create_backend(self) -> Backend:
        """Connect to Ray, start the actors and wait until their envs are built."""
        ray = connect(self._address)
        factory_blob = cloudpickle.dumps(self.create_env_callable())
        return RayBackend(ray, [factory_blob] * self.n_workers, self._actor_options)

    @property
    def pool(self) -> RayBackend:
        """The :class:`RayBackend` holding the actors."""
        backend = self.scheduler.backend
        assert isinstance(backend, RayBackend)
        return backend

    @property
    def workers(self) -> list:
        """The actor handles, one per worker (as in plangym 0.1)."""
        return list(self.pool.actors)

    @idle_only
    def locations(self) -> list[dict[str, Any]]:
        """Where each actor runs (see :meth:`RemoteEnv.location`), in worker order."""
        return self.scheduler.broadcast_all(Location(), "location")
