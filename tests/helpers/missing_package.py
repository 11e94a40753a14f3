"""Import plangym modules as if a third-party package were not installed."""

import sys
from collections.abc import Iterable

import pytest


def hide_package(monkeypatch: pytest.MonkeyPatch, package: str, modules: Iterable[str]) -> None:
    """Hide ``package`` and drop the already imported ``modules``, until the test ends.

    A ``None`` entry in ``sys.modules`` is what a missing package looks like to ``import``;
    the dropped modules are imported afresh by the next ``import``, and ``monkeypatch``
    puts everything back afterwards.
    """
    monkeypatch.setitem(sys.modules, package, None)
    for module in modules:
        monkeypatch.delitem(sys.modules, module)
