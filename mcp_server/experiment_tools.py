"""MCP tools ``try_fixes`` and ``get_experiment``: thin adapters over gymnasium_solver.experiments.

``register(server, store)`` is called by ``mcp_server.server.create_server``. ``try_fixes`` starts
a detached ``gsolve fix`` process and returns at once; ``get_experiment`` reads the experiment
record. Neither imports torch: the trials are separate ``gsolve train`` processes.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from gymnasium_solver.experiments import (
    ExperimentRecord,
    ExperimentStart,
    default_parallel,
    read_record,
    start_detached,
)
from gymnasium_solver.experiments.candidates import DEFAULT_MAX_TRIALS, MAX_TRIALS_LIMIT
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.locations import LocationPolicy
from gymnasium_solver.run_store import RunStore
from mcp_server.common import READ_ONLY, STARTS_PROCESS, tool


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add try_fixes and get_experiment to ``server``, over the runs folder of ``store``; ``limits``
    (the server's caps on the runs it starts) bound the trials' parallelism and the parent's budget;
    the trials inherit the parent's tracking URI, which must be one ``locations`` allows."""
    policy = locations or LocationPolicy.from_options()

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def try_fixes(
        run_id: Annotated[str, Field(description="the unsolved run to fix: run id, unique prefix, or '@last'")],
        max_trials: Annotated[
            int, Field(ge=1, le=MAX_TRIALS_LIMIT, description="at most this many candidate changes to try")
        ] = DEFAULT_MAX_TRIALS,
    ) -> ExperimentStart:
        """Prove a fix by running it: after diagnose_run, test its suggested changes as real training runs.

        Starts, in the background, one trial run per candidate change of the run's diagnosis (the top
        finding's changes, each other warning/critical finding's, each preset deviation reverted, all
        reverted together), each with the parent's seed and overrides plus the change; trials that can
        no longer beat the best solved one are stopped early. Returns at once with experiment_id and the
        candidates (name, changes, set_args, why). Then call get_experiment(experiment_id) until its
        status is 'done' (typically tens of seconds for small environments; bounded by a timeout). Use it
        when the user wants a verified fix rather than a guess; for a single change use start_training."""
        parallel = None
        parent = store.resolve(run_id)
        cfg = store.config(parent)
        policy.check_config(cfg, store.runs_dir, f"trials of {parent.name} (they inherit its config)")
        if limits is not None:
            check_budget(limits, int(cfg.get("max_env_steps") or 0), int(cfg.get("n_envs") or 1),
                         f"trials of {parent.name} (they inherit its config)")
            # Trials are live runs too: run at most as many at once as the cap leaves free.
            parallel = min(check_capacity(store, limits), default_parallel())
        return start_detached(store, run_id, max_trials, parallel=parallel)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_experiment(
        experiment_id: Annotated[str, Field(description="the id try_fixes returned, e.g. 'fix-20261125-221900-3fa9'")],
    ) -> ExperimentRecord:
        """The state of a fix experiment started by try_fixes (or `gsolve fix`): status ('running',
        'done', 'failed', or 'crashed' if its coordinator died), each trial's outcome (solved /
        not_solved / stopped_early / failed / skipped, running while it trains) with env steps to solve,
        trainer seconds, best eval return and its run_id (inspect it with get_run_info / diagnose_run),
        and, once done, the winner: the change that solved in the fewest env steps, its set_args and the
        `gsolve train` command that reproduces it. message is a one-line summary. Cheap; poll it."""
        return read_record(store.runs_dir, experiment_id)
