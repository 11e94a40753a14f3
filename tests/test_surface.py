"""plangym's public surface against the recorded ones: plangym 0.1.32's and gymnasium's vector API.

The records are ``tests/data/plangym01_surface.json`` and
``tests/data/gymnasium_vector_surface.json`` (``python scripts/record_surface.py WHEEL``
writes them). Each difference found has an identifier ``SCOPE:PATH``; the test of a scope
fails on a difference that is not in ``ALLOWED`` and on an ``ALLOWED`` entry of that scope
that no longer matches a difference. Every reason in ``ALLOWED`` is in docs/compatibility.md
("Checked automatically"); reasons starting with "GAP:" are gaps to fix, not decisions.
"""

from __future__ import annotations

import ast
import enum
import importlib
import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data"
PLANGYM01 = json.loads((DATA / "plangym01_surface.json").read_text())
GYMNASIUM = json.loads((DATA / "gymnasium_vector_surface.json").read_text())

# plangym's class for each of gymnasium's vector classes.
VECTOR_CLASSES = {
    "VectorEnv": "PlanVectorEnv",
    "AsyncVectorEnv": "AsyncVectorEnv",
    "SyncVectorEnv": "SyncVectorEnv",
}
# Modules checked only when their extra is installed: {module: (import name, extra)}.
EXTRAS = {
    "plangym.control.box_2d": ("Box2D", "box2d"),
    "plangym.control.dm_control": ("dm_control", "dm_control"),
    "plangym.control.mujoco": ("mujoco", "mujoco"),
    "plangym.vectorization.ray": ("ray", "ray"),
    "plangym.videogames.nes": ("nes_py", "nes"),
    "plangym.videogames.retro": ("retro", "retro"),
}

