"""MCP tools ``fix_run`` and ``get_fix``: thin adapters over gymnasium_solver.experiments.

``register(server, store)`` is called by ``mcp_server.server.create_server``. ``fix_run`` starts
a detached ``gsolve fix`` process and returns at once; ``get_fix`` reads the experiment record.
Neither imports torch: the trials are separate ``gsolve train`` processes. (They were try_fixes and
get_experiment: named after `gsolve fix` now, one name per use case.)
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from gymnasium_solver.config import env_modules, in_our_names
from gymnasium_solver.contract.locations import LocationPolicy
from gymnasium_solver.experiments import (
    ExperimentRecord,
    ExperimentStart,
    default_parallel,
    read_record,
    start_detached,
)
from gymnasium_solver.experiments.candidates import DEFAULT_MAX_TRIALS, MAX_TRIALS_LIMIT
from gymnasium_solver.experiments.runner import DEFAULT_HOLDOUT, DEFAULT_SEEDS, MAX_SEEDS
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.run_store import RunStore
from mcp_server.common import READ_ONLY, STARTS_PROCESS, tool


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add fix_run and get_fix to ``server``, over the runs folder of ``store``; ``limits``
    (the server's caps on the runs it starts) bound the trials' parallelism and the parent's budget;
    the trials inherit the parent's tracking URI, which must be one ``locations`` allows."""
    policy = locations or LocationPolicy.from_options()

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def fix_run(
        run_id: Annotated[str, Field(description="the unsolved run to fix: run id, unique prefix, or '@last'")],
        max_trials: Annotated[
            int, Field(ge=1, le=MAX_TRIALS_LIMIT, description="at most this many candidate changes to try")
        ] = DEFAULT_MAX_TRIALS,
        seeds: Annotated[
            int, Field(ge=1, le=MAX_SEEDS, description="seeds the verdict is taken on: the run's own, then fresh "
                       "ones (1: its own only, no baseline)")
        ] = DEFAULT_SEEDS,
        holdout: Annotated[
            int, Field(ge=0, le=MAX_SEEDS, description="fresh seeds the winner trains on once chosen "
                       "(0: none)")
        ] = DEFAULT_HOLDOUT,
        changes: Annotated[
            dict[str, Any] | None,
            Field(description="your own change to judge, e.g. {'learning_rate': 0.001}: tried first, judged like "
                  "the diagnosis' candidates (the RL Zoo's names are read too)"),
        ] = None,
    ) -> ExperimentStart:
        """Use after diagnose_run to prove a fix before recommending it: trains each candidate change (the
        findings' suggestions, preset deviations reverted, then the RL Zoo entry's settings the diagnosis does
        not weigh: references.unranked) in the background over seeds, beside the unchanged
        config, and trims the winner; returns experiment_id at once: poll get_fix until status is 'done'."""
        parallel = None
        parent = store.resolve(run_id)
        cfg = store.config(parent)
        # Its trials make the run's environment: refused now, naming the flag, unless this server was granted it.
        env_modules.require(str(cfg.get("env_id")), cfg.get("env_package") or (), cfg.get("env_class"))
        own = in_our_names(changes, "changes").values if changes else None
        trial_cfg = {**cfg, **(own or {})}  # the trials' config: the run's, with your change
        what = f"trials of {parent.name} (they inherit its config{' and your change' if own else ''})"
        policy.check_config(trial_cfg, store.runs_dir, what)
        if limits is not None:
            check_budget(limits, int(trial_cfg.get("max_env_steps") or 0), int(trial_cfg.get("n_envs") or 1), what)
            # Trials are live runs too: run at most as many at once as the cap leaves free.
            parallel = min(check_capacity(store, limits), default_parallel())
        caps = None if limits is None else limits.caps
        return start_detached(store, run_id, max_trials, parallel=parallel, seeds=seeds, own=own, caps=caps,
                              holdout=holdout)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_fix(
        experiment_id: Annotated[str, Field(description="the id fix_run returned, e.g. 'fix-20261125-221900-3fa9'")],
    ) -> ExperimentRecord:
        """Use to follow a fix_run (or `gsolve fix`) experiment; cheap, poll until status is 'done'. Then
        verdict is fixed / unlucky_seed (the config solves every fresh seed, or most and no change beats it) /
        not_fixed, message says it with numbers, winner is the smallest change set that solved (its `gsolve
        train`), winner.holdout how it did on fresh seeds that did not choose it."""
        return read_record(store.runs_dir, experiment_id)
