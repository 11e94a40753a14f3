"""Tests of plangym.vectorization: ParallelEnv, RayEnv, the scheduler, shared states, faults."""
