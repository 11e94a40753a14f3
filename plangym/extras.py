"""Import the package behind an optional extra, or say which extra to install.

>>> require("numpy", extra="anything").__name__
'numpy'
>>> require("not_a_real_package_xyz", extra="mujoco", family="MuJoCo")
Traceback (most recent call last):
...
ImportError: MuJoCo environments need the 'mujoco' extra: pip install 'plangym[mujoco]' (No ...)
>>> require("not_a_real_package_xyz", extra="viz", feature="Writing a GIF")
Traceback (most recent call last):
...
ImportError: Writing a GIF needs the 'viz' extra: pip install 'plangym[viz]' (No ...)
"""

from __future__ import annotations

import importlib
from types import ModuleType


def require(
    module: str, extra: str, family: str | None = None, feature: str | None = None
) -> ModuleType:
    """Import ``module``; on failure raise an ImportError that names the extra to install.

    Args:
        module: The module to import.
        extra: The extra of plangym that installs it.
        family: The environments that need it ("MuJoCo environments need ...").
        feature: What else needs it ("Writing a GIF needs ..."), when not a family.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if family:
            who = f"{family} environments need"
        elif feature:
            who = f"{feature} needs"
        else:
            who = f"{module} comes with"
        raise ImportError(
            f"{who} the {extra!r} extra: pip install 'plangym[{extra}]' ({error})"
        ) from error
