"""Checks of single values: integers, flags, dt, seeds, timeouts, choices, and names.

>>> check_dt(3)
3
>>> check_dt(0)
Traceback (most recent call last):
...
ValueError: dt: expected an integer >= 1, received 0
"""

from __future__ import annotations

import math
import multiprocessing
import numbers
import os
import sys
from typing import Any

import numpy as np


def describe(value: Any) -> str:
    """Return a short description of ``value`` for error messages.

    >>> describe(np.zeros((3,), dtype=np.float32))
    'ndarray(shape=(3,), dtype=float32)'
    >>> describe(1.5)
    '1.5 (float)'
    """
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"


# Letters whose English names start with a vowel sound ("an ALE state", "an NES game").
_VOWEL_SOUND_LETTERS = frozenset("aefhilmnorsx")
# Words that start with a vowel letter read with a consonant sound ("a uniform").
_CONSONANT_SOUND_STARTS = ("uni", "use", "usu", "uti", "eu", "one")


def with_article(name: str) -> str:
    """Return ``name`` after "a" or "an", chosen by how it is read aloud (for messages).

    A name starting with a capital not followed by a small letter is read letter by
    letter (an acronym); a leading number, as a number.

    >>> with_article("Acrobot-v1"), with_article("CartPole-v1"), with_article("ALE/Pong-v5")
    ('an Acrobot-v1', 'a CartPole-v1', 'an ALE/Pong-v5')
    >>> with_article("HalfCheetah-v5"), with_article("NES game"), with_article("UpNDown")
    ('a HalfCheetah-v5', 'an NES game', 'an UpNDown')
    """
    first = name[:1]
    if first.isdigit():
        number = name[: len(name) - len(name.lstrip("0123456789"))]
        vowel = number.startswith("8") or number in ("11", "18")
    elif first.isupper() and not name[1:2].islower():
        vowel = first.lower() in _VOWEL_SOUND_LETTERS
    else:
        word = name.lower()
        vowel = word[:1] in ("a", "e", "i", "o", "u") and not word.startswith(
            _CONSONANT_SOUND_STARTS
        )
    return f"{'an' if vowel else 'a'} {name}"


