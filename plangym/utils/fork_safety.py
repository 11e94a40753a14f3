"""Whether worker processes may still be started by forking this process.

``fork`` copies only the calling thread. Libraries that run threads of their own and
hold locks in them do not survive it: after the first MuJoCo or dm_control picture drawn
off screen, OSMesa's rendering threads exist, and a worker forked then deadlocks the first
time it draws (its ready reply never comes); SDL's threads (Atari's
``render_mode="human"``) do the same to the emulator's sound. plangym notes when its own
code starts such threads, and a worker pool whose start method was left to the default
then starts its workers by ``"spawn"``: a fresh interpreter, which builds its env from
the pickled constructor. A start method the user chose is always kept.

Pictures drawn by other code (gymnasium's MuJoCo envs, dm_control itself) start the same
threads without telling plangym: Mesa's software renderer names them (``llvmpipe-0``, the
disk cache's ``...:disk$0``), so a running one of those counts too (Linux's ``/proc``).

>>> start_method_for("forkserver")
'forkserver'
"""

from __future__ import annotations

import os

# Why forking is no longer safe in this process: what started threads fork does not copy.
_REASONS: set[str] = set()
# Names Mesa gives its rendering threads (llvmpipe's rasterizers, the shader disk cache).
_RENDERING_THREADS = ("llvmpipe-", ":disk$")


def note_fork_unsafe(reason: str) -> None:
    """Record that this process now runs threads a forked child would lack (``reason``)."""
    _REASONS.add(reason)


def start_method_for(requested: str | None) -> str | None:
    """Return the start method for new workers: ``requested``, else "spawn" if forking is unsafe.

    None means multiprocessing's default, as before.
    """
    if requested is None and (_REASONS or rendering_threads_run()):
        return "spawn"
    return requested


def rendering_threads_run() -> bool:
    """Whether a thread of Mesa's OpenGL renderer runs in this process, whoever drew."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:  # no /proc: only what plangym noted itself counts
        return False
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                name = comm.read()
        except OSError:  # the thread ended meanwhile
            continue
        if any(mark in name for mark in _RENDERING_THREADS):
            return True
    return False
