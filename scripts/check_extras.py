"""Install plangym with each extra into a fresh virtualenv, as a user would, and use it.

For the core and every extra: ``python3 -m venv`` (with the pip it brings, not upgraded),
``pip install "CLONE[EXTRA]"`` from the clone, then build and step one env of the family in
that virtualenv. A missing dependency, a misspelled extra ("does not provide the extra") or
an env that fails fails the check. Prints one line per extra and exits non-zero on any
failure. ``.ci/run`` runs it; ``python scripts/check_extras.py mujoco viz`` checks a few.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What each install must be able to do: Python run in its virtualenv.
STEP = """
import numpy as np, plangym
env = plangym.make({name!r}{kwargs})
state, obs, info = env.reset(seed=0)
action = env.sample_action()
first = env.step(action, state=state)
again = env.step(action, state=state)
assert np.array_equal(first[1], again[1]), "stepping from a restored state is not exact"
env.close()
print("stepped", {name!r})
"""
CHECKS: dict[str, str] = {
    "": STEP.format(name="CartPole-v1", kwargs="")
    + STEP.format(name="ALE/Pong-v5", kwargs="")
    # PEP 561's marker: type checkers read plangym's annotations in the user's code.
    + "import importlib.resources\n"
    + "assert importlib.resources.files('plangym').joinpath('py.typed').is_file()\n",
    "classic-control": STEP.format(name="CartPole-v1", kwargs=", obs_type='rgb'"),
    "mujoco": STEP.format(name="HalfCheetah-v5", kwargs=""),
    "dm-control": STEP.format(name="cartpole-balance", kwargs=""),
    "box2d": STEP.format(name="LunarLander-v3", kwargs=""),
    "retro": STEP.format(name="Airstriker-Genesis-v0", kwargs=""),
    "nes": STEP.format(name="SuperMarioBros-v0", kwargs=""),
    "ray": STEP.format(name="CartPole-v1", kwargs=", n_workers=2, ray=True"),
    "images": (
        "import numpy as np\nfrom plangym.utils import process_frame\n"
        "print(process_frame(np.zeros((210, 160, 3), np.uint8), 84, 84, mode='L').shape)\n"
    ),
    "viz": (
        "import subprocess, sys, tempfile, pathlib\n"
        "with tempfile.TemporaryDirectory() as out:\n"
        "    subprocess.run([pathlib.Path(sys.executable).parent / 'plangym', 'plan',"
        " 'ALE/Pong-v5', '--steps', '3', '--workers', '1', '--out', out], check=True)\n"
        "    assert (pathlib.Path(out) / 'trajectory.gif').stat().st_size > 0\n"
    ),
}


def check(extra: str, workdir: Path) -> tuple[bool, str]:
    """Install ``extra`` (``""``: the core) in a fresh virtualenv and run its check."""
    venv = workdir / (extra or "core")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", target],
        check=False,
        capture_output=True,
        text=True,
    )
    output = install.stdout + install.stderr
    if install.returncode != 0 or "does not provide the extra" in output:
        return False, f"pip install {target!r} failed:\n{output.strip()[-2000:]}"
    # RAY_TMPDIR: the ray check's session files go in workdir, removed afterwards (Ray's
    # default, /tmp/ray, would keep them).
    env = {
        **os.environ,
        "RAY_AUTH_MODE": "disabled",
        "SDL_VIDEODRIVER": "dummy",
        "RAY_TMPDIR": str(workdir),
    }
    command = [python, "-c", CHECKS[extra]]
    run = subprocess.run(command, check=False, capture_output=True, text=True, cwd=workdir, env=env)
    if run.returncode != 0:
        return False, f"the check failed:\n{(run.stdout + run.stderr).strip()[-2000:]}"
    return True, run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "ok"


def main(extras: list[str]) -> int:
    """Check ``extras`` one after another; return the exit status."""
    failed = []
    with tempfile.TemporaryDirectory(prefix="plangym-extras-") as tmp:
        for extra in extras:
            started = time.monotonic()
            ok, detail = check(extra, Path(tmp))
            took = time.monotonic() - started
            name = extra or "(core)"
            summary = detail.splitlines()[0]
            print(f"{name:<16} {'ok' if ok else 'FAILED':<7} {took:6.1f} s  {summary}", flush=True)
            if not ok:
                print(detail, file=sys.stderr)
                failed.append(name)
    if failed:
        print(f"extras that do not install or work: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def parse_extras(argv: list[str]) -> list[str]:
    """Return the extras named on the command line (all by default); refuse unknown ones."""
    parser = argparse.ArgumentParser(
        description="Install plangym with each extra into a fresh virtualenv and use it."
    )
    parser.add_argument(
        "extras", nargs="*", metavar="EXTRA",
        help="extras to check (default: the core and every extra: "
        f"{', '.join(extra for extra in CHECKS if extra)})",
    )  # fmt: skip
    extras = parser.parse_args(argv).extras
    unknown = [extra for extra in extras if extra not in CHECKS]
    if unknown:
        parser.error(f"unknown extra(s) {', '.join(unknown)}: expected some of {list(CHECKS)}")
    return extras or list(CHECKS)


if __name__ == "__main__":
    sys.exit(main(parse_extras(sys.argv[1:])))
