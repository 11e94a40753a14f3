"""Tests of plangym.vector: gymnasium-compatible vector envs and make_vec."""
