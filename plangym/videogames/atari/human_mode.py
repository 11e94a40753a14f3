"""A workaround for ale-py 0.12.1's windows: emulators that drew on screen live until exit.

In ``render_mode="human"`` the ALE draws through SDL. Once such an emulator is destroyed
(its env closed and collected), the next human-mode emulator of the process segfaults
within its first frames: re-running a notebook cell that makes, plays and closes a game
kills the kernel. Keeping every closed human-mode env alive until the interpreter exits
avoids the teardown; its window stays open, frozen on its last frame, until then. Envs of
the other render modes are closed as usual.
"""

from __future__ import annotations

from typing import Any

# The gymnasium envs of closed human-mode Atari envs, kept alive on purpose (see above).
_KEPT: list[Any] = []


def keep_until_exit(gym_env: Any) -> None:
    """Keep ``gym_env`` (a human-mode ALE env being closed, or None) alive until exit."""
    if gym_env is not None:
        _KEPT.append(gym_env)
