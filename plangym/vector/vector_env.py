"""gymnasium's vector API over plangym's one worker layer, plus what planners need.

Each call becomes one request per sub-env; bad input is refused before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from gymnasium import Space, logger
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from plangym.validation import (
    check_reset_mask,
    check_seed,
    check_seeds,
    check_timeout,
    check_values_per_env,
)
from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.errors import log_worker_errors
from plangym.vector.gym_plan_env import GymPlanEnv
from plangym.vector.planning import VectorPlanning
from plangym.vector.spaces import autoreset_mode_of, observation_spaces, space_mismatch
from plangym.vectorization.backend import Backend
from plangym.vectorization.errors import SubEnvCrashedError
from plangym.vectorization.lifecycle import CallState, one_thread_at_a_time
from plangym.vectorization.messages import Call, CheckSpaces, Reset, Restarted, SetAttr, Step
from plangym.vectorization.process import CLOSE_TIMEOUT_S
from plangym.vectorization.scheduler import Batch, OnCrash, Scheduler

__all__ = ["PlanVectorEnv", "autoreset_mode_of", "observation_spaces"]


class PlanVectorEnv(VectorPlanning, VectorEnv):
    """A gymnasium vector env whose sub-envs run on a backend of the one worker layer.

    Subclasses build the backend and the batch outputs, then call :meth:`_start`; see
    ``SyncVectorEnv``, ``AsyncVectorEnv`` and ``RayVectorEnv``. Every one takes these
    arguments of gymnasium's vector envs (kept by :meth:`_take_arguments`), plus its own:

    * ``env_fns``: one constructor per sub-env;
    * ``copy``: return copies of the observations (else the batch buffer itself);
    * ``observation_mode``: "same", "different", or ``(batched_space, single_space)``;
    * ``autoreset_mode``: an :class:`~gymnasium.vector.AutoresetMode` or its value.
    """

    _scheduler: Scheduler | None = None
    _kept_probe: gymnasium.Env | None = None  # the env that checks states, if built for it
    copy: bool = True
    # Log worker errors through gymnasium.logger before raising them, as its AsyncVectorEnv.
    LOG_WORKER_ERRORS = False
    # Whether actions are checked before a step: set for plangym's own sub-envs (see _start).
    checks_actions = False
    max_concurrency: int | None = None  # how many sub-envs may reset or step at once

    def _take_arguments(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        copy: bool,
        observation_mode: str | tuple,
        autoreset_mode: str | AutoresetMode,
    ) -> None:
        self.env_fns, self.copy, self.observation_mode = env_fns, copy, observation_mode
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        self.call_state = CallState(type(self).__name__)
        if len(env_fns) == 0:
            raise ValueError("env_fns: expected at least one env constructor, got none")

    def _start_from_probe(self, build: Callable[[Space], tuple[Backend, Any]]) -> None:
        """Read spaces off a throwaway env (``env_fn.probe()`` if any); start on ``build``."""
        probe = getattr(self.env_fns[0], "probe", self.env_fns[0])()
        try:
            single, batched = observation_spaces(self.observation_mode, probe, self.env_fns)
            backend, outputs = build(single)
            self._start(backend, outputs, probe, single, batched)
            self._kept_probe = probe if self._checker is not None else None
        finally:
            if self._kept_probe is not probe:  # else it checks states
                probe.close()

    def _start(
        self, backend: Backend, outputs: BatchOutputs, probe: gymnasium.Env, single, batched
    ) -> None:
        """Take the workers, and the spaces and metadata read from ``probe``."""
        try:
            self._backend, self.outputs = backend, outputs
            self._scheduler = Scheduler(
                backend, unit="sub-env", recovery=Restarted.after, crash_error=SubEnvCrashedError
            )
            self.num_envs = backend.n_workers
            self.metadata = {**probe.metadata, "autoreset_mode": self.autoreset_mode}
            self.render_mode = probe.render_mode
            self.single_action_space = probe.action_space
            # plangym envs refuse actions outside their space: a batch is refused whole,
            # before any sub-env steps. Other envs get their actions as gymnasium hands them.
            face = probe.unwrapped
            self.checks_actions = isinstance(face, GymPlanEnv)
            self._take_wrappers(probe)
            # It checks states here, unless it is one emulator per process or shows a window.
            if isinstance(face, GymPlanEnv) and not face.plan_env.SINGLETON:
                self._checker = face if face.render_mode != "human" else None
            self.action_space = batch_space(self.single_action_space, self.num_envs)
            self.single_observation_space, self.observation_space = single, batched
            self._ended = np.zeros(self.num_envs, dtype=np.bool_)  # episodes not reset yet
            check = CheckSpaces(self.observation_mode, single, self.single_action_space)
            problem = space_mismatch(self, self._run_now(self._to_all(check), "check_spaces"))
            if problem:
                raise RuntimeError(problem)
        except BaseException:
            backend.close(terminate=True)
            raise

    @property
    def _started(self) -> Scheduler:
        assert self._scheduler is not None, "the vector env was not started"
        return self._scheduler

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each sub-env's worker (None for sub-envs in this process)."""
        self.call_state.check_running()
        return self._backend.worker_pids

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Every sub-env's ``np_random_seed``, as gymnasium's vector envs return them."""
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]  # read-only, as in gymnasium's vector envs
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Every sub-env's ``np_random`` (copies, from worker processes)."""
        return self.get_attr("np_random")

    def _to_all(self, request: Any) -> dict[int, Any]:
        return dict.fromkeys(range(self.num_envs), request)

    # Reset ------------------------------------------------------------------------------------
    @one_thread_at_a_time
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (those in ``options["reset_mask"]``): ``(obs, infos)``.

        ``seed``: None (unseeded), an int ``s`` (sub-env ``i`` gets ``s + i``) or one seed
        per sub-env.
        """
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    @one_thread_at_a_time
    def reset_async(self, seed: Any = None, options: dict | None = None) -> None:
        """Send the resets; collect them with :meth:`reset_wait`."""
        self.call_state.check_running()
        # Each seed as the plangym env here takes it (dm_control's: < 2**32).
        check_one = self._checker.plan_env.check_seed if self._checker is not None else check_seed
        seeds = check_seeds(seed, self.num_envs, check_one)
        self.call_state.check_idle("reset_async")
        mask, options = check_reset_mask(options, self.num_envs)
        requests = {
            i: Reset(seeds[i], options) for i in range(self.num_envs) if mask is None or mask[i]
        }
        self.call_state.start("reset", self._send(requests, "reset", OnCrash.RERUN))

    @one_thread_at_a_time
    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """Wait for the resets sent by :meth:`reset_async`: ``(obs, infos)``."""
        timeout = check_timeout(timeout)  # a bad one leaves the resets pending
        batch = self._gather(self.call_state.take("reset"), timeout)
        infos: dict[str, Any] = {}
        for task in sorted(batch.tasks, key=lambda task: task.worker):
            if task.error is None:
                worker = task.worker
                infos = self._add_info(infos, self.outputs.absorb(worker, task.result), worker)
                self._ended[worker] = False
        self._raise_errors(batch)
        return self._observations(), infos

    # Step -------------------------------------------------------------------------------------
    @one_thread_at_a_time
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env: ``(obs, rewards, terminations, truncations, infos)``."""
        self.step_async(actions)
        return self.step_wait()

    @one_thread_at_a_time
    def step_async(self, actions: Any) -> None:
        """Send every sub-env its action; collect the results with :meth:`step_wait`."""
        self.call_state.check_idle("step_async")
        items = self._checked_actions(actions)
        if self.autoreset_mode is AutoresetMode.DISABLED and self._ended.any():
            ended = np.flatnonzero(self._ended).tolist()
            raise RuntimeError(
                f"step_async: sub-envs {ended} ended their episodes and were not reset; with "
                "autoreset_mode=DISABLED call reset(options={'reset_mask': mask}) first"
            )
        if isinstance(actions, np.ndarray) and self._backend.stage_actions(actions):
            # Step(): its action waits in the shared action buffer.
            requests = self._to_all(Step())
        else:
            requests = {i: Step(item) for i, item in enumerate(items)}
        self.call_state.start("step", self._send(requests, "step", OnCrash.REPORT))

    @one_thread_at_a_time
    def step_wait(
        self, timeout: float | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Wait for the steps sent by :meth:`step_async`."""
        timeout = check_timeout(timeout)  # a bad one leaves the steps pending
        batch = self._gather(self.call_state.take("step"), timeout)
        outputs = self.outputs
        infos: dict[str, Any] = {}
        failed = []
        for task in batch.tasks:
            if task.error is not None:
                failed.append(task.worker)
            else:
                worker, info = task.worker, task.result
                if type(info) is not dict:  # answered, not written in place
                    info = outputs.absorb(worker, info)
                if task.restarted:  # its episode was cut short: a truncation
                    outputs.rewards[worker] = 0.0
                    outputs.terminations[worker] = np.False_
                    outputs.truncations[worker] = np.True_
                if info:
                    infos = self._add_info(infos, info, worker)
        terminations, truncations = outputs.terminations.copy(), outputs.truncations.copy()
        kept = self._ended[failed] if failed else None  # a step that raised ended nothing
        np.logical_or(terminations, truncations, out=self._ended)
        if failed:  # (its rows still hold the flags of the step before)
            self._ended[failed] = kept
        self._raise_errors(batch)
        return self._observations(), outputs.rewards.copy(), terminations, truncations, infos

    def _observations(self) -> Any:
        observations = self.outputs.observations()
        return deepcopy(observations) if self.copy else observations

    # Calls ------------------------------------------------------------------------------------
    @one_thread_at_a_time
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` of every sub-env (or read attribute ``name``)."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    @one_thread_at_a_time
    def call_async(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        """Send the calls; collect them with :meth:`call_wait`."""
        self.call_state.check_idle("call_async")
        requests = self._to_all(Call(name, args, kwargs))
        self.call_state.start("call", self._started.send(requests, "call", OnCrash.RAISE))

    @one_thread_at_a_time
    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """Wait for the calls sent by :meth:`call_async`; one result per sub-env."""
        timeout = check_timeout(timeout)  # a bad one leaves the calls pending
        batch = self._gather(self.call_state.take("call"), timeout)
        self._raise_errors(batch)
        return tuple(task.result for task in batch.tasks)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env (a method is called, as in gymnasium)."""
        return self.call(name)

    @one_thread_at_a_time
    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` in every sub-env: one value each (list/tuple) or one for all."""
        self.call_state.check_running()
        values = check_values_per_env(values, self.num_envs)
        self.call_state.check_idle("set_attr")
        requests = {i: SetAttr(name, value) for i, value in enumerate(values)}
        limit = self.max_concurrency
        self._raise_errors(self._started.set_attributes(requests, "set_attr", limit))

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's ``render()``."""
        return self.call("render")

    # Running calls --------------------------------------------------------------------------
    def _send(self, requests: dict[int, Any], label: str, on_crash: OnCrash) -> Batch:
        return self._started.send(requests, label, on_crash, limit=self.max_concurrency)

    def _run_now(self, requests: dict[int, Any], label: str) -> list:
        """Send ``requests``, wait for every answer, raise the first error; answers in order."""
        batch = self._run_batch(requests, label)
        self._raise_errors(batch)
        return [task.result for task in batch.tasks]

    def _run_batch(self, requests: dict[int, Any], label: str) -> Batch:
        """Send ``requests`` and wait for every answer; the errors stay in the batch."""
        return self._gather(self._started.send(requests, label, OnCrash.RAISE), None)

    def _raise_errors(self, batch: Batch) -> None:
        if self.LOG_WORKER_ERRORS:
            log_worker_errors(batch)
        self._started.raise_first(batch)

    def _gather(self, batch: Batch, timeout: float | None) -> Batch:
        return self._started.gather(batch, timeout, raise_errors=False)

    # Closing ----------------------------------------------------------------------------------
    def close_extras(
        self, timeout: float | None = None, terminate: bool = False, **kwargs: Any
    ) -> None:
        """Stop the workers; a pending call is collected first (within ``timeout``).

        A call running in another thread gets ``timeout`` (else 5 s), then is stopped.
        """
        timeout = check_timeout(timeout)
        if self._scheduler is None:
            return
        pending, batch = self.call_state.pending, self.call_state.close()
        if pending is not None:  # as gymnasium: warned even when terminating
            logger.warn(
                f"Calling `close` while waiting for a pending call to `{pending}` to complete."
            )

        def stop() -> None:
            try:
                self._started.close_after(batch, timeout, terminate)
            finally:
                self.outputs = None  # type: ignore[assignment]  # rows go with their last view
            if self._kept_probe is not None:
                self._kept_probe.close()

        grace = 0.0 if terminate else CLOSE_TIMEOUT_S if timeout is None else timeout
        self.call_state.release_when_free(stop, self._backend.interrupt, grace)

    def __getstate__(self) -> dict:
        # A copy would share the workers, and its close() (or collection) would stop them.
        backend = getattr(self, "_backend", None)
        if backend is not None and any(pid is not None for pid in backend.worker_pids):
            raise TypeError(
                f"{type(self).__name__} cannot be pickled or deep-copied: its sub-envs run in "
                "workers it owns. Build another with plangym.make_vec(envs.spec), or pass "
                "states (get_states) to where they are needed"
            )
        return self.__dict__

    def __del__(self) -> None:
        if not getattr(self, "closed", True) and self._scheduler is not None:
            self.close(terminate=True)
