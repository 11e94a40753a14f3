"""Tests of plangym.videogames: Atari, Montezuma, NES and Retro."""
