"""Input checks shared by every environment and by both faces of the worker layer.

Each check raises before any work is dispatched, with a message naming the parameter,
what was expected and what was received, so a bad call never leaves an env half-stepped.
Checks of single values are in :mod:`plangym.validation.values`, of a ``step_batch`` in
:mod:`plangym.validation.batches`, and of the gymnasium vector API in
:mod:`plangym.validation.vector`; every name is importable from here.
"""

from plangym.validation.batches import (
    check_action,
    check_batch_action_values,
    check_batch_actions,
    check_batch_dt,
    check_batch_states,
    check_box_batch,
    check_discrete_batch,
    check_integer_batch,
    check_space_batch,
    discrete_as_int64,
)
from plangym.validation.values import (
    check_choice,
    check_dt,
    check_flag,
    check_number,
    check_pictures_available,
    check_positive_int,
    check_process_count,
    check_return_state,
    check_seed,
    check_start_method,
    check_timeout,
    describe,
    is_integer,
)
from plangym.validation.vector import (
    ARRAY_SPACES,
    INTEGER_SPACES,
    all_alike,
    check_indices,
    check_reset_mask,
    check_seeds,
    check_states_given,
    check_values_per_env,
    check_values_per_worker,
    check_vector_actions,
)

__all__ = [
    "ARRAY_SPACES",
    "INTEGER_SPACES",
    "all_alike",
    "check_action",
    "check_batch_action_values",
    "check_batch_actions",
    "check_batch_dt",
    "check_batch_states",
    "check_box_batch",
    "check_choice",
    "check_discrete_batch",
    "check_dt",
    "check_flag",
    "check_indices",
    "check_integer_batch",
    "check_number",
    "check_pictures_available",
    "check_positive_int",
    "check_process_count",
    "check_return_state",
    "check_seed",
    "check_start_method",
    "check_timeout",
    "check_reset_mask",
    "check_seeds",
    "check_states_given",
    "check_space_batch",
    "check_values_per_env",
    "check_values_per_worker",
    "check_vector_actions",
    "describe",
    "discrete_as_int64",
    "is_integer",
]
