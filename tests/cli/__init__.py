"""Tests of plangym.cli: the plangym console script."""
