"""Our own families pass the reusable conformance suite that plangym ships."""

import pytest

import plangym
from plangym import api_tests
from plangym.environment_names import CLASSIC_CONTROL

ATARI_GAMES = ["ALE/MsPacman-v5", "ALE/Pong-v5", "BreakoutNoFrameskip-v4"]


class TestClassicControl(api_tests.TestPlangymEnv):
    @pytest.fixture(params=CLASSIC_CONTROL)
    def env(self, request):
        env = plangym.make(request.param, remove_time_limit=False)
        yield env
        env.close()


class TestAtari(api_tests.TestVideogameEnv):
    @pytest.fixture(params=ATARI_GAMES)
    def env(self, request):
        env = plangym.make(request.param, repeat_action_probability=0.25, episodic_life=True)
        yield env
        env.close()


class TestAtariRam(api_tests.TestVideogameEnv):
    @pytest.fixture
    def env(self):
        env = plangym.make("ALE/Qbert-v5", obs_type="ram", frameskip=3)
        yield env
        env.close()
