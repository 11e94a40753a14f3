"""A family test file written the plangym 0.1 way, plus checks of 0.1's api_tests helpers."""

import inspect
from unittest import mock

import numpy
import pytest

from plangym import api_tests
from plangym.api_tests import (  # noqa: F401 - pytest finds the fixtures and the suite here
    TestPlanEnv,
    batch_size,
    display,
    generate_test_cases,
    step_batch_tuple_test,
    step_tuple_test,
)
from plangym.control.classic_control import ClassicControl
from plangym.videogames.atari import AtariEnv

CLASSIC = ["CartPole-v1", "Pendulum-v1"]
CASES = [
    *generate_test_cases(CLASSIC, ClassicControl, obs_types=["coords", "rgb"]),
    *generate_test_cases("ALE/Pong-v5", AtariEnv, obs_types=["ram"], render_modes=[None]),
]
# Without states a ParallelEnv steps each worker's chunk from that worker's own state
# (docs/parallel.md), which TestPlanEnv's stateless-batch check does not allow for.
PARALLEL = list(generate_test_cases(CLASSIC, ClassicControl, n_workers_values=[2]))


def case_id(case) -> str:
    return "-".join(str(value) for value in (*case.args, *case.keywords.values()))


@pytest.fixture(params=CASES, ids=case_id, scope="module")
def env(request):
    env = request.param()
    yield env
    env.close()


@pytest.mark.parametrize("env", CASES + PARALLEL, ids=case_id, indirect=True)
class TestLegacyHelpers:
    """0.1's step checks on real steps, as 0.1's suite ran them."""

    @pytest.mark.parametrize("dt", [1, 3])
    def test_step(self, env, dt):
        env.reset()
        obs, reward, terminal, _truncated, info = env.step(env.sample_action(), dt=dt)
        step_tuple_test(env, obs, reward, terminal, info, dt=dt)
        step_tuple_test(env, obs, reward, terminal, info)  # dt=None: any dt the step took

    @pytest.mark.parametrize("dt", [2, "array"])
    def test_step_batch(self, env, batch_size, dt):  # noqa: F811 - the imported fixture
        dt = numpy.arange(batch_size) % 3 + 1 if dt == "array" else dt
        state, *_ = env.reset()
        actions = [env.sample_action() for _ in range(batch_size)]
        _, observs, rewards, terminals, _, infos = env.step_batch(
            actions, states=[state] * batch_size, dt=dt
        )
        step_batch_tuple_test(env, batch_size, observs, rewards, terminals, infos, dt)

    def test_malformed_steps_fail(self, env):
        env.reset()
        obs, reward, terminal, _truncated, info = env.step(env.sample_action(), dt=2)
        bad_calls = [
            (numpy.zeros((*env.obs_shape, 2)), reward, terminal, info, 2),
            (obs, float("nan"), terminal, info, 2),
            (obs, reward, numpy.bool_(terminal), info, 2),
            (obs, reward, terminal, [info], 2),
            (obs, reward, terminal, {"dt": 2}, 2),
            (obs, reward, terminal, info, 3),
            (obs, reward, terminal, {**info, "n_step": 2 * env.frameskip + 1}, 2),
            (obs, reward, terminal, {**info, "n_step": 0}, 2),
        ]
        for args in bad_calls:
            with pytest.raises(AssertionError):
                step_tuple_test(env, *args)
        with pytest.raises(AssertionError, match="expected 3 items"):
            step_batch_tuple_test(env, 3, [obs] * 3, [reward] * 2, [terminal] * 3, [info] * 3, 2)

    def test_return_image_needs_rgb(self, env):
        if env.render_mode != "rgb_array":
            pytest.skip("return_image needs render_mode='rgb_array'")
        clone = env.clone(return_image=True)
        try:
            clone.reset()
            obs, reward, terminal, _truncated, info = clone.step(clone.sample_action())
            step_tuple_test(clone, obs, reward, terminal, info, dt=1)
            info.pop("rgb")
            with pytest.raises(AssertionError, match="rgb"):
                step_tuple_test(clone, obs, reward, terminal, info, dt=1)
        finally:
            clone.close()


def test_signatures_are_0_1s():
    expected = {
        "generate_test_cases": "(names, env_class, n_workers_values=None, render_modes=None, "
        "obs_types=None, custom_tests=None)",
        "step_tuple_test": "(env, obs, reward, terminal, info, dt=None)",
        "step_batch_tuple_test": "(env, batch_size, observs, rewards, terminals, infos, dt)",
        "is_wsl": "()",
        "skip_render": "()",
    }
    for name, signature in expected.items():
        found = inspect.signature(getattr(api_tests, name))
        bare = [p.replace(annotation=p.empty) for p in found.parameters.values()]
        assert str(found.replace(parameters=bare, return_annotation=found.empty)) == signature
    for name in ("batch_size", "display", "TestPlanEnv", "TestPlangymEnv", "TestVideogameEnv"):
        assert hasattr(api_tests, name)


def test_batch_size_and_display(batch_size, display):  # noqa: F811 - imported fixtures
    assert batch_size == 10
    assert display is None or hasattr(display, "stop")


def test_names_take_turns_and_custom_tests_come_last():
    def custom():
        return None

    cases = list(
        generate_test_cases(
            [("walker", "walk"), "CartPole-v1"],
            ClassicControl,
            n_workers_values=[None, 2],
            render_modes=["rgb_array"],
            obs_types=["coords"],
            custom_tests=[custom],
        )
    )
    assert [case.args for case in cases[:2]] == [("walker-walk",), ("CartPole-v1",)]
    assert [case.keywords["n_workers"] for case in cases[:2]] == [None, 2]
    assert cases[2] is custom


def test_default_cases_are_the_classes_drawable_ones():
    with mock.patch.dict("os.environ", SKIP_RENDER="0"):
        cases = [case.keywords for case in generate_test_cases("CartPole-v1", ClassicControl)]
    # Sorted, so that every pytest-xdist worker collects the same cases in the same order.
    assert [(case["obs_type"], case["render_mode"]) for case in cases] == [
        ("coords", None),
        ("coords", "rgb_array"),
        ("grayscale", "rgb_array"),
        ("rgb", "rgb_array"),
    ]
    assert all(case["n_workers"] is None for case in cases)
    atari = list(generate_test_cases("ALE/Pong-v5", AtariEnv))
    assert len(atari) == 6  # the emulator draws its screen in every render mode
    human = generate_test_cases("CartPole-v1", ClassicControl, render_modes=["human"])
    assert [case.keywords["render_mode"] for case in human] == ["human"]


def test_skip_render_leaves_only_defaults():
    with mock.patch.dict("os.environ", SKIP_RENDER="true"):
        assert api_tests.skip_render()
        cases = [case.keywords for case in generate_test_cases("CartPole-v1", ClassicControl)]
    assert cases == [{"n_workers": None, "obs_type": None, "render_mode": None}]
    with mock.patch.dict("os.environ", SKIP_RENDER="no"):
        assert not api_tests.skip_render()


def test_is_wsl_reads_proc_version():
    with (
        mock.patch("platform.system", return_value="Linux"),
        mock.patch("pathlib.Path.read_text", return_value="Linux version 5.15 (Microsoft WSL2)"),
    ):
        assert api_tests.is_wsl()
    with mock.patch("platform.system", return_value="Darwin"):
        assert not api_tests.is_wsl()
