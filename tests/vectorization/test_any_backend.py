"""``make(name, **kw)`` builds the same env with or without workers, on every backend.

For each family, with the env class's defaults and with overrides, the env that
``make(name, n_workers=2, **kw)`` (processes) and ``make(..., ray=True)`` return answers
every public attribute of ``make(name, **kw)`` with the same value, and steps a batch of
distinct states to bit-identical results. ``clone()`` keeps all of it.
"""

from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.core import PlanEnv
from plangym.vectorization import ParallelEnv
from plangym.videogames.atari import AtariEnv
from tests.helpers.vectorized_contract import random_states

CASES = [
    ("CartPole-v1", {}),
    ("CartPole-v1", {"frameskip": 2, "remove_time_limit": False, "autoreset": False}),
    ("Acrobot-v1", {}),
    ("Pendulum-v1", {"frameskip": 3}),
    ("ALE/MsPacman-v5", {}),
    ("ALE/MsPacman-v5", {"frameskip": 3, "repeat_action_probability": 0.25, "autoreset": False}),
    ("ALE/Pong-v5", {"obs_type": "ram"}),
    ("ALE/Breakout-v5", {"obs_type": "grayscale", "remove_time_limit": False}),
    ("Hopper-v5", {}),
    ("Ant-v5", {"frameskip": 2, "render_mode": None, "remove_time_limit": False}),
    ("walker-walk", {}),
    ("reacher-easy", {"frameskip": 2, "visualize_reward": False, "seed": 3}),
    ("LunarLander-v3", {}),
    ("BipedalWalker-v3", {"frameskip": 2, "remove_time_limit": False}),
    ("PlanMontezuma-v0", {"obs_type": "coords"}),
    ("SuperMarioBros-1-1-v0", {"movement_type": "right"}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'defaults'}" for name, kw in CASES]


def comparable(value: Any) -> Any:
    """A value two envs built alike share: simulators by their kind, the rest as they are."""
    if isinstance(value, gym.Env):
        return ("gym env", type(value.unwrapped).__name__, value.spec and value.spec.id)
    if isinstance(value, PlanEnv):
        return ("plan env", type(value).__name__, value.name)
    if isinstance(value, ale_py.ALEInterface):
        return ("ALE", value.getString("rom_file"))
    if isinstance(value, np.ndarray):  # e.g. Montezuma's pictures of rooms
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return {key: comparable(item) for key, item in value.items()}
    if type(value).__eq__ is object.__eq__:  # compared by identity: two envs never share it
        return ("object", type(value).__qualname__)
    return value


def public_attributes(env: Any, names: list[str]) -> dict[str, Any]:
    """``{name: comparable value}`` for the attributes and properties named."""
    return {name: comparable(getattr(env, name)) for name in names}


def attribute_names(env: PlanEnv) -> list[str]:
    """Public attributes, properties and class attributes of a single env (no methods)."""
    return [
        name for name in dir(env) if not name.startswith("_") and not callable(getattr(env, name))
    ]


def make_vectorized(backend: str, name: str, kwargs: dict, request) -> Any:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
        return plangym.make(name, n_workers=2, ray=True, inline_small_batches=False, **kwargs)
    # Every batch on the workers, never in the caller: the workers' envs are under test.
    return plangym.make(name, n_workers=2, inline_small_batches=False, **kwargs)


def check_same_env(single: PlanEnv, vectorized: Any, seed: int) -> None:
    names = attribute_names(single)
    assert public_attributes(vectorized, names) == public_attributes(single, names)
    assert vectorized.get_attr("frameskip") == [single.frameskip] * 2
    states = random_states(single, 6, seed=seed)
    rng = np.random.default_rng(seed)
    actions = [single.sample_action() for _ in states]
    dt = rng.integers(1, 4, size=len(states)).tolist()
    expected = single.step_batch(actions, states=states, dt=dt)
    assert_identical(vectorized.step_batch(actions, states=states, dt=dt), expected)


@pytest.mark.parametrize("backend", ["processes", "ray"])
@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=IDS)
def test_workers_build_the_env_make_builds(backend, name, kwargs, request):
    single = plangym.make(name, **kwargs)
    vectorized = make_vectorized(backend, name, kwargs, request)
    try:
        check_same_env(single, vectorized, seed=len(name))
    finally:
        vectorized.close()
        single.close()


@pytest.mark.parametrize("backend", ["processes", "ray"])
def test_a_clone_keeps_the_defaults_and_the_overrides(backend, request):
    single = plangym.make("ALE/Pong-v5", obs_type="ram", repeat_action_probability=0.25)
    vectorized = make_vectorized(
        backend, "ALE/Pong-v5", {"obs_type": "ram", "repeat_action_probability": 0.25}, request
    )
    clone = vectorized.clone()
    vectorized.close()
    try:
        assert type(clone) is type(vectorized)
        assert clone.frameskip == 5 and clone.repeat_action_probability == 0.25
        check_same_env(single, clone, seed=3)
    finally:
        clone.close()


def test_a_delayed_env_knows_the_defaults_before_it_is_built():
    env = ParallelEnv(AtariEnv, "ALE/Pong-v5", n_workers=1, delay_setup=True)
    try:
        assert (env.frameskip, env.autoreset, env.SINGLETON, env.STATE_IS_ARRAY) == (
            5,
            True,
            False,
            True,
        )
        env.setup()
        assert env.get_attr("frameskip") == [5]
    finally:
        env.close()


def test_an_explicit_frameskip_wins_over_the_class_default():
    env = plangym.make("ALE/Pong-v5", n_workers=1, frameskip=2, obs_type="ram")
    try:
        assert env.frameskip == 2 and env.get_attr("frameskip") == [2]
        state, *_ = env.reset()
        assert env.step_batch([0], states=[state])[-1][0]["n_step"] == 2
    finally:
        env.close()
