"""plangym: plannable reinforcement-learning environments.

Every environment can hand out its exact state and be stepped from any state it handed out,
one (state, action) pair at a time or many at once.
"""

import logging
import os

from plangym import environment_names
from plangym.core import PlanEnv, PlangymEnv
from plangym.registry import make
from plangym.vector.building import make_vec
from plangym.version import __version__

# plangym 0.1's switch for :func:`warn_import_error`: set PLANGYM_DISABLE_WARNINGS to "true",
# "1" or "yes" (any case) before importing plangym to silence those warnings.
PLANGYM_DISABLE_WARNINGS = os.environ.get("PLANGYM_DISABLE_WARNINGS", "").lower() in {
    "true",
    "1",
    "yes",
}

_logger = logging.getLogger(__name__)


def warn_import_error(module_name: str, reason: str = "") -> None:
    """Log a warning that the optional ``module_name`` could not be imported (plangym 0.1).

    The warning goes to the ``plangym`` logger as ``"Could not import MODULE. REASON"``,
    unless :data:`PLANGYM_DISABLE_WARNINGS` is true. It never raises.

    Args:
        module_name: Name of the module that failed to import.
        reason: Optional explanation of why the import failed.
    """
    if not PLANGYM_DISABLE_WARNINGS:
        message = f"Could not import {module_name}."
        if reason:
            message += f" {reason}"
        _logger.warning(message)


__all__ = ["PlanEnv", "PlangymEnv", "__version__", "environment_names", "make", "make_vec"]
