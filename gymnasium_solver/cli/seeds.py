"""`gsolve train CONFIG --seeds ...`: the config trained once per seed and judged over them (jobs/seed_runs.py);
``train.cmd_train`` hands over here when --seeds is given."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gymnasium_solver.cli.env import bind_env_class
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.cli.resolving import resolve_for_training, say_origin
from gymnasium_solver.config import ConfigError, check_trainable, parse_overrides
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.jobs.backend import default_parallel, make_backend
from gymnasium_solver.jobs.seed_runs import SeedRun, SeedRuns, check_seeds, train_seeds
from gymnasium_solver.jobs.seeds import parse_seeds


def cmd_train_seeds(args: argparse.Namespace) -> int:
    """`gsolve train CONFIG --seeds ...`: one run per seed through the trial pool (forked trainers, --parallel at
    a time), each line as it ends, then the config over the seeds (jobs/seed_runs.py)."""
    for given, flag in ((args.seed, "--seed"), (args.resume, "--resume"), (args.run_id, "--run-id"),
                        (args.experiment_id, "--experiment-id"), (args.parent_run_id, "--parent-run-id")):
        if given is not None:
            raise CliError(f"--seeds trains one new run per seed; give {flag} without --seeds")
    if args.config_id is None:
        raise ConfigError("give ENV_ID or ENV:VARIANT to train over seeds (e.g. gsolve train CartPole-v1:ppo --seeds 0-9)")
    seeds = check_seeds(parse_seeds(args.seeds))
    parallel = default_parallel(args.parallel)
    if "seed" in parse_overrides(args.sets):
        raise ConfigError("--seeds sets each run's seed; give no --set seed=... with it")
    bind_env_class(args.config_id, args.env_classes)
    resolved, overrides = resolve_for_training(args.config_id, args.sets, seeds[0], args.no_zoo)
    overrides.pop("seed", None)
    cfg = resolved.config
    check_trainable(cfg)
    say_origin(resolved)
    runs_dir = rf.resolve_runs_dir(args.runs_dir)
    width = len(str(len(seeds)))

    def ended(run: Any, done: int, total: int) -> None:
        if args.quiet:
            return
        what = run.outcome
        if run.env_steps is not None:
            at = "at" if run.solved else "after"
            what += f" {at} {run.env_steps:,} env steps, {run.wall_seconds:.1f} s"
        print(f"[{done:>{width}}/{total}] seed {run.seed}: {what}" + (f" (run {run.run_id})" if run.run_id else ""),
              file=sys.stderr, flush=True)

    if not args.quiet:
        print(f"gsolve train: {cfg.config_id} on {len(seeds)} seeds, {min(parallel, len(seeds))} at a time",
              file=sys.stderr, flush=True)
    result = train_seeds(make_backend(runs_dir, parallel), runs_dir, args.config_id, overrides, seeds,
                         not args.no_zoo, cfg.reward_threshold, ended)
    result.vs_preset = _vs_preset(runs_dir, result)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(seeds_report(result))
    if result.stopped is not None:
        return ExitCode.INTERRUPTED
    if any(r.outcome.startswith("failed") or r.run_id is None for r in result.runs):
        return ExitCode.INTERNAL_ERROR
    solved_all = all(r.solved for r in result.runs)
    return ExitCode.OK if solved_all or cfg.reward_threshold is None or args.no_fail else ExitCode.UNSOLVED


def seeds_report(result: SeedRuns) -> str:
    """A table of the seeds' runs and one line for the config over them."""
    rows = [("SEED", "RUN", "OUTCOME", "ENV STEPS", "SECONDS", "BEST EVAL")]
    for r in result.runs:
        steps = "-" if r.env_steps is None else (f"{r.env_steps:,}" if r.solved else f">= {r.env_steps:,}")
        rows.append((str(r.seed), r.run_id or "-", r.outcome, steps,
                     "-" if r.wall_seconds is None else f"{r.wall_seconds:.1f}",
                     "-" if r.best_eval is None else f"{r.best_eval:.4g}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    sp, finished = result.env_steps, result.finished()
    if not finished:
        lines.append(f"{result.config_id}: no seed finished, nothing to judge")
        return "\n".join(lines)
    ge = "" if sp.solved == sp.seeds else ">= "  # an unsolved seed counts with the env steps it trained
    fastest = min(finished, key=lambda r: r.env_steps or 0)
    slowest = max(finished, key=lambda r: (r.env_steps or 0, not r.solved))
    interval = "" if sp.ci_low is None else f" (95% interval {sp.ci_low:,.0f}-{sp.ci_high:,.0f})"
    lines.append(f"{result.config_id} over {sp.seeds} seed{'s' if sp.seeds > 1 else ''}: solved {sp.solved}/{sp.seeds}; env steps to solve: median "
                 f"{ge}{sp.median:,.0f}, interquartile mean {ge}{sp.iqm:,.0f}{interval}, fastest {_bound(fastest)}, "
                 f"slowest {_bound(slowest)}")
    if sp.solved < sp.seeds:
        lines.append("an unsolved seed counts with the env steps it trained, so its figures are lower bounds")
    ids = [r.run_id for r in result.runs if r.run_id]
    if result.vs_preset:
        lines.append(f"against the preset's seeds: {result.vs_preset}")
    lines.append(f"compare them: gsolve compare {' '.join(ids)}")
    if result.stopped is not None:
        lines.append(f"{result.stopped}; the seeds not started are listed as such")
    return "\n".join(lines)


def _vs_preset(runs_dir: Path, result: SeedRuns) -> str | None:
    """`gsolve check RUN... --against preset` of the seeds that finished, when the preset ships a seed sample at
    the runs' own solve definition (against another threshold the figures would mean nothing)."""
    from gymnasium_solver.ops.seed_check import vs_preset
    from gymnasium_solver.run_store import RunStore

    return vs_preset(RunStore(runs_dir), [r.run_id for r in result.finished() if r.run_id])


def _bound(run: SeedRun) -> str:
    """One seed's env steps to solve: exact when it solved, a lower bound (what it trained) when not."""
    assert run.env_steps is not None
    return (f"{run.env_steps:,} (seed {run.seed})" if run.solved else
            f">= {run.env_steps:,} (seed {run.seed}, not solved)")
