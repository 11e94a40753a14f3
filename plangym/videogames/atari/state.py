"""The state codec of Atari games: one fixed-size uint8 vector per game for the ALE's state.

The ALE serializes the console (cartridge md5, CPU, TIA, RAM, banks ...) in fields whose
sizes a game fixes, plus two Mersenne Twisters as decimal text: the console's own generator
and, with ``include_rng``, the ALE's. Each text is 624 words and an index, so its length
moves between about 1,250 and 6,867 bytes as the generator moves (the ALE draws twice per
frame), and raw states of one game differ in length (14,419 to 14,447 bytes on MsPacman).

A plangym state stores each generator as fixed-size binary words instead (2,500 bytes each)
and rebuilds the exact text on restore, so every state of one env has one length and about
half the size. What a subclass keeps comes first (Montezuma's tracker), then the ALE's
other bytes verbatim, the generators' words, and a trailer of :data:`TRAILER_SIZE` bytes:
the last action the console received (an ALE action number as int64, the one a sticky
frame repeats) and the words of plangym's sticky-action generator. Encoding refuses text it
could not rebuild to the byte, so ``decode(encode(raw)) == raw`` for every state it returns.

The words of a Mersenne Twister change once every 624 draws and only its index moves in
between, so the codec remembers the last few word blocks it converted: most states of a
run convert nothing but an index.

>>> from plangym.videogames.atari import AtariEnv
>>> env = AtariEnv("ALE/Pong-v5")
>>> raw = env.ale.cloneState(include_rng=True).serialize()
>>> codec = StateCodec(raw, "ALE/Pong-v5", generators=2)
>>> state = codec.encode(b"", raw, last_action=3, words=bytes(8 * N_WORDS))
>>> decoded, last_action, _ = codec.decode(state)
>>> decoded == raw, last_action, len(state) == codec.size < len(raw)
(True, 3, True)
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from typing import Any

import numpy as np

from plangym.rng import N_WORDS
from plangym.validation.values import counted
from plangym.videogames.env import check_uint8_vector

_MD5 = re.compile(rb"[0-9a-f]{32}")
# A Mersenne Twister as text: at least 624 numbers and their separators.
_GENERATOR_TEXT = re.compile(rb"[0-9 ]{1200,}")
_LENGTH = struct.Struct("<I")  # the ALE's string length prefix
_LAST_ACTION = struct.Struct("<q")
_WORDS = struct.Struct(f"<{N_WORDS}Q")  # plangym.rng.generator_words: PCG64's six words
TRAILER_SIZE = _LAST_ACTION.size + _WORDS.size
ALE_ACTIONS = range(18)  # the numbers of ale_py.Action
# Cartridges whose save rounds part of their state (the DPC chip of Pitfall II keeps its
# sound clock fraction to 8 decimals), so the running emulator drifts from a state it saved.
_LOSSY_CARTRIDGES = (b"CartridgeDPC",)
# Word blocks remembered per env: enough for the generators of several parallel workers.
_CACHED_BLOCKS = 32
_KEY = 16  # bytes of a block (binary words or text) that index it in the cache
# States that passed the check, remembered so that a planner passing the same states again
# (a swarm's walkers, a batch's states) is not checked again: about 3.6 MB of MsPacman states.
_PASSED_KEPT = 1024


def cartridge_tag(reference: bytes, game: str) -> tuple[int, bytes]:
    """Return where the cartridge md5 sits in a serialized ALE state, and the md5."""
    match = _MD5.search(reference)
    if match is None:  # a new ALE serialization format: fail loudly, not inexactly
        raise RuntimeError(f"{game}: cannot find the cartridge md5 in the ALE state")
    return match.start(), match.group()


def wrong_length(name: str, game: str, expected: int, received: int) -> ValueError:
    """Return the error for a state of ``game`` whose length is not its format's."""
    return ValueError(
        f"{name}: expected a state of {game} of {expected} bytes, received "
        f"{counted(received, 'byte')}: "
        "truncated or corrupt, from other settings (clone_seeds) or from an older plangym"
    )


def saves_lossily(reference: bytes) -> bool:
    """Whether the cartridge's saves round part of its state (see ``_LOSSY_CARTRIDGES``)."""
    return any(tag in reference for tag in _LOSSY_CARTRIDGES)


def _generator_spans(reference: bytes, game: str, generators: int) -> list[tuple[int, int]]:
    """Return where the generators' texts start and end in a serialized ALE state."""
    spans = [match.span() for match in _GENERATOR_TEXT.finditer(reference)]
    if len(spans) != generators or any(
        start < _LENGTH.size or _LENGTH.unpack_from(reference, start - 4)[0] != end - start
        for start, end in spans
    ):
        raise RuntimeError(
            f"{game}: expected {generators} random generator(s) as length-prefixed text in "
            f"the ALE state, found {len(spans)}: a new ALE serialization format"
        )
    return spans


