"""CartPole that misbehaves on request, for the tests of the worker pipe's error paths.

``mode`` (set with ``set_attr``) says what :meth:`PipeEnv.process_info` does:

* ``"worker_only"``: the info holds an object of module ``worker_only_thing``, found in
  ``module_dir``, which only the process that steps imports (the caller cannot unpickle it).
* ``"worker_only_error"``: the env raises a ``worker_only_thing.Failure``, an error the
  caller cannot unpickle.
* ``"interrupt"``: the env raises KeyboardInterrupt, as an env stopped by a signal would.
* ``"lock"``: the info holds a lock, which cannot be pickled (the reply cannot be sent).
* anything else: nothing special.

While the file ``interrupt_build`` names exists, building a :class:`PipeEnv` raises
KeyboardInterrupt (as a constructor stopped by a signal would).

:meth:`PipeEnv.limit_fds` lets the process open no new file, as an env that leaked every
descriptor would: no new shared-memory block can be mapped until it is lifted.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import threading
from collections.abc import Iterator
from typing import Any

from plangym.control import ClassicControl
from plangym.vector.gym_plan_env import GymPlanEnv

THING_MODULE = "worker_only_thing"


def write_thing_module(directory: str) -> None:
    """Write the module of the objects only the stepping process can import."""
    path = os.path.join(directory, f"{THING_MODULE}.py")
    with open(path, "w") as file:
        file.write("class Thing(int):  # an action too\n    pass\n")
        file.write("class Failure(Exception):\n    pass\n")


@contextlib.contextmanager
def caller_only_thing(directory: str) -> Iterator[Any]:
    """Yield an object of a module only this process imports (its workers cannot)."""
    write_thing_module(directory)
    sys.path.insert(0, directory)
    try:
        yield __import__(THING_MODULE).Thing()
    finally:
        sys.path.remove(directory)
        sys.modules.pop(THING_MODULE, None)


class PipeEnv(ClassicControl):
    """CartPole whose infos or errors misbehave as ``mode`` says (see the module)."""

    def __init__(self, *args: Any, module_dir: str = "", interrupt_build: str = "", **kwargs: Any):
        if interrupt_build and os.path.exists(interrupt_build):
            raise KeyboardInterrupt("raised building the env")
        self.mode, self.module_dir, self._open_files = None, module_dir, None
        super().__init__(*args, **kwargs)

    def process_info(self, info: dict, **kwargs: Any) -> dict:
        info = super().process_info(info, **kwargs)
        if self.mode in ("worker_only", "worker_only_error"):
            if self.module_dir not in sys.path:
                sys.path.insert(0, self.module_dir)
            thing = __import__(THING_MODULE)
            if self.mode == "worker_only_error":
                raise thing.Failure("the pole fell off the cart")
            info = {**info, "thing": thing.Thing()}
        elif self.mode == "interrupt":
            raise KeyboardInterrupt("raised by the env")
        elif self.mode == "lock":
            info = {**info, "lock": threading.Lock()}
        return info

    def limit_fds(self, limit: bool) -> None:
        """Allow no new open file (``limit``), or as many as before."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if limit:
            # Past stderr, none: a limit at the lowest free descriptor would let the new
            # blocks take those the old blocks free as they go (two each on Python 3.13).
            self._open_files = soft
            resource.setrlimit(resource.RLIMIT_NOFILE, (3, hard))
        elif self._open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (self._open_files, hard))

    def pid(self) -> int:
        """The process the env runs in."""
        return os.getpid()


def make_pipe_sub_env(interrupt_build: str = "") -> GymPlanEnv:
    """A :class:`PipeEnv` as a gymnasium sub-env of a vector env."""
    return GymPlanEnv(PipeEnv("CartPole-v1", autoreset=False, interrupt_build=interrupt_build))
