"""The dm_control suite's tasks with exact states.

A state is a read-only 0-d record (a :class:`~plangym.control.record_state.RecordLayout`)
holding everything that decides the future of a task:

* ``rng_key``, ``rng_pos``, ``rng_has_gauss``, ``rng_gauss``: the task's
  ``numpy.random.RandomState`` (MT19937), which the next episode's start draws from;
* the model fields the task rewrites at the start of each episode (the target of
  ``reacher``, the terrain of ``quadruped-escape``...; see :data:`EPISODE_MODEL_FIELDS`);
* ``physics``: MuJoCo's ``mjSTATE_INTEGRATION`` state (time, positions, velocities,
  actuator activations, the solver's warm start, controls, applied forces, mocap);
* ``mat_rgba`` when ``visualize_reward=True``: the colours the last reward gave the body;
* ``step_count`` and ``reset_next_step``: the dm_control environment's episode bookkeeping.

A state is restored with ``mj_setState`` followed by ``mj_step1``: exactly what dm_control
left computed at the end of the step that produced the state, so the next step is the same
to the bit. See ``docs/dm_control.md`` for the names, the observation layout, the LQR
tasks and the OpenGL backend.

>>> env = DMControlEnv("walker-walk", seed=1)
>>> state, obs, info = env.reset()
>>> obs.shape, env.action_space.shape
((24,), (6,))
>>> [name for name, start, stop in env.obs_layout]
['orientations', 'height', 'velocity']
>>> action = np.full(6, 0.5, dtype=np.float32)
>>> first = env.step(action, state=state, dt=2)
>>> _ = env.step(-action, dt=5)
>>> again = env.step(action, state=state, dt=2)
>>> bool((first[1] == again[1]).all()) and first[2] == again[2], first[-1]["n_step"]
(True, 2)
"""

from __future__ import annotations

import ctypes.util
import difflib
import os
import struct
import sys
from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium.spaces import Box

from plangym.columns import BatchColumns, is_record_block
from plangym.control.record_state import RecordLayout
from plangym.core import PlanEnv, PlangymEnv, inherits_unchanged, repeat_action, wrap_callable
from plangym.environment_names import DM_CONTROL
from plangym.extras import require
from plangym.rng import MT19937_KEY_WORDS, random_state_fields, restore_random_state


def _default_gl_backend() -> None:
    """Choose dm_control's OpenGL backend on a headless Linux machine, before its import.

    dm_control reads ``MUJOCO_GL`` once, when imported, and by default picks GLFW, which
    imports fine without a display and then fails on the first picture, and on every
    ``quadruped-escape`` reset (it uploads its new terrain to the GL context). OSMesa
    renders in software anywhere its library is installed; a machine with a GPU can set
    ``MUJOCO_GL=egl`` itself, which this leaves alone. Rendering calls stay on the calling
    thread: a plangym env is used from one thread, and dm_control's render thread cannot
    free its contexts at interpreter exit (it prints a traceback there).
    """
    os.environ.setdefault("DISABLE_RENDER_THREAD_OFFLOADING", "1")
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if (
        "MUJOCO_GL" not in os.environ
        and sys.platform.startswith("linux")
        and headless
        and ctypes.util.find_library("OSMesa")
    ):
        os.environ["MUJOCO_GL"] = "osmesa"


_default_gl_backend()
require("dm_control", extra="dm_control", family="dm_control")
mujoco = require("mujoco", extra="dm_control", family="dm_control")
from dm_control import suite  # noqa: E402 - after the backend is chosen
from dm_control.rl.control import PhysicsError, flatten_observation  # noqa: E402
from dm_env import StepType  # noqa: E402

__all__ = ["DMControlEnv", "EPISODE_MODEL_FIELDS", "LQR_MODEL_SEED"]

# What mj_getState / mj_setState move: everything mj_step reads that is not derived.
STATE_SIG = int(mujoco.mjtState.mjSTATE_INTEGRATION)

