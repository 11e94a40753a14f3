"""The suite runs with the extras installed: what needs a missing one is left out or skipped.

Doctests import plangym's family modules, and some test files import a family's package at
the top, so without it they would stop the collection: they are not collected. A test that
fails only because a family's package is missing is reported as skipped, naming the extra.
``make test`` installs every extra and sets ``PLANGYM_EVERY_EXTRA=1``, under which a
missing one is an error, not a skip.
"""

import importlib.util
import os

import pytest

# A family's package: its extra, and what imports it when collected (doctests, test files).
FAMILIES = {
    "mujoco": (
        "mujoco",
        [
            "plangym/control/mujoco/*",
            "plangym/control/shared/mujoco_runtime.py",
            "tests/control/test_mujoco*.py",
        ],
    ),
    "dm_control": (
        "dm-control",
        ["plangym/control/dm_control/*", "tests/control/test_dm_control*.py"],
    ),
    "Box2D": ("box2d", ["plangym/control/box_2d/*", "tests/control/test_box2d*.py"]),
    "stable_retro": ("retro", ["plangym/videogames/retro/*"]),
    "nes_py": ("nes", []),
}

missing = [name for name in FAMILIES if importlib.util.find_spec(name) is None]
if missing and os.environ.get("PLANGYM_EVERY_EXTRA") == "1":
    raise RuntimeError(
        f"PLANGYM_EVERY_EXTRA=1, but {', '.join(missing)} cannot be imported: "
        "`make install` installs every extra"
    )
collect_ignore_glob = [path for name in missing for path in FAMILIES[name][1]]
# How a failure shows that it only lacked a package: Python's words, plangym's, gymnasium's.
SIGNS = {
    name: (
        f"No module named '{name}'",
        f"need the '{FAMILIES[name][0]}' extra",
        f"needs the '{FAMILIES[name][0]}' extra",
        f"{name} is not installed",
    )
    for name in missing
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Report a failure that only lacked a missing family's package as a skip."""
    outcome = yield
    report = outcome.get_result()
    if not (report.failed and missing):
        return
    text = str(report.longrepr)
    for name, signs in SIGNS.items():
        if any(sign in text for sign in signs):
            extra = FAMILIES[name][0]
            report.outcome = "skipped"
            where = item.location
            report.longrepr = (where[0], (where[1] or 0) + 1, f"Skipped: needs plangym[{extra}]")
            return
