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


def split_name(name: str | None, domain_name: str | None, task_name: str | None) -> tuple[str, str]:
    """Return ``(domain, task)`` of a suite task; ``domain_name``/``task_name`` win over ``name``.

    An unknown task is reported with the parameters that named it and the values received.

    >>> split_name("cartpole-balance", "walker", "walk")
    ('walker', 'walk')
    >>> split_name("walker-wlak", None, None)
    Traceback (most recent call last):
    ...
    ValueError: name: expected a dm_control task "domain-task", received 'walker-wlak'; ...
    >>> split_name(None, "cartpole", None)
    Traceback (most recent call last):
    ...
    ValueError: domain_name, task_name: expected a dm_control task, received domain_name=...
    """
    if domain_name is None and task_name is None:
        if not isinstance(name, str):
            raise TypeError(
                f'name: expected a dm_control task "domain-task" (str), received {name!r}'
            )
        given = f'name: expected a dm_control task "domain-task", received {name!r}'
    else:
        for label, value in (("domain_name", domain_name), ("task_name", task_name)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{label}: expected a str, received {value!r}")
        rest = f" (the rest from name={name!r})" if None in (domain_name, task_name) else ""
        given = (
            "domain_name, task_name: expected a dm_control task, received "
            f"domain_name={domain_name!r}, task_name={task_name!r}{rest}"
        )
    domain, _, task = name.partition("-") if isinstance(name, str) else ("", "", "")
    domain, task = domain_name or domain, task_name or task
    full = f"{domain}-{task}"
    if full not in DM_CONTROL_NAMES:
        closest = ", ".join(difflib.get_close_matches(full, DM_CONTROL_NAMES, n=3, cutoff=0.5))
        raise ValueError(f"{given}; closest known names: {closest or 'none'}")
    return domain, task
