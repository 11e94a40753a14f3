"""Sub-envs on Ray actors: one actor per sub-env, anywhere on a cluster.

Commands and answers travel through Ray's object store; an actor that dies (SIGKILL,
``ray.kill``, a lost node) is killed for good and replaced by a new one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import cloudpickle
import gymnasium
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.commands import Reset, Restarted, Step
from plangym.vector.sub_env import SubEnv
from plangym.vector.workers import SubEnvWorkers, mark_restarted
from plangym.vectorization.errors import WorkerCrashedError
from plangym.vectorization.ray_actor import remote_error, reports_errors

OBSERVING = (Reset, Step, Restarted)


class SubEnvActor:
    """The Ray actor holding one sub-env (built from a cloudpickled constructor)."""

    def __init__(self, env_fn_blob: bytes, autoreset_mode: AutoresetMode):
        self.sub_env = SubEnv(cloudpickle.loads(env_fn_blob)(), autoreset_mode)

    def pid(self) -> int:
        """Return the actor's process id (answered once the sub-env is built)."""
        import os

        return os.getpid()

    @reports_errors
    def execute(self, command: Any) -> Any:
        """Run ``command``: a step answers its 5 values, a reset ``(obs, info)``."""
        sub_env = self.sub_env
        if isinstance(command, Step):
            return sub_env.step(command.action)
        if isinstance(command, Reset):
            return sub_env.reset(command.seed, command.options)
        if isinstance(command, Restarted):
            return sub_env.restarted()
        return sub_env.run(command)

    def close(self) -> None:
        """Close the sub-env."""
        self.sub_env.env.close()


class RayWorkers(SubEnvWorkers):
    """One Ray actor per sub-env.

    Args:
        ray: The ``ray`` module, connected.
        env_fns: One constructor per sub-env.
        autoreset_mode: The vector env's autoreset mode.
        observation_space: The single observation space.
        actor_options: Passed to ``.options()`` of the actor class (resources, placement).
    """

    def __init__(
        self,
        ray: ModuleType,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        autoreset_mode: AutoresetMode,
        observation_space: Space,
        actor_options: dict | None = None,
    ):
        self.ray = ray
        self.num_envs = len(env_fns)
        self.outputs = BatchOutputs(observation_space, self.num_envs)
        self._autoreset_mode = autoreset_mode
        self._blobs = [cloudpickle.dumps(env_fn) for env_fn in env_fns]
        self._actor_class = ray.remote(SubEnvActor).options(**(actor_options or {}))
        self.actors = [self._start(index) for index in range(self.num_envs)]
        self._refs: list[Any] = [None] * self.num_envs
        self._commands: list[Any] = [None] * self.num_envs
        self._pids = self._get([actor.pid.remote() for actor in self.actors])

    def _start(self, index: int) -> Any:
        return self._actor_class.remote(self._blobs[index], self._autoreset_mode)

    def _get(self, refs: list) -> list:
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayTaskError as error:
            raise remote_error(error) from None

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each sub-env's actor."""
        return tuple(self._pids)

    def send(self, index: int, command: Any) -> None:
        """Start ``command`` on sub-env ``index``'s actor."""
        self._commands[index] = command
        self._refs[index] = self.actors[index].execute.remote(command)

    def ready(self, indices: list[int], timeout: float | None) -> list[int]:
        """Return the sub-envs among ``indices`` whose actor finished (or failed)."""
        if timeout is None:
            return list(indices)
        refs = {self._refs[index]: index for index in indices}
        done, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        return [refs[ref] for ref in done]

    def receive(self, index: int) -> Any:
        """Sub-env ``index``'s answer (see :meth:`SubEnvWorkers.receive`)."""
        ray = self.ray
        ref, command = self._refs[index], self._commands[index]
        self._refs[index] = self._commands[index] = None
        try:
            answer = ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            env_error = remote_error(error)  # raised below, with its own cause kept
        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
            lines = str(error).strip().splitlines()
            raise WorkerCrashedError(
                f"sub-env {index}'s Ray actor died: {type(error).__name__}: "
                f"{lines[0] if lines else ''}"
            ) from error
        else:
            env_error = None
        if env_error is not None:
            raise env_error
        if not isinstance(command, OBSERVING):
            return answer
        if isinstance(command, Step):
            obs, reward, terminated, truncated, info = answer
            self.outputs.write_step(index, obs, reward, terminated, truncated)
        else:
            obs, info = answer
            self.outputs.write_obs(index, obs)
        return info

    def restart(self, index: int) -> dict:
        """Replace sub-env ``index``'s actor by a new one and reset its sub-env."""
        with contextlib.suppress(Exception):
            self.ray.kill(self.actors[index], no_restart=True)
        self.actors[index] = self._start(index)
        self._pids[index] = self._get([self.actors[index].pid.remote()])[0]
        self.send(index, Restarted())
        info = self.receive(index)
        mark_restarted(self.outputs, index)
        return info

    def close(self, terminate: bool = False) -> None:
        """Close every sub-env and kill the actors (the cluster stays up)."""
        if not terminate:
            with contextlib.suppress(Exception):
                self.ray.get([actor.close.remote() for actor in self.actors], timeout=10)
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)
