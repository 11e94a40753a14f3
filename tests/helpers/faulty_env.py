"""A CartPole that misbehaves on request, to test how workers fail.

The first physics variable (cart position) selects the fault, so a batch can carry a
faulty element among normal ones: ``x == RAISE`` raises :class:`CartError`, ``x == HANG``
sleeps, ``x == DIE`` kills the process (once: the marker file is removed first, so a
re-run of the same chunk succeeds). ``x == SLOW`` sleeps half a second, and ``x == PAUSE``
sleeps once, for 30 s, when it can claim (remove) the marker file: long enough for a test
to kill the busy process from outside, while a re-run of the same chunk goes through.
``x == POISON`` kills the process every time it is stepped: no re-run can succeed.
An env built while ``build_marker`` exists kills its process before it is ready (once: it
removes the marker), as a worker started on a node that is dying.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from plangym.control.classic_control import ClassicControl

RAISE, HANG, DIE, SLOW, PAUSE, POISON = 11.0, 22.0, 33.0, 44.0, 55.0, 66.0


class CartError(ArithmeticError):
    """An error type the caller must see again, unchanged."""


class FaultyCartPole(ClassicControl):
    def __init__(
        self,
        name: str = "CartPole-v1",
        die_marker: str | None = None,
        build_marker: str | None = None,
        **kwargs,
    ):
        self.die_marker = die_marker
        if build_marker and _claim(build_marker):
            os.kill(os.getpid(), signal.SIGKILL)
        super().__init__(name=name, **kwargs)

    def apply_action(self, action):
        position = float(self.gym_env.unwrapped.state[0])
        if position == RAISE:
            raise CartError(f"cart position {position} is cursed")
        if position == HANG:
            time.sleep(30)
        if position == DIE and self.die_marker and self._claim_marker():
            os.kill(os.getpid(), signal.SIGKILL)
        if position == POISON:
            os.kill(os.getpid(), signal.SIGKILL)
        if position == SLOW:
            time.sleep(0.5)
        if position == PAUSE and self.die_marker and self._claim_marker():
            time.sleep(30)
        return super().apply_action(action)

    def _claim_marker(self) -> bool:
        return _claim(self.die_marker)


def _claim(marker: str) -> bool:
    """Remove ``marker``; whether this process did (several may race for it)."""
    try:
        os.unlink(marker)
    except FileNotFoundError:
        return False
    return True


def faulty_state(env, position: float) -> np.ndarray:
    """A state of ``env`` whose cart sits at ``position`` (the fault selector)."""
    env.reset()
    state = env.get_state().copy()
    state["physics"][0] = position
    return state


class CountingCartPole(ClassicControl):
    """A CartPole that counts the steps its process applied (``steps_here``).

    Overriding ``apply_action`` keeps it off the NumPy kernels: every element is a step.
    """

    steps_here = 0

    def apply_action(self, action):
        self.steps_here += 1
        return super().apply_action(action)
