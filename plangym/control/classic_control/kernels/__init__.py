"""Vectorized step kernels of gymnasium's classic control envs, bit for bit as their step.

A kernel steps a whole batch of states once, in NumPy passes over arrays of rows, and gives
each row exactly the bits gymnasium 1.4's scalar ``step`` gives that state: the same
operations in the same order, on the same dtypes, with the env instance's constants. The
kernels cover CartPole-v0/v1 (:mod:`.cartpole`), Acrobot-v1 (:mod:`.acrobot`, its RK4
integrator), MountainCar-v0 (:mod:`.mountain_car`), MountainCarContinuous-v0
(:mod:`.continuous_mountain_car`) and Pendulum-v1 (:mod:`.pendulum`).

The scalar math gymnasium calls (``np.cos``, ``x ** 2``, ``math.pow``...) goes through
:mod:`.libm_check`, which gives each call's bits on any CPU: NumPy's array loop where a
self-test at first use finds it exact, else the scalar call element by element for that
one function (on AVX-512 machines, the squares).

:func:`kernel_for` gives the kernel of an unwrapped env, or None when stepping it
element by element is the only exact way: another env, a subclass overriding what step
calls, human rendering, a setting that draws randoms in step, or kernels switched off by
:func:`set_kernels_enabled` or the environment variable ``PLANGYM_NO_KERNELS=1``.

>>> import gymnasium
>>> env = gymnasium.make("Pendulum-v1").unwrapped
>>> _ = env.reset(seed=0)
>>> kernel = kernel_for(env)
>>> physics, last_u = np.array([env.state]), np.zeros(1)
>>> new, rewards, terminated = kernel.step(physics, np.array([[0.5]], np.float32), None, last_u)
>>> obs, reward, *_ = env.step(np.array([0.5], np.float32))
>>> new[0].tobytes() == env.state.tobytes(), float(rewards[0]) == float(reward)
(True, True)
>>> kernel.observe(new)[0].tobytes() == obs.tobytes()
True
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np

# How the env stores its state after a step: the codes of plangym.control.classic_control.state.
FLOAT64_ARRAY, FLOAT32_ARRAY, TUPLE = 0, 1, 2

_enabled = True


def set_kernels_enabled(enabled: bool) -> None:
    """Let :func:`kernel_for` give kernels (True, the default) or always None (False)."""
    global _enabled  # noqa: PLW0603 - one switch for the process
    _enabled = bool(enabled)


def kernels_enabled() -> bool:
    """Tell whether kernels are on: :func:`set_kernels_enabled` and ``PLANGYM_NO_KERNELS``."""
    return _enabled and os.environ.get("PLANGYM_NO_KERNELS", "").strip() in ("", "0")


class Kernel:
    """The vectorized step of one gymnasium env instance (see the module docstring).

    Subclasses set the class attributes and implement :meth:`step` and :meth:`observe`;
    they read the env's constants at every step, so they follow changes to them.

    Attributes:
        gym_class: Qualified name of the gymnasium class it steps (that class only: a
            subclass is an env of its own, stepped by its own code).
        own_methods: The methods of that class its step reproduces; an instance with one of
            them replaced gets no kernel.
        n_physics: Length of the physics vector.
        scalar_calls: Gymnasium's scalar calls the kernel computes on whole arrays,
            by their names in :data:`plangym.control.classic_control.kernels.libm_check.CALLS`.
        min_batch: The smallest batch the kernel steps faster than the element-by-element
            loop: a NumPy operation has a fixed cost, whatever the batch, of many scalar
            operations (``benchmarks/design_figures.py``), so below this size stepping
            the states one by one is cheaper. Measured per env by
            ``benchmarks/classic_kernels.py`` (its cost section).
        physics_kind: How the env stores its state after a step (``FLOAT64_ARRAY``,
            ``FLOAT32_ARRAY`` or ``TUPLE``, as :mod:`plangym.control.classic_control.state`).
        has_steps_beyond: The env has CartPole's ``steps_beyond_terminated``.
        has_last_u: The env has Pendulum's ``last_u``.
        exact_kinds: The physics kinds :meth:`step` reproduces (see its ``kinds``).
    """

    gym_class: ClassVar[str]
    own_methods: ClassVar[tuple[str, ...]] = ("step",)
    n_physics: ClassVar[int]
    scalar_calls: ClassVar[tuple[str, ...]] = ()
    min_batch: ClassVar[int] = 16
    physics_kind: ClassVar[int] = FLOAT64_ARRAY
    exact_kinds: ClassVar[frozenset[int]] = frozenset({FLOAT64_ARRAY, TUPLE})
    has_steps_beyond: ClassVar[bool] = False
    has_last_u: ClassVar[bool] = False

    def __init__(self, env: Any):
        self.env = env
        # A lookup table over the kind codes: cheaper than np.isin on every batch.
        self._exact = np.zeros(256, dtype=np.bool_)
        self._exact[list(self.exact_kinds)] = True

    def steps_kinds(self, kinds: np.ndarray) -> bool:
        """Whether every row of a batch holds its physics in a kind :meth:`step` reproduces."""
        return bool(self._exact[kinds].all())

    def held(self, physics: np.ndarray, kinds: np.ndarray | None) -> np.ndarray:
        """Return the physics as the env holds them: float32 rows rounded to float32.

        A record of kind ``FLOAT32_ARRAY`` is put in the env as a float32 array (see
        :mod:`plangym.control.classic_control.state`): the env steps its values rounded to float32.
        Raises ValueError for such a row when ``FLOAT32_ARRAY`` is not in ``exact_kinds``:
        CartPole, MountainCar and Pendulum compute in float32 on a float32 state, which
        gymnasium never gives them.
        """
        physics = np.asarray(physics, dtype=np.float64)
        if kinds is None:
            return physics
        small = np.asarray(kinds) == FLOAT32_ARRAY
        if not small.any():
            return physics
        if FLOAT32_ARRAY not in self.exact_kinds:
            raise ValueError(f"{type(self).__name__} cannot step physics of kind {FLOAT32_ARRAY}")
        physics = physics.copy()
        physics[small] = physics[small].astype(np.float32)
        return physics

    def scalar_loops(self) -> tuple[str, ...]:
        """Return the scalar calls this kernel computes element by element on this CPU."""
        from plangym.control.classic_control.kernels import libm_check

        on_loops = libm_check.scalar_loops()
        return tuple(name for name in self.scalar_calls if name in on_loops)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.env).__name__})"

    def step(
        self,
        physics: np.ndarray,
        actions: np.ndarray,
        steps_beyond: np.ndarray | None,
        last_u: np.ndarray | None,
        *,
        kinds: np.ndarray | None = None,
        out: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step every row once, as the env's step steps that state with that action.

        Args:
            physics: ``(B, n_physics)`` float64 states, not modified (unless ``out`` is them).
            actions: ``(B,)`` ints for a Discrete space, ``(B, 1)`` floats as given (float32
                or float64) for a Box space.
            steps_beyond: ``(B,)`` int64 CartPole's ``steps_beyond_terminated``, -1 for None,
                updated in place as the env updates it; None for the other envs.
            last_u: ``(B,)`` float64 Pendulum's ``last_u``, set in place to the clipped
                torque as the env sets it; None for the other envs.
            kinds: Optionally, the ``physics_kind`` of each row as the records store it
                (how the env held the state being stepped). A row of kind
                ``FLOAT32_ARRAY`` is rounded to float32 first, as the env gets it from
                the record (a kind not in ``exact_kinds`` raises ValueError).
                MountainCarContinuous computes differently on a float32
                state (after a step) than on a float64 one (after a reset): without
                ``kinds`` it takes a row whose values are all float32 numbers for a
                float32 state.
            out: Optionally, the ``(B, n_physics)`` float64 array the new physics are written
                into; it may be ``physics`` itself (a vector env steps its sub-envs in place,
                sparing a new array at every step).

        Returns:
            The new physics ``(B, n_physics)`` float64, in ``out`` when given (the values the
            env holds, as ``physics_kind`` says), the rewards ``(B,)`` float64
            (``float(reward)``) and ``terminated`` ``(B,)`` bool.
        """
        raise NotImplementedError

    def observe(self, physics: np.ndarray) -> np.ndarray:
        """Return the ``(B, obs_dim)`` float32 observations the env's step gives for these.

        Here the physics themselves as float32, as CartPole and MountainCar give them.
        """
        return np.asarray(physics, dtype=np.float64).astype(np.float32)

    @classmethod
    def accepts(cls, env: Any) -> bool:
        """Whether this instance's settings let the kernel reproduce its step."""
        return True


