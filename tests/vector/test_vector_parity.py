"""``plangym.vector`` is a drop-in for ``gymnasium.vector``: bit-for-bit the same results.

Each test builds plangym's vector env and gymnasium's from the same ``env_fns`` and the same
arguments, drives both with the same calls, and compares what they return exactly: every
observation leaf (dtype, shape and bytes), rewards, terminations, truncations, and infos
recursively (same keys and ``_key`` masks, same dtypes, object arrays element by element, which
covers ``final_obs`` and the nested ``final_info``). ``SyncVectorEnv`` is compared with
gymnasium's ``SyncVectorEnv``, ``AsyncVectorEnv`` with gymnasium's ``AsyncVectorEnv``.
"""

import copy
import functools
import itertools

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from plangym.vector import AsyncVectorEnv, SyncVectorEnv
from tests.helpers.vector_checks import assert_same
from tests.helpers.vector_envs import make_dict_env, make_gym_env

SEED = 20240
N_STEPS = 500
MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED]

# name: (env_fn, number of sub-envs, the episode ends a 500-step run must see)
ENVS = {
    "CartPole-v1": (functools.partial(make_gym_env, "CartPole-v1"), 3, ["terminated"]),
    "Pendulum-v1": (functools.partial(make_gym_env, "Pendulum-v1"), 3, ["truncated"]),
    "ALE/MsPacman-v5": (functools.partial(make_gym_env, "ALE/MsPacman-v5"), 2, ["terminated"]),
    "DictInfoEnv": (make_dict_env, 3, ["terminated", "truncated"]),
}
# flavour: (ours, gymnasium's, extra constructor arguments for both)
FLAVOURS = {
    "sync": (SyncVectorEnv, gymnasium.vector.SyncVectorEnv, {}),
    "async": (AsyncVectorEnv, gymnasium.vector.AsyncVectorEnv, {}),
    "async-no-shm": (AsyncVectorEnv, gymnasium.vector.AsyncVectorEnv, {"shared_memory": False}),
}
ASYNC_FLAVOURS = ["async", "async-no-shm"]
# Every flavour runs every env in every mode, except that without shared memory, which only
# changes how observations travel, only CartPole runs, and DictInfoEnv with masked resets.
RUNS = [
    pytest.param(flavour, env_name, mode, id=f"{flavour}-{env_name}-{mode.name}")
    for flavour in FLAVOURS
    for env_name in ENVS
    for mode in MODES
    if flavour != "async-no-shm"
    or env_name == "CartPole-v1"
    or (env_name == "DictInfoEnv" and mode == AutoresetMode.DISABLED)
]


@pytest.fixture
def make_pair():
    """Build (ours, gymnasium's) from the same env_fns and arguments; both closed at teardown."""
    built = []

    def make(flavour, env_name, env_fn=None, **kwargs):
        ours_cls, gym_cls, extra = FLAVOURS[flavour]
        default_fn, num_envs, _ = ENVS[env_name]
        env_fns = [env_fn or default_fn] * num_envs
        pair = ours_cls(env_fns, **extra, **kwargs), gym_cls(env_fns, **extra, **kwargs)
        built.extend(pair)
        return pair

    yield make
    for env in built:
        env.close()


# Comparison helpers -----------------------------------------------------------------------------
def leaves(obs):
    """The arrays of a (possibly nested Dict/Tuple) batched observation."""
    if isinstance(obs, dict):
        return [leaf for value in obs.values() for leaf in leaves(value)]
    if isinstance(obs, tuple):
        return [leaf for value in obs for leaf in leaves(value)]
    return [obs]


def sample_actions(env, n, seed=SEED):
    """``n`` batched actions from ``env.action_space`` seeded with ``seed``."""
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(n)]


def reset_seeds(k, num_envs):
    """The seed of the k-th masked reset: a list of ints and None, None, or an int, in turn."""
    if k % 3 == 0:
        return [SEED + 97 * k + i if i % 2 == 0 else None for i in range(num_envs)]
    return None if k % 3 == 1 else SEED + 97 * k


