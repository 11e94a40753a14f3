"""``FastLunarLander-v0``: a lunar lander simulated by plangym itself, with exact array states.

It plays like gymnasium's LunarLander-v3: the same 8 observations (position, velocity,
angle, spin, leg contacts) with the same scaling, the same actions (``Discrete(4)``, or two
throttles with ``continuous=True``), rewards and episode ends, and a terrain, an initial
push and engine dispersion drawn from the env's ``np_random``. The physics is plangym's own
(:mod:`plangym.control.lunar_lander.physics`), so trajectories differ from gymnasium's.
Because every number that decides the future is plain Python float64, a state is a 0-d
record of fixed layout (:data:`STATE_FIELDS`) and a restore is a copy.

``deterministic=True`` makes every random draw the middle of its range: flat ground, no
initial push, no engine dispersion. Without the Box2D extra this env works all the same.

>>> env = LunarLander()
>>> state, obs, info = env.reset()
>>> obs.shape, state.dtype.names[:3]
((8,), ('body', 'anchor', 'terrain'))
>>> first = env.step(2, state=state, dt=10)
>>> again = env.step(2, state=state, dt=10)
>>> bool(first[0] == again[0]), bool((first[1] == again[1]).all())
(True, True)
"""

from __future__ import annotations

import math
import struct
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from plangym.constructor import parent_arguments, read_only
from plangym.control.lunar_lander.physics import (
    CHUNKS,
    FPS,
    HELIPAD_Y,
    INITIAL_RANDOM,
    LEG_DOWN,
    SCALE,
    H,
    LanderBody,
    Terrain,
    W,
    advance,
    fire_engines,
    flat_terrain,
    picture,
    random_terrain,
)
from plangym.control.shared.record_state import RecordLayout
from plangym.core import PlangymEnv, wrap_callable
from plangym.rng import N_WORDS, GeneratorWords

__all__ = ["STATE_FIELDS", "LanderSim", "LunarLander"]

MAX_EPISODE_STEPS = 1000  # gymnasium's limit for LunarLander-v3
# At rest: both legs down, slower than Box2D's sleep tolerances for Box2D's time to sleep.
SLEEP_SPEED, SLEEP_SPIN, REST_STEPS = 0.01, 2 * math.pi / 180, 25
# The records' fields, in order. ``body`` is x, y, vx, vy, angle and spin; ``anchor`` is
# where each foot holds the ground; ``legs`` are the contact flags the observation shows.
STATE_FIELDS = {
    "body": (np.float64, (6,)),
    "anchor": (np.float64, (2,)),
    "terrain": (np.float64, (CHUNKS,)),
    "prev_shaping": (np.float64, ()),
    "rest_steps": (np.int64, ()),
    "elapsed_steps": (np.int64, ()),
    "rng": (np.uint64, (N_WORDS,)),
    "legs": (np.bool_, (2,)),
    "game_over": (np.bool_, ()),
}
# The same bytes as one struct: packing a record this way costs a fraction of filling it.
_RECORD = struct.Struct(f"<8d{CHUNKS}dd2q{8 * N_WORDS}s3?")
_TAIL = 8 + CHUNKS  # where the fields after the terrain start in the unpacked values
_OBS_HIGH = np.array([2.5, 2.5, 10, 10, 2 * math.pi, 10, 1, 1], dtype=np.float32)
_OBS_LOW = np.array([-2.5, -2.5, -10, -10, -2 * math.pi, -10, 0, 0], dtype=np.float32)
_EXTRA_KWARGS = frozenset({"gravity", "obs_type", "return_image"})


def check_gravity(gravity: Any) -> float:
    """Return ``gravity`` as a float if it is in gymnasium's range (-12, 0), else raise."""
    if isinstance(gravity, bool) or not isinstance(gravity, int | float) or not -12 < gravity < 0:
        raise ValueError(f"gravity: expected a number in (-12, 0) m/s², received {gravity!r}")
    return float(gravity)


