"""Small helpers, one module per concern; this package exports plangym 0.1's names.

* :mod:`plangym.utils.frames`: :func:`to_grayscale`, :func:`process_frame`,
  :func:`process_frame_pil`, :func:`process_frame_opencv`, :class:`GrayScaleObservation`;
* :mod:`plangym.utils.display`: :func:`get_display`, a virtual X display;
* :mod:`plangym.utils.gym_envs`: :func:`make_gym_env`, :func:`remove_time_limit`,
  :func:`remove_time_limit_from_spec`, :func:`find_time_limit`, :data:`NO_TIME_LIMIT`;
* :mod:`plangym.utils.warning_site`: :func:`stacklevel_outside_plangym`, where a warning points.

Everything plangym 0.1 exported from ``plangym.utils`` is importable from here with the
same signature. Pillow, OpenCV and pyvirtualdisplay stay optional: they are imported when
a function needs them, so ``import plangym.utils`` never fails.
"""

from plangym.utils.display import get_display
from plangym.utils.frames import (
    USE_PIL,
    GrayScaleObservation,
    process_frame,
    process_frame_opencv,
    process_frame_pil,
    to_grayscale,
)
from plangym.utils.gym_envs import (
    NO_TIME_LIMIT,
    find_time_limit,
    make_gym_env,
    remove_time_limit,
    remove_time_limit_from_spec,
)

# Its public home, as in plangym 0.1: a wrapper's recorded spec names its class by module
# ("plangym.utils:GrayScaleObservation"), and so do pickles of it.
GrayScaleObservation.__module__ = __name__

__all__ = [
    "NO_TIME_LIMIT",
    "USE_PIL",
    "GrayScaleObservation",
    "find_time_limit",
    "get_display",
    "make_gym_env",
    "process_frame",
    "process_frame_opencv",
    "process_frame_pil",
    "remove_time_limit",
    "remove_time_limit_from_spec",
    "to_grayscale",
]
