"""Observations handed out as views of shared memory stay readable after the env closes.

NumPy keeps no buffer export on the memory its views look at, so a buffer unmapped under a
``copy=False`` observation made reading it crash the interpreter. Each scenario runs in a
fresh interpreter: a regression kills that interpreter, not the test session.
"""

import pytest

from tests.helpers.subprocess_runs import run_python

SCENARIOS = {
    "async_vector_env": """
import gymnasium, numpy as np, plangym.vector
envs = plangym.vector.AsyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, copy=False)
obs, _ = envs.reset(seed=0)
expected = obs.copy()
envs.close()
assert np.array_equal(obs, expected)
""",
    "parallel_env": """
import numpy as np, plangym
env = plangym.make("CartPole-v1", n_workers=2, inline_small_batches=False)
state, *_ = env.reset()
observs = env.step_batch([0, 1] * 4, states=[state] * 8, copy=False)[1]
expected = [obs.copy() for obs in observs]
env.step_batch([0] * 40, states=[state] * 40)  # bigger: the shared buffers are replaced
first = env.step_batch([1] * 40, states=[state] * 40, copy=False)[1]
env.close()
assert all(np.array_equal(a, b) for a, b in zip(observs, expected))
assert first[0].sum() == first[0].sum()  # readable after close
""",
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_views_of_shared_observations_outlive_close(scenario):
    run = run_python(SCENARIOS[scenario] + "print('read')", timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "read"
