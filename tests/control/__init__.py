"""Tests of plangym.control: classic control (and kernels), MuJoCo, dm_control, Box2D."""
