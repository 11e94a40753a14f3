"""The ``plangym`` command (also ``python -m plangym``).

Subcommands:

* ``plangym list``: families, environment names and which optional extras are installed.
* ``plangym check NAME``: the exactness self-check, a PASS/FAIL table.
* ``plangym bench NAME --workers K --batch B``: single process against ``ParallelEnv``.
* ``plangym plan NAME --planner swarm|uct --workers K --steps N --seed S --out DIR``: play
  a game with a reference planner; writes ``trajectory.gif`` and ``summary.json``.

Mistakes a user can make (an unknown environment, a bad number, an unwritable output
directory) print one line, ``plangym: error: ...``, and exit with status 2.

>>> main(["check", "CartPole-v1", "--steps", "5"])  # doctest: +ELLIPSIS
check ...
0
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from plangym.cli import bench, check, list_envs, plan
from plangym.cli.args import Parser, UsageError
from plangym.version import __version__

COMMANDS = (list_envs, check, bench, plan)


def build_parser() -> Parser:
    """Build the argument parser of the ``plangym`` command and its subcommands."""
    parser = Parser(
        prog="plangym",
        description="Plannable RL environments: list, self-check, benchmark, plan.",
    )
    parser.add_argument("--version", action="version", version=f"plangym {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in COMMANDS:
        command.COMMAND.add_to(subparsers, run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``plangym`` command; return its exit status."""
    # Keep pygame's greeting out of the output, and let it draw without a display.
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args) or 0)
    except UsageError as error:
        print(f"plangym: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nplangym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``plangym list | head``): stop quietly, as other tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
