"""What an env class's constructor does when a parameter is not passed.

Vectorized envs build their workers' envs from the user's keywords alone, so every default
(frameskip, autoreset, obs_type, ...) is the env class's own. They still need to know a few
of those defaults before any env exists (with ``delay_setup=True``): this module reads them
from the constructors' signatures, following ``**kwargs`` up the class hierarchy.

>>> from plangym.videogames.atari import AtariEnv
>>> defaults = constructor_defaults(AtariEnv)
>>> defaults["frameskip"], defaults["autoreset"], defaults["obs_type"]
(5, True, 'rgb')
"""

from __future__ import annotations

import inspect
from typing import Any


def constructor_defaults(cls: type) -> dict[str, Any]:
    """Return ``{parameter: default}`` for every keyword ``cls(...)`` fills in by itself.

    A subclass's default wins over its bases'. The walk up the MRO stops at the first
    ``__init__`` that takes no ``**kwargs``: parameters of classes above it can only be set
    by that ``__init__``, not by the caller.
    """
    defaults: dict[str, Any] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        parameters = list(inspect.signature(init).parameters.values())[1:]
        for parameter in parameters:
            if parameter.default is not inspect.Parameter.empty:
                defaults.setdefault(parameter.name, parameter.default)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            break
    return defaults
