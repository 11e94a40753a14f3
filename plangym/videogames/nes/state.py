"""The state codec of NES games: a header, the gym env's own bookkeeping, the emulator's dump.

A state is a uint8 vector: a header naming the game (and the stage that a
``SuperMarioBrosRandomStages`` env is playing), the Python-side bookkeeping of the Mario env
that decides its rewards and its end (``done``, the last clock and x position), the words of
the generator that draws the next game's stage, and the emulator's own dump (CPU, PPU, RAM
and mapper, about 4.5 KB) without its screen.

nes-py's dump ends with the 240 x 256 screen it last drew (245,760 bytes, 98% of the dump).
No future depends on it: every step emulates a whole frame, which draws every pixel again.
So states leave it out, and a restore keeps the screen the emulator shows (as the ALE does).
The dump's length also changes by a byte for each sprite on the scanline the frame ended on
(up to 8), so the dump area is that much longer than the shortest dump and the header says
how much of it is used.

>>> header = new_header("SuperMarioBros-v0", area_size=16)
>>> header["dump_size"] = SCREEN_BYTES + 8  # a dump using 8 bytes of the area before its screen
>>> header["stage_rng"] = generator_words(np.random.default_rng(0))
>>> state = np.zeros(HEADER_SIZE + 16, dtype=np.uint8)
>>> state[:HEADER_SIZE] = np.frombuffer(header.tobytes(), dtype=np.uint8)
>>> state_problem(state, "SuperMarioBros-v0", 16, random_stages=False) is None
True
>>> state_problem(state, "SuperMarioBros2-v0", 16, random_stages=False)
'a state of SuperMarioBros-v0'
>>> header["dump_size"] = SCREEN_BYTES + 17
>>> state[:HEADER_SIZE] = np.frombuffer(header.tobytes(), dtype=np.uint8)
>>> state_problem(state, "SuperMarioBros-v0", 16, random_stages=False)
'a dump of 17 bytes before the screen, where 16 fit'
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from plangym.rng import N_WORDS, generator_words, restore_generator, words_problem
from plangym.validation.values import counted

# nes-py keeps its screen as 32-bit pixels, at the end of its dump.
SCREEN_BYTES = 240 * 256 * 4
# The PPU's list of the sprites on the current scanline: 0 to 8 one-byte entries.
MAX_SCANLINE_SPRITES = 8

# "stage" is the stage a random-stages env is playing (NO_STAGE otherwise) and "stage_rng"
# the generator that draws the next game's stage (an autoreset inside a replay draws from
# it); "done", "time_last" and "x_position_last" are the gym env's Python-side state;
# "dump_size" is the length of nes-py's dump, screen included, that the state holds.
_HEADER = np.dtype(
    [
        ("magic", "S8"),
        ("game", "S48"),
        ("area_size", "<u4"),
        ("stage", "u1"),
        ("done", "u1"),
        ("time_last", "<i4"),
        ("x_position_last", "<i4"),
        ("stage_rng", "<u8", (N_WORDS,)),
        ("dump_size", "<u4"),
    ]
)
HEADER_SIZE = _HEADER.itemsize
# PGNES1 states held the whole dump, screen included, in a shorter header.
_MAGIC = b"PGNES2"
_OLD_MAGIC = b"PGNES1"
NO_STAGE = 255
N_STAGES = 32


def game_tag(name: str) -> bytes:
    """Return the bytes a state stores to name its game (the end of long names: ROM paths)."""
    return name.encode("utf-8")[-_HEADER["game"].itemsize :]


def new_header(name: str, area_size: int) -> np.ndarray:
    """Return the header every state of the game ``name`` starts from."""
    header = np.zeros((), dtype=_HEADER)
    header["magic"] = _MAGIC
    header["game"] = game_tag(name)
    header["area_size"] = area_size
    header["stage"] = NO_STAGE
    return header


class EmulatorDumps:
    """Moves nes-py dumps between emulators and the screenless dump area of states.

    nes-py writes and reads whole dumps, screen included: one buffer of the longest dump
    takes them on their way, so a state never holds the screen.

    Args:
        lib: nes-py's C library.
        emulator: a nes-py env of the game, freshly built (its dump is the shortest).
    """

    def __init__(self, lib: Any, emulator: Any) -> None:
        self.lib = lib
        self.area_size = int(lib.StateSize(emulator._env)) - SCREEN_BYTES + MAX_SCANLINE_SPRITES
        self._whole = np.zeros(self.area_size + SCREEN_BYTES, dtype=np.uint8)

    def dump(self, emulator: Any, area: np.ndarray) -> int:
        """Write ``emulator``'s dump without its screen into ``area``; return the dump's size."""
        size = int(self.lib.StateSize(emulator._env))
        if size > len(self._whole):
            raise RuntimeError(
                f"nes-py's dump has {size} bytes, more than the {len(self._whole)} expected"
            )
        self.lib.DumpState(emulator._env, self._whole.ctypes.data)
        used = size - SCREEN_BYTES
        area[:used] = self._whole[:used]
        # Zeros after the used bytes: states of the same future are equal arrays.
        area[used:] = 0
        return size

    def load(self, emulator: Any, area: np.ndarray, size: int) -> None:
        """Load the dump of ``size`` bytes whose part before the screen ``area`` holds."""
        used = size - SCREEN_BYTES
        self._whole[:used] = area[:used]
        # nes-py loads a screen with the rest: the one the emulator shows stays.
        self._whole[used:size] = _screen_bytes(self.lib, emulator)
        self.lib.LoadState(emulator._env, self._whole.ctypes.data)


def _screen_bytes(lib: Any, emulator: Any) -> np.ndarray:
    """Return the emulator's screen buffer as raw bytes (a view, not a copy)."""
    address = lib.Screen(emulator._env)
    return np.ctypeslib.as_array((ctypes.c_uint8 * SCREEN_BYTES).from_address(address))


