"""The dm_control suite's tasks with exact states.

A state is a read-only float64 vector, one length per env (:attr:`DMControlEnv.state_size`),
as plangym 0.1's ``physics.get_state()`` was: the task's generator, the model fields an
episode start rewrites, MuJoCo's integration state, the reward colours and dm_control's
step counters (:attr:`DMControlEnv.state_layout` names the slices; see
:mod:`plangym.control.dm_control.state`). A state is restored with ``mj_setState`` followed
by ``mj_step1``: exactly what dm_control left computed at the end of the step that produced
the state, so the next step is the same to the bit. See ``docs/dm_control.md``.

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
>>> first[0].dtype, first[0].shape == (env.state_size,), np.stack([state, first[0]]).shape[0]
(dtype('float64'), True, 2)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial
from typing import Any, cast

import numpy as np
from gymnasium.spaces import Box

from plangym.columns import BatchColumns
from plangym.constructor import parent_arguments, read_only
from plangym.control.shared.bulk_loop import fill_rows, runs_in_bulk, step_in_bulk
from plangym.control.shared.mujoco_runtime import load_mujoco
from plangym.core import PlangymEnv, wrap_callable
from plangym.core.batch import Batch
from plangym.extras import require

# Pictures are drawn on the calling thread: a plangym env is used from one thread, and
# dm_control's render thread cannot free its contexts at interpreter exit (it prints a
# traceback there). Set before dm_control is imported, which reads it then.
os.environ.setdefault("DISABLE_RENDER_THREAD_OFFLOADING", "1")
mujoco = load_mujoco(family="dm_control", extra="dm-control")  # picks the GL backend first
require("dm_control", extra="dm-control", family="dm_control")
from dm_control import suite  # noqa: E402 - after the backend is chosen
from dm_control.rl.control import PhysicsError, flatten_observation  # noqa: E402
from dm_control.suite.base import Task as SuiteTask  # noqa: E402
from dm_env import StepType  # noqa: E402

from plangym.control.dm_control.names import LQR_MODEL_SEED, split_name  # noqa: E402
from plangym.control.dm_control.pictures import DMControlPictures  # noqa: E402
from plangym.control.dm_control.state import (  # noqa: E402
    EPISODE_MODEL_FIELDS,
    DMControlStateCodec,
)
from plangym.validation import check_flag, check_seed  # noqa: E402

__all__ = ["DMControlEnv", "EPISODE_MODEL_FIELDS", "LQR_MODEL_SEED", "split_name"]


def check_task_seed(seed: Any) -> int | None:
    """Return a seed a dm_control task's generator (NumPy's RandomState) takes, or raise."""
    seed = check_seed(seed)
    if seed is not None and seed >= 2**32:
        raise ValueError(
            f"seed: expected None or an int in [0, 2**32 - 1] for a dm_control task (its "
            f"generator is NumPy's RandomState), received {seed}"
        )
    return seed


class DMControlEnv(DMControlPictures, PlangymEnv):
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
        name: ``"domain-task"``, one of :data:`plangym.environment_names.DM_CONTROL_NAMES`.
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

    FAST_PATHS = True
    AVAILABLE_RENDER_MODES = frozenset({"rgb_array", None})
    DEFAULT_OBS_TYPE = "coords"
    # The suite's control.Environment (physics, task, action_spec...), not a gymnasium env.
    _gym_env: Any

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
        self._visualize_reward = check_flag("visualize_reward", visualize_reward)
        self._seed = check_task_seed(seed)
        self.viewer: list[np.ndarray] = []  # what render("human") collects for show_game
        self._window = None
        name = f"{self._domain_name}-{self._task_name}"
        remove_time_limit = False  # the task decides when its episodes end
        super().__init__(**parent_arguments(DMControlEnv, locals()))

    # Properties -----------------------------------------------------------------------------
    domain_name = read_only("_domain_name", 'The suite domain, e.g. "walker".')

    task_name = read_only("_task_name", 'The task of the domain, e.g. "walk".')

    visualize_reward = read_only(
        "_visualize_reward", "Whether the body is coloured by the last reward in pictures."
    )

    @property
    def gym_env(self) -> Any:
        """The suite's ``control.Environment`` (not a gymnasium env), built if delayed."""
        return super().gym_env

    @property
    def physics(self) -> Any:
        """The dm_control ``Physics`` of the task."""
        return self.gym_env.physics

    @property
    def state_dtype(self) -> np.dtype:
        """NumPy type of this env's states' values: float64."""
        return np.dtype(np.float64)

    @property
    def state_size(self) -> int:
        """Length of this env's states (float64 vectors)."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._codec.size

    @property
    def state_layout(self) -> tuple[tuple[str, int, int], ...]:
        """``(name, start, stop)`` of each part of a state (see :mod:`.state`).

        >>> env = DMControlEnv("cartpole-balance", seed=0)
        >>> layout = {name: slice(start, stop) for name, start, stop in env.state_layout}
        >>> state, *_ = env.step(np.zeros(1, np.float32), state=env.reset()[0], dt=3)
        >>> int(state[layout["step_count"]][0]), env.state_size
        (3, 710)
        """
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._codec.layout

    @property
    def obs_layout(self) -> tuple[tuple[str, int, int], ...]:
        """``(key, start, stop)`` of each entry of the task's observation dict in ``obs``."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._obs_layout

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
        """Load the task, lay out its states and read its spaces (a loaded one is closed)."""
        self._close_built_env()
        env = self.init_gym_env()
        self._gym_env = env
        self._warning_counters = env.physics.data.warning.number  # a view of mjData's
        self._codec = DMControlStateCodec(self.name, env, self._visualize_reward)
        self._batch_path = "bulk" if runs_in_bulk(self) else "generic"
        self._obs_layout = self._read_obs_layout()
        obs, _ = self.apply_reset()
        self._init_spaces(obs)

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

    # Simulator access -----------------------------------------------------------------------
    def apply_reset(self, **kwargs: Any) -> tuple[np.ndarray, dict]:
        """Start a new episode of the task: ``(obs, info)``."""
        env = self.gym_env
        time_step = env.reset()
        if isinstance(env.task, SuiteTask):
            # dm_control colours the body at a reset from a reward read before the new
            # positions are forwarded (fish-swim's: the last episode's target), so a seed's
            # reset state and picture depended on what came before. Coloured again now.
            SuiteTask.after_step(env.task, env.physics)
        # Only an episode start draws from the generator or rewrites the model: what the
        # states of this episode hold in their episode block is known until the next one.
        self._codec.remember_episode()
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
        """Return the exact state of the task: a new read-only float64 vector."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        return self._codec.capture()

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state returned by :meth:`get_state` (of this task, any instance)."""
        state = self.thawed_state(state)
        self.check_state(state)
        self._codec.restore(state)

    def run_batch_fast(self, batch: Batch) -> BatchColumns:
        """Step a checked batch in one loop over the suite environment (plain dynamics).

        The generic path's operations without its chain of calls: bit-identical results.
        """
        actions, states, dts, want_state, observs_out = batch
        if states is None:
            return self.run_batch_generic(batch)
        codec = self._codec
        new_states: list[np.ndarray] = []
        observs, rewards, terminals, truncateds, infos = step_in_bulk(
            cast(list, states),  # checked: never a record block for this env
            actions,
            dts,
            restore=codec.restore,
            step=self.apply_action,
            record=(lambda: new_states.append(codec.capture())) if want_state else None,
            repeats=self.frameskip,
            autoreset=partial(self.reset, return_state=False) if self.autoreset else None,
        )
        observs_column = fill_rows(observs_out, observs)
        new = new_states if want_state else None
        return BatchColumns(new, observs_column, rewards, terminals, truncateds, infos)

    def check_state(self, state: Any, name: str = "state") -> None:
        """Raise ValueError (TypeError for a non-array) unless ``state`` is this task's.

        >>> env = DMControlEnv("walker-walk", seed=0)
        >>> env.set_state(DMControlEnv("walker-run", seed=0).get_state())
        Traceback (most recent call last):
        ...
        ValueError: state: expected a walker-walk state (...), received a state of walker-run ...
        """
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        self._codec.check(state, name)

    def check_states(self, states: list) -> None:
        """Check a batch of states: a glance for each state of an episode seen before."""
        self.gym_env  # noqa: B018 - builds the task when setup was delayed
        self._codec.check_all(states)

    def check_seed(self, seed: Any) -> int | None:
        """Return ``seed`` as the task's generator takes it (NumPy's RandomState: < 2**32)."""
        return check_task_seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """Seed the task's generator and the action space; start a new episode (lqr: same model)."""
        self._seed_generators(check_task_seed(seed))
        self.apply_reset()

    def seed_episode(self, seed: int) -> None:
        """Seed the task's generator and the action space: the next episode is the first.

        dm_control's first episode of ``random=seed``, what ``reset(seed=seed)`` starts.
        """
        self._seed_generators(check_task_seed(seed))

    def _seed_generators(self, seed: int | None) -> None:
        self.gym_env.task.random.seed(seed)
        self.action_space.seed(seed)

    def close(self) -> None:
        """Free the task, its rendering contexts and any show_game window."""
        env = getattr(self, "_gym_env", None)
        if env is not None:
            self._gym_env = None
            # Before the window: SDL's offscreen driver may share MuJoCo's EGL display and
            # end it when the window closes, after which freeing the context fails.
            env.physics.free()
        self.close_window()
