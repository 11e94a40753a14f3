"""``plangym list``: families, environment names and the optional extras installed."""

from __future__ import annotations

import argparse
import re
import shutil
import textwrap
from importlib import metadata

from plangym import environment_names
from plangym.cli.args import Command, Option

# Used when plangym runs from a source tree that was never installed (no metadata).
FALLBACK_EXTRAS = {"classic-control": ["pygame"]}
# The extra a requirement of the installed metadata belongs to: `...; extra == "mujoco"`.
EXTRA_MARKER = re.compile(r"extra\s*==\s*['\"]([^'\"]+)['\"]")
# Keys as the installed metadata spells extras (PEP 685: lower case, "-" for "_" and ".").
EXTRA_PURPOSES = {
    "classic-control": "draw classic control tasks (obs_type rgb/grayscale, GIFs)",
    "ray": "run workers as Ray actors",
    "images": "resize frames with plangym.utils.process_frame*",
    "mujoco": "gymnasium's MuJoCo envs",
    "dm-control": "the dm_control suite",
    "box2d": "gymnasium's Box2D envs (FastLunarLander-v0 needs no extra)",
    "retro": "console games through stable-retro",
    "nes": "Super Mario Bros through the NES emulator",
    "dev": "tests and linting",
}


COMMAND = Command(
    "list",
    help="families, environment names and installed extras",
    description="List the environment families and names plangym can build, and which "
    "optional extras are installed.",
    options=(
        Option(
            "--family",
            choices=sorted([*environment_names.FAMILIES, "retro"]),
            help="list only this family",
        ),
    ),
)


def run(args: argparse.Namespace) -> int:
    """Print the families, their names and the extras."""
    width = min(shutil.get_terminal_size((100, 20)).columns, 120)
    available = extras()
    # RETRO is read from stable-retro (when installed) only here, not at import.
    families = {**environment_names.FAMILIES, "retro": environment_names.RETRO}
    for family, names in families.items():
        if args.family and family != args.family:
            continue
        extra = environment_names.FAMILY_EXTRAS.get(family)
        needs = ""
        if extra is not None:
            packages = available.get(normalize(extra), [])
            found = bool(packages) and all(installed_version(p) for p in packages)
            needs = f"; extra '{extra}', {'installed' if found else 'not installed'}"
            free = environment_names.NEED_NO_EXTRA.intersection(names)
            if free:
                needs += f"; {', '.join(sorted(free))} needs none"
        noun = "environment" if len(names) == 1 else "environments"
        print(f"{family} ({len(names)} {noun}{needs})")
        print(
            textwrap.fill(
                ", ".join(names),
                width=width,
                initial_indent="  ",
                subsequent_indent="  ",
                break_on_hyphens=False,
            )
        )
        if family == "retro" and names:  # stable-retro ships one ROM: say which games run
            playable = ", ".join(games_with_roms(names)) or "none"
            print(f"  ROMs imported here: {playable}; the others: python -m stable_retro.import")
        print()
    print('optional extras (pip install "plangym[EXTRA]", or from a clone pip install ".[EXTRA]")')
    for extra, packages in available.items():
        installed = [installed_version(package) for package in packages]
        status = "installed" if all(installed) else "not installed"
        versions = ", ".join(
            f"{package} {version or 'missing'}"
            for package, version in zip(packages, installed, strict=True)
        )
        purpose = EXTRA_PURPOSES.get(extra, "")
        print(f"  {extra:<16} {status:<14} {versions}" + (f"  ({purpose})" if purpose else ""))
    return 0


def games_with_roms(names: list[str]) -> list[str]:
    """Return the stable-retro games among ``names`` whose ROM is imported here."""
    import stable_retro.data as retro_data  # installed: it listed the names

    found = []
    for name in names:
        try:
            retro_data.get_romfile_path(name, retro_data.Integrations.ALL)
        except FileNotFoundError:
            continue
        found.append(name)
    return found


def normalize(extra: str) -> str:
    """Spell an extra's name as installed metadata does: ``normalize("dm_control")``.

    >>> normalize("dm_control"), normalize("Classic.Control")
    ('dm-control', 'classic-control')
    """
    return re.sub(r"[-_.]+", "-", extra).lower()


def extras() -> dict[str, list[str]]:
    """Return the optional extras of the installed plangym and the packages each needs.

    The names are normalized (see :func:`normalize`), as the installed metadata has them.
    """
    try:
        requirements = metadata.requires("plangym") or []
    except metadata.PackageNotFoundError:
        return dict(FALLBACK_EXTRAS)
    found: dict[str, list[str]] = {}
    included: dict[str, list[str]] = {}  # extras an extra includes (plangym itself, with extras)
    for requirement in requirements:
        extra = EXTRA_MARKER.search(requirement)
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        if not (extra and name) or not applies_here(requirement, extra.group(1)):
            continue
        key, package = normalize(extra.group(1)), name.group(0)
        if normalize(package) == "plangym":
            inner = re.search(r"\[([^\]]+)\]", requirement)
            included[key] = [normalize(x) for x in inner.group(1).split(",")] if inner else []
        else:
            found.setdefault(key, []).append(package)
    for key, others in included.items():
        for other in others:
            found.setdefault(key, []).extend(p for p in found.get(other, []) if p not in found[key])
    return found or dict(FALLBACK_EXTRAS)


def applies_here(requirement: str, extra: str) -> bool:
    """Whether the markers of a requirement of ``extra`` hold on this interpreter.

    Evaluated with ``packaging`` where it is installed (it is no dependency of plangym's);
    without it every requirement is listed.

    >>> applies_here('setuptools; python_version >= "3.0" and extra == "nes"', "nes")
    True
    >>> applies_here('setuptools; python_version < "3.0" and extra == "nes"', "nes")
    False
    """
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return True
    marker = Requirement(requirement).marker
    return marker is None or marker.evaluate({"extra": extra})


def installed_version(package: str) -> str | None:
    """Return the installed version of a distribution, or None."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
