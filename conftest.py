"""The suite runs with the extras installed: a family whose package is missing is left out.

Doctests import plangym's family modules, and some test files import a family's package at
the top, so without it they would stop the collection. ``make test`` installs every extra
and sets ``PLANGYM_EVERY_EXTRA=1``, under which a missing one is an error, not a skip.
"""

import importlib.util
import os

# A family's package, and what imports it when collected (modules doctested, test files).
FAMILY_PATHS = {
    "mujoco": [
        "plangym/control/mujoco/*",
        "plangym/control/shared/mujoco_runtime.py",
        "tests/control/test_mujoco*.py",
    ],
    "dm_control": ["plangym/control/dm_control/*", "tests/control/test_dm_control*.py"],
    "Box2D": ["plangym/control/box_2d/*", "tests/control/test_box2d*.py"],
    "stable_retro": ["plangym/videogames/retro/*"],
}

missing = [name for name in FAMILY_PATHS if importlib.util.find_spec(name) is None]
if missing and os.environ.get("PLANGYM_EVERY_EXTRA") == "1":
    raise RuntimeError(
        f"PLANGYM_EVERY_EXTRA=1, but {', '.join(missing)} cannot be imported: "
        "`make install` installs every extra"
    )
collect_ignore_glob = [path for name in missing for path in FAMILY_PATHS[name]]
