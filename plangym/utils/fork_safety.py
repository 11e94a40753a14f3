"""Whether worker processes may still be started by forking this process.

``fork`` copies only the calling thread. Libraries that run threads of their own and
hold locks in them do not survive it: after the first MuJoCo or dm_control picture drawn
off screen, OSMesa's rendering threads exist, and a worker forked then deadlocks the first
time it draws (its ready reply never comes); SDL's threads (Atari's
``render_mode="human"``) do the same to the emulator's sound. plangym notes when its own
code starts such threads, and a worker pool whose start method was left to the default
then starts its workers by ``"spawn"``: a fresh interpreter, which builds its env from
the pickled constructor. A start method the user chose is always kept.

>>> start_method_for("forkserver")
'forkserver'
"""

from __future__ import annotations

# Why forking is no longer safe in this process: what started threads fork does not copy.
_REASONS: set[str] = set()


def note_fork_unsafe(reason: str) -> None:
    """Record that this process now runs threads a forked child would lack (``reason``)."""
    _REASONS.add(reason)


def start_method_for(requested: str | None) -> str | None:
    """Return the start method for new workers: ``requested``, else "spawn" if forking is unsafe.

    None means multiprocessing's default, as before.
    """
    if requested is None and _REASONS:
        return "spawn"
    return requested
