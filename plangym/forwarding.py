"""Members that answer with an env held by the object: plangym 0.1's members, kept on the class.

plangym 0.1's vectorized envs and its Ray actor were ``PlanEnv`` subclasses, so their
classes had every member of an env, and code (and ``help()``) finds them on the class.
Ours hold an env instead; a forwarded member keeps the signature and the documentation of
the member it mirrors, and answers with the held env's.

>>> class Holder:
...     def __init__(self, env):
...         self.env = env
...     conjugate = forwarded_method("conjugate", complex, "env")
...     imag = forwarded_property("imag", "env", "The held number's imaginary part.")
>>> holder = Holder(3 + 4j)
>>> holder.conjugate(), holder.imag
((3-4j), 4.0)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any


def forwarded_method(
    name: str, like: type, target: str, guard: Callable[[Callable], Callable] | None = None
) -> Callable:
    """Return a method calling ``self.<target>.<name>``, with ``like.<name>``'s signature.

    ``guard`` wraps the method (a call-state check, an error translation).
    """
    original = inspect.getattr_static(like, name)
    original = getattr(original, "__func__", original)

    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(getattr(self, target), name)(*args, **kwargs)

    method.__qualname__ = name
    # The signature stays, the link does not: source viewers (``??`` in IPython) follow
    # ``__wrapped__``, and ``like``'s method may be an abstract one that only raises.
    method.__signature__ = inspect.signature(original)  # type: ignore[attr-defined]
    del method.__wrapped__
    return guard(method) if guard is not None else method


def forwarded_property(name: str, target: str, doc: str) -> property:
    """Return a read-only property answering ``self.<target>.<name>``."""

    def read(self: Any) -> Any:
        return getattr(getattr(self, target), name)

    return property(read, doc=doc)
