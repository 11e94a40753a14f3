"""Frames: grayscale and resizing, the way plangym 0.1 did them, without a required library.

:func:`to_grayscale` needs only NumPy; :func:`process_frame_pil` and
:func:`process_frame_opencv` import Pillow or OpenCV when called
(``pip install "plangym[images]"`` brings both), so importing this module never fails.

>>> frame = np.zeros((2, 3, 3), dtype=np.uint8)
>>> frame[..., 0] = 255
>>> to_grayscale(frame)
array([[76, 76, 76],
       [76, 76, 76]], dtype=uint8)
"""

from __future__ import annotations

import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box

# plangym 0.1's flag: whether process_frame resizes with Pillow (else OpenCV).
USE_PIL = importlib.util.find_spec("PIL") is not None
_LUMA = np.array([299, 587, 114], dtype=np.uint32)
_GRAY_MODES = frozenset({"L", "GRAY"})
_MODES = ("BGR", "GRAY", "L", "RGB")


def to_grayscale(frame: np.ndarray) -> np.ndarray:
    """Convert an RGB frame (H, W, 3) to a grayscale frame (H, W) of uint8."""
    luma = frame.astype(np.uint32) @ _LUMA
    return ((luma + 500) // 1000).astype(np.uint8)


def _import_pil_image(caller: str) -> Any:
    """Return ``PIL.Image``, or raise an ImportError telling how to install Pillow."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(
            f"{caller} needs Pillow: pip install pillow (or pip install 'plangym[images]')"
        ) from error
    return Image


def _import_cv2(caller: str) -> Any:
    """Return the ``cv2`` module, or raise an ImportError telling how to install OpenCV."""
    try:
        import cv2
    except ImportError as error:
        raise ImportError(
            f"{caller} needs OpenCV: pip install opencv-python-headless "
            "(or pip install 'plangym[images]')"
        ) from error
    return cv2


def _target_size(frame: np.ndarray, width: int | None, height: int | None) -> tuple[int, int]:
    """Return the (height, width) to resize ``frame`` to; None keeps the frame's own."""
    height = frame.shape[0] if height is None else int(height)
    width = frame.shape[1] if width is None else int(width)
    if height <= 0 or width <= 0:
        raise ValueError(f"width and height must be positive, received {width=}, {height=}")
    return height, width


def _check_mode(mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"mode: expected one of {list(_MODES)}, received {mode!r}")


def process_frame_pil(
    frame: np.ndarray,
    width: int | None = None,
    height: int | None = None,
    mode: str = "RGB",
) -> np.ndarray:
    """Resize and convert an RGB frame with Pillow.

    The frame is converted first and resized after, with Pillow's default filter.

    Args:
        frame: RGB image of shape (H, W, 3) and dtype uint8.
        width: Width of the result; None keeps the frame's width.
        height: Height of the result; None keeps the frame's height.
        mode: "RGB"; "L" or "GRAY" for grayscale (H, W); "BGR" for the channels reversed.
            Any other Pillow mode (e.g. "RGBA") is handed to ``Image.convert``.

    Returns:
        A new uint8 array of shape (height, width, channels), or (height, width) in
        grayscale.

    Raises:
        ImportError: Pillow is not installed.

    Example:
        >>> frame = np.zeros((4, 6, 3), dtype=np.uint8)
        >>> process_frame_pil(frame, width=3, height=2).shape
        (2, 3, 3)
        >>> process_frame_pil(frame, height=2, mode="GRAY").shape
        (2, 6)
    """
    image_module = _import_pil_image("process_frame_pil")
    height, width = _target_size(frame, width, height)
    image = image_module.fromarray(frame)
    if mode in _GRAY_MODES:
        image = image.convert("L")
    elif mode in {"RGB", "BGR"}:
        image = image.convert("RGB")
    else:
        image = image.convert(mode)
    if image.size != (width, height):
        image = image.resize((width, height))
    result = np.array(image)
    return np.ascontiguousarray(result[..., ::-1]) if mode == "BGR" else result


def process_frame_opencv(
    frame: np.ndarray,
    width: int | None = None,
    height: int | None = None,
    mode: str = "RGB",
) -> np.ndarray:
    """Resize and convert an RGB frame with OpenCV.

    The frame is resized first (bilinear interpolation, OpenCV's default) and converted
    after.

    Args:
        frame: RGB image of shape (H, W, 3) and dtype uint8.
        width: Width of the result; None keeps the frame's width.
        height: Height of the result; None keeps the frame's height.
        mode: "RGB"; "L" or "GRAY" for grayscale (H, W); "BGR" for OpenCV's channel order.

    Returns:
        A uint8 array of shape (height, width, 3), or (height, width) in grayscale.

    Raises:
        ImportError: OpenCV is not installed.
        ValueError: ``mode`` is none of the above.

    Example:
        >>> frame = np.zeros((4, 6, 3), dtype=np.uint8)
        >>> frame[..., 2] = 200
        >>> process_frame_opencv(frame, width=3, mode="BGR")[0, 0]
        array([200,   0,   0], dtype=uint8)
    """
    cv2 = _import_cv2("process_frame_opencv")
    _check_mode(mode)
    height, width = _target_size(frame, width, height)
    if frame.shape[:2] != (height, width):
        frame = cv2.resize(frame, (width, height))
    if mode in _GRAY_MODES:
        return cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
    if mode == "BGR":
        return cv2.cvtColor(frame, cv2.COLOR_RGB2BGR)
    return frame


def process_frame(
    frame: np.ndarray,
    width: int | None = None,
    height: int | None = None,
    mode: str = "RGB",
) -> np.ndarray:
    """Resize and convert an RGB frame with whichever image library is installed.

    Pillow is used when it is installed (see :func:`process_frame_pil`), else OpenCV (see
    :func:`process_frame_opencv`). With neither, a frame that keeps its size is still
    converted, by plangym's own :func:`to_grayscale` for grayscale. The two libraries resize
    with different filters and may round grayscale differently by one level.

    For code written against the earlier ``process_frame(frame, mode)``, a string given in
    the place of ``width`` is taken as ``mode``.

    Args:
        frame: RGB image of shape (H, W, 3) and dtype uint8.
        width: Width of the result; None keeps the frame's width.
        height: Height of the result; None keeps the frame's height.
        mode: "RGB"; "L" or "GRAY" for grayscale (H, W); "BGR" for the channels reversed.
            With Pillow installed, other Pillow modes work too (see :func:`process_frame_pil`).

    Returns:
        A uint8 array of shape (height, width, 3), or (height, width) in grayscale.

    Raises:
        ImportError: a resize was asked for and neither Pillow nor OpenCV is installed.
        ValueError: ``mode`` is not a mode the library in use knows.

    Example:
        >>> frame = np.full((4, 6, 3), 255, dtype=np.uint8)
        >>> process_frame(frame, 3, 2, mode="L")
        array([[255, 255, 255],
               [255, 255, 255]], dtype=uint8)
        >>> process_frame(frame, "GRAY").shape
        (4, 6)
    """
    if isinstance(width, str):
        if height is not None or mode != "RGB":
            raise TypeError("process_frame: give mode once, as the 4th argument or mode=")
        width, mode = None, width
    try:
        _import_pil_image("process_frame")
    except ImportError:
        pass
    else:
        return process_frame_pil(frame, width, height, mode)
    try:
        _import_cv2("process_frame")
    except ImportError:
        pass
    else:
        return process_frame_opencv(frame, width, height, mode)
    _check_mode(mode)
    if _target_size(frame, width, height) != frame.shape[:2]:
        raise ImportError(
            "process_frame needs Pillow or OpenCV to resize a frame: pip install pillow "
            "(or pip install opencv-python-headless, or pip install 'plangym[images]')"
        )
    if mode in _GRAY_MODES:
        return to_grayscale(frame)
    if mode == "BGR":
        return np.ascontiguousarray(frame[..., ::-1])
    return frame


class GrayScaleObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Observe an RGB image env in grayscale.

    Each (H, W, 3) uint8 observation becomes (H, W) uint8, or (H, W, 1) with ``keep_dim``,
    through :func:`to_grayscale`, so no image library is needed. As in plangym 0.1, public
    attributes the wrapper does not have are looked up on the wrapped env (here down its
    whole chain of wrappers, e.g. ``env.ale`` of an Atari env).

    Example:
        >>> import ale_py
        >>> import gymnasium as gym
        >>> gym.register_envs(ale_py)
        >>> env = GrayScaleObservation(gym.make("ALE/Pong-v5"), keep_dim=True)
        >>> env.observation_space
        Box(0, 255, (210, 160, 1), uint8)
        >>> env.close()
    """

    def __init__(self, env: gym.Env, keep_dim: bool = False):
        """Wrap ``env``, whose observation space must be a uint8 Box of shape (H, W, 3).

        Args:
            env: The environment to wrap.
            keep_dim: Keep a trailing axis of size 1 in the observations.

        Raises:
            ValueError: ``env`` does not observe RGB images.
        """
        gym.utils.RecordConstructorArgs.__init__(self, keep_dim=keep_dim)
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        if not (
            isinstance(space, Box)
            and len(space.shape) == 3
            and space.shape[-1] == 3
            and space.dtype == np.uint8
        ):
            raise ValueError(
                "GrayScaleObservation needs RGB image observations, a uint8 Box of shape "
                f"(H, W, 3); the env observes {space}"
            )
        self.keep_dim = keep_dim
        shape = space.shape[:2] + ((1,) if keep_dim else ())
        self.observation_space = Box(low=0, high=255, shape=shape, dtype=np.uint8)

    def __getattr__(self, name: str) -> Any:
        """Look up a public attribute the wrapper does not have down the wrapped env chain."""
        if name.startswith("_") or name == "env":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.env.get_wrapper_attr(name)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """Return ``observation`` in grayscale."""
        gray = to_grayscale(observation)
        return gray[..., None] if self.keep_dim else gray
