"""The physics of ``FastLunarLander-v0``: a rigid-body lander on two sprung legs, no Box2D.

Units and layout follow gymnasium's LunarLander: the world is 20 x 13.3 m (600 x 400
pixels at 30 pixels per metre), gravity pulls at -10 m/s², a frame lasts 1/50 s and the
terrain is 11 points 2 m apart joined by straight segments, flat around the helipad
(x from 8 to 12 m). The engines give the impulses gymnasium's engines give.

Everything else is plangym's own model, in plain Python float64 arithmetic:

* the lander is one rigid body (the hull's polygon at density 5 plus two light legs),
  its centre of mass at its reference point;
* each leg ends in a foot, a point fixed in the body frame. A foot below the ground
  pushes back along the ground's normal with a spring and a damper (the leg's give), and
  holds sideways with a stiff spring to the point where it first touched (static
  friction) that slides once the force passes the friction limit (Coulomb friction). The
  hull's corners touch the ground the same way, with plain sliding friction. A touch of
  the hull is a crash, and so is a leg pressed in beyond its travel (a hard landing);
* each frame takes :data:`SUBSTEPS` semi-implicit Euler steps; contacts are only looked
  for when the lander is within reach of the highest point of the terrain.

>>> body, terrain = LanderBody(x=10.0, y=HELIPAD_Y + 0.6), Terrain(flat_terrain())
>>> for _ in range(100):
...     crashed = advance(body, terrain, gravity=-10.0)
>>> body.contact, crashed, abs(body.vy) < 0.01  # standing on both legs
([True, True], False, True)
"""

from __future__ import annotations

import math

import numpy as np

FPS = 50
SCALE = 30.0  # pixels per metre
VIEWPORT_W, VIEWPORT_H = 600, 400  # the picture, in pixels
W, H = VIEWPORT_W / SCALE, VIEWPORT_H / SCALE
CHUNKS = 11
CHUNK_W = W / (CHUNKS - 1)
HELIPAD_Y = H / 4
HELIPAD_X1, HELIPAD_X2 = 4 * CHUNK_W, 6 * CHUNK_W
LEG_DOWN = 18 / SCALE  # the observation's height is measured from HELIPAD_Y + LEG_DOWN
INITIAL_RANDOM = 1000.0  # the initial push: a force of up to this, for one frame
MAIN_ENGINE_POWER, SIDE_ENGINE_POWER = 13.0, 0.6
MAIN_ENGINE_Y = 4 / SCALE
SIDE_ENGINE_AWAY, SIDE_ENGINE_HEIGHT, SIDE_ENGINE_LEVER = 12 / SCALE, 14 / SCALE, 17 / SCALE

# The hull's polygon in pixels (gymnasium's LANDER_POLY), then in metres.
LANDER_POLY = [(-14, +17), (-17, 0), (-17, -10), (+17, -10), (+17, 0), (+14, +17)]
HULL = tuple((x / SCALE, y / SCALE) for x, y in LANDER_POLY)
# Foot and hip of each leg in the body frame; leg 0 on the right, as gymnasium's legs[0].
FEET = ((28 / SCALE, -16 / SCALE), (-28 / SCALE, -16 / SCALE))
HIPS = ((22 / SCALE, -2 / SCALE), (-22 / SCALE, -2 / SCALE))
# The hull (0.963 m² at density 5) and two 4 x 16 pixel legs at density 1; the moment of
# inertia about the reference point includes the legs at about 0.9 m.
MASS = 4.96
INERTIA = 0.95
REACH = max(math.hypot(x, y) for x, y in HULL + FEET)  # farthest contact point

LAST = CHUNKS - 2  # the last segment's index
SUBSTEPS = 2
H_SUB = 1.0 / FPS / SUBSTEPS
# Per foot: about 2.5 cm of give under the lander's weight, damped at ~0.6 of critical.
LEG_STIFFNESS, LEG_DAMPING, LEG_FRICTION = 1000.0, 60.0, 0.5
STICK_STIFFNESS, STICK_DAMPING = 2000.0, 60.0  # how firmly a foot holds where it landed
HULL_STIFFNESS, HULL_DAMPING, HULL_FRICTION, HULL_SLIP = 4000.0, 150.0, 0.1, 100.0
# A leg gives at most this much (about a 3 m/s drop onto both legs); pressed further, it
# collapses: a crash, as the hull touching the ground is.
LEG_TRAVEL = 0.08


