"""What a vectorized env answers with its local env: single steps, properties, checks.

Public attributes it does not define are the local env's too, so code that inspects an env
works on any backend; methods reached that way obey the call state
(:mod:`plangym.vectorization.lifecycle`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from plangym.core import PlanEnv, PlangymEnv
from plangym.forwarding import forwarded_method, forwarded_property
from plangym.validation import check_flag, check_positive_int, check_return_state
from plangym.vectorization.lifecycle import CallState, idle_only

T = TypeVar("T")


class WrappedClassAttribute(Generic[T]):
    """A class attribute of single envs on a vectorized env's class.

    On the class it is :class:`PlangymEnv`'s value (as in plangym 0.1); on an instance it
    is the local env's once built, else the wrapped env class's.

    >>> class Example:
    ...     DEFAULT_OBS_TYPE: WrappedClassAttribute[str] = WrappedClassAttribute()
    ...     _plan_env, _env_class = None, type("Wrapped", (), {"DEFAULT_OBS_TYPE": "rgb"})
    >>> Example.DEFAULT_OBS_TYPE, Example().DEFAULT_OBS_TYPE
    ('coords', 'rgb')
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> T:
        default = getattr(PlangymEnv, self.name)
        if instance is None:
            return default
        wrapped = instance._plan_env if instance._plan_env is not None else instance._env_class
        return getattr(wrapped, self.name, default)


def setting_of_every_env(name: str, check: Callable[[str, Any], Any], doc: str) -> property:
    """Return the property of a setting every env shares, such as ``frameskip``.

    Once the envs are built, setting it is :meth:`set_attr` (they must step alike); before
    (``delay_setup``), the value is checked, kept and given to the envs when they are built.
    """
    private = f"_{name}"

    def get(self: Any) -> Any:
        plan_env = self._plan_env
        return getattr(self, private) if plan_env is None else getattr(plan_env, name)

    def put(self: Any, value: Any) -> None:
        value = check(name, value)  # refused here, before any env sees it
        if self._plan_env is not None:
            self.set_attr(name, value)
            return
        first = not hasattr(self, private)  # the constructor's, else the user's
        setattr(self, private, value)
        if not first:
            self._env_kwargs[name] = value

    return property(get, put, doc=doc)