def _kernel_classes() -> dict[str, type[Kernel]]:
    """Return the kernel class of each gymnasium class, by its qualified name."""
    from plangym.control.classic_control.kernels import (
        acrobot,
        cartpole,
        continuous_mountain_car,
        mountain_car,
        pendulum,
    )

    classes = (
        acrobot.AcrobotKernel,
        cartpole.CartPoleKernel,
        continuous_mountain_car.ContinuousMountainCarKernel,
        mountain_car.MountainCarKernel,
        pendulum.PendulumKernel,
    )
    return {kernel.gym_class: kernel for kernel in classes}


# The registered ids whose gymnasium env a kernel steps (with their default settings).
KERNEL_ENV_IDS = (
    "CartPole-v0",
    "CartPole-v1",
    "Acrobot-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
)


def kernel_for(unwrapped_env: Any) -> Kernel | None:
    """Return the kernel of this gymnasium env (its unwrapped instance), or None.

    None when there is none: another env (or a wrapper), a subclass of one of the five
    (its own code steps it), a step method replaced on the instance, human rendering, a
    setting that draws randoms in step (Acrobot's ``torque_noise_max``), or kernels
    switched off.
    """
    if not kernels_enabled():
        return None
    cls = type(unwrapped_env)
    kernel = _kernel_classes().get(f"{cls.__module__}.{cls.__qualname__}")
    if kernel is None or getattr(unwrapped_env, "render_mode", None) == "human":
        return None  # another env, a subclass, or rendering: a side effect of step
    replaced = set(kernel.own_methods) & set(getattr(unwrapped_env, "__dict__", {}))
    if replaced or not kernel.accepts(unwrapped_env):
        return None
    return kernel(unwrapped_env)


__all__ = [
    "FLOAT32_ARRAY",
    "FLOAT64_ARRAY",
    "KERNEL_ENV_IDS",
    "TUPLE",
    "Kernel",
    "kernel_for",
    "kernels_enabled",
    "set_kernels_enabled",
]