# Differences known and deliberate: {identifier: reason}. Keep in step with the table in
# docs/compatibility.md ("Checked automatically").
ALLOWED: dict[str, str] = {
    **dict.fromkeys(
        [
            "plangym.control.balloon:BalloonEnv.__init__(array_state)",
            "plangym.control.balloon:BalloonEnv.__init__(renderer)",
            "plangym.control.balloon:MatplotlibRenderer",
        ],
        (
            "`BalloonEnv` raises an ImportError saying why (the package does not import on "
            "Python 3.10+); see [Parameters kept](#coming-from-plangym-01x)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.vectorization.env:VectorizedEnv.__init__(autoreset)",
            "plangym.vectorization.env:VectorizedEnv.__init__(frameskip)",
            "plangym.vectorization.parallel:ParallelEnv.__init__(autoreset)",
            "plangym.vectorization.parallel:ParallelEnv.__init__(frameskip)",
            "plangym.vectorization.ray:RayEnv.__init__(autoreset)",
            "plangym.vectorization.ray:RayEnv.__init__(frameskip)",
        ],
        (
            "`frameskip=None`/`autoreset=None` mean the env class's default (0.1: 1 and True "
            "whatever the class); see the [first table](#coming-from-plangym-01x) and "
            "[plangym.vectorization.parallel](#plangymvectorizationparallel)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.videogames.atari:AtariEnv.__init__(difficulty)",
            "plangym.videogames.atari:AtariEnv.__init__(mode)",
        ],
        (
            "`mode=None`/`difficulty=None` mean the game's default (0.1 passed 0); see "
            "[Parameters kept](#coming-from-plangym-01x)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.control.mujoco:MujocoEnv.__init__(remove_time_limit)",
        ],
        (
            "`remove_time_limit=True` is honoured, as for every family (0.1 ignored it); see "
            "[Parameters kept](#coming-from-plangym-01x)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.videogames.env:VideogameEnv.__init__(render_mode)",
            "plangym.videogames.montezuma:MontezumaEnv.__init__(render_mode)",
            "plangym.videogames.nes:NesEnv.__init__(render_mode)",
            "plangym.videogames.retro:RetroEnv.__init__(render_mode)",
        ],
        (
            '`render_mode="rgb_array"` is every family\'s default (0.1: None on the abstract '
            "base); see [Module layout](#module-layout-and-constructors) and [Render "
            "modes](#render-modes)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.core:PlanEnv.step_batch(return_state)",
        ],
        (
            "`return_state=None` (was True): one default everywhere, states returned when "
            "states were passed; see the [first table](#coming-from-plangym-01x)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.api_tests:TestPlanEnv.CLASS_ATTRIBUTES",
            "plangym.api_tests:TestPlanEnv.PROPERTIES",
            "plangym.api_tests:TestPlanEnv.test_action_shape",
            "plangym.api_tests:TestPlanEnv.test_class_attributes",
            "plangym.api_tests:TestPlanEnv.test_clone_and_close",
            "plangym.api_tests:TestPlanEnv.test_get_image",
            "plangym.api_tests:TestPlanEnv.test_get_state",
            "plangym.api_tests:TestPlanEnv.test_has_properties",
            "plangym.api_tests:TestPlanEnv.test_img_shape",
            "plangym.api_tests:TestPlanEnv.test_init",
            "plangym.api_tests:TestPlanEnv.test_name",
            "plangym.api_tests:TestPlanEnv.test_obs_shape",
            "plangym.api_tests:TestPlanEnv.test_repr",
            "plangym.api_tests:TestPlanEnv.test_reset",
            "plangym.api_tests:TestPlanEnv.test_return_image",
            "plangym.api_tests:TestPlanEnv.test_sample_action",
            "plangym.api_tests:TestPlanEnv.test_set_state",
            "plangym.api_tests:TestPlanEnv.test_step",
            "plangym.api_tests:TestPlanEnv.test_step_batch",
            "plangym.api_tests:TestPlanEnv.test_step_batch_dt_values",
            "plangym.api_tests:TestPlanEnv.test_step_dt_values",
            "plangym.api_tests:TestPlanEnv.test_unwrapped",
            "plangym.api_tests:TestPlangymEnv.CLASS_ATTRIBUTES",
            "plangym.api_tests:TestPlangymEnv.PROPERTIES",
            "plangym.api_tests:TestPlangymEnv.test_action_space",
            "plangym.api_tests:TestPlangymEnv.test_class_attributes",
            "plangym.api_tests:TestPlangymEnv.test_delay_setup",
            "plangym.api_tests:TestPlangymEnv.test_gym_env",
            "plangym.api_tests:TestPlangymEnv.test_has_metadata",
            "plangym.api_tests:TestPlangymEnv.test_has_properties",
            "plangym.api_tests:TestPlangymEnv.test_obs_type",
            "plangym.api_tests:TestPlangymEnv.test_obvervation_space",
            "plangym.api_tests:TestPlangymEnv.test_remove_time_limit",
            "plangym.api_tests:TestPlangymEnv.test_render",
            "plangym.api_tests:TestPlangymEnv.test_render_mode",
            "plangym.api_tests:TestPlangymEnv.test_reward_range",
            "plangym.api_tests:TestPlangymEnv.test_seed",
            "plangym.api_tests:TestPlangymEnv.test_terminal",
            "plangym.api_tests:TestVideogameEnv.test_ram",
        ],
        (
            "the suite classes keep their names but check the planning contract with their "
            "own tests; see [plangym.api_tests](#plangymapi_tests)"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.control.box_2d:Box2DState",
        ],
        (
            "0.1's Box2DState copied body attributes, which did not restore a world "
            "exactly; states are replays now"
        ),
    ),
    **dict.fromkeys(
        [
            "plangym.core:PlanEnv.begin_step",
            "plangym.core:PlanEnv.get_step_tuple",
            "plangym.core:PlanEnv.run_autoreset",
            "plangym.videogames.env:VideogameEnv.begin_step",
        ],
        (
            "0.1's per-step scratch hooks: plangym keeps no per-step state on the env; "
            "subclasses override the process_* hooks, which are called"
        ),
    ),
}

Difference = tuple[str, str]  # (identifier, what differs)
POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


# Comparing signatures ------------------------------------------------------------------------
def default_text(value: Any) -> str:
    """A live default as the recorder writes it: enum members by name, else ``repr``."""
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)


def same_default(text: str, value: Any, namespace: dict[str, Any]) -> bool:
    """Whether a live default equals a recorded one (source text, read in ``namespace``)."""
    if text == default_text(value):
        return True
    try:
        expected = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            expected = eval(text, dict(namespace))  # the record's own source text
        except Exception:
            return False
    try:
        return expected is value or (bool(expected == value) and type(expected) is type(value))
    except Exception:  # e.g. arrays
        return False


