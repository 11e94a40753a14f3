"""What the README, the docs, the errors and the Makefile tell a newcomer to install works.

Every extra named anywhere (``plangym[X]``, ``".[X]"``, ``require(..., extra="X")``) is an
extra the package metadata has, spelled as the metadata spells it (PEP 685), the only
spelling every pip finds. ``make demo`` installs the core and ``viz`` only. That the extras
install and run is checked by ``scripts/check_extras.py`` in CI (fresh virtualenvs).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The extras as the installed metadata has them: what pip compares a requested name with.
EXTRAS = set(metadata.metadata("plangym").get_all("Provides-Extra") or [])
# ``plangym[a,b]``, ``.[a,b]`` and ``"./plangym[a]"`` in prose and commands.
NAMED = re.compile(r"""(?:plangym|["'(\s]\.|/plangym)\[([A-Za-z0-9_.,\s-]+)\]""")
REQUIRED = re.compile(r"""extra=["']([^"']+)["']""")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def named_extras() -> list[tuple[str, str]]:
    """``(where, extra)`` for every extra the README, the docs and plangym's code name."""
    found = []
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += [*sorted((ROOT / "plangym").rglob("*.py")), ROOT / "Makefile"]
    for path in files:
        text = path.read_text()
        names = [n for group in NAMED.findall(text) for n in group.split(",")]
        if path.suffix == ".py":
            names += REQUIRED.findall(text)
        names = [name.strip() for name in names if name.strip() and not name.strip().isupper()]
        found += [(str(path.relative_to(ROOT)), name) for name in names]  # EXTRA: a placeholder
    return found


def test_the_metadata_has_every_extra_of_pyproject():
    declared = re.search(
        r"\[project\.optional-dependencies\](.*?)\n\[", (ROOT / "pyproject.toml").read_text(), re.S
    )
    assert declared is not None
    names = re.findall(r"^([A-Za-z0-9_.-]+) = \[", declared.group(1), re.M)
    assert {normalized(name) for name in names} == EXTRAS


def test_every_extra_named_to_users_exists_with_the_metadatas_spelling():
    found = named_extras()
    assert len(found) > 20  # README, docs, errors and the Makefile all name some
    wrong = [(where, name) for where, name in found if name not in EXTRAS]
    assert not wrong, f"extras that pip would not find (known: {sorted(EXTRAS)}): {wrong}"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_installs_the_core_and_viz_only(tmp_path):
    venv = tmp_path / "venv"  # empty: neither make test nor make demo filled it
    result = subprocess.run(
        ["make", "-n", "demo", f"VENV={venv}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    installs = [line for line in result.stdout.splitlines() if "pip install" in line]
    assert installs == [f'{venv}/bin/python -m pip install --quiet -e ".[viz]"'], installs
    assert "plangym plan ALE/MsPacman-v5" in result.stdout


def test_the_readme_says_how_to_reach_the_command_and_install_from_the_clone():
    readme = (ROOT / "README.md").read_text()
    assert "source .venv/bin/activate" in readme
    assert 'pip install ".[' in readme and "still plangym 0.1.32" in readme


def test_on_python_3_13_the_dm_control_hint_says_it_cannot_install(monkeypatch):
    # It advised pip install "plangym[dm-control]", which fails there (labmaze needs bazel).
    from plangym.extras import install_command

    monkeypatch.setattr(sys, "version_info", (3, 13, 0, "final", 0))
    hint = install_command("dm-control")
    assert "on this Python (3.13) it does not install: dm-control needs labmaze" in hint
    assert "docs/dm_control.md" in hint
    assert "does not install" not in install_command("mujoco")
    monkeypatch.setattr(sys, "version_info", (3, 12, 9, "final", 0))
    assert "does not install" not in install_command("dm-control")
