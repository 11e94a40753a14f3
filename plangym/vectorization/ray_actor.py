"""The Ray actor of both faces: one handler per actor, as in a worker process.

A chunk's columns cross the object store packed
(:func:`~plangym.vectorization.packing.pack_columns`).
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable
from types import ModuleType
from typing import Any

import cloudpickle

from plangym.core import PlanEnv
from plangym.extras import install_command
from plangym.forwarding import forwarded_method, forwarded_property
from plangym.vectorization.errors import with_remote_traceback
from plangym.vectorization.handler import Handler, as_handler_factory
from plangym.vectorization.messages import Location
from plangym.vectorization.shared_memory import AttachedOutputs
from plangym.vectorization.wire import pack_error, unpack_error


def import_ray() -> ModuleType:
    """Return the ``ray`` module, or raise an ImportError that says how to install it."""
    try:
        import ray
        import ray.exceptions
    except ImportError as error:
        raise ImportError(
            f"RayEnv needs Ray, which is not installed: {install_command('ray')}, "
            'or pip install "ray>=2.9"'
        ) from error
    return ray


class PackedError(Exception):
    """An exception raised in an actor, pickled by plangym rather than by Ray.

    Ray's own cloudpickle copy turns a class pickled by value (defined in a notebook) into
    a new class in the caller; pickled like the env constructor, the caller gets its own
    class back. :meth:`unpack` returns the error with the actor's traceback.
    """

    def __init__(self, blob: bytes):
        super().__init__(blob)
        self.blob = blob

    @classmethod
    def current(cls, error: BaseException) -> PackedError:
        """Pack ``error``, which is being handled, with its traceback text."""
        return cls(pack_error(error))

    def unpack(self) -> BaseException:
        """Return the original error, with the actor's traceback as its ``__cause__``."""
        return unpack_error(self.blob)


