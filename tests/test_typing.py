"""User code type-checks as it runs: mypy reads plangym's annotations (plangym ships py.typed)."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mypy")

USER_CODE = textwrap.dedent(
    """
    import plangym
    from plangym.planning import Decision
    from plangym.planning.common import Planner

    env = plangym.make("CartPole-v1")
    reveal_type(env.clone())  # the env's own class, not PlanEnv
    state, obs, info = env.reset()
    new_state, obs, reward, terminal, truncated, info = env.step(0, state=state)
    reveal_type(env.step(0))
    envs = plangym.make_vec("CartPole-v1", 2)
    reveal_type(envs)  # the vector entry point is no PlanVectorEnv


    class AlwaysLeft:  # all play() needs: decide()
        def decide(self, state: object) -> Decision:
            raise NotImplementedError


    planner: Planner = AlwaysLeft()
    """
)


@pytest.mark.timeout(300)
def test_documented_user_code_type_checks(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(USER_CODE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True,
        text=True,
        check=False,
    )
    revealed = [line.split("Revealed type is ")[-1] for line in result.stdout.splitlines()]
    revealed = [line for line in revealed if line.startswith('"')]
    # mypy versions print tuples and unions in their own ways: the names are what count.
    assert len(revealed) == 3, result.stdout
    assert revealed[0] == '"plangym.core.plangym_env.PlangymEnv"', result.stdout
    assert "tuple[Any, ...]" in revealed[1], result.stdout
    for name in ("vector_env.PlanVectorEnv", "classic_control.vector_env.ClassicVectorEnv"):
        assert name in revealed[2], result.stdout
    assert result.returncode == 0, result.stdout
