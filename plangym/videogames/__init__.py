"""Video game environments: Atari 2600 through ale-py."""

from plangym.videogames.atari import AtariEnv
from plangym.videogames.env import VideogameEnv

__all__ = ["AtariEnv", "VideogameEnv"]