class _GeneratorTexts:
    """Converts a generator's text to fixed-size binary words and back, remembering blocks.

    A block is the text of every number but the last (with the separator after it) and the
    same numbers as little-endian uint32; the last number (the index) is converted each time.
    """

    def __init__(self, numbers: int, game: str):
        self.numbers = numbers
        self.size = 4 * numbers
        self._game = game
        self._by_text: dict[bytes, tuple[bytes, bytes]] = {}
        self._by_words: dict[bytes, tuple[bytes, bytes]] = {}

    def _remember(self, block: tuple[bytes, bytes]) -> None:
        for cache, key in ((self._by_text, block[0][:_KEY]), (self._by_words, block[1][:_KEY])):
            if len(cache) >= _CACHED_BLOCKS:
                del cache[next(iter(cache))]
            cache[key] = block

    def to_words(self, raw: bytes, start: int, end: int) -> tuple[bytes, bytes]:
        """Return the binary words of the text ``raw[start:end]``: all but the last, the last.

        Two parts, which the caller joins with the rest of the state (one copy, not two).
        """
        block = self._by_text.get(raw[start : start + _KEY])
        if block is not None and raw.startswith(block[0], start):
            last = raw[start + len(block[0]) : end]
            value = int(last) if last.isdigit() else -1
            # Only the canonical spelling of a uint32 rebuilds to the same bytes.
            if 0 <= value <= 0xFFFFFFFF and b"%d" % value == last:
                return block[1], _LENGTH.pack(value)
        text = raw[start:end]
        # NumPy warns about text it cannot parse, and silencing warnings is not thread-safe:
        # such text is refused below without being parsed.
        parsable = text.replace(b" ", b"").isdigit()
        values = np.fromstring(text, dtype="<u4", sep=" ") if parsable else np.zeros(0, "<u4")
        rebuilt = " ".join(map(str, values[:-1].tolist())).encode() + b" "
        if len(values) != self.numbers or rebuilt + b"%d" % values[-1] != text:
            raise RuntimeError(
                f"{self._game}: the ALE wrote a random generator in a form plangym cannot "
                f"rebuild byte for byte (expected {self.numbers} decimal numbers)"
            )
        block = (rebuilt, values[:-1].tobytes())
        self._remember(block)
        return block[1], values[-1:].tobytes()

    def to_text(self, state: bytes, offset: int) -> tuple[bytes, bytes]:
        """Return the text of the words at ``state[offset:offset + self.size]`` in two parts.

        The text of all numbers but the last (with its separator), then the last number.
        """
        end = offset + self.size - 4
        block = self._by_words.get(state[offset : offset + _KEY])
        if block is None or not state.startswith(block[1], offset):
            values = np.frombuffer(state, "<u4", self.numbers - 1, offset)
            block = (" ".join(map(str, values.tolist())).encode() + b" ", state[offset:end])
            self._remember(block)
        return block[0], b"%d" % _LENGTH.unpack_from(state, end)[0]


