"""Tests of plangym.utils: plangym 0.1's helpers."""
