"""stable-retro's one emulator per process, as a slot that one ``RetroEnv`` holds at a time.

stable-retro refuses a second emulator in a process, so a
``RetroEnv`` claims the slot before building its emulator and a second one gets a clear
RuntimeError instead. A forked child (a worker process) frees the emulator it inherited,
and the holder is closed before the interpreter exits.
"""

from __future__ import annotations

import atexit
import os
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plangym.videogames.retro.env import RetroEnv


class _EmulatorSlot:
    """Which env holds this process's emulator (stable-retro allows one per process)."""

    holder: weakref.ref | None = None

    @classmethod
    def current(cls) -> RetroEnv | None:
        """Return the env holding the emulator, if any is alive."""
        return cls.holder() if cls.holder is not None else None


def claim_emulator(env: RetroEnv) -> None:
    """Make ``env`` this process's emulator holder, or raise if another env holds it."""
    holder = _EmulatorSlot.current()
    if holder is not None and holder is not env and holder._gym_env is not None:
        raise RuntimeError(
            f"RetroEnv: stable-retro runs one emulator per process, and another RetroEnv "
            f"of {holder.name} holds this process's; close() that env first, or step the "
            "games in worker processes: plangym.make(name, n_workers=N) or "
            'plangym.make_vec(name, n, vectorization_mode="async") build no emulator in this '
            "process (a sync vector env's sub-envs would all share it)"
        )
    _EmulatorSlot.holder = weakref.ref(env)


def release_emulator(env: RetroEnv) -> None:
    """Free this process's emulator slot if ``env`` holds it."""
    if _EmulatorSlot.current() is env:
        _EmulatorSlot.holder = None


def _drop_inherited_emulator() -> None:
    """In a forked child, free the emulator inherited from the parent.

    stable-retro refuses a new emulator while one exists in the process, and a child forked
    from a process holding one (a worker of ``plangym.make(name, n_workers=N)``) has a copy.
    The child never steps that copy, so freeing it lets the child build its own.
    """
    holder = _EmulatorSlot.current()
    if holder is not None:
        holder.close()


def _close_at_exit() -> None:
    """Close the emulator before the interpreter tears down the modules it needs."""
    holder = _EmulatorSlot.current()
    if holder is not None:
        holder.close()


os.register_at_fork(after_in_child=_drop_inherited_emulator)
atexit.register(_close_at_exit)