def dump_state(
    header: np.ndarray,
    stage: int,
    emulator: Any,
    stage_rng: np.random.Generator,
    dumps: EmulatorDumps,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Return the state of ``emulator`` playing ``stage``.

    ``out``: a checked uint8 vector of the state's size to write the state into.
    """
    state = np.empty(HEADER_SIZE + dumps.area_size, dtype=np.uint8) if out is None else out
    fields = state[:HEADER_SIZE].view(_HEADER)
    fields[0] = header
    fields["stage"] = stage
    fields["done"] = emulator.done
    fields["time_last"] = getattr(emulator, "_time_last", 0)
    fields["x_position_last"] = getattr(emulator, "_x_position_last", 0)
    fields["stage_rng"] = generator_words(stage_rng)
    fields["dump_size"] = dumps.dump(emulator, state[HEADER_SIZE:])
    return state


def load_state(
    state: np.ndarray,
    emulator_of: Callable[[int], Any],
    stage_rng: np.random.Generator,
    dumps: EmulatorDumps,
) -> int:
    """Restore a checked state into the emulator of its stage; return that stage."""
    header = _header_of(state)
    stage = int(header["stage"])
    restore_generator(stage_rng, header["stage_rng"])
    emulator = emulator_of(stage)
    dumps.load(emulator, state[HEADER_SIZE:], int(header["dump_size"]))
    emulator.done = bool(header["done"])
    if hasattr(emulator, "_time_last"):
        emulator._time_last = int(header["time_last"])
        # The Mario env keeps it as the uint8 its x_pos property returns.
        emulator._x_position_last = np.uint8(header["x_position_last"])
    return stage


def _header_of(state: np.ndarray) -> np.void:
    # A strided state (a row of a Fortran-ordered archive) holds the same bytes, but NumPy
    # reads the header's wider fields only from contiguous ones: a copy of the header.
    return np.ascontiguousarray(state[:HEADER_SIZE]).view(_HEADER)[0]


def state_problem(state: np.ndarray, game: str, area_size: int, random_stages: bool) -> str | None:
    """Say what is wrong with a uint8 vector offered as a ``game`` state (None: nothing)."""
    if bytes(state[: len(_OLD_MAGIC)]) == _OLD_MAGIC:
        return "a state of plangym's earlier NES format (it held the screen): make it again"
    expected = HEADER_SIZE + area_size
    if len(state) != expected:
        return f"{counted(len(state), 'byte')}, where a state has {expected}"
    header = _header_of(state)
    if header["magic"] != _MAGIC:
        return "bytes without plangym's NES header"
    owner = bytes(header["game"])
    if owner != game_tag(game):
        return f"a state of {owner.decode('utf-8', 'replace')}"
    stage = int(header["stage"])
    if (stage == NO_STAGE) == random_stages or (stage != NO_STAGE and stage >= N_STAGES):
        return f"a state of stage {stage}"
    used = int(header["dump_size"]) - SCREEN_BYTES
    # The shortest dump fills the area but for MAX_SCANLINE_SPRITES bytes, or for twice that
    # if the emulator the area was measured on had sprites on its scanline.
    if not area_size - 2 * MAX_SCANLINE_SPRITES <= used <= area_size:
        return f"a dump of {counted(used, 'byte')} before the screen, where {area_size} fit"
    return words_problem(header["stage_rng"])
