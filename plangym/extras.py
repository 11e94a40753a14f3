"""Import the package behind an optional extra, or say which extra to install.

>>> require("numpy", extra="anything").__name__
'numpy'
>>> require("not_a_real_package_xyz", extra="mujoco", family="MuJoCo")
Traceback (most recent call last):
...
ImportError: MuJoCo environments need the 'mujoco' extra: pip install 'plangym[mujoco]' (No ...)
"""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str, family: str | None = None) -> ModuleType:
    """Import ``module``; on failure raise an ImportError that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        who = f"{family} environments need" if family else f"{module} comes with"
        raise ImportError(
            f"{who} the {extra!r} extra: pip install 'plangym[{extra}]' ({error})"
        ) from error
