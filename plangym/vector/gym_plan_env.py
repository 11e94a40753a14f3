"""A plangym env seen as a gymnasium env: the sub-env :func:`plangym.make_vec` builds.

Its own autoreset is off (the vector env restarts episodes); it keeps what planners need:
``get_state``, ``set_state`` and ``step_batch`` from given states.

>>> from plangym.control.classic_control import ClassicControl
>>> env = GymPlanEnv(ClassicControl("CartPole-v1", autoreset=False))
>>> obs, info = env.reset(seed=3)
>>> state = env.get_state()
>>> first = env.step(1)
>>> env.set_state(state)
>>> bool((env.step(1)[0] == first[0]).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import gymnasium

from plangym.validation import describe

if TYPE_CHECKING:
    from plangym.core import PlanEnv

# plangym's own info keys, left out so that infos are gymnasium's: the bookkeeping (always 1
# here), and the video games' "lifes" (0.1's spelling; "lives" stays) and "lost_life".
BOOKKEEPING_KEYS = ("n_step", "dt", "lifes", "lost_life")


class OwnersField:
    """A field of gymnasium's ``Env`` kept by the env :meth:`GymPlanEnv.generator_owner` names."""

    def __set_name__(self, cls: type, name: str) -> None:
        self.name = name

    def __get__(self, env: Any, cls: Any = None) -> Any:
        if env is None:
            return self
        owner = env.generator_owner()
        return env.__dict__.get(self.name) if owner is env else getattr(owner, self.name)

    def __set__(self, env: Any, value: Any) -> None:
        owner = env.generator_owner()
        if owner is env:
            env.__dict__[self.name] = value
        else:
            setattr(owner, self.name, value)


