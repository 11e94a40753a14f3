"""Sub-envs in the caller's process, stepped one after the other (``SyncVectorEnv``).

>>> import gymnasium
>>> from gymnasium.vector import AutoresetMode
>>> from plangym.vector.commands import Reset
>>> workers = InProcessWorkers([lambda: gymnasium.make("CartPole-v1")] * 2,
...                            AutoresetMode.NEXT_STEP)
>>> for index in range(2):
...     workers.send(index, Reset(seed=3))
>>> [workers.receive(index) for index in range(2)], workers.outputs.observations().shape
([{}, {}], (2, 4))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.commands import Reset, Restarted, Step
from plangym.vector.sub_env import SubEnv
from plangym.vector.workers import SubEnvWorkers, mark_restarted


class InProcessWorkers(SubEnvWorkers):
    """Every sub-env in this process; a command runs as it is sent.

    Args:
        env_fns: One constructor per sub-env (used again to rebuild one).
        autoreset_mode: The vector env's autoreset mode.
        observation_space: The single observation space (default: the first sub-env's).
        envs: The sub-envs, if already built from ``env_fns``.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        autoreset_mode: AutoresetMode,
        observation_space: Space | None = None,
        envs: Sequence[gymnasium.Env] | None = None,
    ):
        self.env_fns = env_fns
        envs = [env_fn() for env_fn in env_fns] if envs is None else envs
        self.sub_envs = [SubEnv(env, autoreset_mode) for env in envs]
        self.num_envs = len(self.sub_envs)
        space = observation_space or self.sub_envs[0].env.observation_space
        self.outputs = BatchOutputs(space, self.num_envs)
        self._answers: dict[int, tuple[bool, Any]] = {}

    def send(self, index: int, command: Any) -> None:
        """Run ``command`` on sub-env ``index`` now; its answer waits for :meth:`receive`."""
        try:
            self._answers[index] = (True, self._run(index, command))
        except Exception as error:
            self._answers[index] = (False, error)

    def _run(self, index: int, command: Any) -> Any:
        sub_env, outputs = self.sub_envs[index], self.outputs
        if isinstance(command, Step):
            obs, reward, terminated, truncated, info = sub_env.step(command.action)
            outputs.write_step(index, obs, reward, terminated, truncated)
            return info
        if isinstance(command, Reset):
            obs, info = sub_env.reset(command.seed, command.options)
        elif isinstance(command, Restarted):
            obs, info = sub_env.restarted()
        else:
            return sub_env.run(command)
        outputs.write_obs(index, obs)
        return info

    def ready(self, indices: list[int], timeout: float | None) -> list[int]:
        """Every sub-env asked: their answers are there already."""
        return list(indices)

    def receive(self, index: int) -> Any:
        """Sub-env ``index``'s answer, or its error."""
        ok, answer = self._answers.pop(index)
        if ok:
            return answer
        raise answer

    def restart(self, index: int) -> dict:
        """Rebuild sub-env ``index`` from its constructor and reset it."""
        old = self.sub_envs[index]
        old.env.close()
        self.sub_envs[index] = SubEnv(self.env_fns[index](), old.autoreset_mode)
        self.send(index, Restarted())
        info = self.receive(index)
        mark_restarted(self.outputs, index)
        return info

    def close(self, terminate: bool = False) -> None:
        """Close every sub-env."""
        for sub_env in self.sub_envs:
            sub_env.env.close()