def add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)``, also on Python 3.10 (no ``add_note``: same ``__notes__`` list).

    >>> error = ValueError("bad")
    >>> add_note(error, "while stepping")
    >>> error.__notes__
    ['while stepping']
    """
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:  # 3.10 prints no notes, but they are kept where 3.11 keeps them
        vars(error).setdefault("__notes__", []).append(note)


def counted(count: int, noun: str) -> str:
    """Return ``count`` and ``noun``, plural unless the count is one (for messages).

    >>> counted(1, "byte"), counted(0, "byte"), counted(16, "byte")
    ('1 byte', '0 bytes', '16 bytes')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def is_integer(value: Any) -> bool:
    """Return True for Python and NumPy integers (booleans excluded)."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, int | np.integer):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu"


def check_positive_int(name: str, value: Any) -> int:
    """Return ``value`` as an int, or raise if it is not an integer >= 1."""
    if not is_integer(value):
        raise TypeError(f"{name}: expected an integer >= 1, received {describe(value)}")
    if int(value) < 1:
        raise ValueError(f"{name}: expected an integer >= 1, received {int(value)}")
    return int(value)


def check_process_count(name: str, value: Any, per_cpu: int | None, owner: str) -> int:
    """Return ``value`` as a number of workers: an integer >= 1, and for processes a sane one.

    With ``per_cpu``, counts past ``per_cpu`` processes per CPU (at least 256) are refused:
    far past where a batch gets faster, they are a slip (a batch size passed as the number
    of workers) that would start processes until the machine stalls. ``owner`` is the
    class whose ``processes_per_cpu`` raises the limit.

    >>> check_process_count("n_workers", 2, per_cpu=64, owner="ParallelEnv")
    2
    >>> check_process_count("n_workers", 10**6, per_cpu=64, owner="ParallelEnv")
    Traceback (most recent call last):
    ...
    ValueError: n_workers: expected at most ... worker processes (64 per CPU, 256 at least), ...
    """
    count = check_positive_int(name, value)
    if per_cpu is None:
        return count
    limit = max(256, per_cpu * (os.cpu_count() or 1))
    if count > limit:
        raise ValueError(
            f"{name}: expected at most {limit} worker processes ({per_cpu} per CPU, 256 at "
            f"least), received "
            f"{count}; to start more, raise {owner}.processes_per_cpu"
        )
    return count


def check_number(
    name: str, value: Any, low: float | None = None, high: float | None = None
) -> float:
    """Return ``value`` as a float, or raise unless it is a finite number in [low, high].

    Python's and NumPy's real numbers count (a 0-d array too); booleans, strings, None
    and longer arrays raise TypeError, NaN, infinities and numbers out of range ValueError.

    >>> check_number("mix", np.float32(0.25), 0, 1), check_number("exploration", 2, 0)
    (0.25, 2.0)
    >>> check_number("mix", "0.5", 0, 1)
    Traceback (most recent call last):
    ...
    TypeError: mix: expected a finite number in [0, 1], received '0.5' (str)
    >>> check_number("discount", -3, 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: discount: expected a finite number in [0, 1], received -3
    """
    expected = "a finite number" + _range_text(low, high)
    if not _is_real(value):
        raise TypeError(f"{name}: expected {expected}, received {describe(value)}")
    number = float(value)
    inside = (low is None or number >= low) and (high is None or number <= high)
    if not (math.isfinite(number) and inside):
        shown = value if isinstance(value, int | float) else number  # NumPy's: plainly
        raise ValueError(f"{name}: expected {expected}, received {shown!r}")
    return number


def _is_real(value: Any) -> bool:
    """Whether ``value`` is a real number (Python's or NumPy's, or a 0-d array); no bools."""
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, numbers.Real)


def _range_text(low: float | None, high: float | None) -> str:
    """`` in [low, high]``, `` >= low``, `` <= high`` or nothing."""
    if low is not None and high is not None:
        return f" in [{low:g}, {high:g}]"
    if low is not None:
        return f" >= {low:g}"
    return "" if high is None else f" <= {high:g}"


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a bool, or raise if it is not True or False (NumPy's too).

    >>> check_flag("arrays", np.True_)
    True
    >>> check_flag("arrays", "yes")
    Traceback (most recent call last):
    ...
    TypeError: arrays: expected True or False, received 'yes' (str)
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name}: expected True or False, received {describe(value)}")
    return bool(value)


def check_dt(dt: Any) -> int:
    """Validate the number of agent steps of one ``step`` call.

    A whole number given as a float counts (plangym 0.1 took ``int(dt)``, and a planner's
    ``np.ones(n) * 3`` or a rounded draw is one); any other fraction is refused.

    >>> check_dt(2.0), check_dt(np.float32(3))
    (2, 3)
    >>> check_dt(2.5)
    Traceback (most recent call last):
    ...
    ValueError: dt: expected an integer >= 1 (a whole number), received 2.5
    """
    if type(dt) is int and 1 <= dt <= MAX_DT:  # the usual dt, checked once per step
        return dt
    if isinstance(dt, np.ndarray) and dt.ndim == 0:  # as its one value (0.1 took int(dt))
        dt = dt[()]
    if is_whole_float(dt):
        dt = int(dt)
    elif isinstance(dt, float | np.floating):
        raise ValueError(f"dt: expected an integer >= 1 (a whole number), received {float(dt)}")
    dt = check_positive_int("dt", dt)
    if dt > MAX_DT:
        raise ValueError(f"dt: expected an integer in [1, {MAX_DT}], received {dt}")
    return dt


# The most agent steps one call may take: dt * frameskip must stay an int64 (the kernels
# count steps in int64 columns); 2**31 steps of any env outlast a planner's patience.
MAX_DT = 2**31 - 1


def is_whole_float(value: Any) -> bool:
    """Whether ``value`` is a float (Python's or NumPy's) holding a finite whole number."""
    return isinstance(value, float | np.floating) and bool(np.isfinite(value)) and value % 1 == 0


def check_return_state(return_state: Any) -> bool | None:
    """Return ``return_state`` as a bool, or None (the call's default); raise otherwise.

    >>> check_return_state(np.True_), check_return_state(None)
    (True, None)
    >>> check_return_state("yes")
    Traceback (most recent call last):
    ...
    TypeError: return_state: expected None, True or False, received 'yes' (str)
    """
    if return_state is None:
        return None
    if not isinstance(return_state, bool | np.bool_):
        raise TypeError(
            f"return_state: expected None, True or False, received {describe(return_state)}"
        )
    return bool(return_state)


def check_seed(seed: Any) -> int | None:
    """Return ``seed`` as an int, or None; raise ValueError unless it is None or an int >= 0.

    ``reset(seed=...)`` and ``seed(...)`` take the same seeds (what gymnasium's ``reset``
    takes) and refuse the others with the same error.

    >>> check_seed(np.int64(3)), check_seed(None)
    (3, None)
    >>> check_seed("3")
    Traceback (most recent call last):
    ...
    ValueError: seed: expected None or an int >= 0, received '3' (str)
    """
    if seed is None:
        return None
    if not is_integer(seed) or seed < 0:
        raise ValueError(f"seed: expected None or an int >= 0, received {describe(seed)}")
    return int(seed)


def check_timeout(timeout: Any) -> float | None:
    """Return a wait's ``timeout`` in seconds, None to wait as long as it takes.

    As in gymnasium's vector envs, a negative timeout waits not at all; ``math.inf``
    waits as long as None does. Raised before the pending call is touched, so a bad
    timeout leaves it pending.

    >>> check_timeout(2), check_timeout(float("inf")), check_timeout(-1)
    (2.0, None, 0.0)
    >>> check_timeout("5")
    Traceback (most recent call last):
    ...
    TypeError: timeout: expected None or a number of seconds, received '5' (str)
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool | np.bool_) or not isinstance(timeout, int | float | np.number):
        raise TypeError(
            f"timeout: expected None or a number of seconds, received {describe(timeout)}"
        )
    seconds = float(timeout)
    if math.isnan(seconds):
        raise ValueError(f"timeout: expected None or a number of seconds, received {seconds}")
    if math.isinf(seconds):
        return None if seconds > 0 else 0.0
    return max(seconds, 0.0)


def check_choice(name: str, value: Any, choices: set | frozenset) -> Any:
    """Raise ValueError unless ``value`` is one of ``choices`` (a list or dict is none of them)."""
    try:
        known = value in choices
    except TypeError:  # unhashable
        known = False
    if not known:
        shown = sorted(choices, key=str)
        raise ValueError(f"{name}: expected one of {shown}, received {value!r}")
    return value


def check_start_method(name: str, value: Any) -> str | None:
    """Return a multiprocessing start method this platform has (or None: its default).

    >>> check_start_method("context", "spawn"), check_start_method("context", None)
    ('spawn', None)
    """
    if value is None:
        return None
    return check_choice(name, value, frozenset(multiprocessing.get_all_start_methods()))


def check_pictures_available(
    render_mode: str | None,
    return_image: bool,
    obs_type: str,
    screen_from_renderer: bool,
    default_obs_type: str,
) -> None:
    """Raise ValueError when the env would be asked for pictures it cannot draw.

    ``return_image=True`` needs a render mode; an observation drawn by gymnasium's
    renderer (``screen_from_renderer``) needs ``render_mode="rgb_array"``, and so does
    ``return_image`` for such an env, whose "human" mode draws in a window only.

    >>> check_pictures_available(None, True, "ram", False, "rgb")
    Traceback (most recent call last):
    ...
    ValueError: render_mode: return_image=True requires render_mode='rgb_array' or 'human' ...
    """
    renders_obs = screen_from_renderer and obs_type != default_obs_type
    if screen_from_renderer and (return_image or renders_obs):
        allowed: tuple = ("rgb_array",)
    elif return_image:
        allowed = ("rgb_array", "human")
    else:
        return
    if render_mode not in allowed:
        needs = "return_image=True" if return_image else f"obs_type={obs_type!r}"
        # "... requires render_mode=..." is plangym 0.1's wording, which its tests match.
        raise ValueError(
            f"render_mode: {needs} requires render_mode={' or '.join(map(repr, allowed))} "
            f"(pictures), received {render_mode!r}"
        )
