"""Env constructors: their defaults, the calls they record, parameters written once.

* :func:`constructor_defaults`: what a constructor fills in when a parameter is not passed.
* :func:`constructor_call`: the call an env was built with (``clone()``, pickling).
* :func:`parent_arguments`, :func:`takes_parameters_of`: a family forwards its base's
  parameters without restating them; :func:`read_only`: a kept parameter as a property.
* :func:`show_init_signature`: a class's signature is that of the ``__init__`` it runs.
* :func:`keyword_names`: the keywords a function takes (hooks and clones written for 0.1).

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

import functools
import inspect
import operator
from collections.abc import Callable
from typing import Any, TypeVar


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


@functools.cache
def keyword_names(function: Callable[..., Any]) -> frozenset[str] | None:
    """Return the names ``function`` takes as keywords, or None when it takes any.

    >>> sorted(keyword_names(lambda obs, reward=0.0, *, info=None: obs))
    ['info', 'obs', 'reward']
    >>> keyword_names(lambda **kwargs: None) is None
    True
    """
    parameters = inspect.signature(function).parameters.values()
    if any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters):
        return None
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(parameter.name for parameter in parameters if parameter.kind in keyword)


def constructor_call(env: Any, **overrides: Any) -> tuple[tuple, dict[str, Any]]:
    """Return the ``(args, kwargs)`` ``env`` was built with, ``overrides`` replacing some.

    :class:`~plangym.core.PlanEnv` records the call when the env is created, so that
    ``clone()`` and pickling can repeat it whatever parameters a subclass adds. Positional
    arguments are named, unless the constructor takes ``*args`` (a value given by position
    then stays there: named, it would be given twice).
    """
    args = getattr(env, "_init_args", ())
    kwargs = dict(getattr(env, "_init_kwargs", {}))
    parameters = list(inspect.signature(type(env).__init__).parameters.values())[1:]
    if any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in parameters):
        position: dict[str, int] = {}
        for index, name in enumerate(positional_names(type(env))[: len(args)]):
            position.setdefault(name, index)
        args = list(args)
        for name in [name for name in overrides if name in position]:
            args[position[name]] = overrides.pop(name)
        return tuple(args), {**kwargs, **overrides}
    kwargs.update(zip((parameter.name for parameter in parameters), args, strict=False))
    return (), {**kwargs, **overrides}


def positional_names(cls: type) -> tuple[str, ...]:
    """Return the parameters that the positional arguments of ``cls(...)`` reach, in order.

    A constructor's ``*args`` go on to the next one up the classes, as
    ``super().__init__(*args, **kwargs)`` passes them, whose parameters come next.

    >>> class Base:
    ...     def __init__(self, name, length=3): ...
    >>> class Bonus(Base):
    ...     def __init__(self, bonus=0.5, *args, **kwargs): super().__init__(*args, **kwargs)
    >>> positional_names(Bonus)
    ('bonus', 'name', 'length')
    """
    names: list[str] = []
    for klass in cls.__mro__[:-1]:  # not object's
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for parameter in list(inspect.signature(init).parameters.values())[1:]:
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                break
            if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
                names.append(parameter.name)
        else:
            break  # no *args: the positional arguments end at this constructor
    return tuple(names)


@functools.cache
def _inherited_names(cls: type) -> frozenset[str]:
    """Names of the parameters the constructors above ``cls`` take by name."""
    names: set[str] = set()
    for klass in cls.__mro__[1:]:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        parameters = list(inspect.signature(init).parameters.values())[1:]
        names.update(p.name for p in parameters if p.kind not in _VARIADIC)
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            break
    return frozenset(names)


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def parent_arguments(cls: type, arguments: dict[str, Any]) -> dict[str, Any]:
    """Return the keywords ``cls.__init__`` hands on to its parent's constructor.

    ``arguments`` is ``locals()`` inside ``cls.__init__``: every parameter
    a constructor above ``cls`` takes by name is passed on as received, and so is
    ``**kwargs``; the parameters only ``cls`` knows stay behind. A family then lists its
    parameters once, in its signature (where users and plangym 0.1 code read them), and
    forwards them in one line: ``super().__init__(**parent_arguments(Family, locals()))``.

    >>> class Base:
    ...     def __init__(self, name, frameskip=1, **kwargs):
    ...         self.call = (name, frameskip, kwargs)
    >>> class Game(Base):
    ...     def __init__(self, name, frameskip=5, mode=None, **kwargs):
    ...         self.mode = mode
    ...         super().__init__(**parent_arguments(Game, locals()))
    >>> game = Game("Pong", render_mode="rgb_array")
    >>> game.call, game.mode
    (('Pong', 5, {'render_mode': 'rgb_array'}), None)
    """
    names = _inherited_names(cls)
    forwarded = {name: value for name, value in arguments.items() if name in names}
    forwarded.update(arguments.get("kwargs", {}))
    return forwarded


def read_only(attribute: str, doc: str) -> property:
    """Return a property that reads ``self.<attribute>``: a parameter the constructor kept.

    >>> class Game:
    ...     mode = read_only("_mode", "Game mode.")
    ...     def __init__(self, mode):
    ...         self._mode = mode
    >>> Game(3).mode, Game.mode.__doc__
    (3, 'Game mode.')
    """
    return property(operator.attrgetter(attribute), doc=doc)


Init = TypeVar("Init", bound=Callable[..., None])


def takes_parameters_of(parent: Callable[..., Any]) -> Callable[[Init], Init]:
    """Give an ``__init__(self, *args, <own keywords>, **kwargs)`` the signature it accepts.

    Such an ``__init__`` keeps its own keywords and hands ``args`` and ``kwargs`` on to
    ``parent``; callers (and ``inspect.signature``, hence ``clone()``) see ``parent``'s
    parameters, then its own keywords. A vectorized env whose backend takes options adds
    them this way, and :class:`VectorizedEnv`'s signature stays written once.

    >>> class Base:
    ...     def __init__(self, name, frameskip=1, **kwargs): ...
    >>> class Game(Base):
    ...     @takes_parameters_of(Base.__init__)
    ...     def __init__(self, *args, mode=None, **kwargs):
    ...         self.mode = mode
    ...         super().__init__(*args, **kwargs)
    >>> inspect.signature(Game)
    <Signature (name, frameskip=1, *, mode=None, **kwargs)>
    """
    inherited = list(inspect.signature(parent).parameters.values())[1:]
    named = [p for p in inherited if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def decorate(init: Init) -> Init:
        own = list(inspect.signature(init).parameters.values())
        keywords = [p for p in own if p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
        function: Any = init
        function.__signature__ = inspect.Signature([own[0], *named, *keywords])
        return init

    return decorate


def show_init_signature(cls: type) -> None:
    """Make ``inspect.signature(cls)`` give the parameters of the ``__init__`` ``cls`` runs.

    :class:`~plangym.core.PlanEnv` defines ``__new__`` (it records the constructor call),
    and ``inspect.signature`` prefers a ``__new__`` a class defines to its ``__init__``.
    Python 3.10 also prefers an inherited ``__new__`` to an inherited ``__init__``, so a
    family without an ``__init__`` of its own would show ``PlanEnv``'s parameters there
    (3.11 takes whichever the nearest class defines). A class that defines its
    ``__init__`` and no ``__new__`` is left to ``inspect``.

    >>> class Base:
    ...     def __new__(cls, *args, **kwargs):
    ...         return super().__new__(cls)
    ...     def __init__(self, name, frameskip=1): ...
    >>> class Game(Base):
    ...     def __init__(self, name, mode=0): ...
    >>> class Family(Game):
    ...     pass
    >>> for cls in (Base, Game, Family):
    ...     show_init_signature(cls)
    >>> inspect.signature(Base), inspect.signature(Family)
    (<Signature (name, frameskip=1)>, <Signature (name, mode=0)>)
    """
    own = vars(cls)
    signature = None  # inspect's own reading: the __init__ the class defines
    if "__new__" in own or "__init__" not in own:
        init_signature = inspect.signature(cls.__init__)  # type: ignore[misc]
        signature = init_signature.replace(parameters=list(init_signature.parameters.values())[1:])
    # A class attribute is inherited: a subclass defining its own __init__ must reset it.
    setattr(cls, "__signature__", signature)  # noqa: B010 - type has no such attribute