def run_both(ours, theirs, mode, n_steps=N_STEPS):
    """Reset and step both envs alike, comparing every result; count what happened."""
    assert_same(ours.reset(seed=SEED), theirs.reset(seed=SEED), "reset")
    seen = {"terminated": 0, "truncated": 0, "final_obs": 0, "masked_resets": 0}
    for t, action in enumerate(sample_actions(theirs, n_steps)):
        expected = theirs.step(action)
        assert_same(ours.step(copy.deepcopy(action)), expected, f"step {t}")
        _, _, terminated, truncated, infos = expected
        seen["terminated"] += int(terminated.sum())
        seen["truncated"] += int(truncated.sum())
        seen["final_obs"] += "final_obs" in infos
        done = terminated | truncated
        if mode == AutoresetMode.DISABLED and done.any():
            seed = reset_seeds(seen["masked_resets"], theirs.num_envs)
            expected = theirs.reset(seed=seed, options={"reset_mask": done.copy()})
            got = ours.reset(seed=seed, options={"reset_mask": done.copy()})
            assert_same(got, expected, f"masked reset after step {t}")
            seen["masked_resets"] += 1
    return seen


# Whole runs -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("flavour", "env_name", "mode"), RUNS)
def test_a_500_step_run_is_bit_for_bit_gymnasiums(make_pair, flavour, env_name, mode):
    ours, theirs = make_pair(flavour, env_name, autoreset_mode=mode)
    seen = run_both(ours, theirs, mode)
    for flag in ENVS[env_name][2]:  # the run cannot pass without any episode ending
        assert seen[flag] > 0, f"no episode was {flag} in {N_STEPS} steps: {seen}"
    ended = seen["terminated"] + seen["truncated"] > 0
    if mode == AutoresetMode.SAME_STEP:
        assert (seen["final_obs"] > 0) == ended, seen
    if mode == AutoresetMode.DISABLED:
        assert (seen["masked_resets"] > 0) == ended, seen


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_reset_options_reach_the_sub_envs_as_gymnasiums_do(make_pair, flavour):
    ours, theirs = make_pair(flavour, "DictInfoEnv")
    for options in [None, {}, {"start_count": 5}]:
        got = ours.reset(seed=SEED, options=copy.deepcopy(options))
        assert_same(got, theirs.reset(seed=SEED, options=copy.deepcopy(options)), str(options))
    mask = np.array([False, True, True])
    for options in [{"reset_mask": mask}, {"reset_mask": mask, "start_count": 9}]:
        got = ours.reset(seed=[1, None, 3], options=copy.deepcopy(options))
        expected = theirs.reset(seed=[1, None, 3], options=copy.deepcopy(options))
        assert_same(got, expected, str(options))
        assert sorted(expected[1]["_episode"].nonzero()[0]) == [1, 2]


# Copies and views -------------------------------------------------------------------------------
def copy_behaviour(env):
    """What reset and step return, and what writing into a returned observation changes."""
    actions = sample_actions(env, 3)
    returned = [env.reset(seed=SEED)[0]]
    kept = [copy.deepcopy(returned[0])]
    for action in actions[:2]:
        returned.append(env.step(action)[0])
        kept.append(copy.deepcopy(returned[-1]))
    shares = [
        np.shares_memory(a, b)
        for earlier, later in itertools.pairwise(returned)
        for a, b in zip(leaves(earlier), leaves(later), strict=True)
    ]
    unchanged = [
        a.tobytes() == b.tobytes()
        for obs, snapshot in zip(returned[:-1], kept[:-1], strict=True)
        for a, b in zip(leaves(obs), leaves(snapshot), strict=True)
    ]
    for leaf in leaves(returned[-1]):
        leaf.fill(1)
    mask = np.zeros(env.num_envs, dtype=bool)
    mask[0] = True
    after_reset = copy.deepcopy(env.reset(seed=SEED + 1, options={"reset_mask": mask}))
    after_step = copy.deepcopy(env.step(actions[2]))
    return shares, unchanged, after_reset, after_step


@pytest.mark.parametrize("copy_obs", [True, False], ids=["copy", "no-copy"])
@pytest.mark.parametrize("env_name", ["CartPole-v1", "DictInfoEnv"])
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_observations_are_copies_only_with_copy_true(make_pair, flavour, env_name, copy_obs):
    ours, theirs = make_pair(flavour, env_name, copy=copy_obs)
    got, expected = copy_behaviour(ours), copy_behaviour(theirs)
    # Without copies, gymnasium's AsyncVectorEnv (shared memory) keeps what was written into
    # the rows a masked reset leaves alone; its SyncVectorEnv writes them anew.
    names = ["shares memory", "unchanged", "masked reset after a write", "step after that"]
    for name, mine, other in zip(names, got, expected, strict=True):
        assert_same(mine, other, name)
    shares, unchanged, _, _ = got
    if copy_obs:  # every call returns fresh arrays, which later calls leave alone
        assert not any(shares) and all(unchanged)
    else:  # every call returns the env's own buffers, which the next call overwrites
        assert all(shares) and not any(unchanged)


