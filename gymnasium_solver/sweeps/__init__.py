"""Hyperparameter sweeps with Optuna: every trial a normal run folder, the study in an RDB storage.

- ``space``   the search space file (log-uniform, uniform, int, categorical), validated like --set
- ``record``  the sweep's definition and coordinator state in ``runs/.sweeps/<sweep_id>.json``
- ``study``   the Optuna study (RDB storage), the objective's values, a trial's recorded result
- ``runner``  the coordinator: ask/tell over a trial backend (local or Ray), pruning, early stops
- ``launch``  validate and create a sweep, resume one, or start one detached (MCP)
- ``report``  progress, best trial, importances and how to reproduce it

``gsolve sweep`` and the MCP tools start_sweep / get_sweep / check_sweep are thin adapters. The
trial backends are the experiment runner's (``gymnasium_solver.jobs.backend``, and
``jobs.ray_backend``). Nothing here imports torch; Optuna is imported when a study is opened.
"""
