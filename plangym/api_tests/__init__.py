"""A reusable pytest conformance suite for any :class:`~plangym.core.PlanEnv`.

Import the classes into a test module and give them an ``env`` fixture; pytest then runs
every check against your environment::

    import pytest
    from plangym.api_tests import TestPlanEnv  # noqa: F401  (collected by pytest)

    @pytest.fixture
    def env():
        return MyEnv(name="my-env")

``TestPlanEnv`` needs only the :class:`~plangym.core.PlanEnv` contract; ``TestPlangymEnv``
adds the gymnasium-backed parts (spaces, seeding, input checks) and ``TestVideogameEnv`` the
emulator parts (RAM, lives). The fixture may also set ``env.api_test_steps`` (int) to change
how many random steps each replay check takes.

The helpers :func:`assert_identical` and :func:`replay` are usable on their own, outside a
suite (the package needs pytest, as the suite does):

>>> import plangym
>>> env = plangym.make("CartPole-v1")
>>> state, *_ = env.reset()
>>> actions = [env.sample_action() for _ in range(20)]
>>> assert_identical(replay(env, state, actions), replay(env.clone(), state, actions))

Family test files written for plangym 0.1 run unchanged: the module keeps 0.1's helpers
with 0.1's signatures (:func:`generate_test_cases`, the ``batch_size`` and ``display``
fixtures, :func:`step_tuple_test`, :func:`step_batch_tuple_test`, :func:`is_wsl` and
:func:`skip_render`).
"""

try:
    import pytest  # noqa: F401  (the suite's fixtures and marks are pytest's)
except ImportError as error:
    raise ModuleNotFoundError(
        "plangym.api_tests is a pytest suite, with its helpers: it needs pytest "
        f'(pip install pytest, or pip install "plangym[notebooks]") ({error})',
        name="pytest",
    ) from error

from plangym.api_tests.legacy import (
    batch_size,
    display,
    generate_test_cases,
    is_wsl,
    skip_render,
    step_batch_tuple_test,
    step_tuple_test,
)
from plangym.api_tests.suites import (
    TestPlanEnv,
    TestPlangymEnv,
    TestVideogameEnv,
    assert_identical,
    replay,
)

__all__ = [
    "TestPlanEnv",
    "TestPlangymEnv",
    "TestVideogameEnv",
    "assert_identical",
    "batch_size",
    "display",
    "generate_test_cases",
    "is_wsl",
    "replay",
    "skip_render",
    "step_batch_tuple_test",
    "step_tuple_test",
]
