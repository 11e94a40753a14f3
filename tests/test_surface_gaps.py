"""plangym 0.1 surface gaps closed: registry signatures, warning helpers, PlanEnv's signature
and ``ExternalProcess``'s parameters."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import plangym
from plangym import registry
from plangym.control import ClassicControl
from plangym.core import PlanEnv, PlangymEnv


def parameters(function) -> list[tuple[str, str, object]]:
    return [
        (p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()
    ]


EMPTY = inspect.Parameter.empty
POS = "POSITIONAL_OR_KEYWORD"


# 1. Registry signatures --------------------------------------------------------------------
def test_registry_signatures_take_plangym01_parameters_in_order():
    assert parameters(registry.get_planenv_class) == [
        ("name", POS, EMPTY),
        ("domain_name", POS, None),
        ("state", POS, None),
    ]
    assert parameters(registry.get_environment_class) == [
        ("name", POS, None),
        ("n_workers", POS, None),
        ("ray", POS, False),
        ("domain_name", POS, None),
        ("state", POS, None),
    ]
    assert parameters(registry.make)[:5] == [
        ("name", POS, None),
        ("n_workers", POS, None),
        ("ray", POS, False),
        ("domain_name", POS, None),
        ("state", POS, None),
    ]
    assert ("task_name", "KEYWORD_ONLY", None) in parameters(registry.make)


def test_registry_state_chooses_retro_and_domain_name_dm_control():
    # Choosing a class imports nothing heavy for names plangym knows.
    assert registry.get_planenv_class("CartPole-v1") is ClassicControl
    assert registry.get_planenv_class("CartPole-v1", None, None) is ClassicControl
    assert registry.get_environment_class("CartPole-v1", 2) == (
        registry.vectorized_class(2, False),
        ClassicControl,
    )
    retro_class = registry.get_planenv_class("Anything-v0", None, "Level1")
    assert retro_class.__name__ == "RetroEnv"
    assert registry.get_environment_class("Anything-v0", None, False, None, "Level1")[1] is (
        retro_class
    )
    # 0.1 looked for Montezuma's name before the state.
    assert registry.get_planenv_class("PlanMontezuma-v0", None, "x").__name__ == "MontezumaEnv"
    if importlib.util.find_spec("dm_control") is not None:
        dm_class = registry.get_planenv_class(None, "walker")
        assert dm_class.__name__ == "DMControlEnv"
        assert registry.get_environment_class(domain_name="walker") == (None, dm_class)
        # A known family's name wins over domain_name, as in 0.1.
        assert registry.get_planenv_class("CartPole-v1", "walker") is ClassicControl
    with pytest.raises(ValueError, match="unknown environment"):
        registry.get_planenv_class("NoSuchEnv-v0", None, None)


def test_make_keeps_current_callers_working():
    env = plangym.make("CartPole-v1", None, False, None, None, frameskip=2)
    try:
        assert isinstance(env, ClassicControl) and env.frameskip == 2
    finally:
        env.close()
    if importlib.util.find_spec("dm_control") is not None:
        env = plangym.make(domain_name="cartpole", task_name="balance")
        try:
            assert env.name == "cartpole-balance"
        finally:
            env.close()


# 2. Warning helpers ------------------------------------------------------------------------
def test_warn_import_error_logs_unless_disabled(caplog, monkeypatch):
    import plangym.videogames

    assert plangym.videogames.warn_import_error is plangym.warn_import_error
    assert list(inspect.signature(plangym.warn_import_error).parameters) == [
        "module_name",
        "reason",
    ]
    assert isinstance(plangym.PLANGYM_DISABLE_WARNINGS, bool)
    monkeypatch.setattr(plangym, "PLANGYM_DISABLE_WARNINGS", False)
    with caplog.at_level(logging.WARNING, logger="plangym"):
        assert plangym.warn_import_error("retro", "Install plangym[retro].") is None
        plangym.warn_import_error("nes_py")
    assert [r.getMessage() for r in caplog.records] == [
        "Could not import retro. Install plangym[retro].",
        "Could not import nes_py.",
    ]
    caplog.clear()
    monkeypatch.setattr(plangym, "PLANGYM_DISABLE_WARNINGS", True)
    with caplog.at_level(logging.WARNING, logger="plangym"):
        plangym.warn_import_error("retro", "ignored")
    assert caplog.records == []


@pytest.mark.parametrize(("value", "expected"), [("TRUE", True), ("1", True), ("no", False)])
def test_disable_warnings_reads_the_environment(value, expected):
    code = (
        "import plangym.videogames, plangym; "
        "from plangym.videogames import warn_import_error; "
        "print(plangym.PLANGYM_DISABLE_WARNINGS)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PLANGYM_DISABLE_WARNINGS": value},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == str(expected)


# 3. PlanEnv's signature ----------------------------------------------------------------------
def test_planenv_signature_shows_init_parameters():
    expected = parameters(PlanEnv.__init__)[1:]
    assert parameters(PlanEnv) == expected
    assert [name for name, *_ in expected] == [
        "name",
        "frameskip",
        "autoreset",
        "delay_setup",
        "return_image",
    ]

    class Bare(PlanEnv):
        pass

    assert parameters(Bare) == expected


def family_classes() -> list[type]:
    from plangym.registry import FAMILY_CLASSES, NAME_CLASSES, _import_class

    classes: list[type] = [PlangymEnv]
    for path in [*FAMILY_CLASSES.values(), *NAME_CLASSES.values()]:
        try:
            classes.append(_import_class(path))
        except ImportError:  # the family's extra is missing
            continue
    return classes


@pytest.mark.parametrize("cls", family_classes(), ids=lambda cls: cls.__name__)
def test_family_signature_shows_its_own_init(cls):
    assert parameters(cls) == parameters(cls.__init__)[1:]


def test_clone_and_pickle_repeat_the_constructor_call():
    env = ClassicControl("Pendulum-v1", 3, autoreset=False)
    try:
        for copy in (env.clone(), pickle.loads(pickle.dumps(env))):
            try:
                assert (copy.name, copy.frameskip, copy.autoreset) == ("Pendulum-v1", 3, False)
                state, *_ = env.reset()
                action = env.sample_action()
                assert np.array_equal(env.step(action, state)[1], copy.step(action, state)[1])
            finally:
                copy.close()
    finally:
        env.close()


# 4. ExternalProcess -------------------------------------------------------------------------
def test_external_process_takes_constructor_and_dt_none():
    from plangym.vectorization.parallel import ExternalProcess

    assert parameters(ExternalProcess)[0] == ("constructor", POS, EMPTY)
    step_batch = inspect.signature(ExternalProcess.step_batch).parameters
    assert list(step_batch)[:4] == ["self", "actions", "states", "dt"]
    assert step_batch["dt"].default is None

    worker = ExternalProcess(constructor=lambda: ClassicControl("CartPole-v1"))
    local = ClassicControl("CartPole-v1")
    try:
        state, *_ = local.reset()
        states, actions = [state, state], [0, 1]
        default = worker.step_batch(actions, states)
        one = worker.step_batch(actions, states, dt=1)
        expected = local.step_batch(actions, states, dt=1)
        for got in (default, one):
            assert len(got) == len(expected)
            for a, b in zip(got[:4], expected[:4], strict=True):
                assert np.array_equal(np.asarray(a), np.asarray(b))
            assert [info["dt"] for info in got[-1]] == [1, 1]
    finally:
        worker.close()
        local.close()
