"""Tests of plangym.planning: the reference planners, GIFs and inline displays."""
