"""One sub-env of a vector env under gymnasium's autoreset rules, and its handler.

:class:`SubEnvHandler` answers the vector env's requests with a :class:`SubEnv` wherever
its worker runs (the caller, a process, a Ray actor). The rules
(https://farama.org/Vector-Autoreset-Mode): ``NEXT_STEP`` resets on the step after an
episode ends (reward 0, no flags, the action ignored); ``SAME_STEP`` resets in the step
that ends it (its info holds ``final_obs`` and ``final_info``); ``DISABLED`` never resets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.wrapped_steps import WrappedSteps
from plangym.vectorization.handler import Handler
from plangym.vectorization.messages import (
    Call,
    CheckSpaces,
    GetState,
    InBuffer,
    Observed,
    Reset,
    Restarted,
    SetAttr,
    SetState,
    Step,
    StepChunk,
    Stepped,
)
from plangym.vectorization.plan_handler import step_chunk
from plangym.vectorization.shared_memory import AttachedOutputs

# Methods that would bypass the vector env's bookkeeping if run through call().
RESERVED_CALLS = frozenset({"reset", "step", "close"})


class SubEnv:
    """A gymnasium env and what the vector env needs to know of its episode."""

    def __init__(self, env: gymnasium.Env, autoreset_mode: AutoresetMode):
        self.env = env
        self.autoreset_mode = autoreset_mode
        self.episode_ended = False  # NEXT_STEP: the next step resets; DISABLED: reset first
        # The reset (obs, info) of a restart the next step reports (see restarted), or None.
        self.unreported_restart: tuple[Any, dict] | None = None

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Start a new episode: ``(obs, info)``."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_ended, self.unreported_restart = False, None
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        """One step under the autoreset rule: ``(obs, reward, terminated, truncated, info)``."""
        mode = self.autoreset_mode
        if self.unreported_restart is not None:  # the restart is this step's news
            (obs, info), self.unreported_restart = self.unreported_restart, None
            self.episode_ended = mode is AutoresetMode.NEXT_STEP
            return obs, 0.0, False, True, {**info, "worker_restarted": True}
        if self.episode_ended:
            if mode is AutoresetMode.DISABLED:  # the step that ended it was lost on its way
                raise RuntimeError(
                    "step: this sub-env ended its episode and was not reset (the step that "
                    "ended it raised); with autoreset_mode=DISABLED reset it first"
                )
            obs, info = self.env.reset()
            self.episode_ended = False
            return obs, 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(action)
        if mode is not AutoresetMode.SAME_STEP:
            self.episode_ended = bool(terminated or truncated)
        elif mode is AutoresetMode.SAME_STEP and (terminated or truncated):
            reset_obs, reset_info = self.env.reset()
            info = {"final_info": info, "final_obs": obs, **reset_info}
            obs = reset_obs
        return obs, reward, terminated, truncated, info

    def restarted(self, report: bool = False) -> tuple[Any, dict]:
        """Reset a sub-env rebuilt after its worker died; a step reports a truncation.

        The step the worker died in reports it itself; after another call (``report``), the
        next step only returns the reset observation, truncated, with
        ``info["worker_restarted"]``. Under NEXT_STEP the step after that starts an episode.
        """
        obs, info = self.reset()
        if report:
            self.unreported_restart = obs, info
        else:
            self.episode_ended = self.autoreset_mode is AutoresetMode.NEXT_STEP
        return obs, {**info, "worker_restarted": True}

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call method ``name`` of the env, or return attribute ``name`` (as gymnasium)."""
        if name in RESERVED_CALLS:
            raise ValueError(
                f"call: {name!r} cannot be called through call(); use the vector env's "
                f"{name}() instead"
            )
        attribute = self.env.get_wrapper_attr(name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute

    def check_spaces(self, command: CheckSpaces) -> tuple[Any, Any]:
        """Return the sub-env's spaces where they differ from the vector env's, else Nones."""
        observation_space, action_space = self.env.observation_space, self.env.action_space
        if command.observation_mode == "same":
            same_obs = command.observation_space == observation_space
        else:
            same_obs = is_space_dtype_shape_equiv(command.observation_space, observation_space)
        same_actions = command.action_space == action_space
        return None if same_obs else observation_space, None if same_actions else action_space

    def plan_env(self) -> Any:
        """Return the plangym env behind the sub-env; a clear error if it has none."""
        try:
            return self.env.get_wrapper_attr("plan_env")
        except AttributeError:
            raise AttributeError(
                f"the sub-env ({type(self.env.unwrapped).__name__}) is not a plangym env, so "
                "it has no exact states; plangym.make_vec builds sub-envs that have them"
            ) from None

    def step_chunk(self, request: StepChunk, buffers: AttachedOutputs) -> Any:
        """Step a chunk of ``step_batch``, then restore the sub-env's state: its episode goes on.

        With wrappers, through them (see :mod:`plangym.vector.wrapped_steps`).
        """
        plan_env, env = self.plan_env(), self.env
        if isinstance(env, gymnasium.Wrapper):  # it puts the sub-env back itself
            return step_chunk(WrappedSteps(env, plan_env), request, buffers)
        own_state = plan_env.get_state()
        try:
            return step_chunk(plan_env, request, buffers)
        finally:
            plan_env.set_state(own_state)


class SubEnvHandler(Handler):
    """Serves one sub-env (built by ``env_fn``, row ``index`` of the batch) in its worker.

    ``outputs``: where results go: the caller's own :class:`BatchOutputs` (the worker is the
    caller), ``"shared"`` (the batch arrays in ``buffers``, laid out as
    ``BatchOutputs(observation_space, num_envs, in_place=obs_shared)``), or None (every
    result travels in the answer).
    """

    def __init__(
        self,
        env_fn: Callable[[], gymnasium.Env],
        index: int,
        autoreset_mode: AutoresetMode,
        buffers: AttachedOutputs,
        outputs: BatchOutputs | str | None = None,
        observation_space: Any = None,
        num_envs: int = 0,
        obs_shared: bool = False,
    ):
        self.sub_env = SubEnv(env_fn(), autoreset_mode)
        self.index, self.buffers = index, buffers
        self._outputs = outputs
        self._layout = (observation_space, num_envs, obs_shared)
        # Whether observations are written where the caller reads them (else answered).
        self._obs_written = isinstance(outputs, BatchOutputs) or bool(outputs and obs_shared)

    @property
    def env(self) -> gymnasium.Env:
        """The sub-env."""
        return self.sub_env.env

    def outputs(self) -> BatchOutputs | None:
        """Where this sub-env's results go (mapped from the shared buffers on first use)."""
        if isinstance(self._outputs, str):  # "shared": the caller's Attach came first
            space, num_envs, obs_shared = self._layout
            arrays = self.buffers.arrays
            fields = [key for key in arrays if key.startswith("batch:")]
            specs = iter(sorted(fields, key=lambda key: int(key.split(":")[1])))

            def allocated(shape: tuple, dtype: Any) -> np.ndarray:
                return arrays[next(specs)]  # allocated by the caller: the next of its fields

            self._outputs = BatchOutputs(space, num_envs, allocated, in_place=obs_shared)
        return self._outputs

    def handle(self, body: Any) -> Any:
        """Carry out one request (see :mod:`plangym.vectorization.messages`)."""
        kind, sub_env = type(body), self.sub_env
        if kind is Step:
            action = body.action
            if type(action) is InBuffer:
                action = self.buffers.arrays["actions"][self.index]
                action = action.copy() if isinstance(action, np.ndarray) else action
            return self.stepped(*sub_env.step(action))
        if kind is Reset:
            return self.observed(*sub_env.reset(body.seed, body.options))
        if kind is Restarted:
            return self.observed(*sub_env.restarted(body.report))
        if kind is Call:
            return sub_env.call(body.name, *body.args, **(body.kwargs or {}))
        if kind is SetAttr:
            sub_env.env.set_wrapper_attr(body.name, body.value)
            return None
        if kind is CheckSpaces:
            return sub_env.check_spaces(body)
        if kind is GetState:
            return sub_env.plan_env().get_state()
        if kind is SetState:
            sub_env.plan_env().set_state(body.state)
            # Its episode goes on from the state: no reset or restart is due any more.
            sub_env.episode_ended, sub_env.unreported_restart = False, None
            return None
        if kind is StepChunk:
            return sub_env.step_chunk(body, self.buffers)
        raise TypeError(f"request: {kind.__name__} is not a request a sub-env answers")

    def stepped(self, obs: Any, reward: Any, terminated: Any, truncated: Any, info: dict):
        """Return a step's answer; what fits the outputs is written there instead."""
        outputs = self.outputs() if isinstance(self._outputs, str) else self._outputs
        if outputs is None:
            return Stepped(obs, reward, terminated, truncated, info)
        index = self.index
        outputs.rewards[index] = reward
        outputs.terminations[index] = terminated
        outputs.truncations[index] = truncated
        if self._obs_written:
            outputs.write_obs(index, obs)
            return info
        return Observed(obs, info)

    def observed(self, obs: Any, info: dict) -> Any:
        """Return a reset's answer (and a step's once its reward and flags are written)."""
        if self._obs_written:
            outputs = self.outputs()
            assert outputs is not None  # observations are written only where there are outputs
            outputs.write_obs(self.index, obs)
            return info
        return Observed(obs, info)

    def close(self) -> None:
        """Close the sub-env."""
        self.sub_env.env.close()
