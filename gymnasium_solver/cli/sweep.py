"""`gsolve sweep`, `gsolve sweep-status` and `gsolve sweep-check`: thin adapters over gymnasium_solver.sweeps.

``sweep`` validates the space, creates (or, with --resume, reopens) the Optuna study and runs the
trials on the local or the Ray backend, printing one line per finished trial and, at the end, the
best trial, the parameter importances and the command / preset variant that reproduces it.
Exit code 0 when a trial solved, 3 when none did, 2 on bad input (cli_error.ExitCode). ``sweep-check`` re-trains the best
trials and the preset on held-out seeds (sweeps/check.py).
"""

from __future__ import annotations

import argparse
import os
import sys

from gymnasium_solver import config as config_mod
from gymnasium_solver.cli.env import add_env_module_flags, bind_env_class
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.jobs.backend import BACKENDS, make_backend
from gymnasium_solver.jobs.seeds import SEED_STATISTICS, parse_seeds
from gymnasium_solver.run_store import RunStore
from gymnasium_solver.sweeps import check, launch, report
from gymnasium_solver.sweeps.record import SweepRecord, read_record, write_record
from gymnasium_solver.sweeps.runner import run_sweep
from gymnasium_solver.sweeps.space import SearchSpace, load_space


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sweep",
        help="tune hyperparameters: an Optuna sweep whose trials are normal runs",
        description="Search the space in SPACE.yaml for the configuration of ENV:VARIANT that solves in the fewest "
        "env steps (or seconds): TPE sampling, trials pruned on their evaluations by a median pruner, each trial a "
        "normal run folder carrying the sweep id and trial number. The study lives in Optuna's RDB storage "
        "(SQLite in RUNS/.sweeps/ by default), so a crashed sweep continues with --resume. Space file format: "
        "docs/sweeps.md. Exit code 0 when a trial solved, 3 when none did.",
    )
    p.add_argument("config_id", metavar="ENV:VARIANT", help="the preset to tune, e.g. CartPole-v1:ppo")
    p.add_argument("--space", default=None, help="search space YAML (required unless --resume)")
    p.add_argument("--trials", type=int, default=None, help="trials to finish (default 20; with --resume: keep)")
    p.add_argument("--parallel", type=int, default=None, help="trials at once (default: the machine's cores)")
    p.add_argument("--objective", choices=("steps", "wall"), default="steps",
                   help="minimise env steps to solve (default) or trainer seconds to solve")
    p.add_argument("--storage", default=None, help="SQLAlchemy URL of the study's database "
                   "(default sqlite:///RUNS/.sweeps/SWEEP_ID.db)")
    p.add_argument("--resume", metavar="SWEEP_ID", default=None, help="continue this sweep (after a crash or a stop)")
    p.add_argument("--backend", choices=BACKENDS, default="local", help="where trials run (default local)")
    p.add_argument("--address", default=None, help="with --backend ray: the cluster to join (e.g. ray://head:10001 "
                   "or auto); default: start a local Ray instance")
    p.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="fixed overrides every trial gets, e.g. --set max_env_steps=50000 normalize_observations=true "
                   "(repeatable, as gsolve train's; put ENV:VARIANT before --set)")
    p.add_argument("--timeout", type=float, default=launch.DEFAULT_TIMEOUT_SECONDS,
                   help=f"stop the sweep after this many seconds (default {launch.DEFAULT_TIMEOUT_SECONDS:g})")
    p.add_argument("--seed", type=int, default=None, help="the sampler's seed (reproducible suggestions)")
    p.add_argument("--seeds-per-trial", type=int, default=1,
                   help="train every trial on this many seeds (the config's seed and the next ones) and rank it "
                   "by --seed-statistic over them, an unsolved seed counting with its whole budget (default 1)")
    p.add_argument("--seed-statistic", choices=SEED_STATISTICS, default="p90",
                   help="a trial's value over its seeds: p90 (default: the slow seeds count), iqm, median, mean, max")
    p.add_argument("--no-zoo", action="store_true", help="without a preset, every trial takes gsolve's defaults even "
                   "where the RL Zoo has an entry for the environment and algorithm (as gsolve train --no-zoo)")
    p.add_argument("--json", action="store_true", help="print the final summary as JSON")
    p.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    add_env_module_flags(p)
    p.set_defaults(func=cmd_sweep)

    s = sub.add_parser("sweep-status", help="a sweep's progress, best trial and importances (no id: list sweeps)",
                       description="Print a sweep's trials, best trial so far, parameter importances and the "
                       "command that reproduces the best; without SWEEP_ID, list the sweeps of the runs folder.")
    s.add_argument("sweep_id", nargs="?", default=None, help="sweep id or a unique prefix")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    s.set_defaults(func=cmd_sweep_status)

    c = sub.add_parser(
        "sweep-check",
        help="re-train a sweep's best trials and the preset on held-out seeds: the figure that counts",
        description="A sweep ranks trials on its own seeds (one unless --seeds-per-trial), so its best is partly "
        "their luck. Re-train the top --top solved trials and the base config (the preset with the sweep's --set "
        "values) on --seeds the sweep never saw (default: the 5 after its own), alternating the arms seed by "
        "seed, and print per arm the seeds solved and the median env steps and seconds (an unsolved seed counts "
        "with all it spent). Every re-training is a normal run (parent_run_id = the trial's run). Exit code 0 "
        "when an arm solved every seed, 3 otherwise.",
    )
    c.add_argument("sweep_id", help="sweep id or a unique prefix")
    c.add_argument("--top", type=int, default=check.DEFAULT_TOP,
                   help=f"how many of the best solved trials to re-train (default {check.DEFAULT_TOP})")
    c.add_argument("--seeds", nargs="+", default=None, metavar="SEED",
                   help="seeds or ranges, e.g. 1-5 or 10 11 12 (default: the 5 seeds after the sweep's own)")
    c.add_argument("--parallel", type=int, default=None, help="runs at once (default: the machine's cores)")
    c.add_argument("--backend", choices=BACKENDS, default="local", help="where runs train (default local)")
    c.add_argument("--address", default=None, help="with --backend ray: the cluster to join")
    c.add_argument("--json", action="store_true", help="print the check as JSON")
    c.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    add_env_module_flags(c)
    c.set_defaults(func=cmd_sweep_check)


