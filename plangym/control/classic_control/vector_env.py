"""gymnasium's vector API over the classic control kernels: every sub-env in one NumPy pass.

:class:`ClassicVectorEnv` is what ``plangym.make_vec(name, n, "vector_entry_point")`` builds
for CartPole-v0/v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0 and Pendulum-v1.
The sub-envs are rows of arrays, the columns of their state records
(:mod:`plangym.control.classic_control.state`): a step is one pass of the env's kernel
(:mod:`plangym.control.classic_control.kernels`) over every row, and a reset draws from each
sub-env's own PCG64 generator in NumPy passes (:mod:`.vector_draws`). Each element is
bit for bit what gymnasium's ``SyncVectorEnv`` of the same env gives (and plangym's
``"sync"`` mode): observations, rewards, flags, infos, autoresets, time limits and states.
``get_states``, ``set_states`` and ``step_batch`` move whole record arrays.

>>> import plangym
>>> envs = plangym.make_vec("CartPole-v1", 3, vectorization_mode="vector_entry_point")
>>> obs, infos = envs.reset(seed=0)
>>> states = envs.get_states()  # one record array
>>> first = envs.step(np.array([0, 1, 1]))
>>> envs.set_states(states)
>>> again = envs.step(np.array([0, 1, 1]))
>>> bool((first[0] == again[0]).all()), states.shape
(True, (3,))
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from plangym.control.classic_control.kernels import FLOAT32_ARRAY, KERNEL_ENV_IDS, kernel_for
from plangym.control.classic_control.vector_draws import RESET_RULES, Generators, float32_trig_obs
from plangym.control.classic_control.vector_inputs import check_actions, check_records
from plangym.validation import check_indices, check_reset_mask, check_seeds, check_states_given
from plangym.vector.spaces import autoreset_mode_of
from plangym.vectorization.errors import ClosedEnvironmentError

# The tasks that have a kernel: the ones this vector env steps.
KERNEL_TASKS = KERNEL_ENV_IDS


def one_thread_at_a_time(method: Callable) -> Callable:
    """Run ``method`` holding the env's lock: threads sharing the env get whole results."""

    @functools.wraps(method)
    def locked(self: ClassicVectorEnv, *args: Any, **kwargs: Any) -> Any:
        with self._lock:  # a C-level with: no Ctrl-C between taking it and the body
            return method(self, *args, **kwargs)

    return locked


class KernelUnavailableError(ValueError):
    """The env's settings leave it without a kernel: only stepping it env by env is exact."""