def shaping(values: list[float]) -> float:
    """Return gymnasium's shaping potential: near the pad, slow, level and on both legs is best."""
    return (
        -100 * math.sqrt(values[0] * values[0] + values[1] * values[1])
        - 100 * math.sqrt(values[2] * values[2] + values[3] * values[3])
        - 100 * abs(values[4])
        + 10 * values[6]
        + 10 * values[7]
    )


class LanderSim(gym.Env):
    """The lander as a gymnasium env, with its state as bytes (:meth:`snapshot`, :meth:`restore`).

    Args:
        continuous: Two throttles (main, sideways) in [-1, 1] instead of 4 actions.
        deterministic: Flat ground, no initial push, no engine dispersion.
        gravity: In m/s², within (-12, 0).
        render_mode: None or "rgb_array".
        max_episode_steps: Truncate episodes after this many steps; None for no limit.
        cache_rng: Keep the generator's words while only this env draws from it (false
            when wrappers might draw too).

    >>> sim = LanderSim(deterministic=True)
    >>> obs, _ = sim.reset()
    >>> raw = sim.snapshot()
    >>> step = sim.step(2)
    >>> sim.restore(raw)
    >>> bool((sim.step(2)[0] == step[0]).all())
    True
    """

    # Not a ClassVar: gymnasium's Env declares metadata as an instance attribute.
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": FPS}  # noqa: RUF012

    def __init__(
        self,
        continuous: bool = False,
        deterministic: bool = False,
        gravity: float = -10.0,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        cache_rng: bool = True,
    ):
        self.continuous, self.deterministic = continuous, deterministic
        self.gravity = check_gravity(gravity)
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        self.observation_space = spaces.Box(_OBS_LOW, _OBS_HIGH)
        self.action_space = (
            spaces.Box(-1, 1, (2,), dtype=np.float32) if continuous else spaces.Discrete(4)
        )
        self.body, self.terrain = LanderBody(), Terrain(flat_terrain())
        self.prev_shaping, self.game_over = 0.0, False
        self.rest_steps = self.elapsed_steps = 0
        # The generator's words: read once per episode, unless steps draw (dispersion).
        self.rng_words = GeneratorWords(cache=cache_rng)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        """Draw a terrain and a push, then take one frame with the engines off."""
        super().reset(seed=seed)
        self.rng_words.forget()
        rng = None if self.deterministic else self.np_random
        self.terrain = Terrain(flat_terrain() if rng is None else random_terrain(rng))
        self.body = LanderBody()
        if rng is not None:  # gymnasium's push: a force for one frame, i.e. this impulse
            fx, fy = rng.uniform(-INITIAL_RANDOM, INITIAL_RANDOM, size=2).tolist()
            self.body.push(fx / FPS, fy / FPS, self.body.x, self.body.y)
        self.game_over, self.rest_steps, self.elapsed_steps = False, 0, 0
        values = self._frame(0.0, 0.0, 0.0)
        self.prev_shaping = shaping(values)
        return np.array(values, dtype=np.float32), {}

    def step(self, action: Any) -> tuple:
        """Fire the engines ``action`` asks for and advance one frame (1/50 s)."""
        main, side, direction = self._throttles(action)
        values = self._frame(main, side, direction)
        potential = shaping(values)
        reward = potential - self.prev_shaping - 0.30 * main - 0.03 * side
        self.prev_shaping = potential
        self.elapsed_steps += 1
        terminated = False
        if self.game_over or abs(values[0]) >= 1.0:
            terminated, reward = True, -100.0
        elif self.rest_steps >= REST_STEPS:
            terminated, reward = True, 100.0
        limit = self.max_episode_steps
        truncated = limit is not None and self.elapsed_steps >= limit
        return np.array(values, dtype=np.float32), reward, terminated, truncated, {}

    def _throttles(self, action: Any) -> tuple[float, float, float]:
        """Return (main power, side power, side direction) as gymnasium reads the action."""
        if self.continuous:
            main = min(max(float(action[0]), -1.0), 1.0)
            lateral = min(max(float(action[1]), -1.0), 1.0)
            side = abs(lateral) if abs(lateral) > 0.5 else 0.0
            return ((main + 1.0) * 0.5 if main > 0.0 else 0.0), side, math.copysign(1.0, lateral)
        if action == 0:
            return 0.0, 0.0, 0.0
        if action == 2:
            return 1.0, 0.0, 0.0
        if action in (1, 3):
            return 0.0, 1.0, float(action - 2)
        raise ValueError(f"action: expected 0, 1, 2 or 3, received {action!r}")

    def _frame(self, main: float, side: float, direction: float) -> list[float]:
        """Fire the engines, advance the physics; return the observation's values."""
        if self.deterministic:
            d0 = d1 = 0.0
        else:  # gymnasium draws the dispersion every frame, engines on or off
            rng = self.np_random
            self.rng_words.forget()
            d0, d1 = (2 * rng.random() - 1) / SCALE, (2 * rng.random() - 1) / SCALE
        body = self.body
        fire_engines(body, main, side, direction, d0, d1)
        self.game_over = advance(body, self.terrain, self.gravity) or self.game_over
        left, right = body.contact
        speed2 = body.vx * body.vx + body.vy * body.vy
        resting = left and right and speed2 < SLEEP_SPEED**2 and abs(body.omega) < SLEEP_SPIN
        self.rest_steps = self.rest_steps + 1 if resting else 0
        return [
            (body.x - W / 2) / (W / 2),
            (body.y - (HELIPAD_Y + LEG_DOWN)) / (H / 2),
            body.vx * (W / 2) / FPS,
            body.vy * (H / 2) / FPS,
            body.angle,
            20.0 * body.omega / FPS,
            1.0 if left else 0.0,
            1.0 if right else 0.0,
        ]

    def snapshot(self) -> bytes:
        """Return the bytes of a record of :data:`STATE_FIELDS` holding the env's state."""
        words = self.rng_words.read(self.np_random)
        body = self.body
        return _RECORD.pack(
            body.x, body.y, body.vx, body.vy, body.angle, body.omega, *body.anchor,
            *self.terrain.heights, self.prev_shaping, self.rest_steps, self.elapsed_steps,
            words, *body.contact, self.game_over,
        )  # fmt: skip

    def restore(self, raw: bytes) -> None:
        """Put the env in the state of a record's bytes (from :meth:`snapshot`)."""
        values = _RECORD.unpack(raw)
        # The words first: corrupt ones raise before anything has changed.
        self.rng_words.write(self.np_random, values[_TAIL + 3])
        body = self.body
        body.x, body.y, body.vx, body.vy, body.angle, body.omega = values[:6]
        body.anchor[:] = values[6:8]
        heights = values[8:_TAIL]
        if heights != self.terrain.heights:
            self.terrain = Terrain(heights)
        self.prev_shaping, self.rest_steps, self.elapsed_steps = values[_TAIL : _TAIL + 3]
        body.contact[:] = values[_TAIL + 4 : _TAIL + 6]
        self.game_over = values[_TAIL + 6]

    def render(self) -> np.ndarray | None:
        """Return a (400, 600, 3) picture with ``render_mode="rgb_array"``, else None."""
        return picture(self.body, self.terrain) if self.render_mode == "rgb_array" else None


