"""What makes a Box2D episode depend on its history alone: a fresh world, quiet replays.

* :func:`fresh_world`: a new ``b2World`` for every reset (gymnasium reuses one);
* :func:`episode_generator`: the generator an episode's resets and steps draw from;
* :func:`replaying`: replayed steps skip drawing what nobody will see.

Importing this module needs the ``box2d`` extra and names it when it is missing.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np

from plangym.extras import require

with warnings.catch_warnings():
    # The box2d wheel's SWIG types have no __module__, which importing them warns about;
    # nothing the user can act on.
    warnings.filterwarnings("ignore", "builtin type [Ss]wig", DeprecationWarning)
    Box2D = require("Box2D", extra="box2d", family="Box2D")

__all__ = ["episode_generator", "fresh_world", "replaying"]

# gymnasium's Env.np_random property itself, called on the raw env (mypy types the class
# attribute as the property's getter, which has no fget or fset).
_ENV_NP_RANDOM: Any = gym.Env.np_random


def fresh_world(unwrapped: Any) -> None:
    """Destroy the episode's bodies and give the env a new, empty ``b2World``.

    ``unwrapped`` is a gymnasium Box2D env (``world`` and ``_destroy`` are its own).

    gymnasium's BipedalWalker and CarRacing reuse one world across resets; a reused world
    keeps broad-phase and solver history, and an episode replayed in it diverges from the
    original within steps. The bodies go first, from the world that owns them (gymnasium's
    own reset then finds nothing left to destroy), and the new world has the old one's
    settings.
    """
    unwrapped._destroy()
    old = unwrapped.world
    world = Box2D.b2World(gravity=old.gravity, doSleep=old.allowSleeping)
    world.warmStarting = old.warmStarting
    world.continuousPhysics = old.continuousPhysics
    world.subStepping = old.subStepping
    unwrapped.world = world


def episode_generator(unwrapped: gym.Env) -> np.random.Generator:
    """Return the generator the env's resets and steps draw from (gymnasium's own)."""
    return _ENV_NP_RANDOM.fget(unwrapped)


@contextmanager
def replaying(unwrapped: Any) -> Iterator[None]:
    """Skip work a replay does not need: CarRacing draws its observation every step.

    The drawing reads the simulation and changes nothing in it, and the observations of
    replayed steps are thrown away, so CarRacing's ``_render`` answers a blank picture
    while a history is replayed; the next real step draws again.
    """
    if not hasattr(type(unwrapped), "_render"):
        yield
        return
    space = unwrapped.observation_space
    blank = np.zeros(space.shape, dtype=space.dtype)
    unwrapped._render = lambda *args, **kwargs: blank
    try:
        yield
    finally:
        del unwrapped._render  # the class's method again