def _plan(store: RunStore, args: argparse.Namespace) -> tuple[SweepRecord, SearchSpace, int]:
    if args.resume:
        record, space, grid = launch.load_for_resume(store.runs_dir, args.resume)
        if config_mod.parse_config_id(args.config_id) != config_mod.parse_config_id(record.config_id):
            raise CliError(f"sweep {record.sweep_id} tunes {record.config_id}, not {args.config_id}")
        if args.space or args.storage or args.overrides or args.no_zoo:
            raise CliError("--resume continues a sweep as it was defined; --space, --storage, --set and --no-zoo cannot "
                           "change it (start a new sweep instead)")
        if args.trials is not None:
            if args.trials < 1:
                raise CliError(f"--trials must be at least 1, got {args.trials}")
            record.n_trials = args.trials
        if args.parallel is not None:
            record.parallel = args.parallel
        # A detached start's first run is not a resume (start_detached recorded its pid: this process's).
        record.resumes += 1 if record.pid not in (None, os.getpid()) else 0
        return record, space, grid
    if not args.space:
        raise CliError("--space SPACE.yaml is required (the search space; see docs/sweeps.md), or --resume SWEEP_ID")
    space = load_space(args.space)
    plan = launch.prepare_sweep(
        store.runs_dir, args.config_id, space, n_trials=args.trials if args.trials is not None else 20,
        parallel=args.parallel or 1, objective=args.objective, storage=args.storage,
        fixed_overrides=config_mod.in_our_names(config_mod.parse_overrides(args.overrides), "--set").values, backend=args.backend, address=args.address,
        timeout_seconds=args.timeout, sampler_seed=args.seed, seeds_per_trial=args.seeds_per_trial,
        seed_statistic=args.seed_statistic, use_zoo=not args.no_zoo)
    return plan.record, space, plan.eval_grid


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.parallel is not None and args.parallel < 1:
        raise CliError(f"--parallel must be at least 1, got {args.parallel}")
    store = RunStore(args.runs_dir)
    bind_env_class(args.config_id, args.env_classes)  # as `gsolve train`: the class trains as ENV_ID
    record, space, grid = _plan(store, args)
    backend = make_backend(store.runs_dir, record.parallel, record.backend, record.address)
    write_record(store.runs_dir, record)
    if not args.json:
        print(f"Sweep {record.sweep_id}: {record.config_id}, {record.n_trials} trials, {backend.capacity} at a time "
              f"on {record.backend}, objective {record.objective}, study in {record.storage}")
        sys.stdout.flush()
    run_sweep(store, record, space, backend, eval_grid=grid,
              progress=lambda line: print(line, file=sys.stderr, flush=True))
    summary = report.summarize(store, record.sweep_id)
    print(summary.model_dump_json(indent=2) if args.json else report.render(summary))
    return ExitCode.OK if summary.best is not None and summary.best.solved else ExitCode.UNSOLVED


def cmd_sweep_status(args: argparse.Namespace) -> int:
    store = RunStore(args.runs_dir)
    if args.sweep_id is None:
        items = report.list_sweeps(store.runs_dir)
        if args.json:
            print("[" + ",".join(i.model_dump_json() for i in items) + "]")
        elif not items:
            print(f"No sweeps in {store.runs_dir} yet; start one with gsolve sweep ENV:VARIANT --space SPACE.yaml")
        else:
            for i in items:
                print(f"{i.sweep_id}  {i.config_id:<24} {i.status:<8} {i.n_trials:>4} trials  {i.message}")
        return 0
    summary = report.summarize(store, args.sweep_id, diagnose=True)
    print(summary.model_dump_json(indent=2) if args.json else report.render(summary))
    return 0


def cmd_sweep_check(args: argparse.Namespace) -> int:
    if args.parallel is not None and args.parallel < 1:
        raise CliError(f"--parallel must be at least 1, got {args.parallel}")
    if args.address is not None and args.backend != "ray":
        raise CliError("--address is for --backend ray (the Ray cluster to join)")
    store = RunStore(args.runs_dir)
    record = read_record(store.runs_dir, args.sweep_id)
    bind_env_class(record.config_id, args.env_classes)
    seeds = parse_seeds(args.seeds) if args.seeds else None
    backend = make_backend(store.runs_dir, args.parallel, args.backend, args.address)
    result = check.check_sweep(store, record, backend, top=args.top, seeds=seeds,
                               progress=lambda line: print(line, file=sys.stderr, flush=True))
    check.write_check(store.runs_dir, result)
    print(result.model_dump_json(indent=2) if args.json else check.render(result))
    return ExitCode.OK if any(a.solved == len(result.seeds) for a in result.arms) else ExitCode.UNSOLVED
