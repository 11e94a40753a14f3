"""Argument parsing and checks shared by the subcommands, and a plain table printer."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from plangym.constructor import constructor_defaults
from plangym.registry import get_planenv_class


class UsageError(Exception):
    """A mistake in the command line: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (usage stays available with --help)."""

    def error(self, message: str) -> NoReturn:
        """Print ``plangym: error: message`` and exit with status 2."""
        print(f"plangym: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)


def positive_int(text: str) -> int:
    """Parse an integer >= 1 (an argparse type).

    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer >= 1, received '0'
    """
    return _integer(text, minimum=1)


def non_negative_int(text: str) -> int:
    """Parse an integer >= 0 (an argparse type)."""
    return _integer(text, minimum=0)


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, received {text!r}")
    return value


def path_text(text: str) -> str:
    """Parse a file or directory path: any text but an empty one (an argparse type)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a path, received ''")
    return text


def probability(text: str) -> float:
    """Parse a probability in [0, 1] (an argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1], received {text!r}")
    return value


def check_env_name(name: str) -> type:
    """Return the class that runs ``name``; raise :class:`UsageError` for an unknown name."""
    try:
        return get_planenv_class(name)
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None


def env_settings(args: argparse.Namespace) -> tuple[type, int]:
    """Return the class that runs ``args.name`` and the frameskip to run it with.

    The frameskip is ``--frameskip``, or else the class's own default; an unknown name
    raises :class:`UsageError`.
    """
    env_class = check_env_name(args.name)
    return env_class, args.frameskip or default_frameskip(env_class)


def default_frameskip(env_class: type) -> int:
    """Return the ``frameskip`` an env class uses when none is given."""
    return int(constructor_defaults(env_class).get("frameskip", 1))


@dataclass(frozen=True)
class Option:
    """One argument of a subcommand, as ``parser.add_argument(flag, type=..., ...)`` takes it."""

    flag: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    help: str = ""
    choices: Sequence[str] | None = None

    @property
    def dest(self) -> str:
        """The attribute of the parsed arguments that holds the value (``--wave-size``: wave_size).

        >>> Option("--wave-size").dest
        'wave_size'
        """
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        """Register the argument on a parser or an argument group."""
        # No type given: argparse keeps the text (typeshed does not accept type=None).
        typed: dict[str, Any] = {} if self.type is None else {"type": self.type}
        parser.add_argument(
            self.flag, **typed, default=self.default, choices=self.choices, help=self.help
        )

    # The arguments that several commands share.

    @classmethod
    def env_name(cls, help: str) -> Option:
        """Return the ``name`` positional argument of a command that runs one environment."""
        return cls("name", help=help)

    @classmethod
    def seed(cls, help: str, default: int | None = 0) -> Option:
        """Return ``--seed`` of a command that draws random numbers (None: 0, if not resumed)."""
        return cls("--seed", non_negative_int, default, help)

    @classmethod
    def frameskip(cls) -> Option:
        """Return ``--frameskip``, whose default (None) stands for the env class's own."""
        return cls(
            "--frameskip",
            positive_int,
            None,
            "underlying steps per agent step (default: the env's)",
        )


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, its help and description, and its arguments.

    ``options`` are registered first, in their order, then each of ``groups`` under its
    title; ``plangym --help`` lists them in that order.
    """

    name: str
    help: str
    description: str
    options: Sequence[Option] = ()
    groups: Mapping[str, Sequence[Option]] = field(default_factory=dict)

    def add_to(
        self, subparsers: argparse._SubParsersAction, run: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        """Register the subcommand, which calls ``run(args)``, and its arguments."""
        parser = subparsers.add_parser(self.name, help=self.help, description=self.description)
        for option in self.options:
            option.add_to(parser)
        for title, group_options in self.groups.items():
            group = parser.add_argument_group(title)
            for option in group_options:
                option.add_to(group)
        parser.set_defaults(run=run)
        return parser


def prepare_out_dir(path: str) -> Path:
    """Create the output directory and prove it is writable, before any work starts."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UsageError(f"--out: cannot write to {str(out)!r}: {reason}") from None
    return out


def print_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print left-aligned text columns; numbers are right-aligned.

    >>> print_table(["name", "rate"], [["a", 1.5], ["bb", 20.25]])
    name   rate
    a       1.5
    bb    20.25
    """
    cells = [[str(cell) for cell in header]] + [[_cell(cell) for cell in row] for row in rows]
    numeric = [all(isinstance(row[i], int | float) for row in rows) for i in range(len(header))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        parts = [
            cell.rjust(width) if is_number else cell.ljust(width)
            for cell, width, is_number in zip(row, widths, numeric, strict=True)
        ]
        print("  ".join(parts).rstrip())


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
