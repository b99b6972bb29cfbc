"""MCP tools ``start_sweep``, ``get_sweep`` (without an id: the list of sweeps) and ``check_sweep``:
thin adapters over gymnasium_solver.sweeps.

``register(server, store, limits)`` is called by ``mcp_server.server.create_server``. ``start_sweep``
validates the space, creates the study and starts a detached ``gsolve sweep --resume ID`` process,
returning the sweep id at once; ``check_sweep`` starts a detached ``gsolve sweep-check`` the same way;
the others read the sweep record and its Optuna study. None of them
imports torch (trials are separate processes; Optuna is imported when a tool is first called).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.contract.locations import LocationPolicy
from gymnasium_solver.experiments import default_parallel
from gymnasium_solver.jobs.seeds import SeedStatistic
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import check, launch, report
from gymnasium_solver.sweeps.record import read_record
from gymnasium_solver.sweeps.space import parse_space, to_overrides
from mcp_server.common import READ_ONLY, STARTS_PROCESS, tool

MAX_MCP_TRIALS = 200
MAX_MCP_TIMEOUT = 4 * 3600.0
MAX_MCP_CHECK_SEEDS = 20


class SweepReport(BaseModel):
    summary: report.SweepSummary | None = Field(default=None, description="with sweep_id: sweep (status, message), "
                                                "finished, counts, best (params, `gsolve train` command, preset "
                                                "snippet), importances, latest trials, check (check_sweep's result)")
    sweeps: list[report.SweepListItem] | None = Field(default=None, description="without sweep_id: the sweeps of "
                                                      "this runs folder, newest first (at most 50)")


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add start_sweep, get_sweep and check_sweep to ``server`` over the runs folder of ``store``;
    ``limits`` (the server's caps on runs it starts) bound the trials' parallelism and budgets;
    every tracking URI a trial can get must be one ``locations`` allows."""
    policy = locations or LocationPolicy.from_options()

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def start_sweep(
        config_id: Annotated[str, Field(description="the preset to tune, ENV:VARIANT, e.g. 'CartPole-v1:ppo'")],
        space: Annotated[dict[str, dict[str, Any]], Field(description=(
            "config key (dotted for a schedule's part) -> distribution: {'type': 'log_uniform', 'low': 1e-4, "
            "'high': 1e-2}, {'type': 'uniform', 'low': 0.9, 'high': 0.999}, {'type': 'int', 'low': 16, 'high': 128, "
            "'log': true}, {'type': 'categorical', 'choices': [64, 128, 256]}. E.g. {'learning_rate.start': "
            "{'type': 'log_uniform', 'low': 0.0003, 'high': 0.01}, 'gae_lambda': {'type': 'uniform', 'low': 0.8, "
            "'high': 0.99}}"))],
        n_trials: Annotated[int, Field(ge=1, le=MAX_MCP_TRIALS, description="trials to finish")] = 20,
        objective: Annotated[Literal["steps", "wall"], Field(
            description="minimise env steps to solve ('steps') or trainer seconds to solve ('wall')")] = "steps",
        overrides: Annotated[dict[str, Any] | None, Field(
            description="fixed config changes every trial gets, e.g. {'max_env_steps': 50000} to bound each trial")
        ] = None,
        timeout_seconds: Annotated[float, Field(ge=10, le=MAX_MCP_TIMEOUT,
                                                description="stop the sweep after this long")] = 1800.0,
        seeds_per_trial: Annotated[int, Field(ge=1, le=launch.MAX_SEEDS_PER_TRIAL, description=(
            "runs per trial, on the config's seed and the next ones: a trial's value holds over seeds instead "
            "of one seed's luck (each seed is a full training run of every trial)"))] = 1,
        seed_statistic: Annotated[SeedStatistic, Field(description=(
            "a trial's value over its seeds, unsolved seeds counting with their whole budget: 'p90' (the slow "
            "seeds count), 'iqm' (interquartile mean), 'median', 'mean' or 'max'; only used with "
            "seeds_per_trial > 1"))] = "p90",
        zoo: Annotated[bool, Field(description="false: without the RL Zoo's entry, as start_training(zoo=false)")] = True,
    ) -> launch.SweepStart:
        """Use to tune when the diagnosis has no single finding or fix_run found nothing: an Optuna sweep (TPE,
        median pruning) of the space, checked against the config's bounds, in the background; returns
        sweep_id at once: poll get_sweep. seeds_per_trial=3 ranks trials on several seeds, at 3x the cost."""
        parsed = parse_space(space, "space")
        fixed = dict(overrides or {})
        parallel = default_parallel()
        base = config_mod.resolve_config(config_id, fixed, use_zoo=zoo)
        for key in config_mod.LOCATION_KEYS:  # a trial gets the fixed value or one of the space's choices
            choices = parsed.params[key].extremes() if key in parsed.params else []
            for value in [getattr(base, key), *choices]:
                policy.check_uri(None if value is None else str(value), store.runs_dir,
                                 f"sweep trials of {config_id}", key)
        if limits is not None:
            for key, dist in parsed.params.items():  # the largest budget / env count a trial can get
                if key in ("max_env_steps", "n_envs"):
                    for value in dist.extremes():
                        cfg = config_mod.resolve_config(config_id, to_overrides({key: value}, fixed), use_zoo=zoo)
                        check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"sweep trials of {config_id}")
            check_budget(limits, base.max_env_steps, base.n_envs, f"sweep trials of {config_id}")
            # Trials are live runs too: run at most as many at once as the cap leaves free.
            parallel = min(check_capacity(store, limits), parallel)
        plan = launch.prepare_sweep(store.runs_dir, config_id, parsed, n_trials=n_trials, parallel=parallel,
                                    objective=objective, fixed_overrides=fixed, timeout_seconds=timeout_seconds,
                                    seeds_per_trial=seeds_per_trial, seed_statistic=seed_statistic, use_zoo=zoo)
        return launch.start_detached(plan, store.runs_dir)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_sweep(
        sweep_id: Annotated[str | None, Field(description="the id start_sweep returned (or a unique prefix), e.g. "
                                              "'sweep-20261126-051500-3fa9'; omit to list the sweeps")] = None,
    ) -> SweepReport:
        """Use to follow a sweep (cheap, poll every few seconds): progress, the best trial so far and how to
        reproduce it, which keys mattered; objective values are lower-is-better, null when unsolved. Without
        sweep_id: the earlier sweeps of this runs folder."""
        if sweep_id is None:
            return SweepReport(sweeps=report.list_sweeps(store.runs_dir))
        return SweepReport(summary=report.summarize(store, sweep_id, diagnose=True))

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def check_sweep(
        sweep_id: Annotated[str, Field(description="the sweep to check (or a unique prefix of its id)")],
        top: Annotated[int, Field(ge=1, le=check.MAX_TOP, description="how many of its best solved trials")] = 3,
        seeds: Annotated[list[int] | None, Field(
            max_length=MAX_MCP_CHECK_SEEDS,
            description="seeds to train each arm on; default: the 5 after the sweep's own (never seen by it)")] = None,
    ) -> check.CheckStart:
        """Use before reporting a sweep's best: re-trains its `top` best solved trials and the preset on
        held-out seeds in the background and returns at once; get_sweep(sweep_id).summary.check then holds
        per arm the seeds solved and median steps, and a verdict: the figure to report."""
        record = read_record(store.runs_dir, sweep_id)
        _study, arms, planned, _own = check.plan_check(record, top, seeds)
        parallel = default_parallel()
        for arm in arms:  # the arms' overrides come from the sweep's record, a file in the runs folder
            policy.check_config(config_mod.resolve_config(record.config_id, arm.overrides).model_dump(mode="json"),
                                store.runs_dir, f"the check of {record.sweep_id}")
        if limits is not None:
            for arm in arms:
                cfg = config_mod.resolve_config(record.config_id, arm.overrides)
                check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"the check of {record.sweep_id}")
            parallel = min(check_capacity(store, limits), parallel)
        return check.start_detached(store.runs_dir, record, arms, planned, top, parallel)

