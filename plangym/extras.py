"""Import the package behind an optional extra, or say which extra to install, and how.

Extras are named as the package metadata spells them (PEP 685: lower case, ``-`` between
words), the only spelling every pip finds: pip 23 looks for the name exactly as typed.

>>> require("numpy", extra="viz").__name__
'numpy'
>>> require("not_a_real_package_xyz", extra="dm-control", family="dm_control")
Traceback (most recent call last):
...
ImportError: dm_control environments need the 'dm-control' extra: pip install "plangym[dm-cont...
>>> print(install_command("viz"))
pip install "plangym[viz]" (from a clone of the repository: pip install ".[viz]" in its directory)
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

from gymnasium.error import DependencyNotInstalled


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
        message = f"{who} the {extra!r} extra: {install_command(extra)} ({error})"
        raise ImportError(message) from error


# Extras that cannot install on newer Pythons: (first Python without it, why, what to do).
UNINSTALLABLE = {
    "dm-control": (
        (3, 13),
        "dm-control needs labmaze, whose last release (1.0.6) has no wheel for Python 3.13 "
        "and builds only with bazel",
        "use Python 3.10 to 3.12, or install dm-control without labmaze as docs/dm_control.md "
        "shows",
    )
}


def install_command(extra: str) -> str:
    """Return the commands that install ``extra``: from the package index and from a clone.

    On a Python the extra cannot install on, also why and what to do instead.
    """
    command = (
        f'pip install "plangym[{extra}]" (from a clone of the repository: '
        f'pip install ".[{extra}]" in its directory)'
    )
    if extra in UNINSTALLABLE:
        first, why, instead = UNINSTALLABLE[extra]
        if sys.version_info[:2] >= first:
            python = ".".join(map(str, sys.version_info[:2]))
            command += f"; on this Python ({python}) it does not install: {why}; {instead}"
    return command


@contextlib.contextmanager
def extra_for(extra: str, feature: str) -> Iterator[None]:
    """Within, gymnasium's ``DependencyNotInstalled`` becomes an ImportError naming ``extra``.

    gymnasium imports pygame when it first draws (or builds some Box2D envs), and names
    its own extra, which is not plangym's (and whose box2d needs swig).

    >>> with extra_for("classic-control", "Drawing CartPole-v1"):
    ...     raise DependencyNotInstalled("pygame is not installed")
    Traceback (most recent call last):
    ...
    ImportError: Drawing CartPole-v1 needs the 'classic-control' extra: pip install ...
    """
    try:
        yield
    except DependencyNotInstalled as error:
        message = f"{feature} needs the {extra!r} extra: {install_command(extra)} ({error})"
        raise ImportError(message) from error