def flat_terrain() -> tuple[float, ...]:
    """Return the heights of flat ground at the helipad's level (``deterministic``)."""
    return (HELIPAD_Y,) * CHUNKS


def random_terrain(rng: np.random.Generator) -> tuple[float, ...]:
    """Draw the heights of the 11 terrain points: hills around a flat helipad.

    Each point averages three neighbouring draws of up to half the screen's height, so
    the hills are smooth; the helipad's points (x = 8, 10, 12) are at :data:`HELIPAD_Y`.
    """
    raw = rng.uniform(0, H / 2, size=CHUNKS + 2)
    heights = ((raw[:-2] + raw[1:-1] + raw[2:]) / 3).tolist()
    heights[CHUNKS // 2 - 1 : CHUNKS // 2 + 2] = [HELIPAD_Y] * 3
    return tuple(heights)


class Terrain:
    """Piecewise-linear ground through the heights at x = 0, 2, ..., 20 m.

    Each segment is kept as ``(x0, y0, slope, tx, ty)``: its start, slope and unit tangent
    (the normal is ``(-ty, tx)``); x outside [0, 20] extends the end segments.

    >>> Terrain((0.0, 2.0) + (2.0,) * 9).height(1.0)
    1.0
    """

    __slots__ = ("heights", "segments", "top")

    def __init__(self, heights: tuple[float, ...]):
        self.heights = heights
        self.top = max(heights)
        segments = []
        for i in range(CHUNKS - 1):
            x0, y0, rise = i * CHUNK_W, heights[i], heights[i + 1] - heights[i]
            length = math.hypot(CHUNK_W, rise)
            segments.append((x0, y0, rise / CHUNK_W, CHUNK_W / length, rise / length))
        self.segments = tuple(segments)

    def segment(self, x: float) -> tuple[float, float, float, float, float]:
        """Return the segment under ``x``."""
        return self.segments[min(max(int(x / CHUNK_W), 0), LAST)]

    def height(self, x: float) -> float:
        """Return the ground's height at ``x``."""
        x0, y0, slope, _, _ = self.segment(x)
        return y0 + slope * (x - x0)


class LanderBody:
    """Position, velocity, angle and spin of the lander, and what its feet hold.

    ``contact[i]`` says whether foot i touched the ground at the last substep and
    ``anchor[i]`` is the x where it holds (0.0 when it does not touch).
    """

    __slots__ = ("anchor", "angle", "contact", "omega", "vx", "vy", "x", "y")

    def __init__(self, x: float = W / 2, y: float = H, vx: float = 0.0, vy: float = 0.0):
        self.x, self.y, self.vx, self.vy = x, y, vx, vy
        self.angle = self.omega = 0.0
        self.contact = [False, False]
        self.anchor = [0.0, 0.0]

    def push(self, fx: float, fy: float, px: float, py: float) -> None:
        """Apply the impulse ``(fx, fy)`` at the world point ``(px, py)``."""
        self.vx += fx / MASS
        self.vy += fy / MASS
        self.omega += ((px - self.x) * fy - (py - self.y) * fx) / INERTIA


def fire_engines(
    body: LanderBody, main: float, side: float, direction: float, d0: float, d1: float
) -> None:
    """Apply the engines' impulses for one frame, as gymnasium's engines do.

    Args:
        body: The lander, whose velocity and spin change.
        main: Main engine power, 0 (off) or 0.5 to 1.
        side: Side engine power, 0 (off) or 0.5 to 1.
        direction: -1 fires the left engine, +1 the right one.
        d0: The frame's first dispersion draw, within ±1/SCALE.
        d1: Its second one, within ±1/SCALE.
    """
    tip_x, tip_y = math.sin(body.angle), math.cos(body.angle)
    side_x, side_y = -tip_y, tip_x
    if main:
        depth = MAIN_ENGINE_Y + 2 * d0  # the nozzle sits a little below the centre
        ox = tip_x * depth + side_x * d1
        oy = -tip_y * depth - side_y * d1
        power = MAIN_ENGINE_POWER * main
        body.push(-ox * power, -oy * power, body.x + ox, body.y + oy)
    if side:
        away = 3 * d1 + direction * SIDE_ENGINE_AWAY
        ox = tip_x * d0 + side_x * away
        oy = -tip_y * d0 - side_y * away
        power = SIDE_ENGINE_POWER * side
        px = body.x + ox - tip_x * SIDE_ENGINE_LEVER
        py = body.y + oy + tip_y * SIDE_ENGINE_HEIGHT
        body.push(-ox * power, -oy * power, px, py)


def advance(body: LanderBody, terrain: Terrain, gravity: float) -> bool:
    """Integrate one frame; return whether the lander crashed (hull down or a leg gave out)."""
    x, y, vx, vy, angle, omega = body.x, body.y, body.vx, body.vy, body.angle, body.omega
    contact, anchor, segments = body.contact, body.anchor, terrain.segments
    reach = terrain.top + REACH
    crashed = False
    for _ in range(SUBSTEPS):
        fx = fy = torque = 0.0
        if y < reach:
            cos, sin = math.cos(angle), math.sin(angle)
            for i, (lx, ly) in enumerate(FEET + HULL):
                rx, ry = cos * lx - sin * ly, sin * lx + cos * ly
                px, py = x + rx, y + ry
                k = int(px / CHUNK_W)
                x0, y0, slope, tx, ty = segments[0 if k < 0 else LAST if k > LAST else k]
                depth = (y0 + slope * (px - x0) - py) * tx
                if depth <= 0.0:
                    if i < 2:
                        contact[i], anchor[i] = False, 0.0
                    continue
                vpx, vpy = vx - omega * ry, vy + omega * rx
                if i < 2:  # a foot
                    normal = LEG_STIFFNESS * depth - LEG_DAMPING * (vpy * tx - vpx * ty)
                    normal = normal if normal > 0.0 else 0.0
                    hold = anchor[i] if contact[i] else px
                    # The spring to where the foot holds, measured along the ground.
                    along = -STICK_STIFFNESS * (px - hold) / tx
                    along -= STICK_DAMPING * (vpx * tx + vpy * ty)
                    limit = LEG_FRICTION * normal
                    if along > limit or along < -limit:  # slips: the hold follows the foot
                        along = limit if along > 0.0 else -limit
                        hold = px + along * tx / STICK_STIFFNESS
                    contact[i], anchor[i] = True, hold
                    crashed = crashed or depth > LEG_TRAVEL
                else:
                    normal = HULL_STIFFNESS * depth - HULL_DAMPING * (vpy * tx - vpx * ty)
                    normal = normal if normal > 0.0 else 0.0
                    limit = HULL_FRICTION * normal
                    along = min(max(-HULL_SLIP * (vpx * tx + vpy * ty), -limit), limit)
                    crashed = True
                force_x, force_y = along * tx - normal * ty, along * ty + normal * tx
                fx, fy = fx + force_x, fy + force_y
                torque += rx * force_y - ry * force_x
        elif contact[0] or contact[1]:
            contact[:], anchor[:] = [False, False], [0.0, 0.0]
        vx += fx / MASS * H_SUB
        vy += (gravity + fy / MASS) * H_SUB
        omega += torque / INERTIA * H_SUB
        x, y, angle = x + vx * H_SUB, y + vy * H_SUB, angle + omega * H_SUB
    body.x, body.y, body.vx, body.vy, body.angle, body.omega = x, y, vx, vy, angle, omega
    return crashed or (y < reach and _peak_inside_hull(body, terrain))


def _peak_inside_hull(body: LanderBody, terrain: Terrain) -> bool:
    """Whether a terrain point pokes into the hull between its corners (a crash too)."""
    cos, sin = math.cos(body.angle), math.sin(body.angle)
    first = max(int((body.x - REACH) / CHUNK_W) + 1, 0)
    last = min(int((body.x + REACH) / CHUNK_W), CHUNKS - 1)
    for k in range(first, last + 1):
        dx, dy = k * CHUNK_W - body.x, terrain.heights[k] - body.y
        lx, ly = cos * dx + sin * dy, cos * dy - sin * dx  # in the body frame
        corners = zip(HULL, HULL[1:] + HULL[:1], strict=True)
        if all(
            (bx - ax) * (ly - ay) - (by - ay) * (lx - ax) >= 0 for (ax, ay), (bx, by) in corners
        ):
            return True
    return False


# Pictures --------------------------------------------------------------------------------
LANDER_COLOUR, FLAG_COLOUR, WHITE = (128, 102, 230), (204, 204, 0), (255, 255, 255)


def picture(body: LanderBody, terrain: Terrain) -> np.ndarray:
    """Draw the scene as gymnasium's lander does: a (400, 600, 3) uint8 RGB picture.

    Black sky, white ground, yellow flags at the helipad's ends, a purple lander.
    """
    rows, cols = int(H * SCALE), int(W * SCALE)
    image = np.zeros((rows, cols, 3), dtype=np.uint8)
    xs = (np.arange(cols) + 0.5) / SCALE
    ground = np.interp(xs, np.arange(CHUNKS) * CHUNK_W, terrain.heights)
    heights = H - (np.arange(rows) + 0.5) / SCALE  # row 0 is the top of the screen
    image[heights[:, None] < ground[None, :]] = WHITE
    pole, top = 1 / SCALE, HELIPAD_Y + 50 / SCALE
    for x in (HELIPAD_X1, HELIPAD_X2):
        _fill(image, [(x, HELIPAD_Y), (x + pole, HELIPAD_Y), (x + pole, top), (x, top)], WHITE)
        flag = [(x, top - 10 / SCALE), (x + 25 / SCALE, top - 5 / SCALE), (x, top)]
        _fill(image, flag, FLAG_COLOUR)
    cos, sin = math.cos(body.angle), math.sin(body.angle)

    def world(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return [(body.x + cos * px - sin * py, body.y + sin * px + cos * py) for px, py in points]

    for (hx, hy), (fx, fy) in zip(HIPS, FEET, strict=True):
        # A leg: a 4-pixel-wide strut from hip to foot.
        nx, ny = (hy - fy), (fx - hx)
        scale = 2 / SCALE / math.hypot(nx, ny)
        nx, ny = nx * scale, ny * scale
        corners = [(hx - nx, hy - ny), (fx - nx, fy - ny), (fx + nx, fy + ny), (hx + nx, hy + ny)]
        _fill(image, world(corners), LANDER_COLOUR)
    _fill(image, world(list(HULL)), LANDER_COLOUR)
    return image


def _fill(image: np.ndarray, points: list[tuple[float, float]], colour: tuple) -> None:
    """Paint the convex polygon ``points`` (world metres, any winding) into ``image``."""
    rows, cols = image.shape[:2]
    px = np.array([p[0] for p in points]) * SCALE
    py = rows - np.array([p[1] for p in points]) * SCALE
    left, right = max(int(px.min()), 0), min(math.ceil(px.max()), cols)
    top, bottom = max(int(py.min()), 0), min(math.ceil(py.max()), rows)
    if left >= right or top >= bottom:
        return
    gx = np.arange(left, right)[None, :] + 0.5
    gy = np.arange(top, bottom)[:, None] + 0.5
    sides = [
        (bx - ax) * (gy - ay) - (by - ay) * (gx - ax)
        for ax, ay, bx, by in zip(px, py, np.roll(px, -1), np.roll(py, -1), strict=True)
    ]
    inside = np.logical_and.reduce([s >= 0 for s in sides]) | np.logical_and.reduce(
        [s <= 0 for s in sides]
    )
    image[top:bottom, left:right][inside] = colour
