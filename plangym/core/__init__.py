"""The plangym contract and its gymnasium-backed base, with the one frame loop they share.

* :mod:`plangym.core.plan_env`: :class:`PlanEnv`, the planning API (``step`` from any
  state, ``step_batch``, ``get_state``/``set_state``, ``clone``) and its input checks.
* :mod:`plangym.core.plangym_env`: :class:`PlangymEnv`, a :class:`PlanEnv` built around a
  gymnasium env (wrappers, spaces, ``obs_type``, pickling).
* :mod:`plangym.core.frame_loop`: the loop every family steps its frames with.

>>> from plangym.core import PlanEnv, PlangymEnv
>>> issubclass(PlangymEnv, PlanEnv)
True
"""

from plangym.core.frame_loop import FrameRun, repeat_frames
from plangym.core.plan_env import PlanEnv
from plangym.core.plangym_env import PlangymEnv
from plangym.core.wrappers import wrap_callable, wrapper_call

__all__ = ["FrameRun", "PlanEnv", "PlangymEnv", "repeat_frames", "wrap_callable", "wrapper_call"]
