"""RayEnv on a real local Ray cluster: exact results in input order, typed errors, faults.

The session starts one local cluster (``ray.init(num_cpus=2)``, token authentication and
usage reporting off) the first time a test needs it and shuts it down at the end; under
pytest-xdist each worker process that runs these tests starts its own (about 4 s each, in
parallel). The tests that need no cluster exercise the actor class in-process.
"""

import functools
import gc
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import cloudpickle
import gymnasium
import numpy as np
import pytest

import plangym
from plangym.api_tests import assert_identical
from plangym.control import ClassicControl
from plangym.vectorization import ClosedEnvironmentError, WorkerCrashedError
from plangym.vectorization.costs import DispatchCosts
from plangym.vectorization.messages import StepChunk
from plangym.vectorization.packing import ArrayStates, pack_actions, pack_states
from plangym.vectorization.ray import RayEnv
from plangym.vectorization.ray_actor import PackedError, RemoteEnv, import_ray, remote_error
from tests.helpers import backend_checks as checks
from tests.helpers import vectorized_contract as contract
from tests.helpers.faulty_env import (
    DIE,
    HANG,
    PAUSE,
    RAISE,
    SLOW,
    CartError,
    CountingCartPole,
    FaultyCartPole,
    faulty_state,
)
from tests.helpers.pipe_env import PipeEnv
from tests.helpers.processes import wait_dead
from tests.helpers.subprocess_runs import run_python
from tests.helpers.vectorized_contract import random_states

ray = pytest.importorskip("ray")

# Actors import tests.helpers.faulty_env by name: ray_cluster (conftest.py) puts the
# repository root on the cluster's PYTHONPATH.

pytestmark = pytest.mark.timeout(180)


def wait_gone(path: Path, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while path.exists():
        assert time.monotonic() < deadline, f"{path} was never claimed"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def cartpole(ray_cluster):
    env = plangym.make("CartPole-v1", n_workers=3, ray=True, inline_small_batches=False)
    yield env
    env.close()


@pytest.fixture(scope="module")
def pacman(ray_cluster):
    env = plangym.make(
        "ALE/MsPacman-v5",
        n_workers=2,
        ray=True,
        repeat_action_probability=0.25,
        inline_small_batches=False,
    )
    yield env
    env.close()


@pytest.fixture(scope="module")
def faulty_env_on_ray(ray_cluster, tmp_path_factory):
    env = checks.faulty_vectorized_env(RayEnv, tmp_path_factory.mktemp("faults") / "fault-once")
    yield env
    env.close()


@pytest.fixture
def faulty(faulty_env_on_ray):
    """The faulty env, shared by the fault tests: surviving them is what they test."""
    faulty_env_on_ray.marker.unlink(missing_ok=True)
    return faulty_env_on_ray


# Without a cluster ------------------------------------------------------------------------------
def test_the_actor_class_packs_a_chunk_into_a_few_arrays():
    """What crosses the object store: one blob of states, one stacked obs array, arrays."""
    local = plangym.make("CartPole-v1")
    actor = RemoteEnv(cloudpickle.dumps(lambda: plangym.make("CartPole-v1")))
    states = random_states(local, 5)
    actions = [0, 1, 1, 0, 1]
    payload, compute_s = actor.handle(
        StepChunk(pack_actions(np.array(actions)), pack_states(states), [1] * 5, True)
    )
    assert 0 < compute_s < 10
    packed_states, observs, rewards, terminals, truncateds, infos = payload
    assert isinstance(packed_states, ArrayStates) and isinstance(packed_states.blob, bytes)
    assert isinstance(observs, np.ndarray) and observs.shape == (5, 4)
    assert rewards.dtype == np.float64 and terminals.dtype == truncateds.dtype == np.bool_
    assert infos == local.step_batch(actions, states=states)[-1]
    assert actor.ready() == os.getpid()


def test_an_env_that_cannot_be_built_reports_its_own_error():
    def broken():
        raise KeyError("no such game")

    actor = RemoteEnv(cloudpickle.dumps(broken))
    with pytest.raises(PackedError) as caught:
        actor.ready()
    error = caught.value.unpack()
    assert isinstance(error, KeyError) and "broken" in error.__cause__.text


def test_the_actor_class_has_plangym_01s_members():
    """0.1's RemoteEnv was a PlanEnv built from ``env_callable``, then ``setup()``."""
    local = plangym.make("CartPole-v1")
    actor = RemoteEnv(env_callable=lambda: plangym.make("CartPole-v1"))
    actor.setup()
    assert actor.name == "CartPole-v1" and actor.obs_shape == local.obs_shape == (4,)
    assert actor.action_shape == local.action_shape and actor.unwrapped is actor.env
    assert RemoteEnv.STATE_IS_ARRAY and not RemoteEnv.SINGLETON
    state, *_ = local.reset()
    actor.set_state(state)
    assert np.array_equal(actor.step_with_dt(1, dt=3)[0], local.step_with_dt(1, dt=3)[0])
    assert actor.sample_action() in (0, 1)
    with pytest.raises(PackedError) as caught:
        actor.step_with_dt(7)  # the env's own error (a raw step: unchecked), packed
    assert isinstance(caught.value.unpack(), AssertionError)  # gymnasium's CartPole check


def test_ray_module_flags_load_ray_lazily():
    import plangym.vectorization.ray as ray_module

    assert ray_module.RAY_AVAILABLE is (importlib.util.find_spec("ray") is not None)
    assert ray_module.ray is sys.modules["ray"]


def test_without_ray_installed_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'pip install "plangym\[ray\]"'):
        import_ray()


