"""gymnasium's classic control tasks with exact states.

A state is a 0-d NumPy record holding everything that decides the future: the physics
vector (with its dtype: MountainCarContinuous steps in float32), CartPole's
``steps_beyond_terminated``, the time-limit counter when a limit is kept, Pendulum's
``last_u`` (drawn by the renderer) and the ``np_random`` generator that the next reset
draws from.

>>> env = ClassicControl("CartPole-v1")
>>> state, obs, info = env.reset()
>>> state["physics"].shape
(4,)
>>> copy = state.copy()
>>> _ = env.step(1)
>>> env.set_state(copy)
>>> bool(env.get_state() == copy)
True
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from plangym.core import PlanEnv, PlangymEnv, repeat_action
from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.utils import find_time_limit
from plangym.validation import describe

# How the physics vector is stored by the gymnasium env, so it is restored the same way.
_FLOAT64_ARRAY, _FLOAT32_ARRAY, _TUPLE = 0, 1, 2
_NONE = -1
# The fields after the physics vector, packed as classic_state_dtype lays them out.
_TAIL = struct.Struct("<Bqq?d")
_RNG_BYTES = 8 * N_WORDS


def classic_state_dtype(n_physics: int) -> np.dtype:
    """Record type of the states of a classic control env with ``n_physics`` variables."""
    return np.dtype(
        [
            ("physics", "<f8", (n_physics,)),
            ("physics_kind", "u1"),
            ("steps_beyond_terminated", "<i8"),
            ("elapsed_steps", "<i8"),
            ("has_last_u", "?"),
            ("last_u", "<f8"),
            ("rng", "<u8", (N_WORDS,)),
        ]
    )


def _physics_bytes(physics: Any) -> tuple[bytes, int]:
    if isinstance(physics, np.ndarray):
        if physics.dtype == np.float64:
            return physics.tobytes(), _FLOAT64_ARRAY
        return physics.astype(np.float64).tobytes(), _FLOAT32_ARRAY
    return np.array(physics, dtype=np.float64).tobytes(), _TUPLE


def _physics_value(values: np.ndarray, kind: int) -> Any:
    if kind == _FLOAT32_ARRAY:
        return values.astype(np.float32)
    if kind == _TUPLE:
        return tuple(np.float64(value) for value in values)
    return values


class ClassicControl(PlangymEnv):
    """CartPole, Pendulum, MountainCar, MountainCarContinuous and Acrobot, exactly restorable.

    A bare physics vector of the right length (the state format of plangym 0.1) is accepted
    by :meth:`set_state` too; it sets the physics and leaves the rest as it is.

    >>> env = ClassicControl("Pendulum-v1")
    >>> env.action_space
    Box(-2.0, 2.0, (1,), float32)
    >>> state, *_ = env.reset()
    >>> new_state, obs, reward, terminal, truncated, info = env.step(
    ...     np.array([0.5], dtype=np.float32), state=state, dt=3)
    >>> info["n_step"]
    3
    """

    def setup(self) -> None:
        """Build the gymnasium env and derive what its states look like."""
        super().setup()
        unwrapped = self._gym_env.unwrapped
        self._n_physics = len(unwrapped.state)
        self._state_dtype = classic_state_dtype(self._n_physics)
        self._time_limit = find_time_limit(self._gym_env)
        self._has_steps_beyond = hasattr(unwrapped, "steps_beyond_terminated")
        self._has_last_u = hasattr(unwrapped, "last_u")
        # The built-in dynamics draw from np_random only in reset, so between resets the
        # generator words need neither reading nor writing. Wrappers may draw in step: then
        # the generator is read and written on every get_state / set_state.
        self._cache_rng = not self._wrappers
        self._rng_bytes: bytes | None = None
        self._batch_in_bulk = self._plain_dynamics()

    def _plain_dynamics(self) -> bool:
        """Whether a batch may skip the per-step hooks: nothing would run in them.

        True when there are no user wrappers, no pictures to add, every ``process_*`` hook
        is an identity, and no stepping or state method is overridden by a subclass.
        """
        cls = type(self)
        own = {
            "apply_action": PlangymEnv,
            "apply_reset": ClassicControl,
            "process_apply_action": PlanEnv,
            "step_with_dt": PlanEnv,
            "_step_checked": PlanEnv,
            "get_state": ClassicControl,
            "set_state": ClassicControl,
            "reset": PlanEnv,
        }
        unchanged = all(getattr(cls, name) is getattr(base, name) for name, base in own.items())
        return unchanged and not self._wrappers and not self.return_image and self._identity_hooks

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._state_dtype

    def apply_reset(self, **kwargs: Any) -> tuple:
        """Reset the gymnasium env, which draws from its generator."""
        self._rng_bytes = None
        return super().apply_reset(**kwargs)

    def seed(self, seed: int | None = None) -> None:
        """Seed the env's generator and action space, and start a new episode."""
        self._rng_bytes = None
        super().seed(seed)

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a read-only 0-d record array."""
        unwrapped = self.gym_env.unwrapped
        physics, kind = _physics_bytes(unwrapped.state)
        steps_beyond = unwrapped.steps_beyond_terminated if self._has_steps_beyond else None
        elapsed = None if self._time_limit is None else self._time_limit._elapsed_steps
        last_u = unwrapped.last_u if self._has_last_u else None
        tail = _TAIL.pack(
            kind,
            _NONE if steps_beyond is None else steps_beyond,
            _NONE if elapsed is None else elapsed,
            last_u is not None,
            0.0 if last_u is None else last_u,
        )
        rng = self._rng_bytes
        if rng is None:
            rng = generator_words(unwrapped.np_random).tobytes()
            if self._cache_rng:
                self._rng_bytes = rng
        # A 0-d array over its own bytes object: read-only, and it keeps nothing else alive.
        return np.ndarray((), self._state_dtype, physics + tail + rng)

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (or a bare physics vector)."""
        self.check_state(state)
        unwrapped = self.gym_env.unwrapped
        if state.dtype.names is None:
            unwrapped.state = np.array(state, dtype=np.float64)
            return
        raw = state.tobytes()
        split = 8 * self._n_physics
        kind, steps_beyond, elapsed, has_last_u, last_u = _TAIL.unpack_from(raw, split)
        physics = np.frombuffer(raw, dtype=np.float64, count=self._n_physics).copy()
        unwrapped.state = _physics_value(physics, kind)
        if self._has_steps_beyond:
            unwrapped.steps_beyond_terminated = None if steps_beyond == _NONE else steps_beyond
        if self._time_limit is not None:
            self._time_limit._elapsed_steps = max(elapsed, 0)
        if self._has_last_u:
            unwrapped.last_u = last_u if has_last_u else None
        rng = raw[-_RNG_BYTES:]
        if rng != self._rng_bytes:
            restore_generator(unwrapped.np_random, np.frombuffer(rng, dtype=np.uint64))
            self._rng_bytes = rng if self._cache_rng else None

    def run_batch(
        self, actions: Any, states: list | None, dts: list[int], want_state: bool
    ) -> tuple[list, ...]:
        """Step a checked batch; with plain dynamics, without per-step method dispatch.

        The bulk path performs exactly the operations of the generic one (restore, step the
        gymnasium env ``dt * frameskip`` times, record the state, autoreset) and returns
        bit-identical results; it only decodes the input states all at once.
        """
        if (
            not self._batch_in_bulk
            or states is None
            or not all(s.dtype.names is not None for s in states)
        ):
            return super().run_batch(actions, states, dts, want_state)
        records = np.frombuffer(b"".join([s.tobytes() for s in states]), self._state_dtype)
        physics = records["physics"].copy()
        kinds = records["physics_kind"].tolist()
        steps_beyond = records["steps_beyond_terminated"].tolist()
        elapsed = records["elapsed_steps"].tolist()
        last_us = records["last_u"].tolist()
        has_last_us = records["has_last_u"].tolist()
        rngs = np.ascontiguousarray(records["rng"]).view(f"V{_RNG_BYTES}").ravel()
        unwrapped = self._gym_env.unwrapped
        step = self._gym_env.step
        time_limit = self._time_limit
        repeats = self.frameskip
        columns: list[list] = [[], [], [], [], [], []]
        new_states, observs, rewards, terminals, truncateds, infos = columns
        for i, action in enumerate(actions):
            kind = kinds[i]
            unwrapped.state = (
                physics[i] if kind == _FLOAT64_ARRAY else _physics_value(physics[i], kind)
            )
            if self._has_steps_beyond:
                unwrapped.steps_beyond_terminated = (
                    None if steps_beyond[i] == _NONE else steps_beyond[i]
                )
            if time_limit is not None:
                time_limit._elapsed_steps = max(elapsed[i], 0)
            if self._has_last_u:
                unwrapped.last_u = last_us[i] if has_last_us[i] else None
            rng = rngs[i].tobytes()
            if rng != self._rng_bytes:
                restore_generator(unwrapped.np_random, np.frombuffer(rng, dtype=np.uint64))
                self._rng_bytes = rng if self._cache_rng else None
            obs, reward, terminal, truncated, info = repeat_action(step, action, dts[i] * repeats)
            info["dt"] = dts[i]
            if want_state:
                new_states.append(self.get_state())
            observs.append(obs)
            rewards.append(reward)
            terminals.append(terminal)
            truncateds.append(truncated)
            infos.append(info)
            if self.autoreset and (terminal or truncated):
                self.reset(return_state=False)
        return tuple(columns) if want_state else tuple(columns[1:])

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this env (or its bare physics vector)."""
        expected = self.state_dtype
        if isinstance(state, np.ndarray):
            if state.shape == () and (state.dtype is expected or state.dtype == expected):
                return
            physics_shape = expected["physics"].shape
            if (
                state.dtype.names is None
                and state.dtype.kind == "f"
                and (state.shape == physics_shape)
            ):
                return
        raise TypeError(
            f"{name}: expected a {self.name} state (a 0-d record array from get_state(), or "
            f"a float array of shape {expected['physics'].shape}), received {describe(state)}"
        )
