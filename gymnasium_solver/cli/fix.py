"""`gsolve fix RUN`: a thin adapter over gymnasium_solver.experiments.

Diagnoses the run, trains each candidate change on the run's seed and the ones that solve there on
fresh seeds, beside the run's unchanged config (in parallel, stopping trials that can no longer win),
prints a table of the outcomes, the verdict and the command that reproduces the winner.
Exit code 0 when the verdict is fixed or unlucky_seed, 3 when not_fixed, 2 on bad input (cli_error.ExitCode). Never imports torch itself:
the trials are separate `gsolve train` processes.
"""

from __future__ import annotations

import argparse
import sys

from gymnasium_solver.cli.env import add_env_module_flags, require_run
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.config import in_our_names, parse_overrides
from gymnasium_solver.experiments import make_backend, plan_experiment, read_record, run_experiment
from gymnasium_solver.experiments import verdict as vd
from gymnasium_solver.experiments.record import ExperimentRecord, Trial, list_experiment_ids
from gymnasium_solver.experiments.runner import DEFAULT_HOLDOUT, DEFAULT_SEEDS
from gymnasium_solver.jobs.backend import BACKENDS
from gymnasium_solver.run_store import RunStore


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "fix",
        help="prove a fix by running it: trial runs of the diagnosis' candidate changes",
        description="Diagnose RUN, then train each candidate change (the top finding's changes, each other "
        "finding's, each preset deviation reverted, all reverted, then the RL Zoo entry's settings the "
        "diagnosis does not weigh, reverted) on the run's seed with its overrides; a "
        "candidate that solves there trains on the fresh seeds too, beside the run's unchanged config. "
        "Candidates that fail a seed or cannot be promoted stop early; the winner is then trimmed to the "
        "smallest change set that still solves every seed. The verdict is 'fixed', 'unlucky_seed' (your "
        "config solves every fresh seed, or most and no change beats it) or 'not_fixed'. Exit code 0 for fixed or unlucky_seed, 3 for not_fixed.",
    )
    p.add_argument("run", help="run id, unique prefix of one, or @last")
    p.add_argument("--max-trials", type=int, default=8, help="at most this many candidate change sets (default 8); each trains on up to "
                   "--seeds seeds, beside baseline runs of the unchanged config and, when none qualifies, longer or "
                   "trimmed variants, so a fix trains more runs than this (its progress counts them)")
    p.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="your own change, tried first and judged on the same seeds beside the diagnosis' "
                   "candidates and your unchanged config (the RL Zoo's and SB3's key names are read too)")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"seeds every verdict is taken on: the run's own, then fresh ones (default {DEFAULT_SEEDS}; "
                   f"1 = the run's seed only, no baseline)")
    p.add_argument("--require", type=int, default=None,
                   help="seeds a winner must solve (default: all of --seeds)")
    p.add_argument("--holdout", type=int, default=DEFAULT_HOLDOUT,
                   help=f"fresh seeds the winner trains on once chosen, none of which chose it: what it solves there "
                   f"is reported beside the verdict (default {DEFAULT_HOLDOUT}; 0 = none)")
    p.add_argument("--parallel", type=int, default=None, help="trials at once (default: the machine's cores)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="stop everything after this many seconds (default 600)")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="where trials run: local processes (default) or Ray tasks")
    p.add_argument("--address", default=None, help="with --backend ray: the Ray cluster to join (e.g. "
                   "ray://head:10001 or auto); default: start a local Ray instance")
    p.add_argument("--json", action="store_true", help="print the experiment record as JSON")
    p.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.add_argument("--experiment-id", default=None,
                   help="run the experiment with this id (the MCP fix_run pre-plans one and passes its id)")
    add_env_module_flags(p)
    p.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    store = RunStore(args.runs_dir)
    require_run(store.resolve(args.run))  # its --env-package/--env-class, before any trial is planned
    record = _record(store, args)
    backend = make_backend(store.runs_dir, args.parallel, args.backend, args.address)
    if not args.json:
        print(render_candidates(record, backend.capacity))
        sys.stdout.flush()
    record = run_experiment(store, record, backend, progress=lambda line: print(line, file=sys.stderr, flush=True))
    if args.json:
        print(record.model_dump_json(indent=2))
    else:
        print(render_table(record))
        print(render_winner(record))
    return ExitCode.OK if record.verdict in ("fixed", "unlucky_seed") else ExitCode.UNSOLVED


def _record(store: RunStore, args: argparse.Namespace) -> ExperimentRecord:

    if args.parallel is not None and args.parallel < 1:
        raise CliError(f"--parallel must be at least 1, got {args.parallel}")
    if args.experiment_id and args.experiment_id in list_experiment_ids(store.runs_dir):
        if args.overrides:
            raise CliError(f"--set is for a new experiment; experiment {args.experiment_id} has its candidates "
                           f"already (start a new one: gsolve fix {args.run} --set ...)")
        record = read_record(store.runs_dir, args.experiment_id)
        if store.resolve(args.run).name != record.parent_run_id:
            raise CliError(f"experiment {args.experiment_id} is for run {record.parent_run_id}, not {args.run}")
        if any(t.outcome != "pending" for t in record.trials):
            raise CliError(f"experiment {args.experiment_id} has already run (status {record.status}); "
                           f"start a new one with gsolve fix {record.parent_run_id}")
        return record
    try:
        own = in_our_names(parse_overrides(args.overrides), "--set") if args.overrides else None
        for note in own.notes if own is not None else []:
            print(f"gsolve fix: note: {note}", file=sys.stderr)
        return plan_experiment(store, args.run, args.max_trials, experiment_id=args.experiment_id,
                               timeout_seconds=args.timeout, seeds=args.seeds, required=args.require,
                               holdout=args.holdout,
                               own=own.values if own is not None else None)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def render_candidates(record: ExperimentRecord, parallel: int) -> str:
    seeds = record.seeds or [record.seed]
    lines = [f"Fixing run {record.parent_run_id} ({record.config_id}, seed {record.seed}): "
             f"{len(record.candidates)} candidates, {parallel} trials at a time, "
             f"timeout {record.timeout_seconds:g}s, experiment {record.experiment_id}"]
    if len(seeds) > 1:
        lines.append(f"Verdicts over seeds {', '.join(map(str, seeds))}: a winner must solve {record.required} of "
                     f"{len(seeds)}; your unchanged config also trains on {', '.join(map(str, vd.baseline_seeds_of(record)))}.")
    for i, c in enumerate(record.candidates, 1):
        lines.append(f"  {i}. {c.name}: {' '.join(c.set_args)}  ({c.why})")
    return "\n".join(lines)


_OUTCOME = {"solved": "solved", "not_solved": "not solved", "stopped_early": "stopped early", "failed": "failed",
            "skipped": "skipped", "running": "running", "pending": "pending"}


def _row(t: Trial) -> tuple[str, ...]:
    return (
        t.candidate,
        "-" if t.seed is None else str(t.seed),
        t.role,
        " ".join(f"--set {a}" for a in t.set_args),
        _OUTCOME[t.outcome],
        f"{t.solved_at_env_steps:,}" if t.solved_at_env_steps is not None else "-",
        f"{t.seconds:.1f}" if t.seconds is not None else "-",
        f"{t.best_eval:.4g}" if t.best_eval is not None else "-",
        t.run_id or "-",
    )


def render_table(record: ExperimentRecord) -> str:
    rows: list[tuple[str, ...]] = [("CANDIDATE", "SEED", "RUNG", "CHANGES", "OUTCOME", "STEPS TO SOLVE", "SECONDS", "BEST EVAL",
                                    "TRIAL RUN")]
    rows += [_row(t) for t in record.trials]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines += [f"  {t.candidate} (seed {t.seed}): {t.detail}" for t in record.trials
              if t.outcome in ("stopped_early", "failed", "skipped")]
    return "\n".join(lines)


def render_winner(record: ExperimentRecord) -> str:
    w = record.winner
    head = f"Verdict: {record.verdict}. {record.message}"
    if w is None:
        return head
    return f"{head}\nWinner run on seed {record.seed}: {w.run_id}\nReproduce: {w.command}"