def compare_signature(
    recorded: list[dict[str, str]], live: inspect.Signature, namespace: dict[str, Any]
) -> list[tuple[str, str]]:
    """``(parameter, what differs)`` for each way ``live`` refuses a call ``recorded`` took."""
    found: list[tuple[str, str]] = []
    params = list(live.parameters.values())
    kinds = {p.kind for p in params}
    live_positional = [p for p in params if p.kind in POSITIONAL]
    by_name = {p.name: p for p in params}
    recorded_positional = [r for r in recorded if r["kind"] in {k.name for k in POSITIONAL}]
    for i, rec in enumerate(recorded_positional):
        if i >= len(live_positional):
            found.append((rec["name"], "missing"))
            continue
        param = live_positional[i]
        if param.name != rec["name"] or param.kind.name != rec["kind"]:
            found.append((rec["name"], f"position {i} is {param.kind.name} {param.name!r}"))
    for rec in recorded:
        param = by_name.get(rec["name"])
        if rec["kind"] == "VAR_POSITIONAL" and inspect.Parameter.VAR_POSITIONAL not in kinds:
            found.append(("*" + rec["name"], "no *args"))
        elif rec["kind"] == "VAR_KEYWORD" and inspect.Parameter.VAR_KEYWORD not in kinds:
            found.append(("**" + rec["name"], "no **kwargs"))
        elif rec["kind"] == "KEYWORD_ONLY" and (
            param is None or param.kind not in (*POSITIONAL, inspect.Parameter.KEYWORD_ONLY)
        ):
            found.append((rec["name"], "missing"))
        elif rec["kind"].startswith("VAR_") or param is None or "default" not in rec:
            continue
        elif param.default is param.empty:
            found.append((rec["name"], f"default {rec['default']} is gone"))
        elif not same_default(rec["default"], param.default, namespace):
            found.append((rec["name"], f"default {rec['default']} is {param.default!r}"))
    known = {r["name"] for r in recorded}
    for i, param in enumerate(params):
        new = param.name not in known and param.kind not in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        )
        if new and param.default is param.empty:
            found.append((param.name, f"new required parameter at {i}"))
    return found


# Comparing classes and modules ---------------------------------------------------------------
def static_member(cls: type, name: str) -> Any:
    """``name`` as found on ``cls`` or its bases, without running descriptors (or None)."""
    try:
        return inspect.getattr_static(cls, name)
    except AttributeError:
        return None


def live_kind(member: Any) -> str:
    """``method``, ``classmethod``, ``staticmethod`` or ``property`` (any other descriptor)."""
    if isinstance(member, classmethod | staticmethod):
        return type(member).__name__
    return "method" if callable(member) else "property"


def compare_member(cls: type, name: str, recorded: dict[str, Any], path: str) -> list[Difference]:
    """A recorded method or property of ``cls``: kind and signature."""
    member = static_member(cls, name)
    if member is None:
        return [(f"{path}.{name}", "missing")]
    kind = live_kind(member)
    if recorded["kind"] != kind and "property" in (kind, recorded["kind"]):
        return [(f"{path}.{name}", f"is a {kind}, was a {recorded['kind']}")]
    if kind == "property":
        return []
    if recorded["kind"] != kind:
        return [(f"{path}.{name}", f"is a {kind}, was a {recorded['kind']}")]
    signature = recorded["signature"]
    function = getattr(member, "__func__", member)
    if name == "__init__":  # the constructor as callers see it (takes_parameters_of & co)
        function, signature = cls, signature[1:]
    try:
        live = inspect.signature(function)
    except (TypeError, ValueError):
        return [(f"{path}.{name}", "has no signature")]
    namespace = getattr(inspect.unwrap(getattr(member, "__func__", member)), "__globals__", {})
    return [
        (f"{path}.{name}({param})", detail)
        for param, detail in compare_signature(signature, live, namespace)
    ]


def live_class(qualified: str) -> Any:
    """plangym's class at a recorded ``module.Class`` path (None when it is not there)."""
    module_name, _, name = qualified.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), name, None)
    except (ImportError, ValueError):  # ValueError: no module part
        return None


def inherited_as_recorded(cls: type, name: str, origin: str, qualified: str) -> bool:
    """Whether ``cls`` gets ``name`` unchanged from the class 0.1 inherited it from.

    Such a member is checked (and reported) once, on that class.
    """
    base = live_class(origin)
    if origin == qualified or not inspect.isclass(base):
        return False
    return static_member(cls, name) is static_member(base, name)


