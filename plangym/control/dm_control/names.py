"""The seed the lqr tasks' models are built from, and the suite's task names' parser.

No dm_control import here. :func:`split_name` lives in :mod:`plangym.environment_names`,
which resolves names for :func:`plangym.make` without importing any family.
"""

from __future__ import annotations

from plangym.environment_names import split_name

__all__ = ["LQR_MODEL_SEED", "split_name"]

# The lqr tasks draw their model (stiffness, damping, actuated bodies) from the task's
# generator when they are built. plangym always builds them from this seed, so that every
# instance, clone and worker simulates the same system and takes the others' states; the
# ``seed`` argument then seeds the generator the episodes start from.
LQR_MODEL_SEED = 0