# Spaces, metadata, attributes, rendering ----------------------------------------------------------
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
@pytest.mark.parametrize("env_name", ["CartPole-v1", "DictInfoEnv"])
@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_spaces_and_metadata_are_gymnasiums(make_pair, flavour, env_name, mode):
    ours, theirs = make_pair(flavour, env_name, autoreset_mode=mode)
    assert isinstance(ours, gymnasium.vector.VectorEnv)
    assert ours.metadata["autoreset_mode"] is mode
    assert_same(ours.metadata, theirs.metadata, "metadata")
    for name in ["num_envs", "render_mode", "autoreset_mode"]:
        assert_same(getattr(ours, name), getattr(theirs, name), name)
    for name in ["single_observation_space", "observation_space"]:
        assert getattr(ours, name) == getattr(theirs, name), name
    for name in ["single_action_space", "action_space"]:
        assert getattr(ours, name) == getattr(theirs, name), name
    ours.close()
    theirs.close()
    assert ours.closed and theirs.closed


def attribute_calls(env):
    """A run of ``call``/``get_attr``/``set_attr``/``render`` on a CartPole vector env."""
    results = [env.reset(seed=SEED), env.render(), env.get_attr("gravity")]
    results.append(env.get_attr("np_random_seed"))
    results.append(env.set_attr("gravity", 5.0))
    results.append(env.get_attr("gravity"))
    results.append(env.set_attr("gravity", [1.0, 2.0, 3.0]))
    results.append(env.call("gravity"))
    for action in sample_actions(env, 10):
        results.append(env.step(action))
    results.extend([env.render(), env.call("render"), env.get_attr("render_mode")])
    with pytest.raises(ValueError):
        env.set_attr("gravity", [1.0])
    return results


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_call_get_attr_set_attr_and_render_are_gymnasiums(make_pair, flavour):
    env_fn = functools.partial(make_gym_env, "CartPole-v1", render_mode="rgb_array")
    ours, theirs = make_pair(flavour, "CartPole-v1", env_fn=env_fn)
    assert_same(attribute_calls(ours), attribute_calls(theirs))


@pytest.mark.parametrize("flavour", list(FLAVOURS))
def test_call_passes_args_and_kwargs_as_gymnasium_does(make_pair, flavour):
    ours, theirs = make_pair(flavour, "DictInfoEnv")
    for env in (ours, theirs):
        env.reset(seed=SEED)
        for action in sample_actions(env, 7):
            env.step(action)
    assert_same(ours.call("scaled_count", 3, offset=1), theirs.call("scaled_count", 3, offset=1))
    assert_same(ours.call("scaled_count", factor=2), theirs.call("scaled_count", factor=2))
    ours.set_attr("episode", [10, 20, 30])
    theirs.set_attr("episode", [10, 20, 30])
    assert_same(ours.get_attr("episode"), theirs.get_attr("episode"))
    assert_same(ours.render(), theirs.render())


# The split calls --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
@pytest.mark.parametrize("flavour", ASYNC_FLAVOURS)
def test_reset_async_and_step_async_give_what_reset_and_step_give(make_pair, flavour, mode):
    ours, theirs = make_pair(flavour, "DictInfoEnv", autoreset_mode=mode)
    ours.reset_async(seed=SEED)
    assert_same(ours.reset_wait(), theirs.reset(seed=SEED), "reset")
    ended = 0
    for t, action in enumerate(sample_actions(theirs, 100)):
        ours.step_async(copy.deepcopy(action))
        expected = theirs.step(action)
        assert_same(ours.step_wait(), expected, f"step {t}")
        done = expected[2] | expected[3]
        ended += int(done.sum())
        if mode == AutoresetMode.DISABLED and done.any():
            ours.reset_async(seed=t, options={"reset_mask": done.copy()})
            expected = theirs.reset(seed=t, options={"reset_mask": done.copy()})
            assert_same(ours.reset_wait(), expected, f"masked reset after step {t}")
    assert ended > 0
