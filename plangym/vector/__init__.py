"""gymnasium's vector API on plangym's workers: RL loops and planners share one pool.

* :func:`make_vec` (also ``plangym.make_vec``) builds a vector env of plangym envs (exact
  states);
* :class:`AsyncVectorEnv` and :class:`SyncVectorEnv` are drop-ins for gymnasium's classes
  over any gymnasium env constructors;
* :class:`RayVectorEnv` runs the sub-envs on Ray actors;
* :class:`GymPlanEnv` shows a plangym env (yours too) as a gymnasium env, a sub-env with
  states for the two drop-ins.

Every one is a ``gymnasium.vector.VectorEnv`` with gymnasium's autoreset modes and batched
infos, plus ``get_states``/``set_states``/``step_batch`` for planning (see docs/vector.md).
The drop-ins take gymnasium's calls and give its results:

>>> import gymnasium
>>> import numpy as np
>>> for VectorEnv in (SyncVectorEnv, AsyncVectorEnv):
...     envs = VectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
...     obs, infos = envs.reset(seed=42)
...     _, rewards, terminations, _, _ = envs.step(np.array([0, 1]))
...     print(obs.shape, infos, rewards.tolist(), terminations.tolist())
...     envs.close()
(2, 4) {} [1.0, 1.0] [False, False]
(2, 4) {} [1.0, 1.0] [False, False]
"""

from typing import TYPE_CHECKING

from gymnasium.vector import AutoresetMode

from plangym.vector.async_vector_env import AsyncVectorEnv
from plangym.vector.building import make_vec
from plangym.vector.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    SubEnvCrashedError,
    VectorTimeoutError,
)
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vector.sync_vector_env import SyncVectorEnv
from plangym.vector.vector_env import PlanVectorEnv

if TYPE_CHECKING:  # for type checkers; loaded on first use otherwise
    from plangym.vector.ray_vector_env import RayVectorEnv


def __getattr__(name: str) -> type:
    # RayVectorEnv loads on first use: Ray is an optional extra.
    if name == "RayVectorEnv":
        from plangym.vector.ray_vector_env import RayVectorEnv

        return RayVectorEnv
    raise AttributeError(f"module 'plangym.vector' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too: tab completion offers them


__all__ = [
    "AlreadyPendingCallError",
    "AsyncVectorEnv",
    "AutoresetMode",
    "ClosedEnvironmentError",
    "GymPlanEnv",
    "NoAsyncCallError",
    "PlanVectorEnv",
    "RayVectorEnv",
    "SubEnvCrashedError",
    "SyncVectorEnv",
    "VectorTimeoutError",
    "make_vec",
]