class GymPlanEnv(gymnasium.Env):
    """A :class:`~plangym.core.PlanEnv` behind gymnasium's ``Env`` API.

    Args:
        plan_env: The plangym env (built with ``autoreset=False``): one with gymnasium
            spaces, as :func:`plangym.make` builds them, or your own env with an
            ``observation_space`` and an ``action_space`` (docs/vector.md).
    """

    # gymnasium's np_random, np_random_seed and reset(seed=...) use these: see generator_owner.
    _np_random = OwnersField()
    _np_random_seed = OwnersField()

    def __init__(self, plan_env: PlanEnv):
        spaces: list[Any] = [
            getattr(plan_env, name, None) for name in ("observation_space", "action_space")
        ]
        for name, space in zip(("observation_space", "action_space"), spaces, strict=True):
            if not isinstance(space, gymnasium.spaces.Space):
                raise TypeError(
                    f"plan_env: expected a plangym env with gymnasium spaces, received a "
                    f"{type(plan_env).__name__} whose {name} is {describe(space)}: give its "
                    f"class an {name} (a gymnasium.spaces.Space) to serve it as a gymnasium env"
                )
        if getattr(plan_env, "autoreset", False):
            raise ValueError(
                f"plan_env: expected an env built with autoreset=False (the vector env "
                f"resets its sub-envs), received a {type(plan_env).__name__} with autoreset=True"
            )
        # Any: the families' members (an Atari env's ale, a gymnasium env) are read from it.
        self.plan_env: Any = plan_env
        self.observation_space, self.action_space = spaces[0], spaces[1]
        self.metadata = dict(getattr(plan_env, "metadata", None) or {})
        self.render_mode = getattr(plan_env, "render_mode", None)
        # Underlying steps (frames) stepped so far: step_batch through wrappers counts with it.
        self.frames_stepped = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.plan_env!r})"

    def generator_owner(self) -> gymnasium.Env:
        """Return the gymnasium env whose generator the plangym env's episodes draw from.

        The plangym env's gymnasium env (unwrapped), or this face for plangym envs that
        have none (dm_control): its generator then only records the last seed.
        """
        inner = self._inner_env()
        return inner.unwrapped if inner is not None else self

    # ale-py's members, which AtariPreprocessing and training scripts' Atari wrappers (noop
    # and fire resets, episodic life) read from ``env.unwrapped``.
    @property
    def ale(self) -> Any:
        """The emulator of a plangym Atari env (an AttributeError for other envs).

        Its screen readers give the screen the env shows (a reset's, or black), which the
        emulator's own may not be (plangym.videogames.atari.shown_ale).
        """
        shown_ale = getattr(self.plan_env, "shown_ale", None)
        return shown_ale() if shown_ale is not None else self.plan_env.ale

    @property
    def _frameskip(self) -> int:
        """ale-py's name for the frames per step (AtariPreprocessing needs 1 to skip its own)."""
        return self.plan_env.frameskip

    def get_action_meanings(self) -> list[str]:
        """Return what each action of a plangym Atari env means, as ale-py names them."""
        return self.plan_env.gym_env.unwrapped.get_action_meanings()

    # Attributes of the plangym env and of its gymnasium env -----------------------------------
    def __getattr__(self, name: str) -> Any:
        """Read what this face lacks from the simulator (the gymnasium env's ``unwrapped``).

        gymnasium wrappers read the simulator's members from ``env.unwrapped`` (a MuJoCo
        env's ``data``, CartPole's ``state``): on a sub-env, that is this face.
        """
        inner = self._inner_env() if "plan_env" in vars(self) and name[:2] != "__" else None
        if inner is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(inner.unwrapped, name)

    def _has_own(self, name: str) -> bool:
        """Whether this face itself has ``name`` (not read from the simulator)."""
        return name in vars(self) or hasattr(type(self), name)

    def _inner_env(self) -> gymnasium.Env | None:
        """Return the plangym env's gymnasium env, wrappers included (None if it has none)."""
        gym_env = getattr(self.plan_env, "gym_env", None)
        return gym_env if isinstance(gym_env, gymnasium.Env) else None

    def has_wrapper_attr(self, name: str) -> bool:
        """Whether this face, the plangym env or its gymnasium env has attribute ``name``."""
        if self._has_own(name) or hasattr(self.plan_env, name):
            return True
        inner = self._inner_env()
        return inner is not None and inner.has_wrapper_attr(name)

    def get_wrapper_attr(self, name: str) -> Any:
        """Return attribute ``name``: this face's, the plangym env's, its gymnasium env's.

        As ``frameskip`` (the plangym env's) or CartPole's ``force_mag`` (its gymnasium env's).
        """
        if self._has_own(name):
            return getattr(self, name)
        if hasattr(self.plan_env, name):
            return getattr(self.plan_env, name)
        inner = self._inner_env()
        if inner is not None and inner.has_wrapper_attr(name):
            return inner.get_wrapper_attr(name)
        raise AttributeError(
            f"{type(self).__name__}, its plangym env ({type(self.plan_env).__name__}) and its "
            f"gymnasium env have no attribute {name!r}"
        )

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set attribute ``name`` where :meth:`get_wrapper_attr` reads it (``force``: here)."""
        if not self._has_own(name):
            if hasattr(self.plan_env, name):
                setattr(self.plan_env, name, value)
                return True
            inner = self._inner_env()
            if inner is not None and inner.has_wrapper_attr(name):
                return inner.set_wrapper_attr(name, value, force=False)
        return super().set_wrapper_attr(name, value, force=force)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Start an episode; a ``seed`` seeds all the plangym env's generators, as gymnasium.

        ``options`` reach an env that takes them (classic control's bounds); others ignore
        them, as their gymnasium envs do.
        """
        if seed is not None and self.generator_owner() is self:
            gymnasium.Env.reset(self, seed=seed)  # records the seed: np_random_seed says it
        if not self.plan_env.TAKES_RESET_OPTIONS:
            options = None
        return self.plan_env.reset(return_state=False, seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One agent step: ``(obs, reward, terminated, truncated, info)``."""
        obs, reward, terminated, truncated, info = self.plan_env.step(action)
        self.frames_stepped += info["n_step"]
        for key in BOOKKEEPING_KEYS:
            info.pop(key, None)
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        """Render the plangym env: a picture (``render_mode="rgb_array"``) or a window."""
        return self.plan_env.render()

    def close(self) -> None:
        """Close the plangym env."""
        self.plan_env.close()

    # Planning ---------------------------------------------------------------------------------
    def get_state(self) -> Any:
        """Return the plangym env's exact state."""
        return self.plan_env.get_state()

    def set_state(self, state: Any) -> None:
        """Restore a state from :meth:`get_state`."""
        self.plan_env.set_state(state)

    def checked_states(self, states: list) -> list:
        """Return ``states`` as :meth:`set_state` takes them; the error names ``states[i]``."""
        states = [self.plan_env.thawed_state(state) for state in states]
        self.plan_env.check_states(states)
        return states

    def check_batch(self, actions: Any, states: Any, dt: Any) -> tuple[Any, Any, list]:
        """Check a ``step_batch``'s inputs as the plangym env does: ``(actions, states, dts)``."""
        return self.plan_env.check_batch(actions, states, dt)

    def checked_batch_states(self, states: Any) -> Any:
        """Check a ``step_batch``'s states alone (wrappers above check their actions)."""
        return self.plan_env.checked_batch_states(states)

    def step_batch(
        self, actions: Sequence, states: Sequence, dt: Any = 1, return_state: bool = True
    ) -> tuple[list, ...]:
        """Step each ``(action, state)`` pair (plangym's ``step_batch``)."""
        return self.plan_env.step_batch(actions, states, dt, return_state=return_state)
