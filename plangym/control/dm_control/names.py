"""The names of the suite's tasks, and the seed the lqr tasks' models are built from.

No dm_control import here: the names resolve without building anything.
"""

from __future__ import annotations

import difflib

from plangym.environment_names import DM_CONTROL_NAMES

# The lqr tasks draw their model (stiffness, damping, actuated bodies) from the task's
# generator when they are built. plangym always builds them from this seed, so that every
# instance, clone and worker simulates the same system and takes the others' states; the
# ``seed`` argument then seeds the generator the episodes start from.
LQR_MODEL_SEED = 0


def split_name(name: str, domain_name: str | None, task_name: str | None) -> tuple[str, str]:
    """Return ``(domain, task)`` of a suite task; ``domain_name``/``task_name`` win over ``name``.

    >>> split_name("cartpole-balance", "walker", "walk")
    ('walker', 'walk')
    >>> split_name("walker-wlak", None, None)
    Traceback (most recent call last):
    ...
    ValueError: name: unknown dm_control task 'walker-wlak'; closest known names: walker-walk, ...
    """
    domain, _, task = name.partition("-") if isinstance(name, str) else ("", "", "")
    domain, task = domain_name or domain, task_name or task
    full = f"{domain}-{task}"
    if full not in DM_CONTROL_NAMES:
        closest = ", ".join(difflib.get_close_matches(full, DM_CONTROL_NAMES, n=3, cutoff=0.5))
        raise ValueError(
            f"name: unknown dm_control task {full!r}; closest known names: {closest or 'none'}"
        )
    return domain, task
