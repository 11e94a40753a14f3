"""gymnasium's vector API over plangym's sub-env workers, plus what planners need.

:class:`PlanVectorEnv` is a ``gymnasium.vector.VectorEnv``: ``reset``, ``step``, their
``*_async``/``*_wait`` halves, ``call``/``get_attr``/``set_attr``, ``render`` and
``close`` behave as in gymnasium's ``AsyncVectorEnv`` and ``SyncVectorEnv`` (the same
batched observations, arrays and ``_key``-masked infos, the same autoreset modes). Where
the sub-envs run is a :class:`~plangym.vector.workers.SubEnvWorkers` backend. On top:

* bad actions, seeds and masks are refused before any sub-env is sent anything;
* an error raised by a sub-env keeps its type, and the vector env stays usable;
* a worker that dies is replaced: its sub-env is rebuilt and reset, and its step reports a
  truncation with ``info["worker_restarted"]`` (masked by ``info["_worker_restarted"]``);
* a ``*_wait`` timeout replaces the sub-envs still busy, so no late answer is left behind;
* :meth:`PlanVectorEnv.get_states`, :meth:`PlanVectorEnv.set_states` and
  :meth:`PlanVectorEnv.step_batch` clone, restore and plan from the sub-envs' exact states
  (sub-envs made by :func:`plangym.make_vec`).
"""

from __future__ import annotations

import contextlib
import enum
import time
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from gymnasium import Space, logger
from gymnasium.spaces import Discrete, MultiBinary, MultiDiscrete
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_differing_spaces, batch_space, iterate

from plangym.vector.batch_outputs import ARRAY_SPACES
from plangym.vector.commands import (
    CallCommand,
    CheckSpaces,
    GetState,
    Reset,
    SetAttr,
    SetState,
    Step,
    StepStates,
)
from plangym.vector.errors import (
    AlreadyPendingCallError,
    ClosedEnvironmentError,
    NoAsyncCallError,
    SubEnvCrashedError,
    VectorTimeoutError,
)
from plangym.vector.workers import SubEnvWorkers
from plangym.vectorization.errors import WorkerCrashedError
from plangym.vectorization.packing import pack_states, unpack_columns
from plangym.vectorization.scheduler import chunk_bounds

MAX_RERUNS = 2  # a command that kills its worker this many more times is given up


class Pending(enum.Enum):
    """What asynchronous call waits to be collected (gymnasium's ``AsyncState`` values)."""

    DEFAULT = "default"
    RESET = "reset"
    STEP = "step"
    CALL = "call"


def autoreset_mode_of(value: str | AutoresetMode) -> AutoresetMode:
    """``value`` as an :class:`AutoresetMode` (its name or value), or a clear error."""
    if isinstance(value, AutoresetMode):
        return value
    for mode in AutoresetMode:
        if value in (mode.value, mode.name):
            return mode
    choices = ", ".join(repr(mode.value) for mode in AutoresetMode)
    raise ValueError(
        f"autoreset_mode: expected an AutoresetMode or one of {choices}, got {value!r}"
    )


def observation_spaces(
    observation_mode: str | tuple, first: gymnasium.Env, env_fns: Sequence[Callable], n: int
) -> tuple[Space, Space]:
    """``(single, batched)`` observation spaces for ``observation_mode``, as gymnasium."""
    if isinstance(observation_mode, tuple) and len(observation_mode) == 2:
        batched, single = observation_mode
        if not isinstance(batched, Space) or not isinstance(single, Space):
            raise TypeError(
                "observation_mode: expected both elements to be Spaces, got "
                f"{type(batched)} and {type(single)}"
            )
        return single, batched
    if observation_mode == "same":
        return first.observation_space, batch_space(first.observation_space, n)
    if observation_mode == "different":
        spaces = [first.observation_space] + [fn().observation_space for fn in env_fns[1:]]
        return spaces[0], batch_differing_spaces(spaces)
    raise ValueError(
        "observation_mode: expected 'same', 'different' or a (batched, single) tuple of "
        f"spaces, got {observation_mode!r}"
    )