class StateCodec:
    """The fixed-size state format of one game, learnt from one serialized ALE state.

    Args:
        reference: A serialized ALE state of the game (``cloneState(...).serialize()``).
        game: The game's name, for error messages.
        generators: Random generators in the serialized state: 2 with ``include_rng=True``
            (the console's and the ALE's), 1 without.
        actions: The ALE action numbers the env sends (its action set): a state whose last
            action is another was made by an env with another action set.
    """

    def __init__(
        self, reference: bytes, game: str, generators: int, actions: Iterable[int] = ALE_ACTIONS
    ):
        self.game = game
        self._actions = frozenset(actions)
        self.cartridge = cartridge_tag(reference, game)
        spans = _generator_spans(reference, game, generators)
        numbers = {len(reference[start:end].split(b" ")) for start, end in spans}
        if len(numbers) != 1:
            raise RuntimeError(f"{game}: the ALE's generators differ in size: {numbers}")
        self._texts = _GeneratorTexts(numbers.pop(), game)
        # id -> the immutable bytes of a state that passed :meth:`check`, oldest first. The
        # bytes are held, so no other object can take their id while they are here.
        self._passed: dict[int, bytes] = {}
        # The bytes between generator texts, each ending with the next text's length.
        ends = [0, *(end for _, end in spans)]
        starts = [*(start for start, _ in spans), len(reference)]
        self._gaps = [start - end for end, start in zip(ends, starts, strict=True)]
        self._words_at = sum(self._gaps)
        self._trailer_at = self._words_at + generators * self._texts.size
        self.size = self._trailer_at + TRAILER_SIZE
        if self.cartridge[0] + len(self.cartridge[1]) > self._gaps[0]:
            raise RuntimeError(f"{game}: the cartridge md5 follows a random generator")

    def encode(self, prefix: bytes, raw: bytes, last_action: int, words: bytes) -> np.ndarray:
        """Return ``prefix`` and the state of the ALE's ``raw`` bytes as one uint8 vector."""
        parts, binary, position = [prefix], list[bytes](), 0
        for gap in self._gaps[:-1]:
            start = position + gap
            end = start + _LENGTH.unpack_from(raw, start - 4)[0]
            parts.append(raw[position:start])
            binary += self._texts.to_words(raw, start, end)
            position = end
        if len(raw) - position != self._gaps[-1]:
            raise RuntimeError(f"{self.game}: the ALE state changed layout ({len(raw)} bytes)")
        parts += (raw[position:], *binary, _LAST_ACTION.pack(last_action), words)
        return np.frombuffer(b"".join(parts), dtype=np.uint8)

    def decode(self, state: np.ndarray) -> tuple[bytes, int, bytes]:
        """Return the ALE's bytes, the last action and the generator words of a checked state."""
        data = state.tobytes()
        parts, position, words_at = list[bytes](), 0, self._words_at
        for gap in self._gaps[:-1]:
            parts += (data[position : position + gap], *self._texts.to_text(data, words_at))
            position += gap
            words_at += self._texts.size
        parts.append(data[position : self._words_at])
        (last_action,) = _LAST_ACTION.unpack_from(data, self._trailer_at)
        return b"".join(parts), last_action, data[self._trailer_at + _LAST_ACTION.size :]

    def check(self, state: Any, name: str) -> None:
        """Raise unless ``state`` is a state of this game with this format's length.

        A state that is a whole immutable ``bytes`` object (as :meth:`encode` and a
        worker's reply make them) is checked once: its bytes are remembered, and the same
        bytes are not checked again while they are.
        """
        check_uint8_vector(state, name, self.game)
        whole = _whole_bytes(state)
        if whole is not None and self._passed.get(id(whole)) is whole:
            return
        start, md5 = self.cartridge
        if len(state) < start + len(md5) or state[start : start + len(md5)].tobytes() != md5:
            received = _tagged_kind(state) or "a state of another game or corrupt bytes"
            raise ValueError(
                f"{name}: expected a state of {self.game} (cartridge md5 {md5.decode()}), "
                f"received {received}"
            )
        if len(state) != self.size:
            raise wrong_length(name, self.game, self.size, len(state))
        # Each generator's text must have the length the ALE recorded before it, or the ALE
        # would read the following fields from the wrong place.
        data, position, words_at = state.tobytes(), 0, self._words_at
        for gap in self._gaps[:-1]:
            position += gap
            numbers, last = self._texts.to_text(data, words_at)
            if _LENGTH.unpack_from(data, position - 4)[0] != len(numbers) + len(last):
                raise ValueError(
                    f"{name}: expected a state of {self.game} whose random generators fit "
                    "their recorded lengths, received corrupt bytes"
                )
            words_at += self._texts.size
        self._check_trailer(data, name)
        if whole is not None:
            if len(self._passed) >= _PASSED_KEPT:
                del self._passed[next(iter(self._passed))]
            self._passed[id(whole)] = whole

    def _check_trailer(self, data: bytes, name: str) -> None:
        """Raise unless the trailer holds one of the env's actions and a PCG64 generator."""
        (last_action,) = _LAST_ACTION.unpack_from(data, self._trailer_at)
        if last_action not in self._actions:
            raise ValueError(
                f"{name}: expected a state whose last action is one of this env's ALE actions "
                f"{sorted(self._actions)}, received a state whose last action is "
                f"{last_action}: made by an env with another action set "
                "(full_action_space) or corrupt bytes"
            )
        *_, inc_lo, has_uint32, uinteger = _WORDS.unpack_from(data, self._trailer_at + 8)
        if not inc_lo & 1 or has_uint32 > 1 or uinteger > 0xFFFFFFFF:
            raise ValueError(
                f"{name}: expected a state of {self.game} whose sticky-action generator "
                "is a PCG64 state, received corrupt bytes"
            )


def _tagged_kind(state: np.ndarray) -> str | None:
    """Name a state whose first bytes say what it is (a PlanMontezuma state's tag), or None."""
    # Imported here: the Montezuma package builds on the Atari env, which imports this module.
    from plangym.videogames.montezuma.state import PIXEL_STATE_TAG, STATE_TAG

    tag = state[: len(STATE_TAG)].tobytes()
    modes = {STATE_TAG: "RAM mode", PIXEL_STATE_TAG: "pixel mode (objects_from_pixels=True)"}
    if tag not in modes:
        return None
    return (
        f"a PlanMontezuma state in {modes[tag]} (starting with {tag!r}: a tracker's header "
        "before the Atari state), which PlanMontezuma-v0 restores"
    )


def _whole_bytes(state: np.ndarray) -> bytes | None:
    """Return the ``bytes`` object ``state`` spans from end to end, if any (it cannot change)."""
    base = state.base
    if type(base) is bytes and len(base) == len(state) and state.strides == (1,):
        return base
    return None
