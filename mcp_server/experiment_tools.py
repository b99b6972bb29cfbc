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
from gymnasium_solver.experiments.runner import DEFAULT_SEEDS, MAX_SEEDS
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
        seeds: Annotated[
            int, Field(ge=1, le=MAX_SEEDS, description="seeds the verdict is taken on: the run's own, then fresh "
                       "ones (1 = its own seed only: no baseline, a one-seed verdict)")
        ] = DEFAULT_SEEDS,
    ) -> ExperimentStart:
        """Prove a fix by running it, over seeds: after diagnose_run, test its suggested changes as real runs.

        In the background: each candidate change (the top finding's, each other finding's, each preset
        deviation reverted, all reverted) trains on the run's own seed; those that solve train on the fresh
        seeds too, beside the run's unchanged config; the winner is trimmed to the smallest change set that
        still solves every seed. Returns at once with experiment_id and the candidates. Then poll
        get_experiment(experiment_id) until status is 'done' (tens of seconds for small environments): its
        verdict says fixed / unlucky_seed (the config solves most seeds: no change needed) / not_fixed."""
        parallel = None
        parent = store.resolve(run_id)
        cfg = store.config(parent)
        policy.check_config(cfg, store.runs_dir, f"trials of {parent.name} (they inherit its config)")
        if limits is not None:
            check_budget(limits, int(cfg.get("max_env_steps") or 0), int(cfg.get("n_envs") or 1),
                         f"trials of {parent.name} (they inherit its config)")
            # Trials are live runs too: run at most as many at once as the cap leaves free.
            parallel = min(check_capacity(store, limits), default_parallel())
        return start_detached(store, run_id, max_trials, parallel=parallel, seeds=seeds)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_experiment(
        experiment_id: Annotated[str, Field(description="the id try_fixes returned, e.g. 'fix-20261125-221900-3fa9'")],
    ) -> ExperimentRecord:
        """The state of a fix experiment started by try_fixes (or `gsolve fix`). Cheap; poll it until status
        is 'done' ('crashed' if its coordinator died). Once done: verdict (fixed / unlucky_seed / not_fixed),
        message (the verdict with its numbers), arms (per-seed outcomes of each change set, your unchanged
        config first) and winner (the smallest change set that solved the required seeds, its spread,
        dropped padding, keeps_blamed, and the `gsolve train` command). Trials carry seed, role and run_id."""
        return read_record(store.runs_dir, experiment_id)
