"""The state codec of NES games: a header, the gym env's own bookkeeping, the emulator's dump.

A state is a uint8 vector: a header naming the game (and the stage that a
``SuperMarioBrosRandomStages`` env is playing), the Python-side bookkeeping of the Mario env
that decides its rewards and its end (``done``, the last clock and x position), the words of
the generator that draws the next game's stage, and the emulator's own dump (CPU, PPU, RAM
and mapper, about 250 KB), written straight behind the header.

>>> header = new_header("SuperMarioBros-v0", emulator_size=16)
>>> state = np.zeros(HEADER_SIZE + 16, dtype=np.uint8)
>>> state[:HEADER_SIZE] = np.frombuffer(header.tobytes(), dtype=np.uint8)
>>> state_problem(state, "SuperMarioBros-v0", 16, random_stages=False) is None
True
>>> state_problem(state, "SuperMarioBros2-v0", 16, random_stages=False)
'a state of SuperMarioBros-v0'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plangym.rng import N_WORDS, generator_words, restore_generator
from plangym.validation.values import counted

# "stage" is the stage a random-stages env is playing (NO_STAGE otherwise) and "stage_rng"
# the generator that draws the next game's stage (an autoreset inside a replay draws from
# it); "done", "time_last" and "x_position_last" are the gym env's Python-side state.
_HEADER = np.dtype(
    [
        ("magic", "S8"),
        ("game", "S48"),
        ("emulator_size", "<u4"),
        ("stage", "u1"),
        ("done", "u1"),
        ("time_last", "<i4"),
        ("x_position_last", "<i4"),
        ("stage_rng", "<u8", (N_WORDS,)),
    ]
)
HEADER_SIZE = _HEADER.itemsize
_MAGIC = b"PGNES1"
NO_STAGE = 255
N_STAGES = 32


def game_tag(name: str) -> bytes:
    """Return the bytes a state stores to name its game (the end of long names: ROM paths)."""
    return name.encode("utf-8")[-_HEADER["game"].itemsize :]


def new_header(name: str, emulator_size: int) -> np.ndarray:
    """Return the header every state of the game ``name`` starts from."""
    header = np.zeros((), dtype=_HEADER)
    header["magic"] = _MAGIC
    header["game"] = game_tag(name)
    header["emulator_size"] = emulator_size
    header["stage"] = NO_STAGE
    return header


def dump_state(
    header: np.ndarray,
    stage: int,
    emulator: Any,
    stage_rng: np.random.Generator,
    lib: Any,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Return the state of ``emulator`` playing ``stage`` (``lib``: nes-py's C library).

    ``out``: a checked uint8 vector of the state's size to write the state into.
    """
    emulator_size = int(header["emulator_size"])
    state = np.empty(HEADER_SIZE + emulator_size, dtype=np.uint8) if out is None else out
    fields = state[:HEADER_SIZE].view(_HEADER)
    fields[0] = header
    fields["stage"] = stage
    fields["done"] = emulator.done
    fields["time_last"] = getattr(emulator, "_time_last", 0)
    fields["x_position_last"] = getattr(emulator, "_x_position_last", 0)
    fields["stage_rng"] = generator_words(stage_rng)
    # The emulator writes its dump straight behind the header: no second copy.
    lib.DumpState(emulator._env, state.ctypes.data + HEADER_SIZE)
    return state


def load_state(
    state: np.ndarray,
    emulator_of: Callable[[int], Any],
    stage_rng: np.random.Generator,
    lib: Any,
) -> int:
    """Restore a checked state into the emulator of its stage; return that stage."""
    state = np.ascontiguousarray(state)
    header = state[:HEADER_SIZE].view(_HEADER)[0]
    stage = int(header["stage"])
    restore_generator(stage_rng, header["stage_rng"])
    emulator = emulator_of(stage)
    lib.LoadState(emulator._env, state.ctypes.data + HEADER_SIZE)
    emulator.done = bool(header["done"])
    if hasattr(emulator, "_time_last"):
        emulator._time_last = int(header["time_last"])
        # The Mario env keeps it as the uint8 its x_pos property returns.
        emulator._x_position_last = np.uint8(header["x_position_last"])
    return stage


def state_problem(
    state: np.ndarray, game: str, emulator_size: int, random_stages: bool
) -> str | None:
    """Say what is wrong with a uint8 vector offered as a ``game`` state (None: nothing)."""
    expected = HEADER_SIZE + emulator_size
    if len(state) != expected:
        return f"{counted(len(state), 'byte')}, where a state has {expected}"
    # A strided state (a row of a Fortran-ordered archive) holds the same bytes, but NumPy
    # reads the header's wider fields only from contiguous ones: a copy of the header.
    header = np.ascontiguousarray(state[:HEADER_SIZE]).view(_HEADER)[0]
    if header["magic"] != _MAGIC:
        return "bytes without plangym's NES header"
    owner = bytes(header["game"])
    if owner != game_tag(game):
        return f"a state of {owner.decode('utf-8', 'replace')}"
    stage = int(header["stage"])
    if (stage == NO_STAGE) == random_stages or (stage != NO_STAGE and stage >= N_STAGES):
        return f"a state of stage {stage}"
    return None