def test_remote_error_keeps_foreign_causes():
    error = RuntimeError("ray said so")
    error.cause = ValueError("the env said so")
    unpacked = remote_error(error)
    assert isinstance(unpacked, ValueError) and "ray said so" in str(unpacked.__cause__)


# Exactness --------------------------------------------------------------------------------------
def test_make_builds_a_ray_env(ray_cluster):
    env = plangym.make("CartPole-v1", n_workers=2, ray=True)
    assert isinstance(env, RayEnv) and env.n_workers == 2 and len(env.workers) == 2
    assert env.obs_shape == (4,) and env.action_space.n == 2
    state, *_ = env.reset()
    expected = env.plan_env.step_batch([0, 1, 1], states=[state] * 3)
    assert_identical(env.step_batch([0, 1, 1], states=[state] * 3), expected)
    env.close()


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize("per_element_dt", [False, True])
def test_step_batch_equals_the_single_env(cartpole, size, per_element_dt):
    contract.check_step_batch_equals_the_single_env(cartpole, size, per_element_dt)


def test_an_empty_batch_returns_empty_columns(cartpole):
    assert cartpole.step_batch([], states=[]) == ([], [], [], [], [], [])


@pytest.mark.parametrize("size", [1, 5])
def test_atari_step_batch_equals_the_single_env(pacman, size):
    states = random_states(pacman.plan_env, size, seed=size)
    actions = np.random.default_rng(size).integers(pacman.n_actions, size=size)
    dts = ([1, 2, 3] * size)[:size]
    expected = pacman.plan_env.step_batch(actions, states=states, dt=dts)
    result = pacman.step_batch(actions, states=states, dt=dts)
    assert_identical(result, expected)
    assert all(obs.flags.writeable for obs in result[1])  # owned, not views of the store


def test_results_are_in_input_order_whatever_finishes_first(faulty):
    env = faulty
    slow = faulty_state(env.plan_env, SLOW)
    states = [slow, *random_states(env.plan_env, 5)]  # the first chunk finishes last
    actions = [0, 1, 0, 1, 1, 0]
    expected = env.plan_env.step_batch(actions, states=states)
    assert_identical(env.step_batch(actions, states=states), expected)


def test_without_states_each_worker_steps_its_chunk_from_its_own_state(cartpole):
    contract.check_stateless_chunks(cartpole)


# Whole-env calls --------------------------------------------------------------------------------
def test_reset_set_state_and_sync_states_reach_every_actor(cartpole):
    state, *_ = cartpole.reset()
    for actor_state in cartpole.call("get_state"):
        assert_identical(actor_state, state)
    other = random_states(cartpole.plan_env, 5)[-1]
    cartpole.set_state(other)
    assert all(bool(s == other) for s in cartpole.call("get_state"))
    cartpole.plan_env.set_state(state)
    cartpole.sync_states()
    assert all(bool(s == state) for s in cartpole.call("get_state"))


def test_locations_name_every_actor(cartpole):
    locations = cartpole.locations()
    assert len({location["pid"] for location in locations}) == 3
    assert {location["node_id"] for location in locations} == {
        ray.get_runtime_context().get_node_id()
    }


