"""``step_batch`` on a sub-env with wrappers: each element goes through them, as a step does.

A vector env's ``step()`` steps a sub-env through its wrappers (``make_vec(...,
wrappers=...)``), so ``step_batch`` does too: actions are the wrapped env's, observations
and rewards are what the wrappers make of them. The states are the plangym env's, beneath
the wrappers. Each element starts from the wrappers' own state (a frame stack, a TimeLimit's
count, running statistics) as the sub-env has it now, and the sub-env gets it back
afterwards, in the same objects (:mod:`plangym.vector.wrapper_state`), as it gets its own
state back: its episode goes on undisturbed.

>>> import gymnasium, plangym
>>> envs = plangym.make_vec("Pendulum-v1", 1, vectorization_mode="sync",
...     wrappers=[lambda env: gymnasium.wrappers.TransformReward(env, lambda r: 10 * r)])
>>> _ = envs.reset(seed=0)
>>> states = envs.get_states()
>>> _, _, planned, *_ = envs.step_batch([[0.5]], states)
>>> _, stepped, *_ = envs.step([[0.5]])
>>> planned[0] == stepped[0]
np.True_
>>> envs.close()
"""

from __future__ import annotations

import copy
from typing import Any

import gymnasium
import numpy as np

from plangym.columns import BatchColumns, is_record_block, records_to_states
from plangym.core.wrappers import added_wrappers
from plangym.vector.wrapper_state import SavedWrappers


class WrappedSteps:
    """Steps ``step_batch``'s elements through ``env``'s wrappers onto ``plan_env``'s states.

    It has the :meth:`run_batch_columns` of a plangym env, so a chunk of ``step_batch``
    runs on it as on the plangym env itself.
    """

    def __init__(self, env: gymnasium.Wrapper, plan_env: Any):
        self.env, self.plan_env = env, plan_env
        self.wrappers = list(added_wrappers(env, env.unwrapped))

    def run_batch_columns(
        self, actions: Any, states: Any, dts: list[int], want_state: bool, observs_out: Any = None
    ) -> BatchColumns:
        """Step each element; the sub-env and its wrappers get back what they had before.

        ``observs_out`` is not written: observations are the wrappers' own objects.
        """
        if is_record_block(states):
            states = records_to_states(states)
        plan_env = self.plan_env
        own_state = plan_env.get_state()
        saved = SavedWrappers(self.wrappers, shared=self.envs_beneath())
        words = self.generator_words()
        rows = []
        try:
            for index, (action, dt) in enumerate(zip(actions, dts, strict=True)):
                if states is not None:  # else each element goes on from the one before
                    saved.restore()
                    self.put_back_generator(words)
                    plan_env.set_state(states[index])
                row = self.step(action, dt)
                rows.append((plan_env.get_state(), *row) if want_state else row)
        finally:
            plan_env.set_state(own_state)
            saved.restore()
            self.put_back_generator(words)
        return BatchColumns.from_rows(rows, want_state)

    # The env's generator: a wrapper may draw from it (StickyAction), and the states of some
    # families (Atari, Box2D's replays) do not hold it.
    def generator_words(self) -> dict | None:
        """Return the state of the env's generator (None if it has none yet)."""
        generator = getattr(self.env.unwrapped, "_np_random", None)
        return None if generator is None else generator.bit_generator.state

    def put_back_generator(self, words: dict | None) -> None:
        """Give the env's generator (a replay may have built another one) ``words`` back."""
        generator = getattr(self.env.unwrapped, "_np_random", None)
        if words is not None and generator is not None:
            generator.bit_generator.state = words

    def envs_beneath(self) -> list[Any]:
        """Return the envs under the wrappers, which wrappers may hold: never copied."""
        face = self.env.unwrapped
        inner = getattr(self.plan_env, "gym_env", None)
        if not isinstance(inner, gymnasium.Env):  # dm_control's plangym env has none
            return [face, self.plan_env]
        below = [*added_wrappers(inner, None), inner.unwrapped]
        return [face, self.plan_env, *below]

    def step(self, action: Any, dt: int) -> tuple:
        """``dt`` steps of the wrapped env, as a plangym env's ``step(action, dt=dt)`` sums them.

        ``info["n_step"]`` counts the frames the plangym env stepped, however many times a
        wrapper stepped it per step (AtariPreprocessing's ``frame_skip``).
        """
        face: Any = self.env.unwrapped  # the GymPlanEnv that counts the frames it steps
        frames_before, total = face.frames_stepped, 0.0
        for _ in range(dt):
            obs, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        frames = face.frames_stepped - frames_before
        # Detached: a wrapper may return what it keeps (a frame stack filled in place), which
        # the next element's restore rewrites.
        info = {**_detached(info), "n_step": frames, "dt": dt}
        return _detached(obs), total, terminated, truncated, info


def _detached(value: Any) -> Any:
    """Return a copy of an observation or info that no wrapper holds (itself if uncopyable)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    try:
        return copy.deepcopy(value)
    except Exception:  # a handle in an info: kept as it is
        return value