class Gathered:
    """The answers of one round of commands, by sub-env, and the errors raised."""

    def __init__(self):
        self.answers: dict[int, Any] = {}
        self.errors: dict[int, BaseException] = {}


class PlanVectorEnv(VectorEnv):
    """A gymnasium vector env whose sub-envs run on a :class:`SubEnvWorkers` backend.

    Subclasses build the backend and call :meth:`_start`; see ``SyncVectorEnv``,
    ``AsyncVectorEnv`` and ``RayVectorEnv``.
    """

    _workers: SubEnvWorkers | None = None
    copy: bool = True

    def _take_arguments(
        self,
        env_fns: Sequence[Callable[[], gymnasium.Env]],
        copy: bool,
        observation_mode: str | tuple,
        autoreset_mode: str | AutoresetMode,
    ) -> None:
        """Keep the arguments every vector env takes, checked."""
        self.env_fns, self.copy, self.observation_mode = env_fns, copy, observation_mode
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        if len(env_fns) == 0:
            raise ValueError("env_fns: expected at least one env constructor, got none")

    def _start_from_probe(
        self,
        observation_mode: str | tuple,
        build_workers: Callable[[Space], SubEnvWorkers],
    ) -> None:
        """Read spaces and metadata off a throwaway env, as gymnasium does, then start.

        ``build_workers(single_observation_space)`` starts the workers; they are stopped
        again if the vector env cannot start on them (spaces that differ, say).
        """
        env_fns = self.env_fns
        probe = env_fns[0]()
        try:
            single, batched = observation_spaces(observation_mode, probe, env_fns, len(env_fns))
            workers = build_workers(single)
            try:
                self._start(workers, probe, single, batched, observation_mode)
            except BaseException:
                workers.close(terminate=True)
                raise
        finally:
            probe.close()

    def _start(
        self,
        workers: SubEnvWorkers,
        probe: gymnasium.Env,
        single_observation_space: Space,
        observation_space: Space,
        observation_mode: Any,
    ) -> None:
        """Take ``workers`` and the spaces and metadata read from ``probe``."""
        self._workers = workers
        self.num_envs = workers.num_envs
        self.metadata = dict(probe.metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = probe.render_mode
        self.single_action_space = probe.action_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = single_observation_space
        self.observation_space = observation_space
        self._pending = Pending.DEFAULT
        self._sent: dict[int, Any] = {}
        self._ended = np.zeros(self.num_envs, dtype=np.bool_)  # episodes not reset yet
        self._check_spaces(observation_mode)

    def _check_spaces(self, observation_mode: Any) -> None:
        command = CheckSpaces(
            observation_mode, self.single_observation_space, self.single_action_space
        )
        answers = self._run_now(dict.fromkeys(range(self.num_envs), command), "check_spaces")
        same_obs, same_actions = zip(*(answers[i] for i in range(self.num_envs)), strict=True)
        if not all(same_obs):
            if observation_mode == "same":
                raise RuntimeError(
                    f"{type(self).__name__}(..., observation_mode='same'): the sub-envs' "
                    "observation spaces differ; use observation_mode='different' if that "
                    "is intended"
                )
            raise RuntimeError(
                f"{type(self).__name__}(..., observation_mode='different' or custom "
                "spaces): the sub-envs' observation spaces differ in shape or dtype"
            )
        if not all(same_actions):
            raise RuntimeError(
                f"Some sub-envs have an action space different from "
                f"{self.single_action_space}; a batch of actions needs them all equal"
            )

    # State checks -----------------------------------------------------------------------------
    def _assert_is_running(self) -> None:
        if self.closed:
            raise ClosedEnvironmentError(
                f"Trying to operate on `{type(self).__name__}`, after a call to `close()`."
            )

    def _assert_idle(self, method: str) -> None:
        if self._pending is not Pending.DEFAULT:
            raise AlreadyPendingCallError(
                f"Calling `{method}` while waiting for a pending call to "
                f"`{self._pending.value}` to complete.",
                self._pending.value,
            )

    def _assert_pending(self, kind: Pending) -> None:
        self._assert_is_running()
        if self._pending is not kind:
            raise NoAsyncCallError(
                f"Calling `{kind.value}_wait` without any prior call to `{kind.value}_async`.",
                kind.value,
            )

    @property
    def worker_pids(self) -> tuple[int | None, ...]:
        """Process id of each sub-env's worker (None for sub-envs in this process)."""
        self._assert_is_running()
        return self._workers.worker_pids

    # Reset ------------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (those in ``options["reset_mask"]``): ``(obs, infos)``.

        ``seed``: None (unseeded), an int ``s`` (sub-env ``i`` gets ``s + i``) or one seed
        per sub-env.
        """
        self.reset_async(seed=seed, options=options)
        return self.reset_wait()

    def reset_async(
        self, seed: int | list[int | None] | None = None, options: dict | None = None
    ) -> None:
        """Send the resets; collect them with :meth:`reset_wait`."""
        self._assert_is_running()
        seeds = self._seeds(seed)
        self._assert_idle("reset_async")
        mask, options = self._reset_mask(options)
        commands = {
            i: Reset(seeds[i], options) for i in range(self.num_envs) if mask is None or mask[i]
        }
        self._send(commands)
        self._pending = Pending.RESET

    def reset_wait(self, timeout: float | None = None) -> tuple[Any, dict[str, Any]]:
        """Wait for the resets sent by :meth:`reset_async`: ``(obs, infos)``."""
        self._assert_pending(Pending.RESET)
        gathered = self._gather(timeout, "reset")
        infos: dict[str, Any] = {}
        for index in sorted(gathered.answers):
            infos = self._add_info(infos, gathered.answers[index], index)
            self._ended[index] = False
        self._raise_first(gathered, "reset")
        return self._observations(), infos

    def _seeds(self, seed: int | list[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
            if seed < 0:
                raise ValueError(f"seed: expected an int >= 0, got {seed}")
            return [int(seed) + i for i in range(self.num_envs)]
        if not isinstance(seed, Sequence) or len(seed) != self.num_envs:
            raise ValueError(
                f"seed: expected None, an int or a list of {self.num_envs} seeds (one per "
                f"sub-env), got {seed!r}"
            )
        for k, item in enumerate(seed):
            if item is not None and (
                isinstance(item, bool) or not isinstance(item, int | np.integer) or item < 0
            ):
                raise ValueError(f"seed: expected None or an int >= 0 at seed[{k}], got {item!r}")
        return list(seed)

    def _reset_mask(self, options: dict | None) -> tuple[np.ndarray | None, dict | None]:
        """Return the ``reset_mask`` in ``options`` (checked) and the options without it."""
        if options is None or "reset_mask" not in options:
            return None, options
        mask = options["reset_mask"]
        options = {key: value for key, value in options.items() if key != "reset_mask"}
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(
                f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}"
            )
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not np.any(mask):
            raise ValueError(
                "`options['reset_mask']` must contain a boolean array with at least one True "
                f"value, got reset_mask={mask}"
            )
        return mask, options

    # Step -------------------------------------------------------------------------------------
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env: ``(obs, rewards, terminations, truncations, infos)``."""
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Send every sub-env its action; collect the results with :meth:`step_wait`."""
        self._assert_is_running()
        self._assert_idle("step_async")
        items = self._action_items(actions)
        if self.autoreset_mode is AutoresetMode.DISABLED and self._ended.any():
            ended = np.flatnonzero(self._ended).tolist()
            raise RuntimeError(
                f"step_async: sub-envs {ended} ended their episodes and were not reset; with "
                "autoreset_mode=DISABLED call reset(options={'reset_mask': mask}) first"
            )
        self._sent = dict.fromkeys(range(self.num_envs), Step())
        self._workers.send_steps(actions, items)
        self._pending = Pending.STEP

    def step_wait(
        self, timeout: float | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Wait for the steps sent by :meth:`step_async`."""
        self._assert_pending(Pending.STEP)
        gathered = self._gather(timeout, "step")
        infos: dict[str, Any] = {}
        for index in range(self.num_envs):
            info = gathered.answers.get(index)
            if info:
                infos = self._add_info(infos, info, index)
        outputs = self._workers.outputs
        terminations, truncations = outputs.terminations.copy(), outputs.truncations.copy()
        np.logical_or(terminations, truncations, out=self._ended)
        self._raise_first(gathered, "step")
        return self._observations(), outputs.rewards.copy(), terminations, truncations, infos

    def _action_items(self, actions: Any) -> list:
        """One action per sub-env, as gymnasium's ``iterate`` yields them; checked first."""
        space, n = self.single_action_space, self.num_envs
        if isinstance(actions, np.ndarray) and isinstance(space, ARRAY_SPACES):
            expected = (n, *space.shape)
            if actions.shape != expected:
                raise ValueError(
                    f"actions: expected an array of shape {expected} (one action per "
                    f"sub-env), got shape {actions.shape}"
                )
            if not isinstance(space, gymnasium.spaces.Box):
                self._check_integer_actions(actions, space)
            return list(actions)
        try:
            items = list(iterate(self.action_space, actions))
        except Exception as error:
            raise ValueError(
                f"actions: expected a batch of {n} actions of {space}, got {actions!r:.200}"
            ) from error
        if len(items) != n:
            raise ValueError(f"actions: expected {n} actions (one per sub-env), got {len(items)}")
        if isinstance(space, Discrete | MultiDiscrete | MultiBinary):
            self._check_integer_actions(np.asarray(items), space)
        return items

    def _check_single_actions(self, actions: Sequence) -> None:
        """Check a list of single actions (``step_batch``) as a batch is checked."""
        space = self.single_action_space
        if isinstance(space, gymnasium.spaces.Box | MultiDiscrete | MultiBinary):
            for k, action in enumerate(actions):
                if np.shape(action) != space.shape:
                    raise ValueError(
                        f"actions: expected actions of shape {space.shape}, got shape "
                        f"{np.shape(action)} at actions[{k}]"
                    )
        if isinstance(space, Discrete | MultiDiscrete | MultiBinary) and len(actions):
            self._check_integer_actions(np.asarray(actions), space, "actions[{}]")

    @staticmethod
    def _check_integer_actions(
        actions: np.ndarray, space: Space, where: str = "sub-env {}'s action"
    ) -> None:
        if actions.dtype.kind not in "iub":
            raise ValueError(
                f"actions: expected integers for {space}, got an array of dtype {actions.dtype}"
            )
        if isinstance(space, Discrete):
            low, high = int(space.start), int(space.start + space.n)
        elif isinstance(space, MultiDiscrete):
            low, high = space.start, space.start + space.nvec
        else:
            low, high = 0, 2
        bad = (actions < low) | (actions >= high)
        if bad.any():
            first = np.argwhere(bad)[0].tolist()
            place = where.format(first[0])
            raise ValueError(f"actions: {place} = {actions[first[0]].tolist()!r} is not in {space}")

    def _observations(self) -> Any:
        observations = self._workers.outputs.observations()
        return deepcopy(observations) if self.copy else observations

    # Calls ------------------------------------------------------------------------------------
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` of every sub-env (or read attribute ``name``)."""
        self.call_async(name, *args, **kwargs)
        return self.call_wait()

    def call_async(self, name: str, /, *args: Any, **kwargs: Any) -> None:
        """Send the calls; collect them with :meth:`call_wait`."""
        self._assert_is_running()
        self._assert_idle("call_async")
        self._send(dict.fromkeys(range(self.num_envs), CallCommand(name, args, kwargs)))
        self._pending = Pending.CALL

    def call_wait(self, timeout: float | None = None) -> tuple[Any, ...]:
        """Wait for the calls sent by :meth:`call_async`; one result per sub-env."""
        self._assert_pending(Pending.CALL)
        gathered = self._gather(timeout, "call")
        self._raise_first(gathered, "call")
        return tuple(gathered.answers[i] for i in range(self.num_envs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of every sub-env (a method is called, as in gymnasium)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set attribute ``name`` in every sub-env: one value each (list/tuple) or one for all."""
        self._assert_is_running()
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of "
                f"environments. Got `{len(values)}` values for {self.num_envs} environments."
            )
        self._assert_idle("set_attr")
        self._run_now({i: SetAttr(name, value) for i, value in enumerate(values)}, "set_attr")

    def render(self) -> tuple[Any, ...] | None:
        """Every sub-env's ``render()``."""
        return self.call("render")

    # Planning ---------------------------------------------------------------------------------
    def get_states(self) -> list:
        """Return the exact state of every sub-env (see :func:`plangym.make_vec`)."""
        self._assert_is_running()
        self._assert_idle("get_states")
        answers = self._run_now(dict.fromkeys(range(self.num_envs), GetState()), "get_state")
        return [answers[i] for i in range(self.num_envs)]

    def set_states(self, states: Sequence, indices: Sequence[int] | None = None) -> None:
        """Restore ``states[k]`` in sub-env ``indices[k]`` (default: every sub-env in turn).

        The restored sub-envs go on from there: their next step steps from the state.
        """
        self._assert_is_running()
        self._assert_idle("set_states")
        indices = list(range(self.num_envs)) if indices is None else list(indices)
        for index in indices:
            if not isinstance(index, int | np.integer) or not 0 <= index < self.num_envs:
                raise ValueError(
                    f"indices: expected sub-env indices in 0..{self.num_envs - 1}, got {index!r}"
                )
        if len(set(indices)) != len(indices):
            raise ValueError(f"indices: expected distinct sub-envs, got {indices}")
        if len(states) != len(indices):
            raise ValueError(
                f"states: expected {len(indices)} states (one per index), got {len(states)}"
            )
        commands = {int(i): SetState(state) for i, state in zip(indices, states, strict=True)}
        self._run_now(commands, "set_state")
        self._ended[indices] = False

    def step_batch(
        self, actions: Sequence, states: Sequence, dt: int | Sequence[int] = 1
    ) -> tuple[list, list, list, list, list, list]:
        """Step each ``(action, state)`` pair; the sub-envs' own episodes are left alone.

        The batch is shared out among the sub-envs' workers; each steps its part from the
        given states (as ``PlanEnv.step_batch`` does) and restores its own state after.

        Returns:
            ``(new_states, observs, rewards, terminals, truncateds, infos)``, lists in the
            order of the inputs.
        """
        self._assert_is_running()
        self._assert_idle("step_batch")
        if len(actions) != len(states):
            raise ValueError(
                f"actions: expected one action per state ({len(states)}), got {len(actions)}"
            )
        dts = list(dt) if isinstance(dt, Sequence | np.ndarray) else [dt] * len(states)
        if len(dts) != len(states):
            raise ValueError(f"dt: expected one dt per state ({len(states)}), got {len(dts)}")
        for k, value in enumerate(dts):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
                raise ValueError(f"dt: expected integers >= 1, got {value!r} at dt[{k}]")
        self._check_single_actions(actions)
        bounds = chunk_bounds(len(states), self.num_envs)
        commands = {
            index: StepStates(
                list(actions[start:stop]), pack_states(states[start:stop]), dts[start:stop]
            )
            for index, (start, stop) in enumerate(bounds)
        }
        answers = self._run_now(commands, "step_batch", rerun=True)
        columns: tuple[list, ...] = ([], [], [], [], [], [])
        for index in range(len(bounds)):
            for column, part in zip(columns, unpack_columns(answers[index]), strict=True):
                column.extend(part)
        return columns

    # Sending and gathering ----------------------------------------------------------------
    def _send(self, commands: dict[int, Any]) -> None:
        self._sent = commands
        for index, command in commands.items():
            self._workers.send(index, command)

    def _run_now(self, commands: dict[int, Any], label: str, rerun: bool = False) -> dict:
        """Send ``commands`` and wait for every answer; raise the first error."""
        self._send(commands)
        self._pending = Pending.CALL
        gathered = self._gather(None, label, rerun=rerun)
        self._raise_first(gathered, label)
        return gathered.answers

    def _gather(self, timeout: float | None, label: str, rerun: bool = False) -> Gathered:
        """Collect the answers to :attr:`_sent`; restart dead workers; back to idle."""
        workers, gathered = self._workers, Gathered()
        kind = self._pending
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting = sorted(self._sent)
        reruns = dict.fromkeys(waiting, 0)
        try:
            while waiting:
                remaining = None if deadline is None else max(deadline - time.monotonic(), 0)
                ready = workers.ready(waiting, remaining)
                if not ready:
                    self._time_out(waiting, timeout, label)
                for index in ready:
                    # A sub-env leaves `waiting` only once its answer is read (or its
                    # command given up): Ctrl-C during a read must restart it too.
                    try:
                        gathered.answers[index] = workers.receive(index)
                    except WorkerCrashedError as crash:
                        if self._recover(index, kind, crash, gathered, rerun, reruns):
                            continue  # sent again: still waited for
                    except Exception as error:
                        gathered.errors[index] = error
                    waiting.remove(index)
        except BaseException:
            # Ctrl-C (or a timeout): a late answer must never be read as the next call's.
            # A restart that fails leaves no answer behind either (its worker is dead, or
            # its answer was read), so every sub-env waited for is restarted regardless.
            for index in waiting:
                with contextlib.suppress(Exception):
                    self._workers.restart(index)
                if kind is Pending.STEP:  # its episode was cut short: it must be reset
                    self._ended[index] = True
            raise
        finally:
            self._pending = Pending.DEFAULT
            self._sent = {}
        return gathered

    def _recover(
        self,
        index: int,
        kind: Pending,
        crash: WorkerCrashedError,
        gathered: Gathered,
        rerun: bool,
        reruns: dict[int, int],
    ) -> bool:
        """Replace a dead worker; return whether its command was sent again."""
        try:
            info = self._workers.restart(index)
        except Exception as error:  # the rebuilt sub-env failed too: report, go on
            error.add_note(f"while replacing sub-env {index}'s dead worker ({crash})")
            gathered.errors[index] = error
            if kind is Pending.STEP:
                self._ended[index] = True
            return False
        if kind is Pending.STEP:  # the sub-env's episode was cut short: a truncation
            gathered.answers[index] = info
            return False
        if (kind is Pending.RESET or rerun) and reruns[index] < MAX_RERUNS:
            reruns[index] += 1
            self._workers.send(index, self._sent[index])
            return True
        error = SubEnvCrashedError(
            f"{crash}; sub-env {index} was rebuilt and reset, but its "
            f"{type(self._sent[index]).__name__} request was lost"
        )
        error.__cause__ = crash
        gathered.errors[index] = error
        return False

    def _time_out(self, late: list[int], timeout: float | None, label: str) -> None:
        # The late sub-envs are restarted on the way out of _gather.
        raise VectorTimeoutError(
            f"The call to `{label}_wait` has timed out after {timeout} second(s); sub-envs "
            f"{late} were still busy and were rebuilt and reset"
        )

    @staticmethod
    def _raise_first(gathered: Gathered, label: str) -> None:
        if not gathered.errors:
            return
        index = min(gathered.errors)
        error = gathered.errors[index]
        others = sorted(set(gathered.errors) - {index})
        note = f"raised by sub-env {index} during {label}"
        if others:
            note += f" (sub-envs {others} raised too)"
        error.add_note(note + "; the vector env is still usable")
        raise error

    # Closing ----------------------------------------------------------------------------------
    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        """Stop the workers; a pending call is collected first (within ``timeout``)."""
        if self._workers is None:
            return
        if self._pending is not Pending.DEFAULT and not terminate:
            logger.warn(
                f"Calling `close` while waiting for a pending call to `{self._pending.value}` "
                "to complete."
            )
            try:
                self._gather(timeout, self._pending.value)
            except Exception:  # a timeout, or the sub-envs' own errors: just stop
                terminate = True
        self._pending = Pending.DEFAULT
        self._workers.close(terminate=terminate)

    def __del__(self) -> None:
        if not getattr(self, "closed", True) and self._workers is not None:
            self.close(terminate=True)
