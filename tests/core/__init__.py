"""Tests of plangym.core: the env contract, and user-written envs built on it."""