class ClassicVectorEnv(VectorEnv):
    """``num_envs`` classic control envs stepped together by the env's kernel, in the caller.

    Args:
        plan_env: A plangym ``ClassicControl`` env built with ``autoreset=False``: its
            settings (time limit, frameskip, constants) are every sub-env's, and its
            ``step_batch`` is this env's.
        num_envs: Number of sub-envs.
        autoreset_mode: gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its value).
        copy: gymnasium's argument, kept for its API: the observations returned are always
            the caller's (each step makes new ones; this env never writes them again).

    Raises:
        KernelUnavailableError: The env has no kernel with these settings (a wrapper, human
            rendering, pictures as observations, Acrobot's torque noise...).
    """

    def __init__(
        self,
        plan_env: Any,
        num_envs: int,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        copy: bool = True,
    ):
        kernel = kernel_for(plan_env.gym_env.unwrapped)
        if kernel is None or plan_env.batch_path != "kernel" or plan_env.obs_type != "coords":
            raise KernelUnavailableError(
                f"vectorization_mode: {plan_env.name} with these settings has no kernel "
                "(wrappers, human rendering, pictures or a setting that draws in step); "
                'use vectorization_mode="sync"'
            )
        self._plan, self._kernel, self.num_envs, self.copy = plan_env, kernel, num_envs, copy
        self._rule = RESET_RULES[type(kernel).__name__]
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        codec = plan_env._state_codec
        self._dtype, self._timed = codec.dtype, codec.time_limit is not None
        self._max_steps = codec.time_limit._max_episode_steps if self._timed else None
        self._frameskip = int(plan_env.frameskip)
        self.single_action_space = plan_env.action_space
        self.single_observation_space = plan_env.observation_space
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.metadata = {**plan_env.gym_env.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = plan_env.render_mode
        n = num_envs
        # The state of every sub-env, a column per field of the records.
        self._physics = np.zeros((codec.n_physics, n)).T  # a contiguous column per variable
        self._kinds = np.zeros(n, dtype=np.uint8)
        self._beyond = np.full(n, -1, dtype=np.int64)
        self._elapsed = np.full(n, -1, dtype=np.int64)
        self._last_u, self._has_last_u = np.zeros(n), np.zeros(n, dtype=np.bool_)
        self._generators = Generators([None] * n, self._rule.n_draws)
        # Only where a row may hold float32 physics do the kernels need the kinds.
        self._pass_kinds = FLOAT32_ARRAY in kernel.exact_kinds
        self._ended = np.zeros(n, dtype=np.bool_)  # under NEXT_STEP, the next step resets
        self._reset_once = False
        self._lock = threading.RLock()  # one call at a time: the arrays are stepped in place

    # gymnasium's API ----------------------------------------------------------------------------
    @one_thread_at_a_time
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset the sub-envs (those in ``options["reset_mask"]``): ``(obs, infos)``.

        ``seed``: None, an int ``s`` (sub-env ``i`` gets ``s + i``) or one per sub-env.
        Other ``options`` are the env's reset options (e.g. ``low``/``high``), as in gymnasium.
        """
        self._check_open()
        seeds = check_seeds(seed, self.num_envs)
        mask, options = check_reset_mask(options, self.num_envs)
        if mask is not None and not self._reset_once and not mask.all():
            raise ValueError(
                "options['reset_mask']: the first reset must reset every sub-env (the others "
                f"have no state yet), got reset_mask={mask}"
            )
        bounds = self._rule.bounds(options)  # bad options raise before anything changes
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        seeded = [(int(i), seed) for i in rows if (seed := seeds[i]) is not None]
        if seeded:
            self._generators.seed(*zip(*seeded, strict=True))
        self._reset_rows(rows, bounds)
        self._ended[rows], self._reset_once = False, True
        # The rows left alone are observed again from their states: the caller may have
        # changed the arrays returned before, and set_states may have replaced the states.
        return self._observations(), {}

    @one_thread_at_a_time
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env: ``(obs, rewards, terminations, truncations, infos)``."""
        self._check_open()
        actions = self._check_actions(actions)
        if not self._reset_once:
            raise RuntimeError("step: call reset() before the first step")
        mode, ended = self.autoreset_mode, self._ended
        restart = ended.nonzero()[0] if mode is AutoresetMode.NEXT_STEP else None
        if mode is AutoresetMode.DISABLED and ended.any():
            raise RuntimeError(
                f"step: sub-envs {np.flatnonzero(ended).tolist()} ended their episodes and were "
                "not reset; with autoreset_mode=DISABLED call reset(options={'reset_mask': mask})"
            )
        rewards, terminated, truncated = self._advance(actions)
        if restart is not None and restart.size:  # these rows reset instead of stepping
            self._reset_rows(restart, self._rule.bounds(None))
            rewards[restart], terminated[restart], truncated[restart] = 0.0, False, False
        obs = self._kernel.observe(self._physics)
        if restart is not None and restart.size and self._rule.float32_obs:
            obs[restart] = float32_trig_obs(self._physics[restart])
        infos: dict[str, Any] = {}
        np.logical_or(terminated, truncated, out=ended)
        if mode is AutoresetMode.SAME_STEP and ended.any():
            done = np.flatnonzero(ended)
            final_obs = np.full(self.num_envs, None, dtype=object)
            final_obs[done] = list(obs[done])
            infos = {"final_obs": final_obs, "_final_obs": ended.copy()}
            infos.update(final_info={}, _final_info=ended.copy())
            self._reset_rows(done, self._rule.bounds(None))
            obs[done] = self._observe_rows(done)
            ended[:] = False
        return obs, rewards, terminated, truncated, infos  # a new array, never written again

    @one_thread_at_a_time
    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's picture (``render_mode="rgb_array"``), drawn by the plangym env."""
        if self.render_mode is None:
            return None
        plan_env, frames, records = self._plan, [], self.get_states()
        for i in range(self.num_envs):
            plan_env.set_state(records[i : i + 1].reshape(()))
            frames.append(plan_env.render())
        return tuple(frames)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the plangym env that holds the settings (none if the constructor refused it)."""
        plan_env = vars(self).get("_plan")
        if plan_env is not None:
            plan_env.close()

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Every sub-env's seed, as gymnasium's vector envs return them."""
        return tuple(self._generators.seeds)

    @property  # type: ignore[misc]  # read-only, as in gymnasium's vector envs
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """A copy of every sub-env's generator, in the state its next reset draws from."""
        from plangym.rng import restore_generator

        generators = []
        for words in self._generators.words:
            generator = np.random.default_rng()
            restore_generator(generator, words)
            generators.append(generator)
        return tuple(generators)

    # Planning -----------------------------------------------------------------------------------
    @one_thread_at_a_time
    def get_states(self) -> np.ndarray:
        """Return every sub-env's exact state: one record array (``states[i]``: sub-env i)."""
        self._check_open()
        records = np.empty(self.num_envs, self._dtype)
        records["physics"], records["physics_kind"] = self._physics, self._kinds
        records["steps_beyond_terminated"], records["elapsed_steps"] = self._beyond, self._elapsed
        records["has_last_u"], records["last_u"] = self._has_last_u, self._last_u
        records["rng"] = self._generators.words
        records.flags.writeable = False  # as every classic-control state (states.md)
        return records

    @one_thread_at_a_time
    def set_states(self, states: Any, indices: Sequence[int] | None = None) -> None:
        """Restore ``states[k]`` in sub-env ``indices[k]`` (default: every sub-env in turn).

        ``states``: a record array (from :meth:`get_states`) or a list of 0-d records.
        """
        self._check_open()
        records = self._check_records(states)
        where: Any = slice(None)  # every sub-env: no index list to check element by element
        if indices is not None:
            where = np.asarray(check_indices(indices, len(records), self.num_envs), np.intp)
        elif len(records) != self.num_envs:
            raise ValueError(
                f"states: expected {self.num_envs} states (one per sub-env), got {len(records)}"
            )
        self._physics[where], self._kinds[where] = records["physics"], records["physics_kind"]
        self._beyond[where] = records["steps_beyond_terminated"]
        elapsed = records["elapsed_steps"]
        self._elapsed[where] = np.maximum(elapsed, 0) if self._timed else elapsed
        self._has_last_u[where], self._last_u[where] = records["has_last_u"], records["last_u"]
        self._generators.set_words(where, records["rng"])
        self._ended[where] = False
        self._reset_once = True

    @one_thread_at_a_time
    def step_batch(
        self,
        actions: Sequence,
        states: Sequence,
        dt: int | Sequence[int] = 1,
        return_state: bool | None = None,
        arrays: bool = False,
    ) -> tuple:
        """Step each ``(action, state)`` pair; the sub-envs' own episodes are left alone.

        As the other modes: ``(new_states, observs, rewards, terminals, truncateds, infos)``
        as lists (no new states with ``return_state=False``); with ``arrays=True`` the new
        states as one record array and the rest as arrays (``plangym``'s
        ``step_batch(..., arrays=True)``). A batch of at least the kernel's ``min_batch``
        states is one kernel pass.
        """
        self._check_open()
        check_states_given(states)
        return self._plan.step_batch(actions, states, dt, return_state, arrays=arrays)

    # Internals ----------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            # The other modes' error (a RuntimeError too), in gymnasium's words.
            raise ClosedEnvironmentError(
                f"Trying to operate on `{type(self).__name__}`, after a call to `close()`."
            )

    def _check_actions(self, actions: Any) -> np.ndarray:
        return check_actions(self.single_action_space, actions, self.num_envs)

    def _check_records(self, states: Any) -> np.ndarray:
        return check_records(states, self._dtype, self._kernel, self._plan.name)

    def _observations(self) -> np.ndarray:
        """Return every sub-env's observation of its state, as its last reset or step gave it."""
        obs = self._kernel.observe(self._physics)
        if self._rule.float32_obs:  # the rows whose state a reset drew are observed as it does
            reset = np.flatnonzero(self._kinds == self._rule.kind)
            obs[reset] = float32_trig_obs(self._physics[reset])
        return obs

    def _observe_rows(self, rows: np.ndarray) -> np.ndarray:
        """Return the observations of the sub-envs ``rows`` just reset."""
        physics = self._physics[rows]
        if self._rule.float32_obs:
            return float32_trig_obs(physics)
        return self._kernel.observe(physics)

    def _reset_rows(self, rows: np.ndarray, bounds: tuple[Any, Any]) -> None:
        """Reset the state of the sub-envs ``rows`` as the env's reset does."""
        rule = self._rule
        physics = rule.physics(self._generators.uniform(rows, *bounds), self._physics.shape[1])
        self._physics[rows], self._kinds[rows] = physics, rule.kind
        if self._kernel.has_steps_beyond:
            self._beyond[rows] = -1
        if self._timed:
            self._elapsed[rows] = 0
        if self._kernel.has_last_u:
            self._has_last_u[rows], self._last_u[rows] = False, 0.0

    def _advance(self, actions: np.ndarray) -> tuple:
        """Step every row ``frameskip`` times (fewer if its episode ends), as the plangym env."""
        kernel, max_steps = self._kernel, self._max_steps
        beyond = self._beyond if kernel.has_steps_beyond else None
        last_u = self._last_u if kernel.has_last_u else None
        kinds = self._kinds if self._pass_kinds else None
        # In place: no new array of every row's physics at each step.
        _, rewards, terminated = kernel.step(
            self._physics, actions, beyond, last_u, kinds=kinds, out=self._physics
        )
        self._kinds[:] = kernel.physics_kind
        if last_u is not None:
            self._has_last_u[:] = True
        if max_steps is None:
            truncated = np.zeros(self.num_envs, dtype=np.bool_)
        else:
            self._elapsed += 1
            truncated = self._elapsed >= max_steps
        if self._frameskip > 1:
            rewards = self._repeat(actions, rewards, terminated, truncated)
        return rewards, terminated, truncated

    def _repeat(self, actions, rewards, terminated, truncated) -> np.ndarray:
        """Step the rest of each frameskip: the rows whose episodes go on, again."""
        kernel, max_steps = self._kernel, self._max_steps
        rewards = 0.0 + rewards  # the plangym env sums from 0.0
        for _ in range(self._frameskip - 1):
            rows = np.flatnonzero(~(terminated | truncated))
            if not rows.size:
                break
            beyond = self._beyond[rows] if kernel.has_steps_beyond else None
            last_u = self._last_u[rows] if kernel.has_last_u else None
            physics, step_rewards, ended = kernel.step(
                self._physics[rows], actions[rows], beyond, last_u, kinds=self._kinds[rows]
            )
            self._physics[rows], rewards[rows], terminated[rows] = (
                physics,
                rewards[rows] + step_rewards,
                ended,
            )
            if beyond is not None:
                self._beyond[rows] = beyond
            if last_u is not None:
                self._last_u[rows] = last_u
            if max_steps is not None:
                self._elapsed[rows] += 1
                truncated[rows] = self._elapsed[rows] >= max_steps
        return rewards