def test_a_replacement_that_dies_before_its_env_is_built_is_started_again(ray_cluster, tmp_path):
    """As one started on a node that is dying (the cluster sees it dead seconds later): its
    ``ready`` raised Ray's ActorDiedError to the user. It counts as one more death now."""
    marker = tmp_path / "die-when-built"
    env = RayEnv(
        FaultyCartPole, "CartPole-v1", n_workers=2, build_marker=str(marker),
        inline_small_batches=False,
    )  # fmt: skip
    try:
        state = env.get_state()
        victim = env.pool.wait_ready()[0]
        marker.touch()  # the first replacement dies as its env is built
        os.kill(victim, signal.SIGKILL)
        assert wait_dead([victim])
        checks.assert_steps_like_the_single_env(env, [1, 0, 1, 0], [state] * 4)
        assert not marker.exists() and victim not in env.pool.wait_ready()
    finally:
        env.close()


def test_attributes_survive_a_replaced_worker(cartpole):
    contract.check_attributes_survive_a_replaced_worker(cartpole)


def test_call_get_attr_set_attr(cartpole):
    contract.check_call_get_attr_set_attr(cartpole)
    with pytest.raises(AttributeError, match="no_such_attribute"):
        cartpole.get_attr("no_such_attribute")


def test_clone_keeps_parameters(ray_cluster):
    env = plangym.make("ALE/Pong-v5", n_workers=1, ray=True, frameskip=3, obs_type="ram")
    clone = env.clone()
    assert isinstance(clone, RayEnv)
    assert clone.n_workers == 1 and clone.frameskip == 3 and clone.obs_type == "ram"
    state, *_ = clone.reset()
    expected = clone.plan_env.step_batch([0, 2], states=[state, state])
    assert_identical(clone.step_batch([0, 2], states=[state, state]), expected)
    env.close()
    clone.close()


def test_delay_setup_starts_the_actors_on_first_use(ray_cluster):
    env = RayEnv(ClassicControl, "CartPole-v1", n_workers=1, delay_setup=True)
    state, *_ = env.reset()
    assert len(env.workers) == 1
    expected = env.plan_env.step_batch([1, 0], states=[state, state])
    assert_identical(env.step_batch([1, 0], states=[state, state]), expected)
    env.close()


def test_small_cheap_batches_run_in_the_caller_with_the_same_results(ray_cluster):
    # A Ray round trip costs about a millisecond: 8 CartPole steps are far cheaper here.
    costs = DispatchCosts(2, smoothing=0.0, per_element=15e-6, overhead=1e-3)
    env = RayEnv(CountingCartPole, "CartPole-v1", n_workers=2, dispatch_costs=costs)
    contract.check_small_cheap_batches_run_in_the_caller(env)


def test_the_cost_model_learns_from_the_actors(ray_cluster):
    env = plangym.make("CartPole-v1", n_workers=2, ray=True)
    try:
        state, *_ = env.reset()
        expected = env.plan_env.step_batch([0, 1] * 4, states=[state] * 8)
        assert_identical(env.step_batch([0, 1] * 4, states=[state] * 8), expected)
        costs = env.dispatch_costs  # the first batch went to the actors, which timed it
        assert costs.per_element is not None and 0 < costs.per_element < costs.overhead
        # Where the next batch goes depends on those timings (a busy machine inflates them):
        # either way it gives the same results. The choice itself is tested with set costs.
        assert_identical(env.step_batch([0, 1] * 4, states=[state] * 8), expected)
    finally:
        env.close()


class TestCartPoleContract(checks.CartPoleContract):
    """The contract tests that run on ``cartpole`` as they are."""


def test_calls_after_close_raise(ray_cluster):
    contract.check_calls_after_close_raise(plangym.make("CartPole-v1", n_workers=2, ray=True))


def test_a_poison_state_fails_the_batch_not_the_env(ray_cluster):
    env = RayEnv(FaultyCartPole, "CartPole-v1", n_workers=2)
    try:
        contract.check_a_poison_state_fails_the_batch_not_the_env(env)
    finally:
        env.close()


