"""Record the public surfaces plangym promises to keep: plangym 0.1.32's and gymnasium's vector API.

``python scripts/record_surface.py [WHEEL]`` writes two files that ``tests/test_surface.py``
compares plangym's live surface with:

* ``tests/data/plangym01_surface.json``: plangym 0.1.32's public modules, module-level names,
  signatures and class members, read statically (``ast``) from the wheel's sources, so no
  plangym 0.1 install is needed. Without ``WHEEL`` the wheel is fetched with
  ``pip download plangym==0.1.32 --no-deps`` into a temporary directory.
* ``tests/data/gymnasium_vector_surface.json``: the public methods and properties of the
  installed gymnasium's ``VectorEnv``, ``AsyncVectorEnv`` and ``SyncVectorEnv`` (``inspect``).

A signature is a list of parameters ``{"name", "kind", "default"}``: ``kind`` is an
``inspect.Parameter`` kind name and ``default`` the default's source text (absent when the
parameter has none). The JSON is sorted, so re-recording the same inputs gives the same bytes.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import enum
import inspect
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PLANGYM01_FILE = DATA / "plangym01_surface.json"
GYMNASIUM_FILE = DATA / "gymnasium_vector_surface.json"
VERSION = "0.1.32"
SKIPPED_PACKAGES = ("plangym.scripts", "plangym.tests")
GYMNASIUM_CLASSES = ("VectorEnv", "AsyncVectorEnv", "SyncVectorEnv")

Signature = list[dict[str, str]]


# plangym 0.1: static, from the wheel's sources ---------------------------------------------
def module_name(path: str) -> str:
    """``plangym/core.py`` -> ``plangym.core``; ``plangym/x/__init__.py`` -> ``plangym.x``."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_public_module(name: str) -> bool:
    """Whether ``name`` is part of 0.1's surface (no private parts, no scripts or tests)."""
    private = any(part.startswith("_") for part in name.split("."))
    return not private and not name.startswith(SKIPPED_PACKAGES)