# MjModel fields a task rewrites when an episode starts (its target, terrain or obstacles),
# keyed by task name or by domain. Found by comparing every model array across resets of all
# 51 suite tasks (dm-control 1.0.50); tests/test_dm_control.py checks it again. mat_rgba,
# which visualize_reward rewrites on every step, is handled apart.
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

# The lqr tasks draw their model (stiffness, damping, actuated bodies) from the task's
# generator when they are built. plangym always builds them from this seed, so that every
# instance, clone and worker simulates the same system and takes the others' states; the
# ``seed`` argument then seeds the generator the episodes start from.
LQR_MODEL_SEED = 0

_RNG_FIELDS = ("rng_key", "rng_pos", "rng_has_gauss", "rng_gauss")
# step_count (int64) and reset_next_step (bool), packed as the record stores them.
_COUNTERS = struct.Struct("<q?")


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
    if full not in DM_CONTROL:
        closest = ", ".join(difflib.get_close_matches(full, DM_CONTROL, n=3, cutoff=0.5))
        raise ValueError(
            f"name: unknown dm_control task {full!r}; closest known names: {closest or 'none'}"
        )
    return domain, task


class DMControlEnv(PlangymEnv):
    """A dm_control suite task (``"domain-task"``), exactly restorable.

    Observations (``obs_type="coords"``) are the task's observation dict flattened into one
    float64 vector in the dict's own order (:attr:`obs_layout` names the slices); "rgb" and
    "grayscale" are pictures from camera 0 (:attr:`IMAGE_SHAPE`). Actions are float32
    vectors within the actuators' control range.

    An episode ends when dm_control's time step is the last one: ``terminal`` is True when
    the task itself ended it (discount 0: the lqr tasks reaching the origin, or a physics
    divergence, see below), ``truncated`` when the time limit did (discount 1). Stepping on
    from a state whose episode ended continues the simulation (dm_control would start a
    new episode); such steps report the end again once the time limit has passed.

    A step whose physics diverges (MuJoCo's "unstable simulation" warning, which dm_control
    raises as ``PhysicsError``; the lqr tasks under random actions do it) ends the episode:
    reward 0.0, ``terminal=True`` and ``info["physics_error"]`` holding the message.

    Args:
        name: ``"domain-task"``, one of :data:`plangym.environment_names.DM_CONTROL`.
        frameskip: Underlying steps (dm_control control steps) per agent step.
        episodic_life: Accepted for plangym 0.1 compatibility; no task has lives.
        autoreset: Start a new episode after a step that ends one.
        wrappers: Must be None: dm_control tasks are not gymnasium envs.
        delay_setup: Build the task later, in :meth:`setup`.
        visualize_reward: Colour the body by the last reward (only changes pictures).
        domain_name: With ``task_name``, the task instead of ``name`` (plangym 0.1).
        task_name: See ``domain_name``.
        render_mode: "rgb_array" (pictures available) or None.
        obs_type: "coords" (default), "rgb" or "grayscale".
        remove_time_limit: Ignored, as in plangym 0.1: the suite's time limits are kept.
        return_image: Add a picture to every ``info`` as ``info["rgb"]``.
        seed: Seed of the task's generator (episode starts); None draws one. The lqr
            models are always built from :data:`LQR_MODEL_SEED`.
    """

    AVAILABLE_RENDER_MODES = frozenset({"rgb_array", None})
    DEFAULT_OBS_TYPE = "coords"
    IMAGE_SHAPE = (240, 320)  # (height, width) of get_image(), as in plangym 0.1

    def __init__(
        self,
        name: str = "cartpole-balance",
        frameskip: int = 1,
        episodic_life: bool = False,
        autoreset: bool = True,
        wrappers: Iterable[wrap_callable] | None = None,
        delay_setup: bool = False,
        visualize_reward: bool = True,
        domain_name: str | None = None,
        task_name: str | None = None,
        render_mode: str | None = "rgb_array",
        obs_type: str | None = None,
        remove_time_limit: bool | None = None,  # kept for plangym 0.1: ignored
        return_image: bool = False,
        seed: int | None = None,
    ):
        if wrappers:
            raise ValueError(
                "wrappers: expected None, dm_control tasks take no gymnasium wrappers, "
                f"received {wrappers!r}"
            )
        self._domain_name, self._task_name = split_name(name, domain_name, task_name)
        self._visualize_reward = bool(visualize_reward)
        self._seed = seed
        super().__init__(
            name=f"{self._domain_name}-{self._task_name}",
            frameskip=frameskip,
            autoreset=autoreset,
            wrappers=None,
            delay_setup=delay_setup,
            remove_time_limit=False,
            render_mode=render_mode,
            episodic_life=episodic_life,
            obs_type=obs_type,
            return_image=return_image,
        )

    # Properties -----------------------------------------------------------------------------
    @property
    def domain_name(self) -> str:
        """The suite domain, e.g. "walker"."""
        return self._domain_name

    @property
    def task_name(self) -> str:
        """The task of the domain, e.g. "walk"."""
        return self._task_name

    @property
    def visualize_reward(self) -> bool:
        """Whether the body is coloured by the last reward in pictures."""
        return self._visualize_reward

    @property
    def physics(self) -> Any:
        """The dm_control ``Physics`` of the task."""
        return self.gym_env.physics

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy record type of this env's states."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._layout.dtype

    @property
    def obs_layout(self) -> tuple[tuple[str, int, int], ...]:
        """``(key, start, stop)`` of each entry of the task's observation dict in ``obs``."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._obs_layout

    @property
    def metadata(self) -> dict[str, Any]:
        """Render modes and frames per second of one agent step."""
        fps = 1.0 / (self.gym_env.control_timestep() * self.frameskip)
        return {"render_modes": ["rgb_array"], "render_fps": fps}

    @property
    def reward_range(self) -> tuple[float, float]:
        """Range of a step's reward (the suite promises none across tasks)."""
        return (-float("inf"), float("inf"))

    def action_spec(self) -> Any:
        """dm_control's action spec of the task."""
        return self.gym_env.action_spec()

    # Setup ----------------------------------------------------------------------------------
    def init_gym_env(self) -> Any:
        """Load the suite task with flat observations (setup starts its first episode)."""
        is_lqr = self._domain_name == "lqr"
        env = suite.load(
            self._domain_name,
            self._task_name,
            task_kwargs={"random": LQR_MODEL_SEED if is_lqr else self._seed},
            environment_kwargs={"flat_observation": True},
            visualize_reward=self._visualize_reward,
        )
        if is_lqr:  # the same model in every instance; the episodes follow the seed
            env.task.random.seed(self._seed)
        return env

    def setup(self) -> None:
        """Load the task, lay out its states and read its spaces."""
        env = self.init_gym_env()
        self._gym_env = env
        physics = env.physics
        self._model_ptr, self._data_ptr = physics.model.ptr, physics.data.ptr
        self._warning_counters = physics.data.warning.number  # a view of mjData's
        self._physics_buffer = np.empty(mujoco.mj_stateSize(self._model_ptr, STATE_SIG))
        self._model_fields = self._episode_model_fields()
        self._layout = self._make_layout()
        self._episode_nbytes = self._layout.dtype.fields["physics"][1]
        self._has_hfield = "hfield_data" in self._model_fields
        # The colours visualize_reward gives the body, flat (a view of the model's array).
        self._colours = physics.model.mat_rgba.reshape(-1) if self._visualize_reward else None
        self._batch_in_bulk = self._plain_dynamics()
        self._obs_layout = self._read_obs_layout()
        obs, _ = self.apply_reset()
        self._init_spaces(obs)

    def _plain_dynamics(self) -> bool:
        """Whether a batch may run in the bulk loop: it would skip nothing that does work.

        True when there are no pictures to add, every ``process_*`` hook is an identity and
        no method in :data:`_BULK_LOOP_REPLACES` is overridden.
        """
        unchanged = inherits_unchanged(type(self), _BULK_LOOP_REPLACES)
        return unchanged and not self.return_image and self._identity_hooks

    def _episode_model_fields(self) -> tuple[str, ...]:
        fields = EPISODE_MODEL_FIELDS.get(self.name)
        return fields if fields is not None else EPISODE_MODEL_FIELDS.get(self._domain_name, ())

    def _make_layout(self) -> RecordLayout:
        """Lay out the record: the episode's fields first (compared as a block), then the step's."""
        model = self._gym_env.physics.model
        fields: dict[str, tuple[Any, tuple[int, ...]]] = {
            "rng_key": (np.uint32, (MT19937_KEY_WORDS,)),
            "rng_pos": (np.int64, ()),
            "rng_has_gauss": (np.int64, ()),
            "rng_gauss": (np.float64, ()),
        }
        for field in self._model_fields:
            array = getattr(model, field)
            fields[field] = (array.dtype, array.shape)
        fields["physics"] = (np.float64, self._physics_buffer.shape)
        if self._visualize_reward:
            fields["mat_rgba"] = (model.mat_rgba.dtype, model.mat_rgba.shape)
        fields["step_count"] = (np.int64, ())
        fields["reset_next_step"] = (np.bool_, ())
        return RecordLayout(self.name, fields)

    def _read_obs_layout(self) -> tuple[tuple[str, int, int], ...]:
        env = self._gym_env
        observation = env.task.get_observation(env.physics)
        layout, start = [], 0
        for key, value in observation.items():
            size = int(np.size(value))
            layout.append((key, start, start + size))
            start += size
        return tuple(layout)

    def _init_spaces(self, obs: np.ndarray) -> None:
        spec = self._gym_env.action_spec()
        low = np.broadcast_to(spec.minimum, spec.shape).astype(np.float32)
        high = np.broadcast_to(spec.maximum, spec.shape).astype(np.float32)
        self._action_space = Box(low=low, high=high, dtype=np.float32)
        if self.obs_type == "coords":
            self._obs_space = Box(-np.inf, np.inf, shape=obs.shape, dtype=np.float64)
        else:
            image = self.get_image()
            shape = image.shape if self.obs_type == "rgb" else image.shape[:2]
            self._obs_space = Box(0, 255, shape=shape, dtype=np.uint8)

    # Episode fields -------------------------------------------------------------------------
    def _read_episode(self) -> bytes:
        """Return the bytes of a state's episode block: the generator and the model fields."""
        record = np.zeros((), self._layout.dtype)
        key, pos, has_gauss, gauss = random_state_fields(self._gym_env.task.random)
        record["rng_key"], record["rng_pos"] = key, pos
        record["rng_has_gauss"], record["rng_gauss"] = has_gauss, gauss
        model = self._gym_env.physics.model
        for field in self._model_fields:
            record[field] = getattr(model, field)
        return record.tobytes()[: self._episode_nbytes]

    def _write_episode(self, blob: bytes) -> None:
        """Load the generator and model fields of the state whose record bytes are ``blob``."""
        state = np.ndarray((), self._layout.dtype, blob)
        physics = self._gym_env.physics
        restore_random_state(self._gym_env.task.random, *(state[f] for f in _RNG_FIELDS))
        for field in self._model_fields:
            np.copyto(getattr(physics.model, field), state[field])
        if self._has_hfield:
            _upload_heightfields(physics)
        self._episode = blob[: self._episode_nbytes]

    # Simulator access -----------------------------------------------------------------------
    def apply_reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        """Start a new episode of the task: ``(obs, info)``."""
        time_step = self.gym_env.reset()
        # Only an episode start draws from the generator or rewrites the model: what the
        # states of this episode hold in their episode block is known until the next one.
        self._episode = self._read_episode()
        return time_step.observation["observations"], {}

    def apply_action(self, action: Any) -> tuple:
        """Advance one dm_control step: ``(obs, reward, terminal, truncated, info)``."""
        env = self._gym_env
        if env is None:
            env = self.gym_env  # builds the task when setup was delayed
        # After the last step dm_control would reset instead of stepping: a planner stepping
        # from an ended state wants that state's future, so the simulation continues.
        env._reset_next_step = False
        # dm_control raises PhysicsError when a MuJoCo warning counter grows during the step;
        # MuJoCo's reset on divergence leaves its counter at 1, so an env that diverged
        # before would miss the next divergence. The counters are no part of any state:
        # from zero, the error depends on the state stepped alone.
        counters = self._warning_counters
        if counters.any():
            counters[:] = 0
        try:
            time_step = env.step(action)
        except PhysicsError as error:
            return self._diverged(env, error)
        obs = time_step.observation["observations"]
        if time_step.step_type is not StepType.LAST:
            return obs, float(time_step.reward), False, False, {}
        ended_by_task = time_step.discount == 0.0
        return obs, float(time_step.reward), ended_by_task, not ended_by_task, {}

    def _diverged(self, env: Any, error: PhysicsError) -> tuple:
        """End the episode of a step whose physics diverged (MuJoCo has reset its data)."""
        env._reset_next_step = True
        observation = flatten_observation(env.task.get_observation(env.physics))
        return observation["observations"], 0.0, True, False, {"physics_error": str(error)}

    def get_state(self) -> np.ndarray:
        """Return the exact state of the task as a read-only 0-d record array."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        # Over its own bytes object: read-only, the same record RecordLayout.pack builds.
        return np.ndarray((), self._layout.dtype, self._capture())

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`."""
        self.check_state(state)
        self._restore(state.tobytes())

    def _capture(self) -> bytes:
        """Return the bytes of the current state, in the order of the record's fields."""
        env = self._gym_env
        buffer = self._physics_buffer
        mujoco.mj_getState(self._model_ptr, self._data_ptr, buffer, STATE_SIG)
        counters = _COUNTERS.pack(env._step_count, env._reset_next_step)
        if self._colours is None:
            return b"".join((self._episode, buffer.tobytes(), counters))
        return b"".join((self._episode, buffer.tobytes(), self._colours.tobytes(), counters))

    def _restore(self, blob: bytes) -> None:
        """Restore the state whose record bytes are ``blob`` (already checked)."""
        start = self._episode_nbytes
        if blob[:start] != self._episode:  # another episode: its generator and model
            self._write_episode(blob)
        size = self._physics_buffer.size
        physics = np.frombuffer(blob, np.float64, count=size, offset=start)
        mujoco.mj_setState(self._model_ptr, self._data_ptr, physics, STATE_SIG)
        # What the step that produced the state computed last (dm_control's steps end with
        # mj_step1, and the next one starts with mj_step2 on top of it). Never inside
        # physics.reset_context(): that would clear the time and the solver's warm start.
        mujoco.mj_step1(self._model_ptr, self._data_ptr)
        start += 8 * size
        colours = self._colours
        if colours is not None:
            colours[:] = np.frombuffer(blob, colours.dtype, colours.size, start)
            start += colours.nbytes
        env = self._gym_env
        env._step_count, env._reset_next_step = _COUNTERS.unpack_from(blob, start)

    def run_batch_columns(
        self,
        actions: Any,
        states: list | np.ndarray | None,
        dts: list[int],
        want_state: bool,
        observs_out: np.ndarray | None = None,
    ) -> BatchColumns:
        """Step a checked batch; with plain dynamics, in one loop over the suite environment.

        The loop performs exactly the operations of the generic path (restore, step
        ``dt * frameskip`` times summing the rewards, record the state, autoreset) and gives
        bit-identical results, without the generic path's chain of calls per element:
        states move in and out as the bytes of their records.
        """
        if states is None or not self._batch_in_bulk:
            return super().run_batch_columns(actions, states, dts, want_state, observs_out)
        if is_record_block(states):
            if states.dtype != self._layout.dtype:
                return super().run_batch_columns(actions, states, dts, want_state, observs_out)
            blob, size = states.tobytes(), states.dtype.itemsize
            blobs = [blob[i : i + size] for i in range(0, len(blob), size)]
        else:
            blobs = [state.tobytes() for state in states]
        restore, capture, step = self._restore, self._capture, self.apply_action
        autoreset, repeats = self.autoreset, self.frameskip
        observs, rewards, terminals, truncateds, infos, new_blobs = [], [], [], [], [], []
        for action, dt, blob in zip(actions, dts, blobs, strict=True):
            restore(blob)
            if dt * repeats == 1:  # repeat_action's work without the call: the same values
                obs, reward, terminal, truncated, info = step(action)
                reward = 0.0 + reward
                info = {**info, "n_step": 1, "dt": dt}
            else:
                obs, reward, terminal, truncated, info = repeat_action(step, action, dt * repeats)
                info["dt"] = dt
            observs.append(obs)
            rewards.append(reward)
            terminals.append(terminal)
            truncateds.append(truncated)
            infos.append(info)
            if want_state:
                new_blobs.append(capture())
            if autoreset and (terminal or truncated):
                self.reset(return_state=False)
        if observs_out is not None and len(observs) == len(observs_out) and observs:
            observs_out[:] = observs
            observs = observs_out
        new_states = None
        if want_state:
            new_states = np.frombuffer(b"".join(new_blobs), self._layout.dtype)
        return BatchColumns(new_states, observs, rewards, terminals, truncateds, infos)

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise TypeError unless ``state`` is a state of this task."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        self._layout.check(state, name)

    def check_states(self, states: list) -> None:
        """Check a batch of states: a glance when they are all this env's own records."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        self._layout.check_all(states)

    def seed(self, seed: int | None = None) -> None:
        """Seed the task's generator and the action space, and start a new episode.

        The lqr tasks keep the model they were built with.
        """
        self.gym_env.task.random.seed(seed)
        self.action_space.seed(seed)
        self.apply_reset()

    # Pictures -------------------------------------------------------------------------------
    def get_image(self) -> np.ndarray:
        """Return an RGB picture (240, 320, 3) from camera 0 (the free camera if none)."""
        self.check_can_draw()
        physics = self.gym_env.physics
        camera = 0 if physics.model.ncam > 0 else -1
        height, width = self.IMAGE_SHAPE
        return physics.render(height=height, width=width, camera_id=camera)

    def render(self) -> np.ndarray:
        """Return :meth:`get_image`."""
        return self.get_image()

    def close(self) -> None:
        """Free the task and its rendering contexts; a later use builds it again."""
        env = getattr(self, "_gym_env", None)
        if env is not None:
            self._gym_env = None
            env.physics.free()


# The methods a batch in the bulk loop does not call, or calls in a fixed way, with the class
# whose version the loop reproduces. A subclass overriding any of them takes the generic path
# (PlanEnv.run_batch_columns), so its override runs.
_BULK_LOOP_REPLACES: dict[str, type] = {
    "_step_checked": PlanEnv,  # restore, step, process, record the state, autoreset
    "step_with_dt": PlanEnv,  # repeat the action dt * frameskip times
    "_underlying_step": PlanEnv,  # one step: apply_action, then process_apply_action
    "process_apply_action": PlanEnv,  # not called: an identity
    "process_step": PlanEnv,  # not called: the process_* hooks are identities (checked apart)
    "apply_action": DMControlEnv,
    "get_state": DMControlEnv,  # both done on the records' bytes
    "set_state": DMControlEnv,
    "reset": PlanEnv,  # called on autoreset, as by the generic path
    "apply_reset": DMControlEnv,
}


def _upload_heightfields(physics: Any) -> None:
    """Send rewritten height fields to the GL context, when pictures have created one."""
    contexts = getattr(physics, "_contexts", None)  # the property would create one
    if not contexts:
        return
    with contexts.gl.make_current() as context:
        for hfield_id in range(physics.model.nhfield):
            context.call(mujoco.mjr_uploadHField, physics.model.ptr, contexts.mujoco.ptr, hfield_id)