def test_bad_input_is_rejected_before_dispatch(cartpole, monkeypatch):
    state, *_ = cartpole.reset()

    def no_dispatch(*args, **kwargs):
        raise AssertionError("dispatched")

    monkeypatch.setattr(cartpole.scheduler, "dispatch", no_dispatch)
    checks.check_bad_input_is_refused(cartpole, state)
    with pytest.raises(ValueError, match="states"):
        cartpole.step_batch([0, 1], states=[state])
    monkeypatch.undo()
    checks.check_nothing_is_pending(cartpole, state)


# Faults -----------------------------------------------------------------------------------------
def test_env_errors_keep_their_type_and_traceback(faulty):
    env = faulty
    assert type(checks.check_env_errors_keep_their_type_and_traceback(env)) is CartError
    good = faulty_state(env.plan_env, 0.0)
    expected = env.plan_env.step_batch([0, 1, 0, 1], states=[good] * 4)
    env.set_state(faulty_state(env.plan_env, RAISE))
    with pytest.raises(CartError):
        env.call("step", 0)
    assert_identical(env.step_batch([0, 1, 0, 1], states=[good] * 4), expected)


@pytest.mark.parametrize("how", ["sigkill", "ray.kill"])
def test_an_actor_killed_mid_batch_is_replaced_and_its_chunk_rerun(faulty, how):
    env = faulty
    pids = env.pool.wait_ready()
    good = faulty_state(env.plan_env, 0.0)
    paused = faulty_state(env.plan_env, PAUSE)
    states = [good, good, paused, good]  # the second actor pauses on element 2
    env.marker.write_text("pause once")
    env.step_batch_async([0, 1, 0, 1], states=states)
    wait_gone(env.marker)
    if how == "sigkill":
        os.kill(pids[1], signal.SIGKILL)
    else:
        ray.kill(env.workers[1])
    started = time.monotonic()
    result = env.step_batch_wait(timeout=60)
    assert time.monotonic() - started < 25  # re-run at once, not after the 30 s pause
    assert_identical(result, env.plan_env.step_batch([0, 1, 0, 1], states=states))
    after = env.pool.wait_ready()
    assert after[0] == pids[0] and after[1] != pids[1]
    assert wait_dead([pids[1]])


def test_an_actor_that_dies_by_itself_is_replaced_and_its_chunk_rerun(faulty):
    env = faulty
    good = faulty_state(env.plan_env, 0.0)
    doomed = faulty_state(env.plan_env, DIE)
    states = [good, doomed, good]
    env.marker.write_text("die once")
    result = env.step_batch([0, 1, 0], states=states)
    assert not env.marker.exists()
    assert_identical(result, env.plan_env.step_batch([0, 1, 0], states=states))


def test_a_crash_without_states_names_the_worker(faulty):
    env = faulty
    env.set_state(faulty_state(env.plan_env, DIE))
    env.marker.write_text("die once")
    with pytest.raises(WorkerCrashedError, match=r"worker 0 \(a Ray actor, replaced\) died"):
        env.step_batch([1])  # one element: only worker 0 steps
    good = faulty_state(env.plan_env, 0.0)
    expected = env.plan_env.step_batch([0, 1], states=[good, good])
    assert_identical(env.step_batch([0, 1], states=[good, good]), expected)


def test_an_actor_killed_between_batches_is_noticed(faulty):
    env = faulty
    good = faulty_state(env.plan_env, 0.0)
    checks.check_a_worker_killed_between_batches_is_noticed(env, good, env.pool.wait_ready)
    env.sync_states(good)  # a re-runnable call survives a dead actor too
    os.kill(env.pool.wait_ready()[1], signal.SIGKILL)
    env.sync_states(good)
    assert all(bool(s == good) for s in env.call("get_state"))


def test_a_timeout_abandons_the_batch_and_leaves_the_env_usable(faulty):
    checks.check_a_timeout_abandons_the_batch(faulty, r"timeout: .* workers \[1\] were replaced")


def test_ctrl_c_during_a_batch_leaves_the_env_usable(faulty):
    good, slow = faulty_state(faulty.plan_env, 0.0), faulty_state(faulty.plan_env, SLOW)
    checks.check_ctrl_c_during_batches(faulty, [slow, good, slow, good], delay=0.2, rounds=20)


