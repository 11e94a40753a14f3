"""Helpers shared by the test modules (no tests here); import them as ``tests.helpers.<name>``.

* ``corridor_env``: ``Corridor``, a tiny user-written :class:`plangym.core.PlanEnv` (the one
  docs/extending.md builds), ``OldGymCorridor``, the same env on the old gym API, and
  ``PositionCorridor``, observed as a 0-d array.
* ``composite_env``: ``Hopscotch``, a user's gymnasium env with a ``Dict`` observation space
  and ``Tuple`` (or ``Discrete``) actions, made plannable.
* ``backend_checks``: the tests and fault checks ``ParallelEnv`` and ``RayEnv`` share beyond
  ``vectorized_contract`` (errors, kills, timeouts, Ctrl-C, bad input).
* ``faulty_env``: ``FaultyCartPole``, a CartPole that raises, hangs, sleeps or kills its
  process on request (selected by the cart position), to test how workers fail.
* ``kernel_helpers``: a real Jupyter kernel on this interpreter (``Kernel``) and ``Watch``,
  which records when processes and shared-memory segments disappear.
* ``missing_package``: ``hide_package``, plangym imported as if a package were missing.
* ``processes``: is a process alive, wait until a set of processes is gone.
* ``random_play``: a video game's state after random play, and actions to play from it.
* ``subprocess_runs``: ``run_python``, code run in a fresh interpreter, output captured.
* ``vector_checks``: ``assert_same``, exact comparison of vector env results.
* ``vector_envs``: gymnasium envs built by module-level (picklable) functions, for the
  vector-env parity tests.
* ``vector_faulty_env``: a tiny gymnasium env that misbehaves on request, for the vector-env
  fault tests.
* ``worker_parity``: a family's env on workers steps mixed-dt batches as the single env does.
* ``vectorized_contract``: the checks every vectorized backend (``ParallelEnv``, ``RayEnv``)
  must pass, written once.

Worker processes and Ray actors unpickle these modules' classes by module path: spawned and
forkserver workers inherit the test session's ``sys.path`` (which holds the repository root),
and the ``ray_cluster`` fixture puts the repository root on the ``PYTHONPATH`` of its cluster.
"""
