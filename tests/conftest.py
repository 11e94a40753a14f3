"""Shared test settings: headless rendering, quiet ALE, hypothesis profile, a Ray cluster."""

import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "plangym",
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("plangym")

REPO = Path(__file__).resolve().parent.parent  # holds the tests package


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster for the session (started on first use, under xdist one per worker)."""
    ray = pytest.importorskip("ray")
    os.environ["RAY_AUTH_MODE"] = "disabled"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # tests report nothing to anyone
    # Ray keeps its sockets and logs here, removed with the cluster; its default, /tmp/ray,
    # would keep every session's files. The path stays short: sockets live inside it.
    temp_dir = tempfile.mkdtemp(prefix="plangym-ray-", dir="/tmp")
    # Actors unpickle the test env classes by module path (tests.helpers.faulty_env): the
    # processes of the cluster (which inherit this environment when ray.init starts it) get
    # the repository root on their PYTHONPATH, wherever pytest was started from.
    pythonpath = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), pythonpath]))
    try:
        # "local": never attach to some other cluster that happens to run on this machine.
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            _temp_dir=temp_dir,
        )
    finally:
        if pythonpath is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = pythonpath
    yield ray
    ray.shutdown()
    shutil.rmtree(temp_dir, ignore_errors=True)


def pytest_addoption(parser):
    parser.addoption(
        "--run-slow", action="store_true", help="also run the tests marked slow (long sweeps)"
    )


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long sweep, run only with --run-slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _fork_safety_of_the_test_alone(monkeypatch):
    """What made forking unsafe is the test's own: a MuJoCo picture drawn by an earlier test
    in this pytest process must not turn later tests' worker pools to "spawn" (workers
    that no longer see the test's monkeypatches). Each env that draws notes it again; the
    rendering threads an earlier test left running are not looked for (tests of that run
    in a fresh process)."""
    from plangym.utils import fork_safety

    before = set(fork_safety._REASONS)
    monkeypatch.setattr(fork_safety, "rendering_threads_run", lambda: False)
    yield
    fork_safety._REASONS.clear()
    fork_safety._REASONS.update(before)
