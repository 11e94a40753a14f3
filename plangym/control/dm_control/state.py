"""The state codec of the dm_control suite: moves a task's state between the simulator and bytes.

A state is a 0-d record (see :mod:`plangym.control.dm_control.env`) whose fields come in two
blocks. The **episode block** (the task's generator and the model fields it rewrites when an
episode starts) only changes at an episode start, so the codec keeps the current episode's
bytes and a restore within the same episode skips it. The **step block** (MuJoCo's
integration state, the reward colours, dm_control's step counters) is read and written every
time. States move as the bytes of their records: a batch restores and records them without
building a record per element.

>>> from dm_control import suite
>>> env = suite.load("reacher", "easy", task_kwargs={"random": 0})
>>> _ = env.reset()
>>> codec = DMControlStateCodec("reacher-easy", env, visualize_reward=False)
>>> codec.remember_episode()
>>> codec.layout.dtype.names[:5]
('rng_key', 'rng_pos', 'rng_has_gauss', 'rng_gauss', 'geom_pos')
>>> blob = codec.capture()
>>> _ = env.step([0.5, -0.5])
>>> codec.restore(blob)
>>> codec.capture() == blob
True
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from plangym.control.shared.mujoco_runtime import load_mujoco
from plangym.control.shared.record_state import RecordLayout
from plangym.rng import MT19937_KEY_WORDS, random_state_fields, restore_random_state

mujoco = load_mujoco(family="dm_control", extra="dm_control")

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

_RNG_FIELDS = ("rng_key", "rng_pos", "rng_has_gauss", "rng_gauss")
# step_count (int64) and reset_next_step (bool), packed as the record stores them.
_COUNTERS = struct.Struct("<q?")


def episode_model_fields(name: str) -> tuple[str, ...]:
    """Return the model fields the task ``"domain-task"`` rewrites when an episode starts.

    >>> episode_model_fields("reacher-hard"), episode_model_fields("walker-walk")
    (('geom_pos',), ())
    """
    fields = EPISODE_MODEL_FIELDS.get(name)
    domain = name.split("-", maxsplit=1)[0]
    return fields if fields is not None else EPISODE_MODEL_FIELDS.get(domain, ())


class DMControlStateCodec:
    """Reads and writes the states of one suite environment.

    Args:
        env_name: The task's ``"domain-task"`` name (error messages, model fields).
        env: The ``dm_control.rl.control.Environment``.
        visualize_reward: Whether the reward colours the body (then they are state too).
    """

    def __init__(self, env_name: str, env: Any, visualize_reward: bool):
        self.env = env
        physics = env.physics
        self.model_ptr, self.data_ptr = physics.model.ptr, physics.data.ptr
        self.physics_buffer = np.empty(mujoco.mj_stateSize(self.model_ptr, STATE_SIG))
        self.model_fields = episode_model_fields(env_name)
        # The colours visualize_reward gives the body, flat (a view of the model's array).
        self.colours = physics.model.mat_rgba.reshape(-1) if visualize_reward else None
        self.layout = self._make_layout(env_name)
        fields = self.layout.dtype.fields
        assert fields is not None, "a record dtype has fields"
        self.episode_nbytes = fields["physics"][1]
        self.episode = b""  # the current episode's block, once remember_episode has run

    def _make_layout(self, env_name: str) -> RecordLayout:
        model = self.env.physics.model
        fields: dict[str, tuple[Any, tuple[int, ...]]] = {
            "rng_key": (np.uint32, (MT19937_KEY_WORDS,)),
            "rng_pos": (np.int64, ()),
            "rng_has_gauss": (np.int64, ()),
            "rng_gauss": (np.float64, ()),
        }
        for field in self.model_fields:
            array = getattr(model, field)
            fields[field] = (array.dtype, array.shape)
        fields["physics"] = (np.float64, self.physics_buffer.shape)
        if self.colours is not None:
            fields["mat_rgba"] = (model.mat_rgba.dtype, model.mat_rgba.shape)
        fields["step_count"] = (np.int64, ())
        fields["reset_next_step"] = (np.bool_, ())
        return RecordLayout(env_name, fields)

    # Episode block --------------------------------------------------------------------------
    def remember_episode(self) -> None:
        """Read the episode block after an episode started (the only time it changes)."""
        record = np.zeros((), self.layout.dtype)
        key, pos, has_gauss, gauss = random_state_fields(self.env.task.random)
        record["rng_key"], record["rng_pos"] = key, pos
        record["rng_has_gauss"], record["rng_gauss"] = has_gauss, gauss
        model = self.env.physics.model
        for field in self.model_fields:
            record[field] = getattr(model, field)
        self.episode = record.tobytes()[: self.episode_nbytes]

    def _write_episode(self, blob: bytes) -> None:
        state = np.ndarray((), self.layout.dtype, blob)
        physics = self.env.physics
        restore_random_state(self.env.task.random, *(state[f] for f in _RNG_FIELDS))
        for field in self.model_fields:
            np.copyto(getattr(physics.model, field), state[field])
        if "hfield_data" in self.model_fields:
            _upload_heightfields(physics)
        self.episode = blob[: self.episode_nbytes]

    # Whole states ---------------------------------------------------------------------------
    def capture(self) -> bytes:
        """Return the bytes of the current state, in the order of the record's fields."""
        env = self.env
        buffer = self.physics_buffer
        mujoco.mj_getState(self.model_ptr, self.data_ptr, buffer, STATE_SIG)
        counters = _COUNTERS.pack(env._step_count, env._reset_next_step)
        if self.colours is None:
            return b"".join((self.episode, buffer.tobytes(), counters))
        return b"".join((self.episode, buffer.tobytes(), self.colours.tobytes(), counters))

    def restore(self, blob: bytes) -> None:
        """Restore the state whose record bytes are ``blob`` (already checked)."""
        start = self.episode_nbytes
        if blob[:start] != self.episode:  # another episode: its generator and model
            self._write_episode(blob)
        size = self.physics_buffer.size
        physics = np.frombuffer(blob, np.float64, count=size, offset=start)
        mujoco.mj_setState(self.model_ptr, self.data_ptr, physics, STATE_SIG)
        # What the step that produced the state computed last (dm_control's steps end with
        # mj_step1, and the next one starts with mj_step2 on top of it). Never inside
        # physics.reset_context(): that would clear the time and the solver's warm start.
        mujoco.mj_step1(self.model_ptr, self.data_ptr)
        start += 8 * size
        colours = self.colours
        if colours is not None:
            colours[:] = np.frombuffer(blob, colours.dtype, colours.size, start)
            start += colours.nbytes
        env = self.env
        env._step_count, env._reset_next_step = _COUNTERS.unpack_from(blob, start)


def _upload_heightfields(physics: Any) -> None:
    """Send rewritten height fields to the GL context, when pictures have created one."""
    contexts = getattr(physics, "_contexts", None)  # the property would create one
    if not contexts:
        return
    with contexts.gl.make_current() as context:
        for hfield_id in range(physics.model.nhfield):
            context.call(mujoco.mjr_uploadHField, physics.model.ptr, contexts.mujoco.ptr, hfield_id)
