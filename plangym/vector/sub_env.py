"""One sub-env of a vector env and the autoreset rule it steps under.

:class:`SubEnv` carries out the :mod:`plangym.vector.commands` for one gymnasium env. The
autoreset rules are gymnasium's (https://farama.org/Vector-Autoreset-Mode):

* ``NEXT_STEP``: the step after an episode ends resets the env instead, with reward 0 and
  no termination or truncation; the action is ignored;
* ``SAME_STEP``: the step that ends an episode resets the env at once; its info holds the
  episode's ``final_obs`` and ``final_info`` next to the reset's info;
* ``DISABLED``: nothing is reset; the caller resets ended sub-envs itself.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector import AutoresetMode

from plangym.vector.commands import (
    CallCommand,
    CheckSpaces,
    GetState,
    SetAttr,
    SetState,
    StepStates,
)
from plangym.vectorization.packing import pack_columns, unpack_states

# Methods that would bypass the vector env's bookkeeping if run through call().
RESERVED_CALLS = frozenset({"reset", "step", "close"})


class SubEnv:
    """A gymnasium env and what the vector env needs to know of its episode.

    Args:
        env: The sub-env.
        autoreset_mode: The vector env's autoreset mode.
    """

    def __init__(self, env: gymnasium.Env, autoreset_mode: AutoresetMode):
        self.env = env
        self.autoreset_mode = autoreset_mode
        self.episode_ended = False  # under NEXT_STEP: the next step resets

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Start a new episode: ``(obs, info)``."""
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_ended = False
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        """One step under the autoreset rule: ``(obs, reward, terminated, truncated, info)``."""
        mode = self.autoreset_mode
        if mode is AutoresetMode.NEXT_STEP and self.episode_ended:
            obs, info = self.env.reset()
            self.episode_ended = False
            return obs, 0.0, False, False, info
        obs, reward, terminated, truncated, info = self.env.step(action)
        if mode is AutoresetMode.NEXT_STEP:
            self.episode_ended = bool(terminated or truncated)
        elif mode is AutoresetMode.SAME_STEP and (terminated or truncated):
            reset_obs, reset_info = self.env.reset()
            info = {"final_info": info, "final_obs": obs, **reset_info}
            obs = reset_obs
        return obs, reward, terminated, truncated, info

    def restarted(self) -> tuple[Any, dict]:
        """Reset a sub-env rebuilt after its worker died; its step reports a truncation."""
        obs, info = self.reset()
        # The vector env reports this step as truncated: under NEXT_STEP the next step
        # starts a new episode, as after any truncation.
        self.episode_ended = self.autoreset_mode is AutoresetMode.NEXT_STEP
        return obs, {**info, "worker_restarted": True}

    def run(self, command: Any) -> Any:
        """Carry out any command but Reset and Step (those write outputs: see callers)."""
        if isinstance(command, CallCommand):
            return self.call(command.name, *command.args, **(command.kwargs or {}))
        if isinstance(command, SetAttr):
            self.env.set_wrapper_attr(command.name, command.value)
            return None
        if isinstance(command, CheckSpaces):
            return self.check_spaces(command)
        if isinstance(command, GetState):
            return self.plan_method("get_state")()
        if isinstance(command, SetState):
            self.plan_method("set_state")(command.state)
            self.episode_ended = False
            return None
        if isinstance(command, StepStates):
            return self.step_states(command)
        raise TypeError(f"command: unknown kind {type(command).__name__}")

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call method ``name`` of the env, or return attribute ``name`` (as gymnasium)."""
        if name in RESERVED_CALLS:
            raise ValueError(
                f"call: {name!r} cannot be called through call(); use the vector env's "
                f"{name}() instead"
            )
        attribute = self.env.get_wrapper_attr(name)
        return attribute(*args, **kwargs) if callable(attribute) else attribute

    def check_spaces(self, command: CheckSpaces) -> tuple[bool, bool]:
        """Whether the observation and action spaces match the vector env's."""
        if command.observation_mode == "same":
            same_obs = command.observation_space == self.env.observation_space
        else:
            same_obs = is_space_dtype_shape_equiv(
                command.observation_space, self.env.observation_space
            )
        return same_obs, command.action_space == self.env.action_space

    def plan_method(self, name: str) -> Any:
        """Return the plangym method ``name`` of the env; a clear error if it has none."""
        try:
            return self.env.get_wrapper_attr(name)
        except AttributeError:
            raise AttributeError(
                f"{name}: the sub-env ({type(self.env.unwrapped).__name__}) is not a plangym "
                "env; plangym.make_vec builds sub-envs with exact states"
            ) from None

    def step_states(self, command: StepStates) -> tuple:
        """Step from each given state; return plangym's ``step_batch`` columns packed.

        The columns (states first) are packed by
        :func:`~plangym.vectorization.packing.pack_columns`. The env is left in the state
        it was in, so its episode goes on undisturbed.
        """
        step_batch = self.plan_method("step_batch")
        own_state = self.plan_method("get_state")()
        # Record states arrive as one record array, which an env steps without a
        # per-state object (classic control's kernels).
        states = unpack_states(command.states, as_records=True)
        try:
            columns = step_batch(command.actions, states, command.dts, return_state=True)
        finally:
            self.plan_method("set_state")(own_state)
        return pack_columns(columns)
