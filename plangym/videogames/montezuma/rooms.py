"""The pyramid of rooms Panama Joe explores, and :class:`MontezumaPosLevel`, where he is.

>>> room_xy(1), KNOWN_XY[15], PYRAMID[0][4]
((4, 0), (0, 3), 1)
"""

from __future__ import annotations

# The rooms of a level as 0.1 laid them out: row = floor of the pyramid (top first),
# column = position left to right, -1 = no room. Room numbers are the game's (RAM[3]).
PYRAMID = (
    (-1, -1, -1, 0, 1, 2, -1, -1, -1),
    (-1, -1, 3, 4, 5, 6, 7, -1, -1),
    (-1, 8, 9, 10, 11, 12, 13, 14, -1),
    (15, 16, 17, 18, 19, 20, 21, 22, 23),
)
N_ROOMS = 24

# ``(column, row)`` on PYRAMID of each room. 0.1 filled a list of None lazily; every room
# is on the map, so it is complete from the start (and immutable).
KNOWN_XY: tuple[tuple[int, int], ...] = tuple(
    next((rooms.index(room), row) for row, rooms in enumerate(PYRAMID) if room in rooms)
    for room in range(N_ROOMS)
)


def room_xy(room: int) -> tuple[int, int] | None:
    """Return ``(column, row)`` of ``room`` on :data:`PYRAMID`, None for an unknown room.

    >>> room_xy(1), room_xy(15), room_xy(42), room_xy(-1)
    ((4, 0), (0, 3), None, None)
    """
    return KNOWN_XY[room] if 0 <= room < N_ROOMS else None


class MontezumaPosLevel:
    """Where Panama Joe is: level, objects (0.1 called them ``score``), room, x and y.

    Hashable and comparable by value, so it can key a Go-Explore archive.

    >>> pos = MontezumaPosLevel(level=0, score=0, room=1, x=79, y=29)
    >>> pos, pos == MontezumaPosLevel(0, 0, 1, 79, 29)
    (Level=0 Room=1 Objects=0 x=79 y=29, True)
    """

    __slots__ = ("level", "room", "score", "tuple", "x", "y")

    def __init__(self, level: int, score: float | tuple, room: int, x: float, y: float):
        self.level = level
        self.score = score
        self.room = room
        self.x = x
        self.y = y
        self.tuple = (level, score, room, x, y)

    def set_tuple(self) -> None:
        """Refresh :attr:`tuple` after changing an attribute."""
        self.tuple = (self.level, self.score, self.room, self.x, self.y)

    def __hash__(self) -> int:
        return hash(self.tuple)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MontezumaPosLevel) and self.tuple == other.tuple

    def __getstate__(self) -> tuple:
        return self.tuple

    def __setstate__(self, values: tuple) -> None:
        self.level, self.score, self.room, self.x, self.y = values
        self.tuple = tuple(values)

    def __repr__(self) -> str:
        return f"Level={self.level} Room={self.room} Objects={self.score} x={self.x} y={self.y}"
