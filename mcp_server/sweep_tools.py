"""MCP tools ``start_sweep``, ``get_sweep``, ``check_sweep`` and ``list_sweeps``: thin adapters over
gymnasium_solver.sweeps.

``register(server, store, limits)`` is called by ``mcp_server.server.create_server``. ``start_sweep``
validates the space, creates the study and starts a detached ``gsolve sweep --resume ID`` process,
returning the sweep id at once; ``check_sweep`` starts a detached ``gsolve sweep-check`` the same way;
the others read the sweep record and its Optuna study. None of them
imports torch (trials are separate processes; Optuna is imported when a tool is first called).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.experiments import default_parallel
from gymnasium_solver.jobs.seeds import SeedStatistic
from gymnasium_solver.launcher import StartLimits, check_budget, check_capacity
from gymnasium_solver.locations import LocationPolicy
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import check, launch, report
from gymnasium_solver.sweeps.record import read_record
from gymnasium_solver.sweeps.space import parse_space, to_overrides
from mcp_server.common import READ_ONLY, STARTS_PROCESS, tool

MAX_MCP_TRIALS = 200
MAX_MCP_TIMEOUT = 4 * 3600.0
MAX_MCP_CHECK_SEEDS = 20


def register(server: MCPServer, store: RunStore, limits: StartLimits | None = None,
             locations: LocationPolicy | None = None) -> None:
    """Add start_sweep, get_sweep and list_sweeps to ``server`` over the runs folder of ``store``;
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
    ) -> launch.SweepStart:
        """Tune hyperparameters: start an Optuna sweep (TPE sampling, median pruning on evaluations) in
        the background and return its sweep_id at once. Each trial is a normal run (get_run_info,
        diagnose_run work on it) whose run.json carries sweep_id and trial_number. Use it instead of a
        single start_training change when the diagnosis has no single finding, several keys are
        plausible, or try_fixes found nothing. The space is checked against the config's bounds before
        anything starts. RL results swing with the seed: seeds_per_trial=3 (or more) ranks trials on
        several seeds at that many times the cost. Then poll get_sweep(sweep_id) for progress, the best trial so far, parameter
        importances and the command that reproduces the best."""
        parsed = parse_space(space, "space")
        fixed = dict(overrides or {})
        parallel = default_parallel()
        base = config_mod.resolve_config(config_id, fixed)
        for key in config_mod.LOCATION_KEYS:  # a trial gets the fixed value or one of the space's choices
            choices = parsed.params[key].extremes() if key in parsed.params else []
            for value in [getattr(base, key), *choices]:
                policy.check_uri(None if value is None else str(value), store.runs_dir,
                                 f"sweep trials of {config_id}", key)
        if limits is not None:
            for key, dist in parsed.params.items():  # the largest budget / env count a trial can get
                if key in ("max_env_steps", "n_envs"):
                    for value in dist.extremes():
                        cfg = config_mod.resolve_config(config_id, to_overrides({key: value}, fixed))
                        check_budget(limits, cfg.max_env_steps, cfg.n_envs, f"sweep trials of {config_id}")
            check_budget(limits, base.max_env_steps, base.n_envs, f"sweep trials of {config_id}")
            # Trials are live runs too: run at most as many at once as the cap leaves free.
            parallel = min(check_capacity(store, limits), parallel)
        plan = launch.prepare_sweep(store.runs_dir, config_id, parsed, n_trials=n_trials, parallel=parallel,
                                    objective=objective, fixed_overrides=fixed, timeout_seconds=timeout_seconds,
                                    seeds_per_trial=seeds_per_trial, seed_statistic=seed_statistic)
        return launch.start_detached(plan, store.runs_dir)

    @tool(server, READ_ONLY, store.runs_dir)
    def get_sweep(
        sweep_id: Annotated[str, Field(description="the id start_sweep returned (or a unique prefix), "
                                                   "e.g. 'sweep-20261126-051500-3fa9'")],
    ) -> report.SweepSummary:
        """A sweep's state: sweep.status ('running', 'done', or 'crashed' if its coordinator died: resume
        it from a shell with the command in sweep.message), finished/n_trials, counts by outcome, best
        (the best trial so far: solved or not, env steps and seconds to solve, its params, the `gsolve
        train` command and a preset-variant YAML snippet that reproduce it), importances (which keys
        mattered, PED-ANOVA, sums to 1; None until 2 trials completed) and the latest trials (params,
        outcome, run_id; failed and pruned ones with their diagnosis summary). Objective values: lower
        is better, unsolved trials are ~1e12. Cheap enough to poll every few seconds."""
        return report.summarize(store, sweep_id, diagnose=True)

    @tool(server, STARTS_PROCESS, store.runs_dir)
    def check_sweep(
        sweep_id: Annotated[str, Field(description="the sweep to check (or a unique prefix of its id)")],
        top: Annotated[int, Field(ge=1, le=check.MAX_TOP, description="how many of its best solved trials")] = 3,
        seeds: Annotated[list[int] | None, Field(
            max_length=MAX_MCP_CHECK_SEEDS,
            description="seeds to train each arm on; default: the 5 after the sweep's own (never seen by it)")] = None,
    ) -> check.CheckStart:
        """A sweep ranks its trials on one seed, so its best is partly luck. Re-train the `top` best solved
        trials and the preset (with the sweep's fixed overrides) on held-out seeds, in the background, and
        return at once; get_sweep(sweep_id).check then holds, per arm, seeds solved and median env steps and
        seconds, the best arm and a verdict: the figure to report instead of the sweep's own best."""
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

    @tool(server, READ_ONLY, store.runs_dir)
    def list_sweeps() -> list[report.SweepListItem]:
        """The sweeps of this runs folder, newest first (at most 50): id, ENV:VARIANT, status,
        objective, trials wanted and a one-line message. Use get_sweep(sweep_id) for one sweep's detail."""
        return report.list_sweeps(store.runs_dir)
