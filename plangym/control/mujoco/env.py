"""gymnasium's MuJoCo environments (v4 and v5) with exact states.

A state is a read-only 1-D float64 array of one length per env (:attr:`MujocoEnv.state_size`),
as in plangym 0.1, so ``np.allclose`` compares states and ``np.stack`` stacks them. It holds
(see :mod:`plangym.control.mujoco.state`):

* MuJoCo's integration state (``mj_getState`` with ``mjSTATE_INTEGRATION``): time, qpos,
  qvel, actuator activations, the solver's warm start, controls, mocap poses, user data and
  plugin state; it comes first, so ``state[:n]`` is what plangym 0.1 held;
* the bodies' frame and inertial-frame positions (``xpos``, ``xipos``) as the last substep
  left them. Ant and Humanoid(Standup) read them *before* stepping (for the distance
  travelled), and after a step they lag one substep behind qpos: recomputing them from
  qpos on restore would change the first reward;
* the env's ``np_random`` generator, which the next reset draws its noise from, and the
  time limit's step counter (-1 when the limit was removed), as exact integer pieces;
* a checksum of the model's structure, so that a state of another model is refused.

Restoring sets the integration state, recomputes every derived quantity (``mj_forward``)
and writes ``xpos``/``xipos`` back. Stepping from a restored state is then bit-identical,
in the same instance, a fresh one or another process.

>>> env = MujocoEnv("Hopper-v5", render_mode=None)
>>> state, obs, info = env.reset()
>>> state.dtype, state.shape == (env.state_size,)
(dtype('float64'), True)
>>> action = np.full(env.action_shape, 0.3, dtype=np.float32)
>>> first = env.step(action, state=state, dt=5)
>>> again = env.step(action, state=state, dt=5)
>>> bool((first[0] == again[0]).all()), bool(first[2] == again[2])
(True, True)
>>> env.state_fields(first[0])["elapsed_steps"]  # the time limit was removed
-1
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np

from plangym.columns import BatchColumns
from plangym.constructor import parent_arguments
from plangym.control.mujoco.state import FLOAT64, MujocoStateCodec, mujoco
from plangym.control.shared.bulk_loop import fill_rows, runs_in_bulk, step_in_bulk
from plangym.core import PlangymEnv, wrap_callable
from plangym.core.batch import Batch
from plangym.utils import find_time_limit
from plangym.utils.display import refuse_window_without_display
from plangym.utils.fork_safety import note_fork_unsafe
from plangym.validation import describe, is_integer

if TYPE_CHECKING:
    from gymnasium.envs.mujoco.mujoco_env import MujocoEnv as GymMujocoEnv

__all__ = ["MujocoEnv"]


_SETTOTALMASS = "MuJoCo: compiler attribute 'settotalmass'"


def _not_settotalmass(record: logging.LogRecord) -> bool:
    """Keep every record of absl's log but MuJoCo's settotalmass deprecation."""
    return "compiler attribute 'settotalmass'" not in record.getMessage()


class MujocoEnv(PlangymEnv):
    """A gymnasium MuJoCo env (``Hopper-v5``, ``Ant-v4``, ...) with exact, restorable states.

    Args:
        name: A gymnasium MuJoCo id from :data:`plangym.environment_names.MUJOCO`.
        frameskip: Env steps per agent step (each env step is already ``frame_skip``
            MuJoCo substeps, as gymnasium defines the env).
        autoreset: Reset after an episode ends.
        wrappers: gymnasium wrappers applied in order.
        delay_setup: Build the simulator later, in :meth:`setup`.
        render_mode: None, "human" or "rgb_array" (pictures need "rgb_array").
        obs_type: "coords" (gymnasium's observation vector), "rgb" or "grayscale".
        return_image: Add ``info["rgb"]`` to every step.
        remove_time_limit: Drop the registered episode limit (1,000 steps for most).
        kwargs: Passed to ``gymnasium.make`` (e.g. ``xml_file``, ``reset_noise_scale``).

    Off screen, pictures come from OSMesa (``libosmesa6``) or EGL, chosen before mujoco
    is imported; see :mod:`plangym.control.shared.mujoco_runtime`.
    """

    FAST_PATHS = True
    TIME_LIMIT_IN_STATE = True  # states carry the TimeLimit's elapsed steps
    DEFAULT_OBS_TYPE = "coords"

    def __init__(
        self,
        name: str = "Ant-v4",
        frameskip: int = 1,
        autoreset: bool = True,
        wrappers: Iterable[wrap_callable] | None = None,
        delay_setup: bool = False,
        render_mode: str | None = "rgb_array",
        obs_type: str | None = None,
        return_image: bool = False,
        remove_time_limit: bool = True,
        **kwargs: Any,
    ):
        refuse_window_without_display(render_mode)  # GLFW would abort the interpreter
        super().__init__(**parent_arguments(MujocoEnv, locals()))

    def setup(self) -> None:
        """Build the gymnasium env and the codec of its states."""
        # gymnasium's half_cheetah.xml sets settotalmass, which MuJoCo 3 deprecates: a note
        # for gymnasium's maintainers that every HalfCheetah would repeat to users. MuJoCo
        # warns through plangym's handler, or through absl's log once dm_control is loaded.
        absl_log = logging.getLogger("absl")
        absl_log.addFilter(_not_settotalmass)
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _SETTOTALMASS, RuntimeWarning)
                super().setup()
        finally:  # the user's own models still warn
            absl_log.removeFilter(_not_settotalmass)
        unwrapped = _simulator(self.gym_env)
        # gymnasium's MuJoCo envs draw from np_random only in reset; without user wrappers
        # (which might draw in step) the generator's words can be kept between resets.
        self._codec = MujocoStateCodec(
            self.name, unwrapped.model, unwrapped.data, cache_rng=not self._wrappers
        )
        # The loop restores as MujocoEnv._step_checked does: without mj_forward.
        self._batch_path = "bulk" if runs_in_bulk(self) else "generic"

    def init_gym_env(self) -> gym.Env:
        """Build and reset the gymnasium env; refuse a camera its model does not have.

        MuJoCo ends the interpreter (exit status 1, no exception) at the first picture of
        a fixed camera id out of range.
        """
        gym_env = super().init_gym_env()
        camera_id = self._gym_env_kwargs.get("camera_id")
        n_cameras = _simulator(gym_env).model.ncam
        if camera_id is not None and not (is_integer(camera_id) and -1 <= camera_id < n_cameras):
            gym_env.close()
            fixed = f"0..{n_cameras - 1}" if n_cameras else "it has none"
            raise ValueError(
                f"camera_id: expected -1 (the free camera) or a fixed camera of {self.name}'s "
                f"model ({fixed}), received {describe(camera_id)}"
            )
        return gym_env

    @property
    def _state_codec(self) -> MujocoStateCodec:
        self.gym_env  # noqa: B018 - builds the env when setup was delayed
        return self._codec

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy type of this env's states: float64 (each state is a flat vector)."""
        return FLOAT64

    @property
    def state_size(self) -> int:
        """Number of float64 values in each of this env's states."""
        return self._state_codec.size

    def state_fields(self, state: np.ndarray) -> dict[str, Any]:
        """Return the parts of a state by name, its integers joined back.

        ``integration``, ``xpos`` and ``xipos`` (each body's row) are read-only views of
        ``state``; ``rng`` is the generator's six uint64 words, ``elapsed_steps`` and
        ``model_tag`` are ints.
        """
        self.check_state(state)
        return self._codec.fields(state)

    @property
    def model(self) -> Any:
        """The ``mujoco.MjModel`` being simulated."""
        return _simulator(self.gym_env).model

    @property
    def data(self) -> Any:
        """The ``mujoco.MjData`` of the simulation."""
        return _simulator(self.gym_env).data

    def get_state(self) -> np.ndarray:
        """Return the exact state of the env as a new read-only float64 vector."""
        codec = self._state_codec
        gym_env = self._gym_env
        assert gym_env is not None, "reading the codec built the env"
        time_limit = _time_limit(gym_env)
        elapsed = -1 if time_limit is None else time_limit._elapsed_steps
        return codec.read(gym_env.unwrapped.np_random, elapsed)

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state`; ``env.data`` is then up to date."""
        state = self.thawed_state(state)
        self._state_codec.check(state)
        self._restore(state, forward=True)

    def _restore(self, state: np.ndarray, forward: bool) -> None:
        gym_env = self._gym_env
        assert gym_env is not None, "states are restored once checked, which builds the env"
        elapsed = self._codec.write(state, gym_env.unwrapped.np_random, forward)
        _set_elapsed(_time_limit(gym_env), elapsed)

    def _step_checked(self, action: Any, state: Any, dt: int, want_state: bool) -> tuple:
        if state is not None and not self._wrappers:
            # Restore without mj_forward: the step recomputes it all. A user wrapper could
            # read derived data before stepping: then restore fully (set_state).
            self._restore(state, forward=False)
            state = None
        return super()._step_checked(action, state, dt, want_state)

    def run_batch_fast(self, batch: Batch) -> BatchColumns:
        """Step a checked batch; with plain dynamics, in one loop (the shared bulk loop).

        The loop (:mod:`~plangym.control.shared.bulk_loop`) restores each state vector
        without ``mj_forward`` and writes each new state straight into its own vector.
        """
        actions, states, dts, want_state, observs_out = batch
        if states is None or not len(states):
            return self.run_batch_generic(batch)
        codec, gym_env = self._codec, self._gym_env
        assert gym_env is not None, "checking the batch's states built the env"
        generator = gym_env.unwrapped.np_random
        time_limit = _time_limit(gym_env)
        new_states: list[np.ndarray] | None = [] if want_state else None

        def restore(state: np.ndarray) -> None:
            _set_elapsed(time_limit, codec.write(state, generator, forward=False))

        def record() -> None:
            assert new_states is not None, "record runs only when states are wanted"
            elapsed = -1 if time_limit is None else time_limit._elapsed_steps
            new_states.append(codec.read(generator, elapsed))

        observs, rewards, terminals, truncateds, infos = step_in_bulk(
            states,
            actions,
            dts,
            restore=restore,
            step=gym_env.step,
            record=record if want_state else None,
            repeats=self.frameskip,
            autoreset=partial(self.reset, return_state=False) if self.autoreset else None,
        )
        observs_column = fill_rows(observs_out, observs)
        return BatchColumns(new_states, observs_column, rewards, terminals, truncateds, infos)

    def generator_moves(self) -> None:
        """Forget the generator words the state codec caches: a reset draws from it."""
        self._state_codec.forget_rng()

    def generator_shared(self) -> None:
        """Read and write the generator's words with every state (others draw from it)."""
        self._state_codec.rng_words.cache = False
        self._state_codec.forget_rng()

    def _draw_picture(self) -> np.ndarray:
        """Draw an RGB picture of the env.

        gymnasium's offscreen viewer aims its camera at the middle of the bodies as they
        are at the first picture, so two envs would draw one state from two viewpoints.
        plangym aims it at the middle of the bodies in the model's initial pose instead
        (the same for every instance), then applies the env's camera settings as
        gymnasium does.
        """
        self._prepare_offscreen_viewer()
        return super()._draw_picture()

    def render(self) -> Any:
        """Render the gymnasium env, its camera aimed as :meth:`get_image` aims it.

        None with ``render_mode=None``, as in every family (see ``PlangymEnv.render``).
        """
        self._prepare_offscreen_viewer()
        return super().render()

    def _prepare_offscreen_viewer(self) -> None:
        """Aim the offscreen camera before the first picture; make its context current.

        The camera is aimed as :meth:`get_image` says. gymnasium makes a viewer's GL
        context current only when its renderer has two viewers: after another env of the
        process drew, this env would draw into that env's context.
        """
        if self.render_mode == "rgb_array":
            renderer = _simulator(self.gym_env).mujoco_renderer
            viewer = renderer._viewers.get("rgb_array")
            if viewer is None:
                _aim_camera(renderer, self.model)  # a new context is current
            else:
                viewer.make_context_current()

    def close(self) -> None:
        """Close the env, freeing its pictures' GL objects in its own GL context.

        gymnasium leaves them to the viewer's garbage collection, after its GL context is
        gone: they would be freed in whichever context is current then (another env's,
        whose objects share their numbers), and that env's pictures would turn black.
        """
        gym_env = getattr(self, "_gym_env", None)
        if gym_env is not None:
            viewer = _simulator(gym_env).mujoco_renderer._viewers.get("rgb_array")
            if viewer is not None:
                viewer.make_context_current()
                viewer.con.free()
        super().close()

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise unless ``state`` is a state of this env, naming ``name``.

        A non-array gets a TypeError; an array of another dtype or length, a state of
        another model, or one whose integer entries (generator, step count) are not the
        integers :meth:`get_state` writes there gets a ValueError.
        """
        self._state_codec.check(state, name=name)

    def check_states(self, states: list) -> None:
        """Check a batch of states; the error names the first bad one, ``states[i]``."""
        self._state_codec.check_all(states)


def _simulator(gym_env: gym.Env) -> GymMujocoEnv:
    """Return gymnasium's MuJoCo env under the wrappers (``unwrapped`` is typed a plain Env)."""
    return cast("GymMujocoEnv", gym_env.unwrapped)


def _set_elapsed(time_limit: Any, elapsed: int) -> None:
    """Give ``time_limit`` (if any) a state's step count; -1, no limit's mark, counts as 0.

    A state from an env without a time limit starts a limited env's count afresh, as
    classic control's do.
    """
    if time_limit is not None:
        time_limit._elapsed_steps = 0 if elapsed == -1 else elapsed


def _time_limit(gym_env: gym.Env) -> Any:
    """Return the env's ``TimeLimit``, if any, with its step count typed as the int it is.

    gymnasium types ``TimeLimit._elapsed_steps`` as None, its value before the first reset.
    """
    return find_time_limit(gym_env)


def _aim_camera(renderer: Any, model: Any) -> None:
    """Create the offscreen viewer of ``renderer`` with its camera aimed canonically."""
    note_fork_unsafe("an OpenGL context (MuJoCo pictures)")
    viewer = renderer._get_viewer(render_mode="rgb_array")
    initial_pose = mujoco.MjData(model)
    mujoco.mj_forward(model, initial_pose)
    viewer.cam.lookat[:] = np.median(initial_pose.geom_xpos, axis=0)
    renderer._set_cam_config()  # the env's own camera settings win, as in gymnasium
