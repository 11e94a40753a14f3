"""The loop of a worker process that owns one sub-env of an ``AsyncVectorEnv``.

The worker maps the caller's shared buffers once, at start: observations, rewards and
flags go straight into its row, and a step whose actions wait in the shared action buffer
arrives as the single byte :data:`STEP_FROM_BUFFER`. A reply that has nothing to say (a
step or reset with an empty info and its observation in shared memory) is an empty
message; everything else is a pickled :class:`~plangym.vectorization.messages.Reply`.
So the hot path pickles nothing. Like every plangym worker it ignores Ctrl-C and exits,
removing the caller's shared memory, once its caller is gone.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import numpy as np
from gymnasium import Space
from gymnasium.vector import AutoresetMode

from plangym.vector.batch_outputs import BatchOutputs
from plangym.vector.commands import IN_BUFFER, AttachActions, InBuffer, Reset, Restarted, Step
from plangym.vector.sub_env import SubEnv
from plangym.vectorization.messages import READY_ID, Close, Reply, encode, error_reply
from plangym.vectorization.orphans import caller_gone, guard_worker
from plangym.vectorization.shared_memory import SharedArray, remove_orphaned

STEP_FROM_BUFFER = b"S"  # a step whose action is in the shared action buffer
NOTHING_TO_SAY = b""  # a reset or step reply with an empty info, obs in shared memory


@dataclass
class WorkerSetup:
    """What a worker needs to build its sub-env and find the caller's buffers."""

    env_fn: Any
    index: int
    autoreset_mode: AutoresetMode
    observation_space: Space
    num_envs: int
    specs: list[tuple]  # the shared output arrays, in BatchOutputs' allocation order
    obs_shared: bool  # whether observations go through shared memory


class AttachedBuffers:
    """The caller's shared arrays as this worker maps them."""

    def __init__(self):
        self._arrays: dict[str, SharedArray] = {}

    def attach(self, spec: tuple) -> np.ndarray:
        """Map the array ``spec`` describes (a second mapping of one name is reused)."""
        name = spec[0]
        if name not in self._arrays:
            self._arrays[name] = SharedArray.attach(spec)
        return self._arrays[name].array

    def drop(self, spec: tuple | None) -> None:
        """Unmap an array the caller replaced."""
        if spec is not None and spec[0] in self._arrays:
            self._arrays.pop(spec[0]).close()

    def remove_orphaned(self) -> None:
        """Remove the caller's arrays once it is gone (nobody else will)."""
        for name in list(self._arrays):
            remove_orphaned(name)

    def close(self) -> None:
        """Unmap every array."""
        for array in self._arrays.values():
            array.close()
        self._arrays.clear()


def attached_outputs(setup: WorkerSetup, buffers: AttachedBuffers) -> BatchOutputs:
    """Map the caller's :class:`BatchOutputs` from its shared arrays, in the same order."""
    specs = iter(setup.specs)

    def allocate(shape: tuple, dtype: Any) -> np.ndarray:
        return buffers.attach(next(specs))

    return BatchOutputs(
        setup.observation_space, setup.num_envs, allocate, in_place=setup.obs_shared
    )


class SubEnvWorker:
    """What one worker process holds: its sub-env, the shared buffers, the action source."""

    def __init__(self, setup: WorkerSetup, buffers: AttachedBuffers):
        self.index = setup.index
        self.sub_env = SubEnv(setup.env_fn(), setup.autoreset_mode)
        self.outputs = attached_outputs(setup, buffers)
        self.obs_shared = setup.obs_shared
        self.buffers = buffers
        self.actions: np.ndarray | None = None
        self._actions_spec: tuple | None = None

    def answer(self, command: Any) -> bytes:
        """Carry out ``command``; return the reply's bytes (None: no reply)."""
        try:
            if isinstance(command, Step):
                action = command.action
                if isinstance(action, InBuffer):
                    action = self.buffered_action()
                obs, reward, terminated, truncated, info = self.sub_env.step(action)
                outputs, index = self.outputs, self.index
                outputs.rewards[index] = reward
                outputs.terminations[index] = terminated
                outputs.truncations[index] = truncated
                return self.observed(obs, info)
            if isinstance(command, Reset):
                return self.observed(*self.sub_env.reset(command.seed, command.options))
            if isinstance(command, Restarted):
                return self.observed(*self.sub_env.restarted())
            return encode(Reply(0, True, self.sub_env.run(command)))
        except Exception as error:
            return encode(error_reply(0, error))

    def buffered_action(self) -> Any:
        """Return this sub-env's action in the shared buffer, as ``iterate`` gives it."""
        action = self.actions[self.index]
        return action.copy() if isinstance(action, np.ndarray) else action

    def observed(self, obs: Any, info: dict) -> bytes:
        """Write ``obs`` to shared memory if it goes there; return the reply's bytes."""
        if self.obs_shared:
            self.outputs.write_obs(self.index, obs)
            return encode(Reply(0, True, info)) if info else NOTHING_TO_SAY
        return encode(Reply(0, True, (obs, info)))

    def attach_actions(self, spec: tuple) -> None:
        """Map a new shared action buffer (the caller replaced the old one)."""
        self.buffers.drop(self._actions_spec)
        self.actions, self._actions_spec = self.buffers.attach(spec), spec


def run_sub_env_worker(conn: Connection, setup_blob: bytes, parent_pid: int) -> None:
    """Entry point of a sub-env worker process (see the module docstring)."""
    buffers = AttachedBuffers()
    first_ppid = guard_worker(parent_pid, buffers)
    try:
        worker = SubEnvWorker(cloudpickle.loads(setup_blob), buffers)
    except BaseException as error:  # report why the sub-env could not be built, then stop
        with contextlib.suppress(OSError):
            conn.send_bytes(encode(error_reply(READY_ID, error)))
        buffers.close()
        return
    caller_lost = False
    try:
        conn.send_bytes(encode(Reply(READY_ID, True, os.getpid())))
        while True:
            try:
                blob = conn.recv_bytes()
            except (EOFError, OSError):
                caller_lost = True
                break
            if blob == STEP_FROM_BUFFER:
                command: Any = Step(IN_BUFFER)
            else:
                command = pickle.loads(blob)
            if isinstance(command, Close):
                conn.send_bytes(encode(Reply(0, True, None)))
                break
            if isinstance(command, AttachActions):
                worker.attach_actions(command.spec)
                continue
            message = worker.answer(command)
            try:
                conn.send_bytes(message)
            except ValueError as error:  # too large for a pipe message
                conn.send_bytes(encode(error_reply(0, error)))
    except OSError:  # a reply the caller is no longer there to read
        caller_lost = True
    finally:
        if caller_lost and caller_gone(parent_pid, first_ppid):
            buffers.remove_orphaned()
        buffers.close()
        with contextlib.suppress(Exception):
            worker.sub_env.env.close()
