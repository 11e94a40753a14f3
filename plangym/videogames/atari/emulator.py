"""The ale-py env under an Atari env, made for plangym's frame accounting, and its ALE.

plangym counts frames and applies sticky actions itself, so the ALE's gymnasium env plays
one frame per step with a sticky probability of 0 (:mod:`~plangym.videogames.atari.sticky`),
and without the wrappers ``gymnasium.make`` adds (TimeLimit, order enforcing, env checker):
an episode's limit is the ALE's own frame limit, which plangym drops or keeps.

>>> gym_env = make_ale_env("ALE/Pong-v5", obs_type="ram", remove_time_limit=False)
>>> obs, info = gym_env.reset(seed=0)
>>> obs.shape, gym_env.spec.max_episode_steps, ale_env(gym_env).ale.getFrameNumber()
((128,), None, 0)
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

import ale_py
import gymnasium as gym
import numpy as np

from plangym.validation import check_positive_int, describe, is_integer

if TYPE_CHECKING:
    from ale_py.env import AtariEnv as AleAtariEnv

gym.register_envs(ale_py)


def ale_to_ram(ale: ale_py.ALEInterface) -> np.ndarray:
    """Return the RAM of ``ale`` as a uint8 vector."""
    return ale.getRAM()


def ale_env(gym_env: gym.Env) -> AleAtariEnv:
    """Return the ale-py env under ``gym_env``'s wrappers.

    gymnasium types ``unwrapped`` as a plain ``Env``, which has no ``ale``.
    """
    return cast("AleAtariEnv", gym_env.unwrapped)


def make_ale_env(
    game_id: str,
    obs_type: str,
    remove_time_limit: bool = True,
    full_action_space: bool = False,
    render_mode: str | None = None,
    mode: int | None = None,
    difficulty: int | None = None,
    gym_kwargs: dict[str, Any] | None = None,
    frames_per_step: int = 1,
    reset_frames: int = 0,
) -> gym.Env:
    """Make the ale-py env of ``game_id``: one frame per step, no sticky actions, no wrappers.

    ``remove_time_limit`` drops the id's frame limit per episode (108000 for most ids);
    ``mode`` and ``difficulty`` None are the game's defaults; ``gym_kwargs`` (an env's
    own keywords for ``gymnasium.make``) override the rest. A ``max_episode_steps`` among
    them becomes the ALE's frame limit (``frames_per_step`` frames a step, after the
    ``reset_frames`` an env plays in its reset): gymnasium's TimeLimit would count steps
    that plangym's frame loop and states never see, while the ALE counts frames in its state.
    """
    spec = gym.spec(game_id)
    frame_limit = 0 if remove_time_limit else spec.kwargs.get("max_num_frames_per_episode", 0)
    gym_kwargs = dict(gym_kwargs or {})
    max_steps = gym_kwargs.pop("max_episode_steps", None)
    if max_steps is not None:
        steps = check_positive_int("max_episode_steps", max_steps)
        frame_limit = reset_frames + steps * frames_per_step
    make_kwargs: dict[str, Any] = {
        "obs_type": obs_type,
        "frameskip": 1,
        "repeat_action_probability": 0.0,  # plangym applies sticky actions itself
        "full_action_space": full_action_space,
        "max_num_frames_per_episode": frame_limit,
        "render_mode": render_mode,
    }
    if mode is not None:
        make_kwargs["mode"] = mode
    if difficulty is not None:
        make_kwargs["difficulty"] = difficulty
    make_kwargs.update(gym_kwargs)
    lean = dataclasses.replace(
        spec, max_episode_steps=None, order_enforce=False, disable_env_checker=True
    )
    try:
        return gym.make(lean, **make_kwargs)
    except RuntimeError as error:  # ale-py's names neither the value nor the choices
        refused = refused_game_setting(lean, make_kwargs, str(error))
        if refused is None:
            raise
        raise refused from error


# ale-py's error for a game setting it cannot set, and how to read the game's choices.
_GAME_SETTINGS = {
    "mode": ("Invalid game mode requested", "getAvailableModes"),
    "difficulty": ("Invalid difficulty requested", "getAvailableDifficulties"),
}


def check_game_setting(name: str, value: Any) -> int | None:
    """Return a ``mode`` or ``difficulty`` as None (the game's default) or an int >= 0.

    Whether the game has it is ale-py's to say, when the env is built.
    """
    if value is None:
        return None
    expected = f"{name}: expected None or one of the game's values (an integer >= 0), received "
    if not is_integer(value):
        raise TypeError(expected + describe(value))
    if value < 0:
        raise ValueError(expected + describe(value))
    return int(value)


def refused_game_setting(spec: Any, make_kwargs: dict[str, Any], message: str) -> ValueError | None:
    """Return the ValueError for a ``mode`` or ``difficulty`` the game lacks, else None.

    ``message`` is ale-py's error; the game's choices are read from an env built with its
    default mode and difficulty.
    """
    for name, (refusal, read_choices) in _GAME_SETTINGS.items():
        if refusal in message:
            defaults = {**make_kwargs, "mode": None, "difficulty": None}
            game = gym.make(spec, **defaults)
            choices = list(getattr(ale_env(game).ale, read_choices)())
            game.close()
            return ValueError(
                f"{name}: expected one of the game's {choices} (None: its default), "
                f"received {make_kwargs[name]!r}"
            )
    return None


class UnplayedFrameIsBlack(gym.Wrapper):
    """Shows a black screen for a frame the ALE does not play (its game is over).

    Put right around the ale-py env when user wrappers step every frame through it, so they
    see what the direct path shows (:meth:`plangym.videogames.atari.AtariEnv.play`): the
    ALE's screen after such a frame is the last one it drew, which no state holds.
    """

    def step(self, action: Any) -> tuple:
        """Step the ALE; a screen observation is black when the game was over before."""
        over = ale_env(self.env).ale.game_over()
        obs, reward, terminated, truncated, info = self.env.step(action)
        if over and isinstance(obs, np.ndarray) and obs.ndim > 1:  # a screen, not the RAM
            obs = np.zeros_like(obs)
        return obs, reward, terminated, truncated, info
