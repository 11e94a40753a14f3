"""The state codec of gymnasium's MuJoCo envs: moves a state between the simulator and a record.

A state is a 0-d record of five fields (see :mod:`plangym.control.mujoco.env`). Every field
is made of 8-byte words, so a record is read and written as one flat float64 buffer with
fixed slices, and the simulator's arrays are reached through views made once: MuJoCo's
bindings build a new NumPy wrapper on every ``data.xpos`` access, and per-field record views
cost about as much, which in a batch is a good part of a cheap env's step.

>>> import gymnasium
>>> gym_env = gymnasium.make("Hopper-v5").unwrapped
>>> _ = gym_env.reset(seed=0)
>>> codec = MujocoStateCodec("Hopper-v5", gym_env.model, gym_env.data, cache_rng=True)
>>> state = codec.read(gym_env.np_random, elapsed_steps=-1)
>>> state.dtype.names
('integration', 'xpos', 'xipos', 'rng', 'elapsed_steps')
>>> _ = gym_env.step(gym_env.action_space.sample())
>>> codec.write(state, gym_env.np_random, forward=True)  # returns the time-limit count
-1
>>> bool(codec.read(gym_env.np_random, elapsed_steps=-1) == state)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plangym.control.shared.mujoco_runtime import load_mujoco
from plangym.control.shared.record_state import RecordLayout
from plangym.rng import N_WORDS, GeneratorWords

mujoco = load_mujoco(family="MuJoCo")
INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION


class MujocoStateCodec:
    """Reads and writes the states of one MuJoCo simulation (``model``, ``data``).

    Args:
        env_name: Name shown in error messages.
        model: The ``mujoco.MjModel``.
        data: Its ``mujoco.MjData`` (its arrays never move, so views of them stay valid).
        cache_rng: Keep the generator's words between resets (true when nothing but reset
            draws from it, as in gymnasium's MuJoCo envs without user wrappers).
    """

    def __init__(self, env_name: str, model: Any, data: Any, cache_rng: bool):
        self.model, self.data = model, data
        n_state = mujoco.mj_stateSize(model, INTEGRATION)
        n_bodies = model.nbody
        self.layout = RecordLayout(
            env_name,
            {
                "integration": (np.float64, (n_state,)),
                "xpos": (np.float64, (n_bodies, 3)),
                "xipos": (np.float64, (n_bodies, 3)),
                "rng": (np.uint64, (N_WORDS,)),
                "elapsed_steps": (np.int64, ()),
            },
        )
        ends = np.cumsum([n_state, 3 * n_bodies, 3 * n_bodies, N_WORDS, 1])
        self.n_words = int(ends[-1])
        self.integration = slice(0, int(ends[0]))
        self.xpos = slice(int(ends[0]), int(ends[1]))
        self.xipos = slice(int(ends[1]), int(ends[2]))
        self.rng = slice(int(ends[2]), int(ends[3]))
        self.elapsed = int(ends[3])
        self.xpos_view = data.xpos.reshape(-1)
        self.xipos_view = data.xipos.reshape(-1)
        self.rng_words = GeneratorWords(cache=cache_rng)

    @property
    def dtype(self) -> np.dtype:
        """The record type of the states."""
        return self.layout.dtype

    def forget_rng(self) -> None:
        """Read the generator again next time: it is about to be drawn from or reseeded."""
        self.rng_words.forget()

    def read(self, generator: np.random.Generator, elapsed_steps: int) -> np.ndarray:
        """Return the simulation's state as a read-only 0-d record."""
        flat = np.empty(self.n_words, np.float64)
        self.read_into(flat, generator, elapsed_steps)
        flat.flags.writeable = False
        return np.ndarray((), self.layout.dtype, flat)

    def read_into(self, flat: np.ndarray, generator: np.random.Generator, elapsed: int) -> None:
        """Write the simulation's state into ``flat``, a record seen as float64 words."""
        mujoco.mj_getState(self.model, self.data, flat[self.integration], INTEGRATION)
        flat[self.xpos] = self.xpos_view
        flat[self.xipos] = self.xipos_view
        words = flat.view(np.int64)
        words[self.rng] = np.frombuffer(self.rng_words.read(generator), dtype=np.int64)
        words[self.elapsed] = elapsed

    def words(self, states: list | np.ndarray) -> np.ndarray:
        """Return checked states (0-d records, or a record block) as rows of float64 words."""
        if not isinstance(states, np.ndarray):
            states = np.frombuffer(b"".join([state.tobytes() for state in states]), self.dtype)
        return states.view(np.float64).reshape(len(states), self.n_words)

    def write(self, state: np.ndarray, generator: np.random.Generator, forward: bool) -> int:
        """Put a checked 0-d state in the simulation; return its time-limit count."""
        flat = state.reshape(1).view(np.float64) if state.flags.c_contiguous else None
        if flat is None:  # a view into someone's record block: copy it out first
            flat = state.copy().reshape(1).view(np.float64)
        return self.write_words(flat, generator, forward)

    def write_words(self, flat: np.ndarray, generator: np.random.Generator, forward: bool) -> int:
        """Put a state seen as float64 words in the simulation; return its time-limit count.

        ``forward=False`` leaves what MuJoCo derives from the state (contacts, sensors, geom
        poses) as it was: only for a restore that a step follows at once, because
        ``mj_step`` recomputes all of it before integrating.
        """
        mujoco.mj_setState(self.model, self.data, flat[self.integration], INTEGRATION)
        if forward:
            mujoco.mj_forward(self.model, self.data)
        # After mj_forward they match qpos; the recorded ones lag a substep, as stepping
        # left them, and Ant, Humanoid, Reacher and Pusher read them before stepping.
        self.xpos_view[:] = flat[self.xpos]
        self.xipos_view[:] = flat[self.xipos]
        self.rng_words.write(generator, flat[self.rng].tobytes())
        return int(flat.view(np.int64)[self.elapsed])