def test_ctrl_c_replaces_the_actor_still_on_the_batch(faulty):
    """The next call does not wait for the abandoned chunk (it would hang for 30 s)."""
    env = faulty
    good = faulty_state(env.plan_env, 0.0)
    stuck = faulty_state(env.plan_env, HANG)
    pids = env.pool.wait_ready()
    env.step_batch_async([0, 0], states=[good, stuck])
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        env.step_batch_wait()
    timer.join()
    assert env.pool.worker_pids[1] != pids[1]  # the actor on the hanging chunk was replaced
    env.step_batch_async([0, 1], states=[good, good])
    expected = env.plan_env.step_batch([0, 1], states=[good, good])
    assert_identical(env.step_batch_wait(timeout=20), expected)


@pytest.fixture
def own_ray_tmpdir():
    """The environment of a script that starts its own clusters: their session files go in
    a directory removed afterwards (Ray's default, /tmp/ray, would keep them)."""
    temp_dir = tempfile.mkdtemp(prefix="plangym-ray-", dir="/tmp")  # short: Ray's sockets
    yield {**os.environ, "RAY_TMPDIR": temp_dir}
    shutil.rmtree(temp_dir, ignore_errors=True)


def test_after_ray_shutdown_the_env_says_so_and_starts_no_cluster(own_ray_tmpdir):
    script = textwrap.dedent(
        """
        import os, ray, plangym
        from plangym.vectorization.ray_backend import RayShutDownError
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        env = plangym.make("CartPole-v1", n_workers=1, ray=True, inline_small_batches=False)
        state, *_ = env.reset()
        ray.shutdown()
        try:
            env.step_batch([0], [state])
        except RayShutDownError as error:
            print("refused:", "ray.shutdown()" in str(error))
        env.close()
        del env
        print("cluster started again:", ray.is_initialized())
        # A new connection: the old env says its actors are gone, and starts none there
        # (Ray's bare Exception came twice, then the env lived on in the new cluster).
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        env = plangym.make("CartPole-v1", n_workers=1, ray=True, inline_small_batches=False)
        state, *_ = env.reset()
        ray.shutdown()
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        for _ in range(2):
            try:
                env.step_batch([0], [state])
            except RayShutDownError as error:
                print("refused after ray.init:", "ray.shutdown()" in str(error))
        actors = ray._private.state.actors().values()  # the state API needs the dashboard
        alive = [a for a in actors if a["State"] == "ALIVE"]
        print("actors started in the new cluster:", len(alive))
        env.close()
        ray.shutdown()
        """
    )
    run = run_python(script, timeout=240, env=own_ray_tmpdir)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == [
        "refused: True",
        "cluster started again: False",
        "refused after ray.init: True",
        "refused after ray.init: True",
        "actors started in the new cluster: 0",
    ]


def test_ray_shutdown_with_a_call_pending_and_actors_that_cannot_be_placed(own_ray_tmpdir):
    """A pending call's wait says Ray is gone (no new cluster); unplaceable actors time out."""
    script = textwrap.dedent(
        """
        import os, ray, numpy as np, plangym
        from plangym.vectorization import process
        from plangym.vectorization.ray_backend import RayShutDownError
        os.environ["RAY_AUTH_MODE"] = "disabled"
        options = dict(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
        ray.init(**options)
        default_timeout, process.READY_TIMEOUT = process.READY_TIMEOUT, 3.0
        try:  # the first actor keeps the one CPU while the env lives: the second never starts
            plangym.make("CartPole-v1", n_workers=2, ray=True, actor_options={"num_cpus": 1})
        except TimeoutError as error:
            print("unplaceable:", "1 of 2 Ray actors not ready within 3 s" in str(error))
            print("says none is free:", "of which 0 CPU and 0 GPU are free" in str(error))
        import time
        deadline = time.monotonic() + 20  # the killed actors give their CPU back
        while ray.available_resources().get("CPU") != 1.0 and time.monotonic() < deadline:
            time.sleep(0.1)
        print("CPU free again:", ray.available_resources().get("CPU") == 1.0)
        process.READY_TIMEOUT = default_timeout  # a loaded machine starts actors slowly
        env = plangym.make("CartPole-v1", n_workers=1, ray=True, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch_async([0] * 64, [state] * 64)
        ray.shutdown()
        try:
            env.step_batch_wait()
        except RayShutDownError:
            print("env refused, cluster started again:", ray.is_initialized())
        env.close()
        ray.init(**options)
        envs = plangym.make_vec("CartPole-v1", 1, "ray")
        envs.reset(seed=0)
        envs.step_async(np.array([1]))
        ray.shutdown()
        try:
            envs.step_wait()
        except RayShutDownError:
            print("vector env refused, cluster started again:", ray.is_initialized())
        envs.close()
        ray.init(**options)
        env = plangym.make("CartPole-v1", n_workers=1, ray=True, inline_small_batches=False)
        env.step_batch_async([0] * 64, [state] * 64)
        ray.shutdown()
        ray.init(**options)  # a notebook's setup cell run again: the old references are unknown
        try:
            env.step_batch_wait()
        except RayShutDownError:
            print("wait on a new connection refused")
        env.close()
        ray.shutdown()
        """
    )
    run = run_python(script, timeout=240, env=own_ray_tmpdir)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == [
        "unplaceable: True",
        "says none is free: True",
        "CPU free again: True",
        "env refused, cluster started again: False",
        "vector env refused, cluster started again: False",
        "wait on a new connection refused",
    ]
    # The vector env's sub-envs went with the connection: none is said to stay usable.
    assert "stays usable" not in run.stderr