class LunarLander(PlangymEnv):
    """plangym 0.1's ``FastLunarLander-v0``: plangym's own lander, with exact record states.

    Args:
        name: Defaults to ``"FastLunarLander-v0"``.
        deterministic: Flat ground, no initial push, no engine dispersion.
        continuous: Two throttles in [-1, 1] (main; sideways) instead of 4 actions.
        remove_time_limit: None or True: no episode limit; False: 1000 steps, as gymnasium.
        episodic_life: Accepted for plangym 0.1 compatibility; the lander has one life.
        render_mode: "rgb_array" (pictures, ``obs_type="rgb"``) or None.
        kwargs: ``gravity`` (m/s², in (-12, 0)), ``obs_type``, ``return_image``.
        Other arguments: see :class:`~plangym.core.PlangymEnv`.

    >>> env = LunarLander(continuous=True, deterministic=True)
    >>> state, *_ = env.reset()
    >>> new_state, obs, reward, *_ = env.step(np.array([1.0, 0.0], np.float32), state=state)
    >>> float(new_state["body"][3]) > float(state["body"][3])  # the main engine lifts
    True
    """

    TIME_LIMIT_IN_STATE = False  # its states have no room for a wrapper's count

    FAST_PATHS = True
    AVAILABLE_RENDER_MODES = frozenset({"rgb_array", None})

    def __init__(
        self,
        name: str | None = None,
        frameskip: int = 1,
        episodic_life: bool = True,
        autoreset: bool = True,
        wrappers: list[wrap_callable] | None = None,
        delay_setup: bool = False,
        deterministic: bool = False,
        continuous: bool = False,
        render_mode: str | None = "rgb_array",
        remove_time_limit: bool | None = None,
        **kwargs: Any,
    ):
        unknown = sorted(set(kwargs) - _EXTRA_KWARGS)
        if unknown:
            raise TypeError(
                f"kwargs: expected only {sorted(_EXTRA_KWARGS)} (FastLunarLander is plangym's "
                f"own simulator, not gymnasium's), received {unknown}"
            )
        check_gravity(kwargs.get("gravity", -10.0))
        name = "FastLunarLander-v0" if name is None else name
        self._deterministic, self._continuous = bool(deterministic), bool(continuous)
        self._layout = RecordLayout(name, STATE_FIELDS)
        remove_time_limit = True if remove_time_limit is None else bool(remove_time_limit)
        super().__init__(**parent_arguments(LunarLander, locals()))

    deterministic = read_only(
        "_deterministic", "Whether every episode is the same (no random draws)."
    )

    continuous = read_only("_continuous", "Whether actions are two continuous engine throttles.")

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        return self._layout.dtype

    def init_gym_env(self) -> gym.Env:
        """Build the simulator (it keeps the time limit itself) and start an episode."""
        sim = LanderSim(
            continuous=self.continuous,
            deterministic=self.deterministic,
            render_mode=self.render_mode,
            max_episode_steps=None if self.remove_time_limit else MAX_EPISODE_STEPS,
            cache_rng=not self._wrappers,  # a wrapper might draw from np_random too
            **self._gym_env_kwargs,
        )
        sim.reset()
        return sim

    def _sim(self) -> LanderSim:
        """Return the simulator under any wrappers (``unwrapped`` is typed a plain Env)."""
        return cast(LanderSim, self.gym_env.unwrapped)

    def generator_shared(self) -> None:
        """Read and write the generator's words with every state (others draw from it)."""
        sim = self._sim()
        sim.rng_words.cache = False
        sim.rng_words.forget()

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a read-only 0-d record array."""
        # A 0-d array over its own bytes object: read-only, and it keeps nothing else alive.
        return np.ndarray((), self._layout.dtype, self._sim().snapshot())

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` (from any instance or process)."""
        self._layout.check(state)
        self._sim().restore(state.tobytes())

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise TypeError unless ``state`` is a record of this env's layout."""
        self._layout.check(state, name=name)

    def check_states(self, states: list) -> None:
        """Check a batch of states; the error names the first bad one, ``states[i]``."""
        self._layout.check_all(states)

    def process_terminal(self, terminal: Any, obs: Any = None, **kwargs: Any) -> bool:
        """Return whether the episode ended: ``terminal``, or the lander's state ends it.

        plangym 0.1's hook: a crash, leaving the screen sideways or coming to rest ends
        the episode even when ``terminal`` is false. The simulator's exact state decides,
        as its own ``step`` does; ``obs`` (0.1 read the position from it) is accepted and
        not needed. Before the simulator is built, only ``terminal`` counts.
        """
        if self._gym_env is None:
            return bool(terminal)
        sim = self._sim()
        off_screen = abs((sim.body.x - W / 2) / (W / 2)) >= 1.0
        return bool(terminal or sim.game_over or off_screen or sim.rest_steps >= REST_STEPS)
