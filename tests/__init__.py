"""plangym's test suite: one folder per package of plangym, shared helpers in ``tests.helpers``.

A package, so that test modules, the helpers and the processes tests start (worker
processes, Ray actors, fresh interpreters) import them by one name, ``tests.<folder>.<module>``,
from the repository root (``pythonpath = ["."]`` in pyproject.toml's pytest options).
"""
