"""What a user installing plangym gets: the extras cover their uses, missing ones are named."""

import ast
import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11's; 3.10 skips this file

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
NOTEBOOKS = sorted((REPO / "docs" / "notebooks").glob("*.ipynb"))


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(extra: str) -> set[str]:
    """The distributions an extra brings (plangym's own extras it names, followed)."""
    names: set[str] = set()
    for requirement in PYPROJECT["project"]["optional-dependencies"][extra]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        inner = re.search(r"\[([^\]]+)\]", requirement)
        if normalized(name) == "plangym" and inner:
            for other in inner.group(1).split(","):
                names |= requirement_names(other.strip())
        else:
            names.add(normalized(name))
    return names


def core_names() -> set[str]:
    return {
        normalized(re.match(r"[A-Za-z0-9_.-]+", r).group(0))
        for r in PYPROJECT["project"]["dependencies"]
    }


def imported_modules(notebook: Path) -> set[str]:
    """Top-level modules the notebook's code cells import."""
    modules = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        # IPython's magics and shell lines are not Python.
        source = "\n".join(
            line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"plangym"}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem)
def test_the_notebooks_extra_installs_what_each_notebook_imports(notebook):
    provided = requirement_names("notebooks") | core_names()
    owners = importlib.metadata.packages_distributions()
    missing = {
        module: owners.get(module)
        for module in imported_modules(notebook)
        if not {normalized(dist) for dist in owners.get(module, [module])} & provided
    }
    assert not missing, f"{notebook.name} imports what plangym[notebooks] lacks: {missing}"


def test_the_notebooks_extra_draws_the_classic_control_tasks_they_draw():
    drawing = [path.name for path in NOTEBOOKS if ".animation(" in path.read_text()]
    assert drawing, "no notebook draws a game any more: this test has nothing to check"
    assert "pygame" in requirement_names("notebooks"), drawing


def run_without(module: str, code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where ``module`` cannot be imported."""
    prelude = f"import sys; sys.modules[{module!r}] = None\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_api_tests_without_pytest_say_what_to_install():
    result = run_without("pytest", "import plangym.api_tests")
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: plangym.api_tests is a pytest suite"), last
    assert "pip install pytest" in last


def test_mujoco_envs_without_imageio_name_the_mujoco_extra():
    pytest.importorskip("mujoco")
    result = run_without("imageio", "import plangym; plangym.make('Hopper-v5')")
    last = result.stderr.strip().splitlines()[-1]
    assert "MuJoCo environments need the 'mujoco' extra" in last, last


def test_the_declared_license_files_exist():
    files = PYPROJECT["project"]["license-files"]
    assert files and all((REPO / name).is_file() for name in files)


@pytest.mark.parametrize(
    ("name", "kwargs", "extra"),
    [
        ("CartPole-v1", {"obs_type": "rgb"}, "classic-control"),
        ("LunarLander-v3", {"return_image": True}, "box2d"),
    ],
)
def test_drawing_without_pygame_names_plangyms_extra(name, kwargs, extra):
    if extra == "box2d":
        pytest.importorskip("Box2D")
    code = (
        "import plangym\n"
        "try:\n"
        f"    env = plangym.make({name!r}, **{kwargs!r}); env.reset(); env.get_image()\n"
        "except ImportError as error:\n"  # what users catch for a missing extra
        "    print(error)\n"
    )
    result = run_without("pygame", code)
    assert f'needs the {extra!r} extra: pip install "plangym[{extra}]"' in result.stdout, (
        result.stdout + result.stderr
    )
