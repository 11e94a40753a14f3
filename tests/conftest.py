"""Shared test settings: headless rendering, quiet ALE, hypothesis profile."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "plangym",
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("plangym")
