"""plangym: plannable reinforcement-learning environments.

Every environment can hand out its exact state and be stepped from any state it handed out,
one (state, action) pair at a time or many at once.
"""

from plangym import environment_names
from plangym.core import PlanEnv, PlangymEnv
from plangym.registry import make
from plangym.vector.make_vec import make_vec
from plangym.version import __version__

__all__ = ["PlanEnv", "PlangymEnv", "__version__", "environment_names", "make", "make_vec"]
