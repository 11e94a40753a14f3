"""The state codec of the dm_control suite: a task's exact state as one flat float64 vector.

plangym 0.1 handed out ``physics.get_state()``, a plain float64 array; plangym's states are
plain float64 vectors too (``np.allclose``, ``np.stack`` and saving work as before), with
everything else that decides a task's future stored behind a tag. Every integer is stored
as a float64 that holds it exactly (generator words are uint32, the counters are small).
:attr:`DMControlStateCodec.layout` names the slices, in this order:

* ``tag``: which task (and ``visualize_reward`` setting) the state belongs to;
* ``rng_key`` (624 words), ``rng_pos``, ``rng_has_gauss``, ``rng_gauss``: the task's
  ``numpy.random.RandomState``, which the next episode's start draws from;
* the model fields the task rewrites when an episode starts (:data:`EPISODE_MODEL_FIELDS`);
* ``physics``: MuJoCo's ``mjSTATE_INTEGRATION`` state;
* ``mat_rgba`` (only with ``visualize_reward``): the colours the last reward gave the body;
* ``step_count``, ``reset_next_step``: dm_control's episode bookkeeping.

The first block, up to the model fields (the **episode block**), only changes when an
episode starts: the codec keeps the current episode's bytes, and a restore within the same
episode skips it (restoring the generator alone costs about 30 µs).

>>> from dm_control import suite
>>> env = suite.load("reacher", "easy", task_kwargs={"random": 0})
>>> _ = env.reset()
>>> codec = DMControlStateCodec("reacher-easy", env, visualize_reward=False)
>>> codec.remember_episode()
>>> [name for name, start, stop in codec.layout][:6]
['tag', 'rng_key', 'rng_pos', 'rng_has_gauss', 'rng_gauss', 'geom_pos']
>>> state = codec.capture()
>>> state.dtype, state.shape == (codec.size,)
(dtype('float64'), True)
>>> _ = env.step([0.5, -0.5])
>>> codec.restore(state)
>>> bool((codec.capture() == state).all())
True
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from plangym.control.shared.mujoco_runtime import load_mujoco
from plangym.environment_names import DM_CONTROL_NAMES
from plangym.rng import MT19937_KEY_WORDS, random_state_fields, restore_random_state
from plangym.validation import describe
from plangym.validation.values import with_article

mujoco = load_mujoco(family="dm_control", extra="dm-control")

# What mj_getState / mj_setState move: everything mj_step reads that is not derived.
STATE_SIG = int(mujoco.mjtState.mjSTATE_INTEGRATION)

# MjModel fields a task rewrites when an episode starts (its target, terrain or obstacles),
# keyed by task name or by domain. Found by comparing every model array across resets of all
# 51 suite tasks (dm-control 1.0.50); tests/control/test_dm_control.py checks it again. mat_rgba,
# which visualize_reward rewrites on every step, is in the step block.
EPISODE_MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "finger-turn_easy": ("site_pos",),
    "finger-turn_hard": ("site_pos",),
    "fish-swim": ("geom_pos",),
    "manipulator": ("body_pos", "body_quat"),
    "point_mass-hard": ("wrap_prm",),
    "quadruped-escape": ("hfield_data",),
    "reacher": ("geom_pos",),
    "stacker": ("body_pos",),
    "swimmer": ("geom_pos", "light_pos"),  # light_pos: the light that follows the target
}

# A tag is _TAG_BASE + 2 * (index of the task in DM_CONTROL_NAMES) + visualize_reward: an
# integer far from any physical value, and the "1" in 0x...01 is the layout's version.
_TAG_BASE = 0x504C_0100
_WORD_LIMIT = 2.0**32
_COUNT_LIMIT = 2.0**53  # integers up to here are exact in float64
_KNOWN_EPISODES = 16  # episode blocks already checked, remembered (bytes) up to this many
_COUNTERS = struct.Struct("<dd")  # step_count and reset_next_step, the last two values


def episode_model_fields(name: str) -> tuple[str, ...]:
    """Return the model fields the task ``"domain-task"`` rewrites when an episode starts.

    >>> episode_model_fields("reacher-hard"), episode_model_fields("walker-walk")
    (('geom_pos',), ())
    """
    fields = EPISODE_MODEL_FIELDS.get(name)
    domain = name.split("-", maxsplit=1)[0]
    return fields if fields is not None else EPISODE_MODEL_FIELDS.get(domain, ())


def state_tag(name: str, visualize_reward: bool) -> float:
    """Return the first value of every state of the task ``name``.

    >>> state_tag("walker-walk", True) - state_tag("walker-walk", False)
    1.0
    >>> tag_owner(state_tag("reacher-easy", False))
    'reacher-easy with visualize_reward=False'
    """
    return float(_TAG_BASE + 2 * DM_CONTROL_NAMES.index(name) + int(visualize_reward))


def tag_owner(tag: float) -> str | None:
    """Return which task a tag belongs to, or None when it is no tag."""
    index = tag - _TAG_BASE
    if not (0 <= index < 2 * len(DM_CONTROL_NAMES)) or index != int(index):
        return None
    name, visualize = DM_CONTROL_NAMES[int(index) // 2], bool(int(index) % 2)
    return f"{name} with visualize_reward={visualize}"


class DMControlStateCodec:
    """Reads, writes and checks the states of one suite environment.

    Args:
        env_name: The task's ``"domain-task"`` name (tag, error messages, model fields).
        env: The ``dm_control.rl.control.Environment``.
        visualize_reward: Whether the reward colours the body (then they are state too).
    """

    def __init__(self, env_name: str, env: Any, visualize_reward: bool):
        self.env = env
        self.env_name = env_name
        self.visualize_reward = visualize_reward
        physics = env.physics
        self.model_ptr, self.data_ptr = physics.model.ptr, physics.data.ptr
        self.model_fields = episode_model_fields(env_name)
        # The colours visualize_reward gives the body, flat (a view of the model's array).
        self.colours = physics.model.mat_rgba.reshape(-1) if visualize_reward else None
        self.tag = state_tag(env_name, visualize_reward)
        sizes = {"tag": 1, "rng_key": MT19937_KEY_WORDS, "rng_pos": 1}
        sizes.update(rng_has_gauss=1, rng_gauss=1)
        sizes.update({field: getattr(physics.model, field).size for field in self.model_fields})
        sizes["physics"] = mujoco.mj_stateSize(self.model_ptr, STATE_SIG)
        if self.colours is not None:
            sizes["mat_rgba"] = self.colours.size
        sizes.update(step_count=1, reset_next_step=1)
        layout, start = [], 0
        for name, size in sizes.items():
            layout.append((name, start, start + size))
            start += size
        self.layout: tuple[tuple[str, int, int], ...] = tuple(layout)
        self.slices = {name: slice(start, stop) for name, start, stop in layout}
        self.size = start
        self.physics = self.slices["physics"]
        self.episode_size = self.physics.start  # the episode block ends where physics starts
        self.episode = np.zeros(self.episode_size)  # the current episode's block
        self.episode_bytes = b""  # its bytes, once remember_episode has run
        # Episode blocks known to be well formed, newest first: comparing bytes stops at the
        # first difference, so looking a block up here is cheaper than hashing it.
        self.known_episodes: list[bytes] = []

    # Episode block --------------------------------------------------------------------------
    def remember_episode(self) -> None:
        """Read the episode block after an episode started (the only time it changes)."""
        episode, slices = self.episode, self.slices
        key, pos, has_gauss, gauss = random_state_fields(self.env.task.random)
        episode[0] = self.tag
        episode[slices["rng_key"]] = key
        episode[slices["rng_pos"]] = pos
        episode[slices["rng_has_gauss"]] = has_gauss
        episode[slices["rng_gauss"]] = gauss
        model = self.env.physics.model
        for field in self.model_fields:
            episode[slices[field]] = getattr(model, field).reshape(-1)
        self.episode_bytes = episode.tobytes()
        self._know(self.episode_bytes)

    def _write_episode(self, state: np.ndarray) -> None:
        slices = self.slices
        key = state[slices["rng_key"]].astype(np.uint32)
        pos, has_gauss = int(state[slices["rng_pos"]][0]), int(state[slices["rng_has_gauss"]][0])
        restore_random_state(
            self.env.task.random, key, pos, has_gauss, state[slices["rng_gauss"]][0]
        )
        physics = self.env.physics
        for field in self.model_fields:
            target = getattr(physics.model, field)
            np.copyto(target, state[slices[field]].reshape(target.shape))
        if "hfield_data" in self.model_fields:
            _upload_heightfields(physics)
        self.episode[:] = state[: self.episode_size]
        self.episode_bytes = self.episode.tobytes()

    # Whole states ---------------------------------------------------------------------------
    def capture(self) -> np.ndarray:
        """Return the current state: a new read-only float64 vector of :attr:`size` values."""
        env = self.env
        state = np.empty(self.size)
        state[: self.episode_size] = self.episode
        mujoco.mj_getState(self.model_ptr, self.data_ptr, state[self.physics], STATE_SIG)
        if self.colours is not None:
            state[self.slices["mat_rgba"]] = self.colours
        state[-2] = env._step_count
        state[-1] = env._reset_next_step
        state.flags.writeable = False
        return state

    def restore(self, state: np.ndarray) -> None:
        """Restore a checked state (a float64 vector of :attr:`size` values)."""
        if not state.flags.c_contiguous:
            state = np.ascontiguousarray(state)  # MuJoCo reads the physics slice in place
        if state[: self.episode_size].tobytes() != self.episode_bytes:  # another episode
            self._write_episode(state)
        mujoco.mj_setState(self.model_ptr, self.data_ptr, state[self.physics], STATE_SIG)
        # What the step that produced the state computed last (dm_control's steps end with
        # mj_step1, and the next one starts with mj_step2 on top of it). Never inside
        # physics.reset_context(): that would clear the time and the solver's warm start.
        mujoco.mj_step1(self.model_ptr, self.data_ptr)
        if self.colours is not None:
            self.colours[:] = state[self.slices["mat_rgba"]]
        env = self.env
        env._step_count, env._reset_next_step = int(state[-2]), bool(state[-1])

    # Checks ---------------------------------------------------------------------------------
    def problem(self, state: Any) -> tuple[type[Exception], str] | None:
        """Return ``(error type, what was received)`` unless ``state`` is one of this task's."""
        if not isinstance(state, np.ndarray):
            return TypeError, describe(state)
        if state.dtype != np.float64 or state.ndim != 1:
            return ValueError, describe(state)
        if not state.size or state[0] != self.tag:
            owner = tag_owner(float(state[0])) if state.size else None
            if owner is not None:
                return ValueError, f"a state of {owner}"
            return ValueError, f"{describe(state)} without this task's tag as its first value"
        if state.size != self.size:
            return ValueError, f"{describe(state)} (another layout or plangym version)"
        finite = np.isfinite(state[:-2])  # the counters have their own message
        if not finite.all():  # MuJoCo would reset the physics mid-step, with a warning
            index = int(np.argmin(finite))
            return (
                ValueError,
                f"{float(state[index])!r} at position {index}, where values are finite",
            )
        episode = state[: self.episode_size].tobytes()
        if episode not in self.known_episodes:
            found = self._episode_problem(state)
            if found:
                return ValueError, found
            self._know(episode)
        step_count, reset_next_step = float(state[-2]), float(state[-1])
        if not _counters_ok(step_count, reset_next_step):
            return ValueError, f"step_count {step_count!r} (a count) / reset_next_step " + (
                f"{reset_next_step!r} (0 or 1)"
            )
        return None

    def check(self, state: Any, name: str = "state") -> None:
        """Raise ValueError (TypeError for a non-array) unless ``state`` is this task's."""
        found = self.problem(state)
        if found is not None:
            error, received = found
            raise error(
                f"{name}: expected {with_article(self.env_name)} state (a float64 vector of "
                f"{self.size} values from get_state(), visualize_reward={self.visualize_reward}), "
                f"received {received}"
            )

    def check_all(self, states: list) -> None:
        """Check a batch; a glance for each state whose episode block is known.

        A known block holds this task's tag, so the glance is: an array of the right type
        and shape, a known block, and counters that are counts.
        """
        shape, float64, known = (self.size,), np.dtype(np.float64), self.known_episodes
        end, counters_at = self.episode_size, 8 * (self.size - 2)
        unpack: Any = _COUNTERS.unpack_from  # reads a contiguous array's buffer in place
        for i, state in enumerate(states):
            if not (
                type(state) is np.ndarray
                and state.dtype is float64
                and state.shape == shape
                and state.flags.c_contiguous
                and state[:end].tobytes() in known
                and _counters_ok(*unpack(state, counters_at))
                and np.isfinite(state).all()
            ):
                self.check(state, name=f"states[{i}]")

    def _episode_problem(self, state: np.ndarray) -> str | None:
        slices = self.slices
        words = state[slices["rng_key"]]
        if not ((words >= 0) & (words < _WORD_LIMIT) & (words == np.floor(words))).all():
            return "rng_key values that are not uint32 words"
        pos, has_gauss = (
            float(state[slices["rng_pos"]][0]),
            float(state[slices["rng_has_gauss"]][0]),
        )
        if not (0 <= pos <= MT19937_KEY_WORDS and pos == int(pos)) or has_gauss not in (0, 1):
            return f"rng_pos {pos!r} / rng_has_gauss {has_gauss!r} out of range"
        return None

    def _know(self, episode: bytes) -> None:
        known = self.known_episodes
        if episode in known:
            known.remove(episode)
        known.insert(0, episode)
        del known[_KNOWN_EPISODES:]


def _counters_ok(step_count: float, reset_next_step: float) -> bool:
    """Whether the last two values of a state are a count and a flag (NaN is neither)."""
    return (
        0 <= step_count < _COUNT_LIMIT
        and step_count == int(step_count)
        and reset_next_step in (0.0, 1.0)
    )


def _upload_heightfields(physics: Any) -> None:
    """Send rewritten height fields to the GL context, when pictures have created one."""
    contexts = getattr(physics, "_contexts", None)  # the property would create one
    if not contexts:
        return
    with contexts.gl.make_current() as context:
        for hfield_id in range(physics.model.nhfield):
            context.call(mujoco.mjr_uploadHField, physics.model.ptr, contexts.mujoco.ptr, hfield_id)