class LocalEnvAPI:
    """The part of :class:`~plangym.vectorization.env.VectorizedEnv` its local env serves."""

    if TYPE_CHECKING:  # read only (VectorizedEnv builds it on first use)

        @property
        def plan_env(self) -> PlanEnv:
            """The local env."""
            ...

    call_state: CallState
    _frameskip: int  # until the local env is built
    _env_kwargs: dict[str, Any]
    _plan_env: PlanEnv | None = None  # also before __init__ (a subclass setting autoreset)
    _env_class: type[PlanEnv]

    def __getattr__(self, name: str) -> Any:
        # Anything else public is the local env's; its methods obey the call state.
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self.plan_env, name)
        return _obeying_call_state(self, value) if inspect.ismethod(value) else value

    def __dir__(self) -> list[str]:
        # What __getattr__ answers too, so that tab completion offers it.
        env = self._plan_env
        names = dir(env) if env is not None else []  # not built yet: only the env's own
        return sorted({*super().__dir__(), *(name for name in names if name[0] != "_")})

    # The local env's shapes and spaces (an env class without spaces raises AttributeError).
    unwrapped = forwarded_property("unwrapped", "plan_env", "The local :class:`PlanEnv`.")
    obs_shape = forwarded_property("obs_shape", "plan_env", "Shape of the observations.")
    action_shape = forwarded_property("action_shape", "plan_env", "Shape of the actions.")
    action_space = forwarded_property("action_space", "plan_env", "Action space of the env.")
    observation_space = forwarded_property(
        "observation_space", "plan_env", "Observation space of the env."
    )
    batch_path = forwarded_property(
        "batch_path", "plan_env", "The batch path of the wrapped env, which its workers use."
    )

    # The wrapped env class's (PlanEnv's own values would otherwise shadow them).
    STATE_IS_ARRAY: WrappedClassAttribute[bool] = WrappedClassAttribute()
    OBS_IS_ARRAY: WrappedClassAttribute[bool] = WrappedClassAttribute()
    SINGLETON: WrappedClassAttribute[bool] = WrappedClassAttribute()
    FAST_PATHS: WrappedClassAttribute[Any] = WrappedClassAttribute()
    AVAILABLE_OBS_TYPES: WrappedClassAttribute[frozenset] = WrappedClassAttribute()
    AVAILABLE_RENDER_MODES: WrappedClassAttribute[frozenset] = WrappedClassAttribute()
    DEFAULT_OBS_TYPE: WrappedClassAttribute[str] = WrappedClassAttribute()
    TAKES_RESET_OPTIONS: WrappedClassAttribute[bool] = WrappedClassAttribute()

    # plangym 0.1's vectorized envs were PlangymEnvs: its members answer with the local env's.
    apply_wrappers = forwarded_method("apply_wrappers", PlangymEnv, "plan_env", idle_only)
    wrap = forwarded_method("wrap", PlangymEnv, "plan_env", idle_only)
    init_gym_env = forwarded_method("init_gym_env", PlangymEnv, "plan_env", idle_only)
    init_spaces = forwarded_method("init_spaces", PlangymEnv, "plan_env", idle_only)
    seed = forwarded_method("seed", PlangymEnv, "plan_env", idle_only)
    get_coords_obs = forwarded_method("get_coords_obs", PlangymEnv, "plan_env")
    get_rgb_obs = forwarded_method("get_rgb_obs", PlangymEnv, "plan_env")
    get_grayscale_obs = forwarded_method("get_grayscale_obs", PlangymEnv, "plan_env")
    metadata = forwarded_property("metadata", "plan_env", "The local env's metadata.")
    obs_type = forwarded_property("obs_type", "plan_env", "The observation type.")
    render_mode = forwarded_property("render_mode", "plan_env", "How the env renders.")
    reward_range = forwarded_property("reward_range", "plan_env", "The range of rewards.")
    remove_time_limit = forwarded_property(
        "remove_time_limit", "plan_env", "Whether the episodes have no time limit."
    )

    frameskip = setting_of_every_env(
        "frameskip", check_positive_int, "Underlying steps per agent step: every env's."
    )
    autoreset = setting_of_every_env(
        "autoreset", check_flag, "Whether an episode's end resets the env: every env's."
    )

    @property
    def gym_env(self) -> Any:
        """The local env's gymnasium env (None for an env without one, as in plangym 0.1)."""
        return getattr(self.plan_env, "gym_env", None)

    @idle_only
    def render(self, mode: str = "human") -> Any:
        """Render the local env (``mode`` is plangym 0.1's parameter: its ``render_mode`` rules)."""
        return self.plan_env.render()  # type: ignore[attr-defined]  # a PlangymEnv's

    # Single-env API, served by the local env (checks run whatever the call state) -------------
    step = forwarded_method("step", PlanEnv, "plan_env", idle_only)
    step_with_dt = forwarded_method("step_with_dt", PlanEnv, "plan_env", idle_only)
    get_state = forwarded_method("get_state", PlanEnv, "plan_env", idle_only)
    sample_action = forwarded_method("sample_action", PlanEnv, "plan_env", idle_only)
    get_image = forwarded_method("get_image", PlanEnv, "plan_env", idle_only)
    apply_action = forwarded_method("apply_action", PlanEnv, "plan_env", idle_only)
    apply_reset = forwarded_method("apply_reset", PlanEnv, "plan_env", idle_only)
    check_action = forwarded_method("check_action", PlanEnv, "plan_env")
    check_actions = forwarded_method("check_actions", PlanEnv, "plan_env")
    check_state = forwarded_method("check_state", PlanEnv, "plan_env")
    check_batch = forwarded_method("check_batch", PlanEnv, "plan_env")

    @idle_only
    def reset(
        self, return_state: bool = True, seed: int | None = None, options: dict | None = None
    ) -> tuple:
        """Reset the local env (seeded as :meth:`PlanEnv.reset` says) and sync every worker."""
        with_state = bool(check_return_state(return_state))
        state, obs, info = self.plan_env.reset(return_state=True, seed=seed, options=options)
        self.sync_states(state)
        return (state, obs, info) if with_state else (obs, info)

    @idle_only
    def set_state(self, state: Any) -> None:
        """Set the local env and every worker to ``state``."""
        state = self.plan_env.thawed_state(state)
        self.sync_states(state)  # checks it before any worker sees it
        self.plan_env.set_state(state)


def _obeying_call_state(env: LocalEnvAPI, method: Callable) -> Callable:
    """Wrap ``method`` of the local env so it refuses to run whenever ``env`` would."""

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        return env.call_state.run_held(method.__name__, method, *args, **kwargs)

    return checked


# plangym 0.1's vectorized envs were PlangymEnv subclasses, and ours answer as one (their
# class has every PlangymEnv member, the instance the local env's): isinstance says so.
PlangymEnv.register(LocalEnvAPI)