def compare_class(cls: Any, recorded: dict[str, Any], path: str) -> list[Difference]:
    """A recorded class: every class attribute, method and property is on ``cls``."""
    if not inspect.isclass(cls):
        return [(path, f"is a {type(cls).__name__}, was a class")]
    qualified = path.replace(":", ".")
    found: list[Difference] = []
    for name, origin in recorded["attributes"].items():
        if not hasattr(cls, name) and not inherited_as_recorded(cls, name, origin, qualified):
            found.append((f"{path}.{name}", "missing"))
    for name, member in recorded["methods"].items():
        if not inherited_as_recorded(cls, name, member["defined_in"], qualified):
            found += compare_member(cls, name, member, path)
    return found


def extra_not_installed(error: Exception) -> bool:
    """Whether ``error`` says a family's package is not installed here (a lazy import's)."""
    cause = error.__cause__ if isinstance(error.__cause__, ImportError) else error
    name = getattr(cause, "name", None)
    return bool(name) and importlib.util.find_spec(name.split(".")[0]) is None


def plangym01_differences(module_name: str) -> list[Difference]:
    """How ``module_name`` differs from its plangym 0.1 record."""
    record = PLANGYM01["modules"][module_name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        return [(f"{module_name}:<import>", str(error))]
    found: list[Difference] = []
    for name, entry in sorted(record["names"].items()):
        path = f"{module_name}:{name}"
        try:
            value = getattr(module, name)
        except (AttributeError, ImportError) as error:
            if path in ALLOWED or not extra_not_installed(error):  # allowed: deliberate
                found.append((path, f"missing ({type(error).__name__})"))
            continue
        if entry["kind"] == "class":
            found += compare_class(value, entry, path)
        elif entry["kind"] == "function":
            try:
                live = inspect.signature(value)
            except (TypeError, ValueError):
                found.append((path, "is not callable"))
                continue
            namespace = getattr(inspect.unwrap(value), "__globals__", vars(module))
            found += [
                (f"{path}({param})", detail)
                for param, detail in compare_signature(entry["signature"], live, namespace)
            ]
    return found


def gymnasium_differences(class_name: str) -> list[Difference]:
    """How plangym's counterpart of gymnasium's ``class_name`` differs from its record."""
    import plangym.vector

    cls = getattr(plangym.vector, VECTOR_CLASSES[class_name])
    record = GYMNASIUM["classes"][class_name]
    path = f"gymnasium.vector.{class_name}:{cls.__name__}"
    found: list[Difference] = []
    for name, member in sorted(record["methods"].items()):
        found += compare_member(cls, name, member, path)
    return found


def check(scope: str, found: list[Difference]) -> None:
    """Fail on differences not allowed, and on allowed ones of ``scope`` no longer found."""
    unexpected = [f"{ident}: {detail}" for ident, detail in found if ident not in ALLOWED]
    identifiers = {ident for ident, _ in found}
    stale = [i for i in ALLOWED if i.split(":")[0] == scope and i not in identifiers]
    message = "\n".join(
        ["differences not in ALLOWED:", *unexpected, "ALLOWED entries not found:", *stale]
    )
    assert not unexpected and not stale, message


# Tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("module_name", sorted(PLANGYM01["modules"]))
def test_plangym01_surface(module_name: str) -> None:
    if module_name in EXTRAS:
        package, extra = EXTRAS[module_name]
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{module_name} needs plangym[{extra}] ({package} is not installed)")
    check(module_name, plangym01_differences(module_name))


@pytest.mark.parametrize("class_name", sorted(GYMNASIUM["classes"]))
def test_gymnasium_vector_surface(class_name: str) -> None:
    check(f"gymnasium.vector.{class_name}", gymnasium_differences(class_name))


def test_allowed_reasons_are_documented() -> None:
    """Every allowed difference, with its reason, is in docs/compatibility.md's table."""
    docs = (Path(__file__).resolve().parent.parent / "docs" / "compatibility.md").read_text()
    section = docs.split("## Checked automatically", 1)[-1]
    missing = [ident for ident in ALLOWED if f"`{ident}`" not in section]
    assert not missing, f"not in docs/compatibility.md's table: {missing}"
