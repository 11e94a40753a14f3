"""Video game environments: Atari 2600 through ale-py, Montezuma, NES and stable-retro games.

:class:`AtariEnv` is imported eagerly (ale-py is a dependency of plangym). The other classes
are loaded on first access, as in plangym 0.1, so importing this package imports neither
stable-retro nor nes-py; ``from plangym.videogames import RetroEnv`` raises an ImportError
naming the extra to install when that extra is missing.

>>> from plangym.videogames import MontezumaEnv
>>> MontezumaEnv.__module__
'plangym.videogames.montezuma.env'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from plangym.videogames.atari import AtariEnv
from plangym.videogames.env import VideogameEnv

if TYPE_CHECKING:  # for type checkers; loaded on first access otherwise
    from plangym.videogames.montezuma import MontezumaEnv
    from plangym.videogames.nes import MarioEnv
    from plangym.videogames.retro import RetroEnv

_LAZY = {
    "MontezumaEnv": "plangym.videogames.montezuma",
    "MarioEnv": "plangym.videogames.nes",
    "RetroEnv": "plangym.videogames.retro",
    # plangym 0.1 imported it here; read from plangym on access so no import cycle forms.
    "warn_import_error": "plangym",
}

__all__ = ["AtariEnv", "MarioEnv", "MontezumaEnv", "RetroEnv", "VideogameEnv"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too: tab completion offers them
