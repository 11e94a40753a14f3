"""The pieces several control families share, so that no family copies another's code.

* :mod:`plangym.control.shared.bulk_loop`: the bulk batch loop (a checked batch stepped
  in one loop), used by classic control, MuJoCo and dm_control;
* :mod:`plangym.control.shared.record_state`: states as 0-d records of named fields
  (:class:`~plangym.control.shared.record_state.RecordLayout`), used by MuJoCo, dm_control
  and FastLunarLander;
* :mod:`plangym.control.shared.mujoco_runtime`: imports mujoco with an off-screen GL
  backend and its warnings routed to Python, used by MuJoCo and dm_control.

Nothing is imported here: each family imports the module it needs.
"""
