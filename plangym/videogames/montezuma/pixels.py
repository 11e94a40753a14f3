"""What plangym 0.1 read from Montezuma's screen: Joe's face, the inventory, death, transitions.

The functions take an RGB screen (210, 160, 3) as the ALE draws it. Joe's face is the only
thing drawn with red 228; rows from :data:`SCREEN_TOP` down are the room, and x, y are
measured there (0.1's frame). The inventory bar is read as 0.1 read it: the sizes of the
8-connected blobs with red != 0 in :data:`INVENTORY` name the objects (:data:`OBJECT_PIXELS`).

>>> screen = np.zeros((210, 160, 3), dtype=np.uint8)
>>> screen[SCREEN_TOP + 29 : SCREEN_TOP + 31, 79:81, 0] = FACE_RED  # a 2x2 face
>>> face = face_pixels(screen)
>>> sorted(face)[:2], face_centre(face), is_pixel_death(screen, face)
([(29, 79), (29, 80)], (79.5, 29.5), False)
>>> screen[30:33, 60:70, 0] = 1  # a blob of 30 pixels in the inventory bar
>>> inventory_areas(screen), objects_mask([50, 40, 37])
((30,), 19)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

from plangym.videogames.montezuma.rooms import MontezumaPosLevel

SCREEN_TOP = 50  # rows above it: score, lives and inventory
FACE_RED = 228  # red channel of Joe's face, and of nothing else on the screen
INVENTORY = (slice(25, 45), slice(55, 110))  # rows, columns of the inventory bar
# Blob sizes (pixels) of the objects in the inventory bar; bit i of the objects mask
# is OBJECT_PIXELS[i].
OBJECT_PIXELS = (
    50,  # hammer (mallet)
    40,  # key 1
    40,  # key 2
    40,  # key 3
    37,  # sword 1
    37,  # sword 2
    42,  # torch
)
KEY_AREA = 40
# The key bits (1-3) of the objects mask, the same bits as in the inventory byte RAM[65].
KEY_BITS = 0x8 | 0x4 | 0x2
# Colours of the screens between rooms and levels: black and (0, 28, 136).
_TRANSITION_GREEN, _TRANSITION_BLUE = 28, 136
_NEIGHBOURS_8 = tuple((dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)

FacePixels = set[tuple[int, int]]


def face_pixels(screen: np.ndarray) -> FacePixels:
    """Return the ``(y, x)`` pixels of Joe's face (y from :data:`SCREEN_TOP`)."""
    room = screen[SCREEN_TOP:, :, 0]
    # flatnonzero is several times faster than a 2-d nonzero; the pixels are the same.
    ys, xs = np.divmod(np.flatnonzero(room == FACE_RED), room.shape[1])
    return set(zip(ys.tolist(), xs.tolist(), strict=True))


def face_centre(face: FacePixels, x_repeat: int = 1) -> tuple[float, float] | None:
    """Return ``(x, y)``, the mean of the face pixels (x scaled by ``x_repeat``), or None.

    The sums are of small integers, so exact: the mean does not depend on the set's order.
    """
    if not face:
        return None
    pixels = np.array(list(face), dtype=np.int64)
    return float((pixels[:, 1] * x_repeat).mean()), float(pixels[:, 0].mean())


def is_transition_screen(screen: np.ndarray) -> bool:
    """Whether the room is drawn only in black and (0, 28, 136): a screen between rooms."""
    room = screen[SCREEN_TOP:]
    green, blue = room[:, :, 1], room[:, :, 2]
    matches = (
        np.count_nonzero(room[:, :, 0] == 0)
        + np.count_nonzero((green == 0) | (green == _TRANSITION_GREEN))
        + np.count_nonzero((blue == 0) | (blue == _TRANSITION_BLUE))
    )
    return bool(matches == room.size)


def is_pixel_death(screen: np.ndarray, face: FacePixels) -> bool:
    """0.1's death on the screen: no face outside a transition screen, or a broken face.

    A dying Joe's face falls apart: no two of its pixels touch (4-neighbours).
    """
    if not face:
        return not is_transition_screen(screen)
    return not any((y + 1, x) in face or (y, x + 1) in face for y, x in face)


def component_areas(mask: np.ndarray) -> list[int]:
    """Return the sizes of the 8-connected blobs of ``mask``, in raster order of their start.

    OpenCV's ``connectedComponentsWithStats`` (8-connectivity), which 0.1 used, gives the
    same sizes (in another order, which 0.1 did not use); this needs no OpenCV.

    >>> component_areas(np.array([[1, 1, 0, 1], [0, 0, 0, 1], [1, 0, 0, 0]], dtype=bool))
    [2, 2, 1]
    """
    ys, xs = np.nonzero(mask)
    todo = set(zip(ys.tolist(), xs.tolist(), strict=True))
    areas = []
    for start in zip(ys.tolist(), xs.tolist(), strict=True):
        if start not in todo:
            continue
        todo.discard(start)
        stack, area = [start], 0
        while stack:
            y, x = stack.pop()
            area += 1
            for dy, dx in _NEIGHBOURS_8:
                if (y + dy, x + dx) in todo:
                    todo.discard((y + dy, x + dx))
                    stack.append((y + dy, x + dx))
        areas.append(area)
    return areas


@lru_cache(maxsize=256)
def _areas_of(bar: bytes, shape: tuple[int, int]) -> tuple[int, ...]:
    """Blob sizes of an inventory bar (as bytes of its nonzero mask); the bar rarely changes."""
    mask = np.frombuffer(bar, dtype=bool).reshape(shape)
    return tuple(component_areas(mask)) if mask.any() else ()


def inventory_areas(screen: np.ndarray) -> tuple[int, ...]:
    """Return the sizes of the blobs in the inventory bar (red != 0), as 0.1 measured them."""
    mask = screen[INVENTORY[0], INVENTORY[1], 0] != 0
    return _areas_of(mask.tobytes(), mask.shape)


def objects_mask(areas: Iterable[int], only_keys: bool = False) -> int:
    """Return the objects held as a bit mask: bit i for a blob of ``OBJECT_PIXELS[i]`` pixels.

    >>> objects_mask([40, 40, 42]), objects_mask([40, 50], only_keys=True)
    (70, 2)
    """
    left = list(areas)
    mask = 0
    for bit, area in enumerate(OBJECT_PIXELS):
        if area in left:
            left.remove(area)
            mask |= 1 << bit
    return mask & KEY_BITS if only_keys else mask


def objects_with_rooms(
    areas: Iterable[int], room: int, old_objects: Sequence[tuple[int, int]], only_keys: bool
) -> tuple[tuple[int, int], ...]:
    """Return ``(blob size, room first seen in)`` for each object held (0.1's remembered rooms).

    An object already held keeps the room it was first seen in; a new one gets ``room``.

    >>> objects_with_rooms([40, 40], 5, ((40, 1),), only_keys=False)
    ((40, 1), (40, 5))
    """
    left, old = list(areas), list(old_objects)
    held = []
    for area in OBJECT_PIXELS:
        if only_keys and area != KEY_AREA:
            continue
        if area not in left:
            continue
        left.remove(area)
        kinds = [kind for kind, _ in old]
        held.append(old.pop(kinds.index(area)) if area in kinds else (area, room))
    return tuple((int(kind), int(first)) for kind, first in held)


def remembered(pos: MontezumaPosLevel | None) -> tuple[tuple[int, int], ...]:
    """Return the remembered objects of ``pos`` (0.1's ``old_objects``), () if there are none."""
    return pos.score if pos is not None and isinstance(pos.score, tuple) else ()
