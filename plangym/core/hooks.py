"""What a step's data goes through after its frames: the ``process_*`` hooks of a PlanEnv.

Subclasses written for plangym 0.1 override these hooks to reshape observations, rewards
or ends. When every hook is an identity for an env (its class declares ``FAST_PATHS`` and
its settings convert nothing), :meth:`StepHooks.process_step` skips calling them.

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> env.has_fast_paths(), env.step_hooks_are_identity()
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from plangym.constructor import keyword_names


def call_hook(hook: Callable[..., Any], **kwargs: Any) -> Any:
    """Call a ``process_*`` hook with the keywords it takes.

    plangym 0.1 passed ``obs``, ``reward``, ``terminal`` and ``info``; overrides written
    for it that name their parameters (no ``**kwargs``) are not given ``truncated``.
    """
    names = keyword_names(getattr(hook, "__func__", hook))
    if names is not None:
        kwargs = {name: value for name, value in kwargs.items() if name in names}
    return hook(**kwargs)


class StepHooks:
    """The ``process_*`` hooks of :class:`~plangym.core.PlanEnv` and when they are skipped."""

    # Declared True in the body of a class whose fast paths (batches stepped in bulk or by a
    # kernel, frames sent straight to the emulator, identity hooks skipped) do exactly what
    # its methods do. A subclass that does not declare it again is stepped through every
    # method, so whatever it overrides runs (see has_fast_paths).
    FAST_PATHS: ClassVar[bool] = False
    _identity_hooks: bool
    _return_image: bool

    def get_image(self) -> Any:
        """Return an RGB picture of the environment (:class:`~plangym.core.PlanEnv`)."""
        raise NotImplementedError

    def process_apply_action(self, obs, reward, terminal, truncated, info) -> tuple:
        """Post-process the data of one underlying step."""
        return obs, reward, terminal, truncated, info

    def has_fast_paths(self) -> bool:
        """Whether this env's own class declares ``FAST_PATHS`` (see the class attribute).

        Decided by the class's declaration, never by which methods it overrides: an env
        whose class does not declare it is stepped through every method, one by one.
        """
        return bool(type(self).__dict__.get("FAST_PATHS", False))

    def step_hooks_are_identity(self) -> bool:
        """Whether every ``process_*`` hook returns its input unchanged for this env.

        Then :meth:`process_step` skips calling them, which matters when a step costs a few
        microseconds. Families whose hooks convert observations for some settings say so.
        """
        return self.has_fast_paths()

    def process_step(self, obs, reward, terminal, truncated, info) -> tuple:
        """Post-process the data of a whole ``step`` (after ``dt * frameskip`` steps)."""
        if self._identity_hooks:
            if self._return_image:
                info["rgb"] = self.get_image()
            return obs, reward, terminal, truncated, info
        kwargs = {"reward": reward, "terminal": terminal, "truncated": truncated, "info": info}
        obs = call_hook(self.process_obs, obs=obs, **kwargs)
        reward = call_hook(self.process_reward, obs=obs, **kwargs)
        kwargs["reward"] = reward
        terminal = call_hook(self.process_terminal, obs=obs, **kwargs)
        kwargs["terminal"] = terminal
        truncated = call_hook(self.process_truncated, obs=obs, **kwargs)
        kwargs["truncated"] = truncated
        info = call_hook(self.process_info, obs=obs, **kwargs)
        if self._return_image:
            info["rgb"] = self.get_image()
        return obs, reward, terminal, truncated, info

    def process_obs(self, obs, **kwargs):
        """Return the observation that ``step`` and ``reset`` hand out."""
        return obs

    def process_reward(self, reward, **kwargs) -> float:
        """Return the reward that ``step`` hands out."""
        return reward

    def process_terminal(self, terminal, **kwargs) -> bool:
        """Return the terminal flag that ``step`` hands out."""
        return terminal

    def process_truncated(self, truncated, **kwargs) -> bool:
        """Return the truncated flag that ``step`` hands out."""
        return truncated

    def process_info(self, info, **kwargs) -> dict[str, Any]:
        """Return the info dictionary that ``step`` and ``reset`` hand out."""
        return info
