"""The example notebooks in docs/notebooks: stored without outputs, run in this interpreter.

``make test`` executes every notebook in a fresh kernel with nbmake (``--nbmake`` in the
pytest options of pyproject.toml): one test per notebook, failing on any cell error. The
tests here check what that run does not: the notebooks are stored without outputs (clean
diffs; the documentation site executes them when it builds), and the ``python3`` kernel
nbmake starts is this interpreter, not a kernel spec installed for another Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "docs" / "notebooks"
# The documentation site links these four by name.
NAMES = ["quickstart", "many_workers", "planning", "your_own_env"]


def test_the_linked_notebooks_exist():
    assert {name: (NOTEBOOKS / f"{name}.ipynb").is_file() for name in NAMES} == dict.fromkeys(
        NAMES, True
    )


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.name)
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    first = notebook.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# "), "no title cell"
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {i} has outputs"
            assert cell.execution_count is None, f"cell {i} has an execution count"


def test_the_python3_kernel_is_this_interpreter():
    pytest.importorskip("ipykernel")
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="python3")
    command = manager.format_kernel_cmd()
    assert command[0] == sys.executable, (
        f"the python3 kernel spec in {manager.kernel_spec.resource_dir} starts {command[0]}, "
        f"not {sys.executable}: the notebooks would run in another interpreter. Remove that "
        "spec (jupyter kernelspec remove python3) or put this one first on JUPYTER_PATH."
    )
