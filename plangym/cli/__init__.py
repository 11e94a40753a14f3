"""The ``plangym`` command (also ``python -m plangym``).

Subcommands:

* ``plangym list``: families, environment names and which optional extras are installed.
* ``plangym check NAME``: the exactness self-check, a PASS/FAIL table.
* ``plangym bench NAME --workers K --batch B``: single process against ``ParallelEnv``.
* ``plangym plan NAME --planner swarm|fmc|uct --workers K --steps N --seed S --out DIR``:
  play a game with a reference planner; writes ``trajectory.gif`` and ``summary.json``.
  ``--preset fmc`` plays a whole game with FMC's published parameters; ``--resume DIR``
  continues a checkpointed game.

What a user can fix prints one line on stderr, ``plangym: error: ...``, and exits with
status 2: a mistake on the command line (an unknown environment, a bad number, an
unwritable output directory) or a missing optional extra (the line names the extra and the
command that installs it). Anything else is a bug in plangym and shows its traceback.
SIGINT (Ctrl-C) and SIGTERM stop a command with status 130 and 143; ``plangym plan``
first saves the game played so far.

>>> main(["check", "CartPole-v1", "--steps", "5"])  # doctest: +ELLIPSIS
check ...
0
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from plangym.cli.args import Parser, UsageError
from plangym.cli.interrupt import past_echo, stop_signals_raise
from plangym.version import __version__

# The subcommands' modules, imported by build_parser: they bring in the planners and the
# workers, and a Ctrl-C while they are imported must find main's handling in place.
COMMANDS = ("list_envs", "check", "bench", "plan")


def build_parser() -> Parser:
    """Build the argument parser of the ``plangym`` command and its subcommands."""
    parser = Parser(
        prog="plangym",
        description="Plannable RL environments: list, self-check, benchmark, plan.",
    )
    parser.add_argument("--version", action="version", version=f"plangym {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        command = importlib.import_module(f"plangym.cli.{name}")
        parser.commands[command.COMMAND.name] = command.COMMAND.add_to(subparsers, run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``plangym`` command; return its exit status.

    A stop signal raises from the start, imports included: a Ctrl-C at any time after
    ``plangym.cli`` is imported is the documented line and status 130.
    """
    # Keep pygame's greeting out of the output, and let it draw without a display.
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    try:
        with stop_signals_raise():
            return run_command_line(argv)
    except UsageError as error:
        return fail(str(error))
    except MemoryError as error:  # a size option far past this machine (a typo, mostly)
        size = f" ({error})" if str(error) else ""
        return fail(f"out of memory{size}; ask for fewer states, walkers, steps or games")
    except ImportError as error:
        message = missing_dependency(error)
        if message is None:
            raise  # plangym's own module: a bug
        return fail(message)
    except KeyboardInterrupt as stop:  # an Interrupted (SIGINT, SIGTERM) or a bare Ctrl-C
        name = getattr(stop, "signal_name", "SIGINT")
        # On a terminal the line would follow the echoed "^C" or a progress bar.
        print(f"{past_echo(sys.stderr)}plangym: interrupted ({name})", file=sys.stderr)
        return int(getattr(stop, "exit_status", 130))
    except BrokenPipeError:
        # The reader went away (``plangym list | head``): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def run_command_line(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run its subcommand; return the exit status."""
    parser = build_parser()
    args = parser.parse_command_line(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return int(args.run(args) or 0)


def fail(message: str) -> int:
    """Print ``plangym: error: message`` on stderr; return the exit status, 2."""
    print(f"plangym: error: {message}", file=sys.stderr)
    return 2


def missing_dependency(error: ImportError) -> str | None:
    """Return the line to print for an ImportError that installing a package fixes, or None.

    That is plangym's own advice (a message saying what to ``pip install``) or a module
    outside plangym that is not installed; a plangym module that does not import is a bug.

    >>> missing_dependency(ModuleNotFoundError("No module named 'packaging'", name="packaging"))
    "No module named 'packaging' (needed by plangym or one of its dependencies)"
    >>> missing_dependency(ImportError("cannot import name 'x'", name="plangym.core")) is None
    True
    """
    message = str(error)
    if "pip install" in message:
        return message
    module = error.name or ""
    if isinstance(error, ModuleNotFoundError) and module.partition(".")[0] not in ("", "plangym"):
        return f"{message} (needed by plangym or one of its dependencies)"
    return None
