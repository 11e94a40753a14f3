"""The state codec of gymnasium's MuJoCo envs: a state is one flat float64 vector.

A state is a read-only 1-D float64 array whose length is fixed by the model (its
:attr:`~MujocoStateCodec.size`). It holds, in this order (:attr:`~MujocoStateCodec.slices`):

* ``integration``: MuJoCo's integration state, so ``state[:n]`` is exactly what
  plangym 0.1 returned as the whole state;
* ``xpos`` and ``xipos``: the bodies' positions as the last substep left them;
* ``rng``: the env generator's six uint64 words, each as its high and low 32-bit half;
* ``elapsed_steps``: the time-limit count (-1 without a limit) as a signed high half and
  an unsigned low 32-bit half;
* ``model_tag``: a 32-bit checksum of the model's structure, so that a state of another
  model of the same length (HalfCheetah and Walker2d have 146 values) is refused.

Every integer is split into pieces below 2**32, which float64 holds exactly, so the
state compares with ``np.allclose``, stacks with ``np.stack`` and restores bit-exactly.
The simulator's arrays are reached through views made once: MuJoCo's bindings build a new
NumPy wrapper on every ``data.xpos`` access, which in a batch is a visible cost.

>>> import gymnasium
>>> gym_env = gymnasium.make("Hopper-v5").unwrapped
>>> _ = gym_env.reset(seed=0)
>>> codec = MujocoStateCodec("Hopper-v5", gym_env.model, gym_env.data, cache_rng=True)
>>> state = codec.read(gym_env.np_random, elapsed_steps=-1)
>>> state.dtype, state.shape, codec.slices["rng"]
(dtype('float64'), (103,), slice(88, 100, None))
>>> _ = gym_env.step(gym_env.action_space.sample())
>>> codec.write(state, gym_env.np_random, forward=True)  # returns the time-limit count
-1
>>> bool((codec.read(gym_env.np_random, elapsed_steps=-1) == state).all())
True
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np

from plangym.control.shared.mujoco_runtime import load_mujoco
from plangym.rng import N_WORDS, GeneratorWords, words_problem
from plangym.validation import describe
from plangym.validation.values import with_article

mujoco = load_mujoco(family="MuJoCo")
INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION
HALF = 1 << 32  # integers travel as pieces in [0, HALF) (a signed high half for int64)
FLOAT64 = np.dtype(np.float64)
_LOW_MASK = np.uint64(HALF - 1)
_SHIFT = np.uint64(32)


def split_uint64(words: Any) -> np.ndarray:
    """Return uint64 ``words`` as float64 pieces: each word's high, then low, 32-bit half.

    >>> split_uint64(np.array([2**64 - 1, 5], dtype=np.uint64))
    array([4.2949673e+09, 4.2949673e+09, 0.0000000e+00, 5.0000000e+00])
    """
    words = np.asarray(words, dtype=np.uint64)
    pieces = np.empty(2 * len(words), FLOAT64)
    pieces[0::2] = words >> _SHIFT
    pieces[1::2] = words & _LOW_MASK
    return pieces


def join_uint64(pieces: np.ndarray) -> np.ndarray:
    """Undo :func:`split_uint64` (the pieces must be integers in [0, 2**32)).

    >>> join_uint64(split_uint64(np.array([2**64 - 1], dtype=np.uint64)))
    array([18446744073709551615], dtype=uint64)
    """
    halves = pieces.astype(np.uint64)
    return (halves[0::2] << _SHIFT) | halves[1::2]


def split_int64(value: int) -> tuple[float, float]:
    """Return an int64 as ``(high, low)``: high in [-2**31, 2**31), low in [0, 2**32).

    >>> split_int64(-1), join_int64(*split_int64(-(2**63)))
    ((-1.0, 4294967295.0), -9223372036854775808)
    """
    high, low = divmod(value, HALF)
    return float(high), float(low)


def join_int64(high: float, low: float) -> int:
    """Undo :func:`split_int64`."""
    return int(high) * HALF + int(low)


def model_tag(model: Any) -> int:
    """Return a 32-bit checksum of the model's structure: sizes, names, tree, joint types.

    Only integers, names and the time step (parsed, never computed) enter it, so one
    XML gives one tag on every machine. Models that differ only in their numbers
    (Hopper-v4 and Hopper-v5, Humanoid and HumanoidStandup) share a tag: their states
    fit each other's simulations.
    """
    sizes = [model.nq, model.nv, model.na, model.nu, model.nbody, model.njnt, model.ngeom]
    sizes += [model.nmocap, model.nuserdata, mujoco.mj_stateSize(model, INTEGRATION)]
    parts = [
        np.array(sizes, dtype="<i8").tobytes(),
        model.names,
        model.body_parentid.astype("<i4").tobytes(),
        model.jnt_type.astype("<i4").tobytes(),
        model.geom_type.astype("<i4").tobytes(),
        np.array(model.opt.timestep, dtype="<f8").tobytes(),
    ]
    return zlib.crc32(b"".join(parts))


class MujocoStateCodec:
    """Reads, writes and checks the states of one MuJoCo simulation (``model``, ``data``).

    Args:
        env_name: Name shown in error messages.
        model: The ``mujoco.MjModel``.
        data: Its ``mujoco.MjData`` (its arrays never move, so views of them stay valid).
        cache_rng: Keep the generator's words between resets (true when nothing but reset
            draws from it, as in gymnasium's MuJoCo envs without user wrappers).
    """

    def __init__(self, env_name: str, model: Any, data: Any, cache_rng: bool):
        self.env_name, self.model, self.data = env_name, model, data
        sizes = {
            "integration": mujoco.mj_stateSize(model, INTEGRATION),
            "xpos": 3 * model.nbody,
            "xipos": 3 * model.nbody,
            "rng": 2 * N_WORDS,
            "elapsed_steps": 2,
            "model_tag": 1,
        }
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start
        self.integration, self.xpos, self.xipos, self.rng = (
            self.slices[name] for name in ("integration", "xpos", "xipos", "rng")
        )
        self.elapsed = self.slices["elapsed_steps"].start
        self.tag = model_tag(model)
        # The integer entries (from rng on) and the range each must lie in.
        self.integers = self.rng.start
        self.lower = np.array([0.0] * 2 * N_WORDS + [-(2.0**31), 0.0, self.tag])
        self.upper = np.array([float(HALF)] * 2 * N_WORDS + [2.0**31, float(HALF), self.tag + 1])
        self.xpos_view = data.xpos.reshape(-1)
        self.xipos_view = data.xipos.reshape(-1)
        self.rng_words = GeneratorWords(cache=cache_rng)
        # The last generator words converted, as bytes and as pieces (one conversion per
        # generator state rather than one per state read or written).
        self._words: bytes | None = None
        self._pieces = np.zeros(2 * N_WORDS)
        self._piece_bytes = b""

    def forget_rng(self) -> None:
        """Read the generator again next time: it is about to be drawn from or reseeded."""
        self.rng_words.forget()

    def read(self, generator: np.random.Generator, elapsed_steps: int) -> np.ndarray:
        """Return the simulation's state as a new read-only float64 vector."""
        flat = np.empty(self.size, FLOAT64)
        self.read_into(flat, generator, elapsed_steps)
        flat.flags.writeable = False
        return flat

    def read_into(self, flat: np.ndarray, generator: np.random.Generator, elapsed: int) -> None:
        """Write the simulation's state into ``flat``, a float64 vector of :attr:`size`."""
        mujoco.mj_getState(self.model, self.data, flat[self.integration], INTEGRATION)
        flat[self.xpos] = self.xpos_view
        flat[self.xipos] = self.xipos_view
        words = self.rng_words.read(generator)
        if words != self._words:
            self._remember(words, split_uint64(np.frombuffer(words, dtype="<u8")))
        flat[self.rng] = self._pieces
        high, low = divmod(elapsed, HALF)
        flat[self.elapsed] = high
        flat[self.elapsed + 1] = low
        flat[self.elapsed + 2] = self.tag

    def write(self, flat: np.ndarray, generator: np.random.Generator, forward: bool) -> int:
        """Put a checked state in the simulation; return its time-limit count.

        ``forward=False`` leaves what MuJoCo derives from the state (contacts, sensors, geom
        poses) as it was: only for a restore that a step follows at once, because
        ``mj_step`` recomputes all of it before integrating.
        """
        if not flat.flags.c_contiguous:  # mj_setState reads a contiguous buffer
            flat = np.ascontiguousarray(flat)
        pieces = flat[self.rng]
        if pieces.tobytes() != self._piece_bytes:
            self._remember(join_uint64(pieces).astype("<u8").tobytes(), pieces.copy())
        assert self._words is not None, "_remember set them"
        self.rng_words.write(generator, self._words)  # first: corrupt words change nothing
        mujoco.mj_setState(self.model, self.data, flat[self.integration], INTEGRATION)
        if forward:
            mujoco.mj_forward(self.model, self.data)
        # After mj_forward they match qpos; the recorded ones lag a substep, as stepping
        # left them, and Ant, Humanoid, Reacher and Pusher read them before stepping.
        self.xpos_view[:] = flat[self.xpos]
        self.xipos_view[:] = flat[self.xipos]
        return int(flat[self.elapsed]) * HALF + int(flat[self.elapsed + 1])

    def _remember(self, words: bytes, pieces: np.ndarray) -> None:
        self._words, self._pieces, self._piece_bytes = words, pieces, pieces.tobytes()

    def fields(self, state: np.ndarray) -> dict[str, Any]:
        """Return a checked state's parts by name, the integers joined back."""
        fields: dict[str, Any] = {
            name: state[self.slices[name]] for name in ("integration", "xpos", "xipos")
        }
        fields["xpos"] = fields["xpos"].reshape(-1, 3)
        fields["xipos"] = fields["xipos"].reshape(-1, 3)
        fields["rng"] = join_uint64(state[self.rng])
        fields["elapsed_steps"] = join_int64(state[self.elapsed], state[self.elapsed + 1])
        fields["model_tag"] = int(state[self.elapsed + 2])
        return fields

    # Checks ------------------------------------------------------------------------------
    def check(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this model (TypeError for a non-array)."""
        expected = (
            f"expected {with_article(self.env_name)} state (a float64 vector of {self.size} values"
        )
        if not isinstance(state, np.ndarray):
            raise TypeError(f"{name}: {expected} from get_state()), received {describe(state)}")
        if state.dtype != FLOAT64 or state.shape != (self.size,):
            raise ValueError(f"{name}: {expected} from get_state()), received {describe(state)}")
        tail = state[self.integers :]
        if (
            self._bad_integers(tail[None]).any()
            or not math.isfinite(state[: self.integers].sum())  # no state's values overflow
            or tail[7] % 2 != 1
            or tail[8]
            or tail[9] > 1
            or tail[10]
        ):
            raise ValueError(f"{name}: {expected}), received {self._problem(state)}")

    def check_all(self, states: list) -> None:
        """Check a batch: each state's type and shape, then their integers in one pass."""
        shape = (self.size,)
        for i, state in enumerate(states):
            if not (type(state) is np.ndarray and state.shape == shape and state.dtype == FLOAT64):
                self.check(state, name=f"states[{i}]")
        if states:
            # One array of the whole batch: a third of the cost of stacking the tails.
            bad = self._bad_rows(np.array(states))
            if bad.any():
                first = int(np.argmax(bad))
                self.check(states[first], name=f"states[{first}]")

    def _bad_integers(self, tails: np.ndarray) -> np.ndarray:
        """Per row of integer entries: whether one is not an integer of its range."""
        good = (tails >= self.lower) & (tails < self.upper) & (np.floor(tails) == tails)
        return ~good.all(axis=1)

    def _bad_rows(self, rows: np.ndarray) -> np.ndarray:
        """Per state: whether a value is not finite, or an integer entry not of its range.

        MuJoCo meets a NaN in the physics by resetting the simulation in the middle of a
        step, with a warning; the generator's words must be a PCG64 state
        (:func:`plangym.rng.words_problem`: pieces 7-10 are the increment's low half,
        ``has_uint32`` and ``uinteger``; :meth:`check` tests them one by one).
        """
        tails = rows[:, self.integers :]
        bad = self._bad_integers(tails) | ~np.isfinite(rows[:, : self.integers]).all(axis=1)
        return (
            bad
            | (tails[:, 7] % 2 != 1)
            | (tails[:, 8] != 0)
            | (tails[:, 9] > 1)
            | (tails[:, 10] != 0)
        )

    def _problem(self, state: np.ndarray) -> str:
        finite = np.isfinite(state[: self.integers])
        if not finite.all():
            index = int(np.argmin(finite))
            return f"{float(state[index])!r} at position {index}: expected finite values there"
        tail = state[self.integers :]
        if tail[-1] != self.tag:
            tag = float(tail[-1])  # a whole number in a state of any model, unless corrupt
            shown = int(tag) if tag.is_integer() else repr(tag)
            return f"a state of another MuJoCo model (model tag {shown}, not {self.tag})"
        good = (tail >= self.lower) & (tail < self.upper) & (np.floor(tail) == tail)
        if good.all():  # check() sums the values: huge finite ones overflow the sum
            words = words_problem(join_uint64(tail[: 2 * N_WORDS]))
            return words or "values so large that their sum is not finite"
        index = int(np.argmin(good))
        what = "generator" if index < 2 * N_WORDS else "elapsed_steps"
        low, high = int(self.lower[index]), int(self.upper[index])
        return (
            f"{float(tail[index])!r} at position {self.integers + index}, where a state "
            f"holds a piece of its {what}: an integer in [{low}, {high})"
        )
