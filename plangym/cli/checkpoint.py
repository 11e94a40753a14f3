"""Checkpoints of a long ``plangym plan`` game, and resuming from one.

Every ``--checkpoint-every`` agent steps (and when the game is over), ``checkpoint.pkl`` in
the output directory is replaced, atomically, by what is needed to continue the game
exactly: the settings of the run, the start state, the actions and rewards so far, the
state reached, the counters, and the planner's own state (its random generator's state;
UCT's kept subtree too). The states in between are not saved: a resumed game replays the
actions from the start state (a few seconds for a whole Atari game) and checks that it
reaches the saved state bit for bit. A resumed game then plays exactly the actions the
uninterrupted game would have played.

The file is a pickle: load only checkpoints you wrote yourself.

>>> import plangym, tempfile
>>> from plangym.planning import SwarmPlanner, play
>>> env = plangym.make("CartPole-v1")
>>> with tempfile.TemporaryDirectory() as folder:
...     planner = SwarmPlanner(env, n_walkers=4, horizon=2)
...     record = Trajectory()
...     saver = Checkpointer(Path(folder), 5, {"env": "CartPole-v1"}, planner, record)
...     _ = play(env, planner, max_steps=5, seed=0, on_step=saver, record=record)
...     data = load_checkpoint(Path(folder))
...     resumed = restore_trajectory(env, data)
>>> data["settings"], resumed.actions == record.actions, len(resumed.states)
({'env': 'CartPole-v1'}, True, 6)
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from plangym.cli.args import UsageError
from plangym.cli.outputs import write_atomically
from plangym.planning.common import Progress, Trajectory, same_state
from plangym.version import __version__

CHECKPOINT = "checkpoint.pkl"
FORMAT = 1  # bumped when the contents change


class EarlierCheckpoint:
    """Another game's ``checkpoint.pkl`` in the output directory, removed at this run's first write.

    Until this run writes (its first checkpoint, or its outputs) the directory stays as it
    was: a refused command, or a resumed one stopped while the game is restored, changes
    nothing there. From then on it holds this run's files: left there, the other game's
    checkpoint would be reported in this run's summary, and ``--resume`` would go on with
    that other game.

    Args:
        out: The output directory.
        ours: The checkpoint there is this game's (resumed in the same directory): kept.
    """

    def __init__(self, out: Path, ours: bool = False):
        self.path = Path(out) / CHECKPOINT
        self.pending = not ours

    def remove(self) -> None:
        """Remove it, once: this run is about to write in the directory."""
        if self.pending:
            self.path.unlink(missing_ok=True)
            self.pending = False


class Checkpointer:
    """An ``on_step`` of :func:`~plangym.planning.common.play` that saves every ``every`` steps.

    Args:
        out: The directory of ``checkpoint.pkl``.
        every: Agent steps between checkpoints (0: only :meth:`save` calls save).
        settings: What the run needs to be rebuilt (env, planner, parameters, seed, ...).
        planner: Has ``get_planner_state()``, read right after a step.
        trajectory: The game being recorded.
        earlier: Another game's checkpoint, removed before the first save.
    """

    def __init__(
        self,
        out: Path,
        every: int,
        settings: dict[str, Any],
        planner: Any,
        trajectory: Trajectory,
        earlier: EarlierCheckpoint | None = None,
    ):
        self.path = Path(out) / CHECKPOINT
        self.every = every
        self.settings = settings
        self.planner = planner
        self.trajectory = trajectory
        self.earlier = earlier
        self.saved_step = 0

    def __call__(self, progress: Progress) -> None:
        """Save after every ``every``-th agent step."""
        if self.every and progress.step % self.every == 0:
            self.save()

    def save(self) -> None:
        """Write the checkpoint of the steps played so far (between two steps only)."""
        record = self.trajectory
        data = {
            "format": FORMAT,
            "plangym_version": __version__,
            "settings": self.settings,
            "start_state": record.states[0],
            "last_state": record.states[-1],
            "actions": list(record.actions),
            "rewards": list(record.rewards),
            "frames_simulated": record.frames_simulated,
            "samples_simulated": record.samples_simulated,
            "wall_s": record.wall_s,
            "ended": record.ended,
            "truncated": record.truncated,
            "planner_state": self.planner.get_planner_state(),
        }
        payload = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        if self.earlier is not None:
            # Removed first: a save the next signal cuts short must not leave it in place.
            self.earlier.remove()
        write_atomically(self.path, lambda file: file.write(payload))
        self.saved_step = record.agent_steps


def load_checkpoint(directory: Path) -> dict[str, Any]:
    """Read ``directory/checkpoint.pkl``; a missing or unreadable one is a :class:`UsageError`."""
    path = Path(directory) / CHECKPOINT
    try:
        data = pickle.loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"--resume: no {CHECKPOINT} in {str(directory)!r}") from None
    except Exception as error:  # unpickling stray bytes may raise almost anything
        raise UsageError(f"--resume: cannot read {str(path)!r}: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise UsageError(
            f"--resume: {str(path)!r} is not a checkpoint of format {FORMAT} (found {found!r})"
        )
    return data


def restore_trajectory(env: Any, data: dict[str, Any]) -> Trajectory:
    """Return the game of a checkpoint, its states rebuilt by replaying its actions.

    Raises ValueError if the replay does not reach the saved state or rewards.
    """
    actions, rewards = data["actions"], data["rewards"]
    state = data["start_state"]
    states = [state]
    for step, action in enumerate(actions):
        state, _, reward, *_ = env.step(action, state=state)
        if float(reward) != rewards[step]:
            raise ValueError(
                f"checkpoint: replaying step {step} gave reward {reward}, saved {rewards[step]}"
            )
        states.append(state)
    if not same_state(state, data["last_state"]):
        raise ValueError("checkpoint: replaying the actions did not reach the saved state")
    return Trajectory(
        states=states,
        actions=list(actions),
        rewards=list(rewards),
        frames_simulated=data["frames_simulated"],
        wall_s=data["wall_s"],
        ended=data["ended"],
        truncated=data.get("truncated", False),  # not in checkpoints before 0.2
        samples_simulated=data["samples_simulated"],
    )