def reports_errors(method: Callable) -> Callable:
    """Make an actor method raise its errors as :class:`PackedError`."""

    @functools.wraps(method)
    def wrapper(self: RemoteEnv, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except PackedError:
            raise
        except BaseException as error:  # KeyboardInterrupt, SystemExit: the env's errors too
            raise PackedError.current(error) from None

    return wrapper


class _PlainActorClass(type):
    """RemoteEnv's type: 0.1's ``RemoteEnv.remote(...)`` is told what replaces it.

    Not answered: Ray warns when the class it makes an actor of has a ``remote`` attribute.
    """

    def __getattr__(cls, name: str) -> Any:
        if name == "remote":
            raise AttributeError(
                f"{cls.__name__}.remote: {cls.__name__} is a plain class here, not Ray's actor "
                "class (importing plangym does not load Ray): plangym 0.1's "
                "RemoteEnv.remote(env_callable) is remote_env_class().remote(env_callable), "
                "with remote_env_class from plangym.vectorization.ray_actor "
                "(docs/compatibility.md)"
            )
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


class RemoteEnv(metaclass=_PlainActorClass):
    """The one Ray actor class: a worker holding one handler, for both faces.

    A plain class (:func:`remote_env_class` makes it an actor class). Every method raises
    errors as :class:`PackedError`, including (on every call) the env's build error.

    Args:
        env_callable: An env constructor or a
            :class:`~plangym.vectorization.handler.HandlerFactory`, or ``cloudpickle.dumps``
            of either (as :class:`RayEnv` sends it; see :class:`PackedError`).
    """

    OBS_IS_ARRAY = PlanEnv.OBS_IS_ARRAY
    STATE_IS_ARRAY = PlanEnv.STATE_IS_ARRAY
    SINGLETON = PlanEnv.SINGLETON

    def __init__(self, env_callable: Callable | bytes):
        self._handler: Handler | None = None
        self._build_error: PackedError | None = None
        try:
            if isinstance(env_callable, bytes):
                env_callable = cloudpickle.loads(env_callable)
            factory = as_handler_factory(env_callable)
            self._handler = factory(AttachedOutputs())  # no shared memory across a cluster
        except BaseException as error:  # KeyboardInterrupt, SystemExit: the build's errors
            # Raised from ready(): from the constructor it would be a bare ActorDiedError.
            self._build_error = PackedError.current(error)

    @property
    def handler(self) -> Handler:
        """The handler (raises the error that kept its env from being built)."""
        if self._handler is None:
            assert self._build_error is not None  # the constructor kept one or the other
            raise self._build_error
        return self._handler

    @property
    def env(self) -> Any:
        """The env the handler serves."""
        return self.handler.env

    unwrapped = env  # plangym 0.1's name

    @reports_errors
    def setup(self) -> None:
        """Build the env (plangym 0.1's second step; the env is built already)."""
        _ = self.handler

    # plangym 0.1's RemoteEnv was a PlanEnv: its members answer with the env's.
    name = forwarded_property("name", "env", "The env's name.")
    obs_shape = forwarded_property("obs_shape", "env", "Shape of the observations.")
    action_shape = forwarded_property("action_shape", "env", "Shape of the actions.")
    img_shape = forwarded_property("img_shape", "env", "Shape of the env's pictures.")
    return_image = forwarded_property("return_image", "env", "Whether infos carry pictures.")
    apply_action = forwarded_method("apply_action", PlanEnv, "env", reports_errors)
    apply_reset = forwarded_method("apply_reset", PlanEnv, "env", reports_errors)
    clone = forwarded_method("clone", PlanEnv, "env", reports_errors)
    get_image = forwarded_method("get_image", PlanEnv, "env", reports_errors)
    sample_action = forwarded_method("sample_action", PlanEnv, "env", reports_errors)
    step_with_dt = forwarded_method("step_with_dt", PlanEnv, "env", reports_errors)
    process_apply_action = forwarded_method("process_apply_action", PlanEnv, "env", reports_errors)
    process_step = forwarded_method("process_step", PlanEnv, "env", reports_errors)
    process_obs = forwarded_method("process_obs", PlanEnv, "env", reports_errors)
    process_reward = forwarded_method("process_reward", PlanEnv, "env", reports_errors)
    process_terminal = forwarded_method("process_terminal", PlanEnv, "env", reports_errors)
    process_info = forwarded_method("process_info", PlanEnv, "env", reports_errors)
    reset = forwarded_method("reset", PlanEnv, "env", reports_errors)
    get_state = forwarded_method("get_state", PlanEnv, "env", reports_errors)
    set_state = forwarded_method("set_state", PlanEnv, "env", reports_errors)
    step = forwarded_method("step", PlanEnv, "env", reports_errors)
    step_batch = forwarded_method("step_batch", PlanEnv, "env", reports_errors)

    @reports_errors
    def ready(self) -> int:
        """Return the process id once the env is built."""
        _ = self.handler
        return os.getpid()

    @reports_errors
    def handle(self, request: Any) -> Any:
        """Answer one request of :mod:`plangym.vectorization.messages`."""
        if type(request) is Location:
            return self.location()
        return self.handler.handle(request)

    def location(self) -> dict[str, Any]:
        """Return where this actor runs: Ray node id, node address, host name, process id."""
        ray = import_ray()
        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
            "hostname": socket.gethostname(),
            "pid": os.getpid(),
        }

    @reports_errors
    def close(self) -> None:
        """Close the env."""
        if self._handler is not None:
            self._handler.close()


@functools.cache
def remote_env_class() -> Any:
    """Return the Ray actor class of :class:`RemoteEnv` (built on first use; needs Ray)."""
    return import_ray().remote(RemoteEnv)


def remote_error(error: BaseException) -> BaseException:
    """Return the exception to raise in the caller for an actor task that raised ``error``."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, PackedError):
        return cause.unpack()
    if isinstance(cause, BaseException):
        return with_remote_traceback(cause, str(error))
    return error
