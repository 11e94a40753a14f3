"""Run the core's tests with the oldest versions plangym says it supports.

The core dependencies' floors in ``pyproject.toml`` (``numpy>=2.0`` becomes ``numpy==2.0``)
are installed, with the clone, into a fresh virtualenv of the oldest Python the project
supports when this machine has it (``python3.10`` on the PATH or under pyenv), else of the
Python running this script, as the output says. Then the tests that need no extra run
there. A floor that is too low (an API the code uses is missing, or results differ) fails
the check. ``.ci/run`` runs it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # the script runs on 3.11+; the virtualenv it makes may be 3.10
    sys.exit("scripts/check_minimums.py needs Python 3.11+ (tomllib) to read pyproject.toml")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# What the chosen tests use besides the core (pictures, GIFs, progress bars, the tools).
TEST_TOOLS = ["pytest", "pytest-xdist", "pytest-timeout", "hypothesis", "pygame", "pillow", "tqdm"]
# The tests of the core, of the families it ships (classic control, Atari, Montezuma) and of
# the worker layer and planners; the other families' tests need their extras.
TESTS = [
    "tests/core",
    "tests/vector",
    "tests/vectorization",
    "tests/planning",
    "tests/control/test_classic_control.py",
    "tests/control/test_classic_kernel_batches.py",
    "tests/control/test_classic_kernels.py",
    "tests/control/test_classic_vector.py",
    "tests/control/test_vector_draws.py",
    "tests/videogames/test_atari.py",
    "tests/videogames/test_atari_states.py",
    "tests/videogames/test_montezuma.py",
    "tests/test_exactness.py",
    "tests/test_conformance.py",
    "plangym/core",
    "plangym/vectorization",
    "plangym/vector",
    "plangym/control/classic_control",
    "plangym/videogames/atari",
    "plangym/planning",
]
# Parts of those that need an extra or a Jupyter kernel.
IGNORED = ["tests/vectorization/test_any_backend.py", "tests/vectorization/test_jupyter_kernel.py"]


def floors() -> list[str]:
    """Each core dependency pinned to its floor: ``["numpy==2.0", ...]``.

    >>> [pin.split("==")[0] for pin in floors()]
    ['numpy', 'gymnasium', 'ale-py', 'cloudpickle']
    """
    pins = []
    for requirement in PYPROJECT["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", requirement.strip())
        if match is None:
            raise ValueError(f"dependencies: expected 'name>=version', got {requirement!r}")
        pins.append(f"{match[1]}=={match[2]}")
    return pins


def oldest_python() -> tuple[str, str]:
    """Return the oldest supported Python found here, and a word on which it is."""
    oldest = PYPROJECT["project"]["requires-python"].removeprefix(">=")
    name = f"python{oldest}"
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [shutil.which(name) or ""]
    candidates += sorted(str(path) for path in pyenv_root.glob(f"versions/{oldest}.*/bin/{name}"))
    for candidate in filter(None, candidates):
        # A pyenv shim is on the PATH even where that version is not selected: it fails.
        if subprocess.run([candidate, "-c", ""], check=False, capture_output=True).returncode == 0:
            return candidate, f"Python {oldest}, the oldest supported"
    version = ".".join(map(str, sys.version_info[:2]))
    return sys.executable, f"Python {version}: no Python {oldest} on this machine"


def main() -> int:
    """Build the virtualenv, run the tests in it; return pytest's exit status."""
    python, which = oldest_python()
    pins = floors()
    print(f"core floors {', '.join(pins)} on {which}", flush=True)
    with tempfile.TemporaryDirectory(prefix="plangym-minimums-") as workdir:
        venv = Path(workdir) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        venv_python = str(venv / "bin" / "python")
        constraints = Path(workdir) / "floors.txt"
        constraints.write_text("\n".join(pins) + "\n")
        # As constraints, the floors hold for whatever asks for these packages (the clone,
        # or a test tool that would pull a newer numpy).
        install = [venv_python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        installed = subprocess.run(
            [*install, "-c", str(constraints), str(ROOT), *TEST_TOOLS], check=False
        )
        if installed.returncode != 0:
            print("pip could not install the floors with the clone", file=sys.stderr)
            return installed.returncode
        # The ini's addopts name nbmake, which the tests chosen here do not need.
        options = "--doctest-modules --doctest-glob=*.md -p no:cacheprovider"
        command = [venv_python, "-m", "pytest", "-q", "-n", "2", "-o", f"addopts={options}"]
        command += [f"--ignore={path}" for path in IGNORED] + TESTS
        env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
        return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()  # --help
    sys.exit(main())
