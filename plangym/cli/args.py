"""Argument parsing and checks shared by the subcommands, and a plain table printer."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import plangym
from plangym.constructor import constructor_defaults
from plangym.registry import get_planenv_class
from plangym.validation import check_dt, check_process_count
from plangym.vectorization.parallel import ParallelEnv

# What to do about a stable-retro game whose ROM is not imported (docs/retro.md).
IMPORT_ROMS = (
    "import the ROMs you own with: python -m stable_retro.import DIRECTORY (see "
    "docs/retro.md; only Airstriker-Genesis-v0 ships with its ROM)"
)


class UsageError(Exception):
    """A mistake in the command line: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (usage stays available with --help).

    ``commands`` holds the parsers of its subcommands, by name.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        """Print ``plangym: error: message`` and exit with status 2."""
        print(f"plangym: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)

    def parse_command_line(self, argv: Sequence[str] | None = None) -> argparse.Namespace:
        """Parse ``argv``; an argument left over is refused by the subcommand's parser.

        argparse leaves that error to the top parser, whose hint would be ``plangym --help``
        where ``plangym plan --help`` lists what the subcommand takes.
        """
        args, extra = self.parse_known_args(argv)
        if extra:
            parser = self.commands.get(getattr(args, "command", None) or "", self)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args


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


def worker_count(text: str) -> int:
    """Parse a number of worker processes: >= 1, within ParallelEnv's cap (an argparse type).

    >>> worker_count("2")
    2
    >>> worker_count("1000000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected at most ... worker processes (64 per CPU, ...), ...
    """
    cap = ParallelEnv.processes_per_cpu
    return _accepted(
        positive_int(text), lambda n: check_process_count("n_workers", n, cap, "ParallelEnv")
    )


def agent_steps(text: str) -> int:
    """Parse a number of agent steps (``dt``, steps per check): in [1, 2**31 - 1].

    An argparse type: ``dt`` counts int64 frames (see ``check_dt``), and more steps than
    that outlast anyone's patience.

    >>> agent_steps("3")
    3
    >>> agent_steps("2147483648")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer in [1, 2147483647], received 2147483648
    """
    return _accepted(positive_int(text), check_dt)


def _accepted(value: int, check: Callable[[int], object]) -> int:
    """Return ``value`` if ``check`` takes it; its refusal, without the parameter's name.

    Advice for Python code (``to start more, raise ParallelEnv.processes_per_cpu``) is left
    out: the command has no such knob.
    """
    try:
        check(value)
    except ValueError as error:
        words = str(error).partition(": ")[2].partition("; to ")[0]
        raise argparse.ArgumentTypeError(words) from None
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

    The frameskip is ``--frameskip``, or else the class's own default; an unknown name, or
    a ``--seed`` the class cannot take, raises :class:`UsageError`.
    """
    env_class = check_env_name(args.name)
    check_env_seed(env_class, getattr(args, "seed", None))
    return env_class, args.frameskip or default_frameskip(env_class)


def check_env_seed(env_class: type, seed: int | None) -> None:
    """Raise :class:`UsageError` naming ``--seed`` if ``env_class`` cannot take ``seed``.

    Every family takes any integer >= 0 but dm_control's tasks, whose generator is NumPy's
    RandomState: their module (loaded when ``env_class`` is one of them) has the check.
    """
    dm_control = sys.modules.get("plangym.control.dm_control.env")
    if seed is None or dm_control is None or not issubclass(env_class, dm_control.DMControlEnv):
        return
    try:
        dm_control.check_task_seed(seed)
    except ValueError as error:
        # The command line has no None to pass: the rest of the message holds.
        words = (
            str(error).removeprefix("seed: ").replace("expected None or an int", "expected an int")
        )
        raise UsageError(f"--seed: {words}") from None


@contextlib.contextmanager
def single_env(name: str, **keywords: Any) -> Iterator[Any]:
    """Build the env ``name`` in this process (no workers) for the block, then close it.

    What keeps it from being built here and the user can act on is a :class:`UsageError`:
    a stable-retro game whose ROM is not imported, an env whose package does not import
    on this Python (the Balloon Learning Environment), or a name its class refuses (a
    mistyped Super Mario Bros level). A missing extra's ImportError goes
    on to :func:`plangym.cli.main`, which names the extra.
    """
    try:
        env = plangym.make(name, **keywords)
    except FileNotFoundError as error:
        if "import the ROM" not in str(error):  # stable-retro's words for a missing ROM
            raise
        raise UsageError(f"{name}: its ROM is not imported; {IMPORT_ROMS}") from None
    except ImportError as error:
        if error.name is not None or "pip install" in str(error):
            raise  # a module that is not installed, or plangym's own (a bug)
        # Raised by the env class itself, to say why it cannot run here.
        raise UsageError(f"{error}; choose another environment (plangym list)") from None
    except ValueError as error:
        if not str(error).startswith("name: "):  # the env class's word on the name given
            raise
        # A name it does not know ("expected ..., received ...") is one plangym list shows.
        names = " (plangym list names them)" if "received" in str(error) else ""
        raise UsageError(f"{error}{names}") from None
    try:
        yield env
    finally:
        env.close()


def check_env_builds(name: str, **keywords: Any) -> None:
    """Build the env once in this process, before any work, to find what stops it early."""
    with single_env(name, **keywords):
        pass


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
    metavar: str | None = None

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
        if self.metavar is not None:
            typed["metavar"] = self.metavar
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


def check_out_dir(path: str) -> Path:
    """Prove that the output directory can be written, before any work, without creating it.

    The directory, or else the nearest folder above it that exists, must take a new file.
    """
    out = Path(path)
    existing = next(folder for folder in (out, *out.parents) if folder.exists())
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise cannot_write(out, error) from None
    return out


@contextlib.contextmanager
def out_dir(path: str) -> Iterator[Path]:
    """Create the output directory (checked by :func:`check_out_dir`) for the block.

    The directories this creates are removed again after the block if nothing was written
    in them: a command refused once its work started (a checkpoint that no longer
    replays), or stopped while a game is restored, leaves no trace.
    """
    out = Path(path)
    created = [folder for folder in (out, *out.parents) if not folder.exists()]
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise cannot_write(out, error) from None
        yield out
    finally:
        for folder in created:  # the deepest first
            try:
                folder.rmdir()
            except OSError:  # not empty (the command wrote there), or not there
                break


def cannot_write(out: Path, error: OSError) -> UsageError:
    """Return the usage error of an output directory that cannot be written."""
    reason = error.strerror or type(error).__name__
    return UsageError(f"--out: cannot write to {str(out)!r}: {reason}")


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