def test_actor_options_that_are_not_a_dict_are_named():
    with pytest.raises(TypeError, match=r"^actor_options: expected None or a dict"):
        RayEnv(ClassicControl, "CartPole-v1", n_workers=2, actor_options="SPREAD")


def test_an_address_that_is_not_a_string_is_named_before_ray_is_reached():
    # Ray's own message, "Invalid address format: 6379", named no parameter.
    with pytest.raises(TypeError, match=r"^address: expected None or a Ray address .*6379 \(int\)"):
        RayEnv(ClassicControl, "CartPole-v1", n_workers=2, address=6379)
    from plangym.vector import RayVectorEnv

    with pytest.raises(TypeError, match=r"^address: expected None or a Ray address"):
        RayVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, address=6379)


# Closing ----------------------------------------------------------------------------------------
def test_close_kills_the_actors_and_blocks_further_use(ray_cluster):
    env = plangym.make("CartPole-v1", n_workers=2, ray=True)
    actors, pids = env.workers, env.pool.wait_ready()
    state = env.get_state()
    env.close()
    assert wait_dead(pids)
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(actors[0].ready.remote(), timeout=30)
    env.close()  # idempotent
    for call in (
        lambda: env.step_batch([0]),
        env.reset,
        env.step_batch_wait,
        env.sync_states,
        lambda: env.get_attr("name"),
        lambda: env.call("get_state"),
        lambda: env.set_state(state),
        lambda: env.step_batch_async([0]),
    ):
        with pytest.raises(ClosedEnvironmentError):
            call()


def test_an_unclosed_env_that_is_collected_kills_its_actors(ray_cluster):
    env = plangym.make("CartPole-v1", n_workers=2, ray=True)
    pids = env.pool.wait_ready()
    del env
    gc.collect()
    assert wait_dead(pids)


def test_env_classes_defined_in_user_code_reach_the_actors(ray_cluster):
    class DoubledReward(ClassicControl):
        def process_reward(self, reward, **kwargs):
            return 2 * reward

    env = RayEnv(DoubledReward, "CartPole-v1", n_workers=2, inline_small_batches=False)
    state, *_ = env.reset()
    _, _, rewards, *_ = env.step_batch([0, 1, 0], states=[state] * 3)
    assert rewards == [2.0, 2.0, 2.0]
    env.close()


def test_close_from_another_thread_ends_a_call_that_hangs(ray_cluster):
    """close() is the way out: the waiting call ends and starts no actor again (it used to
    restart the actors close() killed and hang on the re-run, leaving them alive)."""
    env = RayEnv(FaultyCartPole, "CartPole-v1", n_workers=2, inline_small_batches=False)
    pids = list(env.scheduler.backend.worker_pids)
    outcome, _ = checks.close_during_a_hung_call(env)
    assert len(outcome) == 1 and isinstance(outcome[0], ClosedEnvironmentError), outcome
    assert wait_dead(pids, 30)


def test_close_from_another_thread_ends_a_vector_step_that_hangs(ray_cluster):
    """As on the AsyncVectorEnv: ClosedEnvironmentError, not the closed env's AttributeError."""
    from plangym.vector import RayVectorEnv
    from tests.helpers.vector_faulty_env import NAP_LONG, make_faulty_env

    envs = RayVectorEnv([make_faulty_env] * 2)
    pids = list(envs.worker_pids)
    envs.set_attr("nap_long_s", 600.0)
    envs.reset(seed=0)  # no autoreset due: sub-env 0 steps, and hangs
    closer = threading.Timer(1.0, envs.close)
    closer.start()
    started = time.monotonic()
    with pytest.raises(ClosedEnvironmentError, match="closed while this call waited"):
        envs.step(np.array([NAP_LONG, 0]))
    closer.join()
    assert time.monotonic() - started < 30
    assert wait_dead(pids, 30)


