"""A griffe extension for the API reference: render plangym's docstrings as Markdown.

plangym's docstrings are Google style with two reStructuredText habits that Markdown
would garble; they are rewritten for the site only (the source files are not touched):

* doctests as bare ``>>>`` paragraphs (pytest runs them with ``--doctest-modules``):
  Markdown reads ``>>>`` as three nested block quotes and ``info["n_step"]`` as a link.
  Each doctest paragraph (from a ``>>>`` line to the next blank line) is wrapped in a
  ``pycon`` code fence. Fenced blocks and ``Example(s):`` sections (griffe parses those
  itself) are left alone;
* Sphinx roles (``:class:`~plangym.core.PlanEnv```, ``:meth:`step```): rendered as code
  that links to the object's entry when the API reference has one (an optional
  mkdocs-autorefs reference: no link and no warning otherwise). Unqualified names are
  looked up from the object outwards (its members, its class, its module, the parents).

mkdocs.yml loads it with ``extensions: [scripts/griffe_doctests.py]``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_FENCE = re.compile(r"^\s*(```|~~~)")
_EXAMPLES = re.compile(r"^(\s*)Examples?:\s*$")
_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|data|exc|obj|const):`([^`]+)`")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def fence_doctests(text: str) -> str:
    r"""Wrap every bare doctest paragraph of a docstring in a ``pycon`` fence.

    >>> fence_doctests("Text.\n\n>>> 1 + 1\n2\n\nMore.").split("\n")
    ['Text.', '', '```pycon', '>>> 1 + 1', '2', '```', '', 'More.']
    """
    lines = text.split("\n")
    out: list[str] = []
    in_fence = False
    examples_indent: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if examples_indent is not None and stripped and _indent(line) <= examples_indent:
            examples_indent = None
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _EXAMPLES.match(line)):
            examples_indent = len(match.group(1))
        elif not in_fence and examples_indent is None and stripped.startswith(">>>"):
            pad = line[: _indent(line)]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += [f"{pad}```pycon", *block, f"{pad}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _lookup(collection: griffe.ModulesCollection, path: str) -> griffe.Object | None:
    try:
        return collection[path]
    except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _resolve(obj: griffe.Object, target: str, collection: griffe.ModulesCollection) -> str:
    """Find the identifier a role's target names, seen from ``obj`` (the target if unknown)."""
    scope: griffe.Object | None = obj
    while scope is not None:
        if _lookup(collection, f"{scope.path}.{target}") is not None:
            return f"{scope.path}.{target}"
        scope = scope.parent
    return target


def replace_roles(obj: griffe.Object, text: str, collection: griffe.ModulesCollection) -> str:
    """Turn Sphinx roles into optional cross-references rendered as code."""

    def replace(match: re.Match) -> str:
        target = match.group(1).strip()
        short = target.startswith("~")
        target = target.lstrip("~.").removesuffix("()")
        shown = target.rsplit(".", 1)[-1] if short else target
        identifier = _resolve(obj, target, collection)
        return f"<autoref identifier={identifier!r} optional><code>{shown}</code></autoref>"

    return _ROLE.sub(replace, text)


def _objects(obj: griffe.Object) -> Any:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


class FenceDoctests(griffe.Extension):
    """Fence the doctests and link the Sphinx roles of every docstring of a package."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite every docstring once the whole package is loaded (before any is parsed)."""
        for obj in _objects(pkg):
            docstring = obj.docstring
            if docstring is None:
                continue
            text = docstring.value
            if ">>>" in text:
                text = fence_doctests(text)
            if ":`" in text:
                text = replace_roles(obj, text, loader.modules_collection)
            docstring.value = text
