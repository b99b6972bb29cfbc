"""Experiments: prove a fix by running it. An experiment is a set of trial runs of candidate
config changes for one parent run; each trial is a normal run folder whose run.json records
``parent_run_id``, ``experiment_id`` and ``applied_changes``.

- ``candidates``  which changes to try, read off the parent's diagnosis (pure)
- ``record``      the experiment's state in ``runs/.experiments/<id>.json`` (schema, writer, reader)
- ``backend``     where trials execute: a small start/poll/stop interface and the local process
                  backend (parallel = the machine's cores, capped by the caller)
- ``runner``      the coordinator: runs the trials, stops those that can no longer win, picks the winner
- ``launch``      plans an experiment for a run, or starts its coordinator detached

``gsolve fix`` and the MCP tools ``fix_run`` / ``get_fix`` are thin adapters over these.
The runner is written for reuse: a hyperparameter sweep is another way to make the trial list, and
a Ray backend is another implementation of ``backend.TrialBackend``; the run-folder contract and
the record stay the same. Nothing here imports torch, except ``backend.ForkBackend`` when a
``gsolve fix`` process builds one (it imports the trainer once, then forks a trial per candidate).
"""

from gymnasium_solver.experiments.candidates import Candidate, NoCandidatesError, build_candidates
from gymnasium_solver.experiments.launch import ExperimentStart, plan_experiment, start_detached
from gymnasium_solver.experiments.record import ExperimentRecord, Trial, Winner, read_record, write_record
from gymnasium_solver.experiments.runner import run_experiment
from gymnasium_solver.jobs.backend import (
    ForkBackend,
    LocalProcessBackend,
    TrialBackend,
    default_parallel,
    make_backend,
)

__all__ = [
    "Candidate",
    "ExperimentRecord",
    "ExperimentStart",
    "ForkBackend",
    "LocalProcessBackend",
    "make_backend",
    "NoCandidatesError",
    "Trial",
    "TrialBackend",
    "Winner",
    "build_candidates",
    "default_parallel",
    "plan_experiment",
    "read_record",
    "run_experiment",
    "start_detached",
    "write_record",
]