def test_ctrl_c_while_the_actors_close_still_kills_them(ray_cluster):
    """A KeyboardInterrupt while close() waits for busy actors left them running (and a
    second close() did nothing): they are killed whatever interrupts the wait."""
    env = RayEnv(FaultyCartPole, "CartPole-v1", n_workers=2, inline_small_batches=False)
    pids = list(env.scheduler.backend.worker_pids)
    hang = faulty_state(env.plan_env, HANG)
    env.step_batch_async([0, 1], states=[hang, hang])
    time.sleep(0.5)  # both actors sleep in the hanging step; close() waits for them
    ctrl_c = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    ctrl_c.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            env.close()
    finally:
        ctrl_c.join()
    assert wait_dead(pids, 30)


def test_an_actor_whose_replacement_cannot_be_built_is_replaced_again_later(ray_cluster, tmp_path):
    """The failed replacement is killed, so the next call replaces it again (it stayed,
    and every later call raised its build error)."""
    broken = str(tmp_path / "broken")

    class BuildsUnlessBroken(ClassicControl):
        def __init__(self, *args, **kwargs):
            if os.path.exists(broken):
                raise RuntimeError("this env cannot be built now")
            super().__init__(*args, **kwargs)

    env = RayEnv(BuildsUnlessBroken, "CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        state, *_ = env.reset()
        Path(broken).touch()
        os.kill(env.pool.wait_ready()[1], signal.SIGKILL)
        with pytest.raises(RuntimeError, match="cannot be built now"):
            env.step_batch([0, 1], states=[state, state])
        os.remove(broken)
        _, _, rewards, *_ = env.step_batch([0, 1], states=[state, state])
        assert rewards == [1.0, 1.0]
    finally:
        env.close()


def test_a_keyboard_interrupt_raised_by_an_env_in_an_actor_is_its_error(ray_cluster):
    """Ray took it for a cancellation (TaskCancelledError); it is the env's error, with its
    type, and the actors stay."""
    env = RayEnv(PipeEnv, "CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        pids = list(env.scheduler.backend.worker_pids)
        state, *_ = env.reset()
        env.set_attr("mode", "interrupt")
        with pytest.raises(KeyboardInterrupt, match="raised by the env"):
            env.step_batch([0, 1] * 4, states=[state] * 8)
        env.set_attr("mode", None)
        expected = env.plan_env.step_batch([0, 1] * 4, states=[state] * 8)
        assert_identical(env.step_batch([0, 1] * 4, states=[state] * 8), expected)
        assert list(env.scheduler.backend.worker_pids) == pids
    finally:
        env.close()


def test_an_actor_whose_build_raises_keyboard_interrupt_reports_it(ray_cluster, tmp_path):
    """It came back as an ActorDiedError ('was cancelled'); and once replaced, the actor
    kept answering with the build's error after the cause was gone."""
    from plangym.vector import RayVectorEnv
    from tests.helpers.pipe_env import make_pipe_sub_env

    poison = tmp_path / "poison"
    poison.touch()
    with pytest.raises(KeyboardInterrupt, match="raised building the env"):
        RayVectorEnv([functools.partial(make_pipe_sub_env, str(poison))])
    poison.unlink()
    envs = RayVectorEnv([functools.partial(make_pipe_sub_env, str(poison))] * 2)
    try:
        envs.reset(seed=0)
        poison.touch()
        os.kill(envs.worker_pids[1], signal.SIGKILL)
        with pytest.raises(KeyboardInterrupt, match="raised building the env"):
            envs.step(np.array([0, 1]))
        poison.unlink()
        _, _, _, truncated, _ = envs.step(np.array([0, 1]))
        assert truncated.tolist() == [False, True]
    finally:
        envs.close()


def test_an_object_one_end_cannot_unpickle_raises_its_own_error(ray_cluster, tmp_path):
    """Ray raised RaySystemError, which `except ImportError` does not catch."""
    from tests.helpers.pipe_env import THING_MODULE, caller_only_thing

    env = RayEnv(PipeEnv, "CartPole-v1", n_workers=2, inline_small_batches=False)
    try:
        with (
            caller_only_thing(str(tmp_path)) as thing,
            pytest.raises(ModuleNotFoundError, match=THING_MODULE),
        ):
            env.call("process_info", {"thing": thing})
        state, *_ = env.reset()
        expected = env.plan_env.step_batch([0, 1], states=[state] * 2)
        assert_identical(env.step_batch([0, 1], states=[state] * 2), expected)
    finally:
        env.close()


def test_a_cluster_without_a_live_node_is_said_at_once_not_after_the_build_timeout(
    own_ray_tmpdir,
):
    # Its raylet killed, the cluster can place no actor: replacing a dead one waited the
    # whole build timeout (300 s), then blamed the actors' resource requests.
    script = textwrap.dedent(
        """
        import os, signal, time, ray, plangym
        from plangym.vectorization.errors import WorkerCrashedError
        os.environ["RAY_AUTH_MODE"] = "disabled"
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        env = plangym.make("CartPole-v1", n_workers=2, ray=True, inline_small_batches=False)
        state, *_ = env.reset()
        env.step_batch([0, 1], [state] * 2)
        for pid in filter(str.isdigit, os.listdir("/proc")):  # this cluster's raylet only
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    words = cmdline.read().split(bytes(1))
            except OSError:
                continue
            own = any(os.environ["RAY_TMPDIR"].encode() in word for word in words)
            if own and words[0].endswith(b"raylet"):
                os.kill(int(pid), signal.SIGKILL)
        time.sleep(3)
        os.kill(env.pool.worker_pids[0], signal.SIGKILL)
        started = time.monotonic()
        try:
            env.step_batch([0, 1], [state] * 2)
            print("stepped")
        except WorkerCrashedError as error:
            print("refused:", "no node of the Ray cluster is alive" in str(error))
        print("within a minute:", time.monotonic() - started < 60)
        env.close()
        """
    )
    run = run_python(script, timeout=240, env=own_ray_tmpdir)
    assert run.returncode == 0, run.stderr[-2000:]
    said = [line for line in run.stdout.splitlines() if line.startswith(("refused", "within"))]
    assert said == ["refused: True", "within a minute: True"], run.stdout[-2000:]  # Ray logs too


def test_a_ray_vector_env_says_where_its_sub_envs_run_and_hands_out_its_actors(ray_cluster):
    """As a RayEnv does: it had neither, so a sub-env's actor could not be found to ray.kill."""
    from plangym.vector import RayVectorEnv

    envs = plangym.make_vec("CartPole-v1", 2, vectorization_mode="ray")
    try:
        assert isinstance(envs, RayVectorEnv)
        locations = envs.locations()
        assert [location["pid"] for location in locations] == list(envs.worker_pids)
        assert {location["node_id"] for location in locations} == {
            ray.get_runtime_context().get_node_id()
        }
        envs.reset(seed=0)
        ray.kill(envs.workers[1])
        assert wait_dead([locations[1]["pid"]], 30)  # ray.kill returns before the actor dies
        *_, truncations, infos = envs.step(np.array([0, 1]))
        assert truncations.tolist() == [False, True] and infos["worker_restarted"].tolist() == [
            False,
            True,
        ]
    finally:
        envs.close()
    with pytest.raises(ClosedEnvironmentError):
        envs.locations()


def test_plangym_01s_remote_env_remote_names_what_replaces_it(ray_cluster, capfd):
    """A bare AttributeError, where the replacement is one call away; the actor class made
    of RemoteEnv still works, without Ray's warning about a class attribute 'remote'."""
    from plangym.vectorization.ray_actor import remote_env_class

    with pytest.raises(AttributeError, match=r"remote_env_class\(\)\.remote\(env_callable\)"):
        RemoteEnv.remote(env_callable=lambda: plangym.make("CartPole-v1"))
    with pytest.raises(AttributeError, match="has no attribute 'not_there'"):
        RemoteEnv.not_there  # noqa: B018
    actor = remote_env_class().remote(lambda: plangym.make("CartPole-v1"))
    try:
        assert ray.get(actor.location.remote())["pid"] > 0
    finally:
        ray.kill(actor)
    assert "overwrites attribute remote" not in capfd.readouterr().err