def read_wheel_sources(wheel: Path) -> dict[str, ast.Module]:
    """Parse every public module of the wheel: ``{module name: syntax tree}``."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            module_name(path): ast.parse(archive.read(path).decode(), filename=path)
            for path in sorted(archive.namelist())
            if path.startswith("plangym/")
            and path.endswith(".py")
            and is_public_module(module_name(path))
        }


def ast_signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature:
    """Return a function's parameters, in order, with kinds and defaults as source text."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    params: list[tuple[ast.arg, str, ast.expr | None]] = [
        (arg, "POSITIONAL_ONLY" if i < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD", d)
        for i, (arg, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if args.vararg:
        params.append((args.vararg, "VAR_POSITIONAL", None))
    params += [
        (arg, "KEYWORD_ONLY", d) for arg, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append((args.kwarg, "VAR_KEYWORD", None))
    return [
        {"name": arg.arg, "kind": kind} | ({} if d is None else {"default": ast.unparse(d)})
        for arg, kind, d in params
    ]


def decorator_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Return each decorator's last dotted part (``cached_property``)."""
    return {ast.unparse(d).split("(")[0].split(".")[-1] for d in function.decorator_list}


def member_kind(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``property``, ``classmethod``, ``staticmethod`` or ``method``."""
    decorators = decorator_names(function)
    if decorators & {"property", "cached_property"}:
        return "property"
    for kind in ("classmethod", "staticmethod"):
        if kind in decorators:
            return kind
    return "method"


def is_public(name: str) -> bool:
    """Public names, plus the constructor (its signature is part of the surface)."""
    return not name.startswith("_") or name == "__init__"


def assigned_names(node: ast.stmt) -> list[str]:
    """Return the plain names an assignment statement binds."""
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    names: list[str] = []
    for target in targets:
        elements = target.elts if isinstance(target, ast.Tuple) else [target]
        names += [e.id for e in elements if isinstance(e, ast.Name)]
    return names


def top_level_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Return a body's statements, looking inside module-level ``if`` and ``try`` blocks."""
    statements: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            statements += top_level_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            blocks = [node.body, node.orelse, node.finalbody]
            blocks += [handler.body for handler in node.handlers]
            statements += top_level_statements([s for block in blocks for s in block])
        else:
            statements.append(node)
    return statements


def absolute_module(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """Return the absolute module an ``ImportFrom`` reads from."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def literal_names(value: ast.expr, literals: dict[str, Any]) -> list[str]:
    """Return an ``__all__`` value: a literal list, or ``list(NAME)`` of a module-level literal."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.args:
        argument = value.args[0]
        if isinstance(argument, ast.Name) and argument.id in literals:
            return list(literals[argument.id])
    return list(ast.literal_eval(value))


class SurfaceReader:
    """Read modules, names and classes of a package from its syntax trees."""

    def __init__(self, trees: dict[str, ast.Module], packages: set[str]):
        self.trees = trees
        self.packages = packages
        self.classes: dict[tuple[str, str], dict[str, Any]] = {}

    def imports(self, module: str) -> dict[str, tuple[str, str]]:
        """Names the module imports from plangym: ``{local name: (module, name)}``."""
        found: dict[str, tuple[str, str]] = {}
        for node in top_level_statements(self.trees[module].body):
            if isinstance(node, ast.ImportFrom):
                source = absolute_module(module, node, module in self.packages)
                if source.split(".")[0] == "plangym":
                    for alias in node.names:
                        found[alias.asname or alias.name] = (source, alias.name)
        return found

    def class_record(self, module: str, name: str) -> dict[str, Any] | None:
        """Return a class's public attributes and methods, plangym bases' included."""
        key = (module, name)
        if key not in self.classes:
            self.classes[key] = {}  # guards against cycles
            node = self.find_class(module, name)
            self.classes[key] = {} if node is None else self.read_class(module, node)
        return self.classes[key] or None

    def find_class(self, module: str, name: str) -> ast.ClassDef | None:
        """Return the ``ClassDef`` of ``module.name``, following imports within plangym."""
        if module not in self.trees:
            return None
        for node in top_level_statements(self.trees[module].body):
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node
        source = self.imports(module).get(name)
        if source is None:
            return None
        if f"{source[0]}.{source[1]}" in self.trees:  # a submodule, not a class
            return None
        return self.find_class(*source)

    def resolve_base(self, module: str, base: ast.expr) -> tuple[str, str] | None:
        """Where a base class is defined, when it is in plangym."""
        if not isinstance(base, ast.Name):
            return None
        for node in top_level_statements(self.trees[module].body):
            if isinstance(node, ast.ClassDef) and node.name == base.id:
                return module, base.id
        return self.imports(module).get(base.id)

    def read_class(self, module: str, node: ast.ClassDef) -> dict[str, Any]:
        """Merge the plangym bases' members (later bases first) with the class's own."""
        attributes: dict[str, str] = {}  # {name: "module.Class" that assigns it}
        methods: dict[str, dict[str, Any]] = {}
        bases: list[str] = []
        for base in reversed(node.bases):
            bases.insert(0, ast.unparse(base))
            where = self.resolve_base(module, base)
            record = self.class_record(*where) if where else None
            if record:
                attributes |= record["attributes"]
                methods |= record["methods"]
        origin = f"{module}.{node.name}"
        for item in node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and is_public(item.name):
                methods[item.name] = {
                    "kind": member_kind(item),
                    "signature": ast_signature(item),
                    "defined_in": origin,
                }
            elif isinstance(item, ast.Assign | ast.AnnAssign):
                attributes |= {n: origin for n in assigned_names(item) if is_public(n)}
        return {
            "kind": "class",
            "bases": bases,
            "attributes": {n: o for n, o in attributes.items() if n not in methods},
            "methods": methods,
        }

    def module_record(self, module: str) -> dict[str, Any]:
        """Return a module's ``__all__`` (or None) and its public module-level names."""
        names: dict[str, dict[str, Any]] = {}
        declared_all: list[str] | None = None
        plangym_imports = self.imports(module)
        literals: dict[str, Any] = {}
        for node in top_level_statements(self.trees[module].body):
            if isinstance(node, ast.Assign) and len(names_ := assigned_names(node)) == 1:
                with contextlib.suppress(ValueError):
                    literals[names_[0]] = ast.literal_eval(node.value)
            if isinstance(node, ast.ClassDef) and is_public(node.name):
                names[node.name] = self.class_record(module, node.name) or {}
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and is_public(node.name):
                names[node.name] = {"kind": "function", "signature": ast_signature(node)}
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                for name in assigned_names(node):
                    if name == "__all__" and node.value is not None:
                        declared_all = literal_names(node.value, literals)
                    elif is_public(name) and name not in names:
                        names[name] = {"kind": "constant"}
        for name, (source, original) in plangym_imports.items():
            # A package's imports are its API; a module's are incidental unless in __all__.
            reexported = module in self.packages or name in (declared_all or [])
            if is_public(name) and name not in names and reexported:
                names[name] = {"kind": "import", "from": f"{source}.{original}"}
        for name in declared_all or []:
            if name not in names:
                names[name] = {"kind": "lazy"}  # in __all__, served by a module __getattr__
        return {"all": declared_all, "names": names}


def record_plangym01(wheel: Path) -> dict[str, Any]:
    """Return plangym 0.1's public surface, read from the wheel."""
    trees = read_wheel_sources(wheel)
    with zipfile.ZipFile(wheel) as archive:
        packages = {module_name(p) for p in archive.namelist() if p.endswith("/__init__.py")}
    reader = SurfaceReader(trees, packages)
    return {
        "source": wheel.name,
        "modules": {name: reader.module_record(name) for name in sorted(trees)},
    }


# gymnasium's vector API: live, with inspect -------------------------------------------------
def default_text(value: Any) -> str:
    """Return a default value as source text: enum members by name, anything else by ``repr``."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def live_signature(function: Any) -> Signature:
    """``inspect.signature`` in the recorded format."""
    return [
        {"name": p.name, "kind": p.kind.name}
        | ({} if p.default is p.empty else {"default": default_text(p.default)})
        for p in inspect.signature(function).parameters.values()
    ]


def live_member(member: Any) -> dict[str, Any] | None:
    """Return a class member's kind and signature, or None (not a method or property)."""
    if isinstance(member, property):
        return {"kind": "property"}
    for kind in (classmethod, staticmethod):
        if isinstance(member, kind):
            return {"kind": kind.__name__, "signature": live_signature(member.__func__)}
    if inspect.isfunction(member):
        return {"kind": "method", "signature": live_signature(member)}
    return None


def record_gymnasium_class(cls: type) -> dict[str, Any]:
    """Return a gymnasium class's public methods and properties, own and inherited."""
    methods: dict[str, dict[str, Any]] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__.split(".")[0] not in ("gymnasium", cls.__module__.split(".")[0]):
            continue  # object, typing.Generic
        for name, member in vars(klass).items():
            record = live_member(member) if is_public(name) else None
            if record:
                methods[name] = record
    return {"module": cls.__module__, "methods": methods}


def record_gymnasium() -> dict[str, Any]:
    """Return gymnasium's vector classes' public surface, from the installed gymnasium."""
    import gymnasium
    import gymnasium.vector

    classes = {name: getattr(gymnasium.vector, name) for name in GYMNASIUM_CLASSES}
    return {
        "source": f"gymnasium {gymnasium.__version__}",
        "classes": {name: record_gymnasium_class(cls) for name, cls in classes.items()},
    }


# Command line --------------------------------------------------------------------------------
def download_wheel(directory: Path) -> Path:
    """``pip download plangym==0.1.32 --no-deps`` into ``directory``; return the wheel."""
    command = [sys.executable, "-m", "pip", "download", f"plangym=={VERSION}", "--no-deps"]
    subprocess.run([*command, "--only-binary=:all:", "-d", str(directory)], check=True)
    return next(directory.glob("plangym-*.whl"))


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write sorted, indented JSON with a final newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def summary(surface: dict[str, Any]) -> str:
    """Return the counts of modules, names and signatures in a plangym 0.1 record."""
    names = [n for m in surface["modules"].values() for n in m["names"].values()]
    members = [m for n in names for m in n.get("methods", {}).values()]
    signatures = sum("signature" in record for record in [*names, *members])
    return f"{len(surface['modules'])} modules, {len(names)} names, {signatures} signatures"


def main(argv: list[str] | None = None) -> None:
    """Record both surfaces into tests/data."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", nargs="?", type=Path, help=f"plangym-{VERSION} wheel")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(Path(tmp))
        plangym01 = record_plangym01(wheel)
    write_json(PLANGYM01_FILE, plangym01)
    write_json(GYMNASIUM_FILE, record_gymnasium())
    print(f"{PLANGYM01_FILE.relative_to(ROOT)}: {summary(plangym01)}")
    print(f"{GYMNASIUM_FILE.relative_to(ROOT)} recorded")


if __name__ == "__main__":
    main()
