"""plangym 0.1's ``BalloonEnv`` name, kept so its users' code fails clearly, not obscurely.

The Balloon Learning Environment (``balloon-learning-environment`` 1.0.1, the last
release) installs (3.3 GB with its dependencies) but does not import on the Pythons
plangym supports (3.10+); plangym keeps the class and the name
``BalloonLearningEnvironment-v0`` and raises an ImportError that says so.

>>> BalloonEnv()
Traceback (most recent call last):
...
ImportError: BalloonEnv: plangym cannot build BalloonLearningEnvironment-v0: the last release ...
"""

from __future__ import annotations

from typing import Any

from plangym.core import PlangymEnv

__all__ = ["BalloonEnv"]


class BalloonEnv(PlangymEnv):
    """Placeholder for plangym 0.1's Balloon Learning Environment: raises ImportError."""

    def __init__(self, name: str = "BalloonLearningEnvironment-v0", *args: Any, **kwargs: Any):
        try:
            import balloon_learning_environment  # noqa: F401
        except Exception as error:  # it fails with ImportError or while importing its deps
            reason = f"{type(error).__name__}: {error}"
        else:
            reason = "it imported, but plangym has no exact state for it"
        raise ImportError(
            f"BalloonEnv: plangym cannot build {name}: the last release of the Balloon "
            "Learning Environment (balloon-learning-environment 1.0.1) does not import on "
            f"Python 3.10+ ({reason})"
        )
