"""The published parameters of Fractal Monte Carlo on Atari games (``--preset fmc``).

The FractalAI repository's README (March 2018) lists, for each game it played, the score of
one game, the mean samples per action, the repeat of each action, the time horizon, the
maximum samples per action and the maximum number of walkers ("max states"). FractalAI's
planner limits the samples of one decision to ``min(max samples, walkers * horizon)``;
that is the :attr:`FMCPreset.budget` plangym plans with.

>>> preset = fmc_preset("ALE/Boxing-v5")
>>> preset.game, preset.repeat, preset.frameskip, preset.horizon, preset.walkers, preset.budget
('Boxing', 3, 9, 30, 150, 2000)
>>> fmc_preset("ALE/Pong-v5")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: --preset fmc: no published parameters for 'ALE/Pong-v5' (game 'Pong'); known ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A whole game, with a cap that no published game comes near (Boxing ends within 2 minutes
# of play, about 800 agent steps of 9 frames).
FULL_GAME_STEPS = 30_000

# Frames in one step of gym's "-v0" Atari games, which the published games were played
# on: 2, 3 or 4 at random, 3 on average. A published sample repeats such a step ``repeat``
# times.
V0_MEAN_FRAMES = 3


@dataclass(frozen=True)
class FMCPreset:
    """One row of FractalAI's results table.

    Attributes:
        game: The game's name, as in ``ALE/{game}-v5``.
        repeat: Steps of gym's ``-v0`` game per sample and per action played (each
            step 2 to 4 frames; plangym plays :attr:`frameskip` frames instead).
        horizon: The time horizon: rounds of the swarm per decision at most.
        walkers: Walkers in the swarm. Qbert's row leaves it free; see ``note``.
        max_samples: The published maximum samples per action.
        score: The published score of one game.
        samples_mean: The published mean samples per action over that game.
        note: Where plangym's parameters are a choice rather than the table's.
    """

    game: str
    repeat: int
    horizon: int
    walkers: int
    max_samples: int
    score: float
    samples_mean: float
    note: str = ""

    @property
    def budget(self) -> int:
        """Samples per action: FractalAI's ``min(max samples, walkers * horizon)``.

        Capped at the published mean too, so a whole game never spends more per action
        than the published one did (Alien: 1,190, where 50 walkers * 25 rounds is 1,250).
        """
        return min(self.max_samples, self.walkers * self.horizon, int(self.samples_mean))

    @property
    def frameskip(self) -> int:
        """Frames per sample and per action: ``repeat`` times the mean frames of a ``-v0`` step.

        plangym's ``ALE/<Game>-v5`` is deterministic, so each sample holds its action for
        the mean number of frames of the published one (Alien: 5 x 3 = 15).
        """
        return self.repeat * V0_MEAN_FRAMES

    @property
    def env_name(self) -> str:
        """The plangym name of the game."""
        return f"ALE/{self.game}-v5"

    def scaled(self, fraction: float) -> tuple[int, int]:
        """``(walkers, budget)`` times ``fraction`` (same horizon), for a score-vs-budget curve.

        >>> fmc_preset("Boxing").scaled(0.25)
        (38, 500)
        """
        if not fraction > 0:
            raise ValueError(f"fraction: expected a number > 0, received {fraction!r}")
        walkers = max(1, round(self.walkers * fraction))
        return walkers, max(walkers, round(self.budget * fraction))


FMC_PRESETS: dict[str, FMCPreset] = {
    preset.game: preset
    for preset in (
        FMCPreset("Boxing", 3, 30, 150, 2_000, 100, 2_027),
        FMCPreset("Alien", 5, 25, 50, 2_000, 19_380, 1_190),
        FMCPreset(
            "Qbert",
            5,
            20,
            136,
            5_000,
            35_750,
            2_728,
            note="max walkers not published: 136 = published mean samples / horizon, "
            "so the budget (2,720) stays under the published mean (2,728)",
        ),
        FMCPreset("MsPacman", 10, 20, 250, 20_000, 58_521, 5_129),
    )
}

# UCT's scores in Guo et al. (2014), for the benchmark's table.
UCT_PUBLISHED = {
    "Qbert": 18_850,
    "Seaquest": 3_257,
    "SpaceInvaders": 2_354,
    "BeamRider": 7_233,
    "Breakout": 406,
    "Enduro": 788,
    "Pong": 21,
}


def game_of(env_name: str) -> str:
    """Return the game in an Atari env name: ``ALE/MsPacman-v5`` and ``MsPacmanNoFrameskip-v4``.

    >>> game_of("ALE/MsPacman-v5"), game_of("QbertNoFrameskip-v4"), game_of("Alien")
    ('MsPacman', 'Qbert', 'Alien')
    """
    name = env_name.rsplit("/", 1)[-1]
    name = re.sub(r"-v\d+$", "", name)
    return re.sub(r"(NoFrameskip|Deterministic)$", "", name)


def fmc_preset(env_name: str) -> FMCPreset:
    """Return the published FMC parameters of ``env_name``'s game (case does not matter)."""
    game = game_of(env_name)
    by_lower = {key.lower(): preset for key, preset in FMC_PRESETS.items()}
    preset = by_lower.get(game.lower())
    if preset is None:
        known = ", ".join(sorted(FMC_PRESETS))
        raise ValueError(
            f"--preset fmc: no published parameters for {env_name!r} (game {game!r}); "
            f"known games: {known}"
        )
    return preset
