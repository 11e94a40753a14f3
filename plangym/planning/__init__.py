"""Reference planners written on plangym's public API only.

* :class:`~plangym.planning.swarm.SwarmPlanner`: a Fractal Monte Carlo style swarm of
  cloning walkers, stepped in one ``step_batch`` call per round.
* :class:`~plangym.planning.fmc.FMCPlanner`: Fractal Monte Carlo as published with the
  FractalAI code (relativized virtual reward, an exact budget of samples per action);
  :mod:`plangym.planning.presets` holds the published parameters of four Atari games.
* :class:`~plangym.planning.uct.UCTPlanner`: UCT tree search expanding leaves in waves, one
  ``step_batch`` call per wave and one per rollout depth.

:func:`~plangym.planning.common.play` runs either (or your own) for one game; its
:class:`~plangym.planning.common.Trajectory` shows as a table in Jupyter, and
``trajectory.animation(name)`` as an animated GIF (:mod:`plangym.planning.display`);
``play(..., on_step=PlanProgress(max_steps))`` draws a progress bar (a widget in Jupyter).
"""

from plangym.planning.common import Decision, Progress, Trajectory, play, random_scores
from plangym.planning.display import Animation, replay_frames
from plangym.planning.fmc import FMCPlanner
from plangym.planning.progress import PlanProgress
from plangym.planning.swarm import SwarmPlanner
from plangym.planning.uct import UCTPlanner

__all__ = [
    "Animation",
    "Decision",
    "FMCPlanner",
    "PlanProgress",
    "Progress",
    "SwarmPlanner",
    "Trajectory",
    "UCTPlanner",
    "play",
    "random_scores",
    "replay_frames",
]
