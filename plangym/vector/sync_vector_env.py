"""gymnasium's ``SyncVectorEnv`` on plangym's worker layer: every sub-env in this process.

Used as gymnasium's (see :mod:`plangym.vector`); its sub-envs are at hand:

>>> import gymnasium
>>> envs = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
>>> [env.spec.id for env in envs.envs]
['CartPole-v1', 'CartPole-v1']
>>> envs.close()
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import gymnasium
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.spaces import observation_spaces
from plangym.vector.sub_env import SubEnvHandler
from plangym.vector.vector_env import PlanVectorEnv
from plangym.vectorization.handler import Handler, HandlerFactory
from plangym.vectorization.local_backend import LocalBackend
from plangym.vectorization.shared_memory import AttachedOutputs


class SyncVectorEnv(PlanVectorEnv):
    """The sub-envs stepped one after the other in this process.

    Takes gymnasium's ``SyncVectorEnv`` arguments, those every :class:`PlanVectorEnv` takes.
    """

    def __init__(
        self,
        env_fns: Iterable[Callable[[], gymnasium.Env]],
        copy: bool = True,
        observation_mode: str | tuple = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
    ):
        env_fns = list(env_fns)  # gymnasium's SyncVectorEnv takes any iterable, a generator too
        self._take_arguments(env_fns, copy, observation_mode, autoreset_mode)
        envs = [env_fn() for env_fn in env_fns]
        single, batched = observation_spaces(observation_mode, envs[0], env_fns, envs)
        outputs = BatchOutputs(single, len(envs))
        mode = self.autoreset_mode
        factories = [
            HandlerFactory(SubEnvHandler, (env_fn, index, mode), {"outputs": outputs})
            for index, env_fn in enumerate(env_fns)
        ]
        # The sub-envs built above serve; the constructors rebuild one that failed.
        handlers: list[Handler] = [
            SubEnvHandler(_built(env), index, mode, AttachedOutputs(), outputs)
            for index, env in enumerate(envs)
        ]
        self._start(LocalBackend(factories, handlers), outputs, envs[0], single, batched)

    @property
    def envs(self) -> list[gymnasium.Env]:
        """The sub-envs."""
        backend = self._backend
        assert isinstance(backend, LocalBackend)
        return [handler.env for handler in backend.handlers]


def _built(env: gymnasium.Env) -> Callable[[], gymnasium.Env]:
    """Return a constructor that returns ``env``, built already."""
    return lambda: env
