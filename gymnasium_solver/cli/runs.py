"""`gsolve runs`, `gsolve show RUN`, `gsolve compare` and `gsolve plot`: thin adapters over run_store
and plotting.

Nothing here imports torch: listing runs must be instant (matplotlib loads only in `plot`).
"""

from __future__ import annotations

import argparse

from gymnasium_solver import run_store as rs
from gymnasium_solver.cli.error import CliError
from gymnasium_solver.config import Algo
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.contract.metric_names import M


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("runs", help="list runs, newest first", description="List runs, newest first, with filters.")
    p.add_argument("--env", dest="env_id", help="only this environment, e.g. CartPole-v1")
    p.add_argument("--algo", choices=[a.value for a in Algo], help="only this algorithm")
    p.add_argument("--status", choices=[s.value for s in rf.RunStatus])
    solved = p.add_mutually_exclusive_group()
    solved.add_argument("--solved", dest="solved", action="store_const", const=True, help="only solved runs")
    solved.add_argument("--unsolved", dest="solved", action="store_const", const=False, help="only unsolved runs")
    p.add_argument("-n", "--limit", type=int, default=20, help=f"runs to show (1..{rs.MAX_LIST_LIMIT}, default 20)")
    p.add_argument("--cursor", help="continue after this run id (printed at the end of a long listing)")
    p.add_argument("--kind", choices=[k.value for k in rs.RunKind], default=rs.RunKind.TRAIN.value,
                   help="train: runs someone started (default; fix and sweep trials hidden, and counted), "
                   "trial: only the trials, all: both")
    _json(p, "runs")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser("show", help="a readable summary of one run", description="Show one run's summary.")
    p.add_argument("run", help="run id, unique prefix, or @last")
    _json(p, "show")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("compare", help="compare runs side by side, seeds of one config grouped; or an env's best",
                       description="Compare any number of runs: results side by side, config differences, who "
                       "solved first; runs of one config over seeds are grouped (mean, spread, solved k/n). "
                       "ENV:VARIANT stands for every run of that config (trials left out). With --env instead: "
                       "an environment's best run, its top 5 runs and its top 5 configs judged over their seeds.")
    p.add_argument("runs", nargs="*", help="run ids, unique prefixes, @last or ENV:VARIANT")
    p.add_argument("--env", dest="env_id", help="instead of runs: rank this environment's runs and configs, e.g. "
                   "CartPole-v1")
    p.add_argument("--algo", choices=[a.value for a in Algo], help="with --env: only this algorithm")
    _json(p, "compare")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("plot", help="plot a metric: per config a mean line and a band over seeds, to a PNG",
                       description="Draw METRIC against env steps for runs (ids, prefixes, @last) or configs "
                       "(ENV:VARIANT: all its runs): one mean line and band per config over its seeds (or one line "
                       "per run), the reward threshold dashed, a title. Writes a PNG; prints what it shows.")
    p.add_argument("runs", nargs="+", metavar="RUN|ENV:VARIANT", help="runs or configs to plot")
    p.add_argument("--metric", "-m", default=M.EVAL_RETURN_MEAN, help=f"metric (default {M.EVAL_RETURN_MEAN})")
    p.add_argument("--group-by", choices=plotting_choices("GROUP_BY"), default="config",
                   help="config: a mean and band over the seeds of each config (default); run: a line per run")
    p.add_argument("--smooth", type=int, default=1, metavar="N", help="moving average over N points (default 1: none)")
    p.add_argument("--band", choices=plotting_choices("BANDS"), default="minmax",
                   help="minmax: spans every seed (default); iqr: 25th-75th percentile")
    p.add_argument("--title", default=None, help="the plot's title (default: metric, environments, counts)")
    p.add_argument("-o", "--output", required=True, help="the PNG to write, e.g. curves.png")
    _json(p, "plot")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.set_defaults(func=cmd_plot)


def plotting_choices(name: str) -> tuple[str, ...]:
    """The plot's choices without importing matplotlib (plotting imports it only to draw)."""
    from gymnasium_solver import plotting

    return tuple(getattr(plotting, name))


def _json(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument("--json", action="store_true", help=f"print the result as JSON (schema: gsolve schema {command})")


def _yaml(value: object) -> str:
    """A config value as `--set` accepts it, e.g. {start: 0.004, end: 0.0}, null, [64, 64]."""
    import yaml

    return str(yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=1000)).strip().removesuffix("\n...").strip()


def _fmt(x: float | str | None, digits: int = 4) -> str:
    """A number in 4 significant digits; a string ('inf' for a threshold that cannot be reached) as is."""
    if x is None:
        return "-"
    return x if isinstance(x, str) else f"{x:.{digits}g}"


def _steps(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1e6:.2f}M" if n >= 1_000_000 else (f"{n / 1e3:.1f}k" if n >= 1000 else str(n))


def format_run_table(runs: list[rs.RunSummary]) -> str:
    """The `gsolve runs` table: one line per run."""
    header = ("RUN", "STATUS", "CONFIG", "STEPS", "BEST EVAL", "SOLVED")
    rows = []
    for r in runs:
        solved = f"yes @ {_steps(r.solved_at_env_steps)}" if r.solved else "no"
        status = r.status + (f" ({r.stop_reason})" if r.stop_reason and r.stop_reason != "solved" else "")
        rows.append((r.run_id, status, r.config_id or "(run.json unreadable: gsolve show)", _steps(r.env_steps),
                     _fmt(r.best_eval_return), solved))
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
                     for line in (header, *rows))


def cmd_runs(args: argparse.Namespace) -> int:
    store = rs.RunStore(args.runs_dir)
    if store.runs_dir.exists() and not store.runs_dir.is_dir():
        raise ValueError(f"--runs-dir {store.runs_dir} is a file, not a folder: pass the folder that holds the runs")
    if args.runs_dir is not None and not store.runs_dir.exists():
        raise ValueError(f"--runs-dir {store.runs_dir} does not exist: pass the folder that holds the runs (without "
                         "--runs-dir, ./runs or $GSOLVE_RUNS_DIR)")
    result = rs.list_runs(store, args.env_id, args.algo, args.status, args.solved, args.limit, args.cursor, args.kind)
    if args.json:
        print(result.model_dump_json(indent=2))
        return 0
    if result.runs:
        print(format_run_table(result.runs))
    if result.note:
        print(result.note if not result.next_cursor else f"more runs: gsolve runs --cursor {result.next_cursor}")
    if result.hidden:
        what = {"train": "trial", "trial": "non-trial"}[args.kind]
        print(f"{result.hidden} {what} run(s) hidden; --kind all")
    return 0


def format_details(d: rs.RunDetails) -> str:
    """The `gsolve show` summary, readable in a terminal."""
    s = d.summary
    lines = [f"run {s.run_id}  {s.config_id or ''}"]
    if s.problem:
        lines.append(f"  problem: {s.problem}")
    status = s.status + (f" ({s.stop_reason})" if s.stop_reason else "")
    lines.append(f"  status      {status}")
    lines.append(f"  progress    {_steps(s.env_steps)} / {_steps(s.max_env_steps)} env steps"
                 + (f" ({s.progress:.0%})" if s.progress is not None else "")
                 + (f", {d.wall_seconds:.0f}s" if d.wall_seconds else ""))
    if d.best_eval:
        lines.append(f"  best eval   {d.best_eval.return_mean:.4g} ± {d.best_eval.return_std:.3g} at "
                     f"{_steps(d.best_eval.env_steps)}")
    if d.final_eval:
        lines.append(f"  final eval  {d.final_eval.return_mean:.4g} at {_steps(d.final_eval.env_steps)}")
    threshold = f" (threshold {_fmt(s.reward_threshold)})" if s.reward_threshold is not None else ""
    solved = (f"yes, at {_steps(s.solved_at_env_steps)} env steps, {s.solved_at_wall_seconds:.1f}s"
              if s.solved and s.solved_at_wall_seconds is not None else ("yes" if s.solved else "no"))
    lines.append(f"  solved      {solved}{threshold}")
    if d.solved_at is not None and d.solved_at.confirm_episodes and d.solved_at.confirm_return_mean is not None:
        lines.append(f"  confirmed   mean {d.solved_at.confirm_return_mean:.4g} over {d.solved_at.confirm_episodes} "
                     f"more episodes (the solving evaluation's {d.solved_at.eval_return_mean:.4g})")
    if d.failure:
        lines.append(f"  failure     {d.failure.get('kind')}: {str(d.failure.get('message'))[:300]}")
    for w in d.warnings:
        at = f" at {_steps(w.env_steps)} env steps" if w.env_steps is not None else ""
        lines.append(f"  warning     {w.kind} ({w.source}){at}: {w.message[:300]}")
    if d.source is not None:
        lines.append(f"  imported    read-only, from {d.source.framework} {d.source.kind} at {d.source.path}")
        lines.extend(f"  unknown     {k}: {v}" for k, v in d.source.unknown.items())
    if d.hyperparameters:
        lines.append("  config      " + ", ".join(f"{k}={_yaml(v)}" for k, v in d.hyperparameters.items()))
    if d.overrides:
        lines.append("  overrides   " + ", ".join(f"{k}={v}" for k, v in d.overrides.items()))
    if d.sweep_id:
        lines.append(f"  sweep       {d.sweep_id}, trial {d.trial_number} (gsolve sweep-status {d.sweep_id})")
    if d.preset:
        diffs = ", ".join(f"{k}={_yaml(v.value)} (preset {_yaml(v.preset)})"
                          for k, v in d.differences_from_preset.items())
        lines.append(f"  preset      {d.preset}" + (f"; differs in {diffs}" if diffs else ""))
    for f in d.files:
        if f.problem or not f.present:
            lines.append(f"  file        {f.name}: {f.problem or 'missing'}")
    lines.append(f"  metrics     {d.metrics_rows if d.metrics_rows is not None else '-'} rows; "
                 f"next: gsolve diagnose {s.run_id}")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    store = rs.RunStore(args.runs_dir)
    details = rs.run_details(store, store.resolve(args.run))
    print(details.model_dump_json(indent=2) if args.json else format_details(details))
    return 0


def format_comparison(c: rs.Comparison) -> str:
    """The `gsolve compare` report: one line per run, then the config keys that differ."""
    lines = []
    for r in c.runs:
        solved = (f"solved at {_steps(r.solved_at_env_steps)} env steps, {r.solved_at_wall_seconds:.1f}s"
                  if r.solved and r.solved_at_wall_seconds is not None else "not solved")
        lines.append(f"{r.run_id}  {r.config_id or '?'}  {r.status}  best eval {_fmt(r.best_eval_return)}  "
                     f"final eval {_fmt(r.final_eval_return)}  {_steps(r.env_steps)} env steps  {solved}")
    if c.config_differences:
        lines.append("config differences:")
        lines.extend(f"  {d.key}: " + "  ".join(f"{rid}={_yaml(v)}" for rid, v in d.values.items())
                     for d in c.config_differences)
    else:
        lines.append("configs are identical")
    if c.first_to_threshold_env_steps:
        lines.append(f"first to the threshold: {c.first_to_threshold_env_steps} (env steps), "
                     f"{c.first_to_threshold_wall_time} (wall time)")
    if c.groups:
        lines.append("over seeds:")
        lines.extend(format_group(g) for g in c.groups)
        lines.extend(vs_preset_lines(c.groups))
    if c.note:
        lines.append(c.note)
    return "\n".join(lines)


def format_group(g: rs.SeedGroup) -> str:
    """One config over its seeds: solved k/n, the best evals' mean and spread, steps to solve."""
    best = ("best eval -" if g.best_eval_mean is None else
            f"best eval mean {_fmt(g.best_eval_mean)} (min {_fmt(g.best_eval_min)}, max {_fmt(g.best_eval_max)})")
    steps = ("" if g.steps_to_solve_median is None else
             f", steps to solve median {_steps(int(g.steps_to_solve_median))} (slowest {_steps(g.steps_to_solve_max)})")
    sp, iqm = g.env_steps, ""
    if sp is not None and sp.iqm is not None and sp.solved and sp.seeds >= 2:
        interval = ("" if sp.ci_low is None or sp.ci_high is None else
                    f" (95% interval {_steps(int(sp.ci_low))}-{_steps(int(sp.ci_high))})")
        iqm = (f", interquartile mean {_steps(int(sp.iqm))}{interval}" if sp.solved == sp.seeds else
               f", over all {sp.seeds} ended with the unsolved at the env steps they trained: median >="
               f"{_steps(int(sp.median or 0))}, interquartile mean >={_steps(int(sp.iqm))}{interval}")
    running = f", {g.running} running" if g.running else ""
    seeds = ",".join("?" if s is None else str(s) for s in g.seeds)
    return f"  {g.label}  solved {g.solved}/{len(g.run_ids)}{running}  {best}{steps}{iqm}  seeds {seeds}"


def vs_preset_lines(groups: list[rs.SeedGroup]) -> list[str]:
    """Each group's check against its preset's shipped seeds, one line each, after the groups' own lines."""
    return [f"  against the preset's seeds, {g.label}: {g.vs_preset}" for g in groups if g.vs_preset]


def format_best(b: rs.BestRun) -> str:
    """`gsolve compare --env`: the best run, the top runs, the top configs over their seeds."""
    if b.best is None:
        return b.note
    lines = [f"{b.env_id}: {b.runs_considered} run(s); runs ranked by {b.criterion}:"]
    for r in b.ranking:
        result = (f"solved at {_steps(r.solved_at_env_steps)} env steps, {r.solved_at_wall_seconds:.1f}s"
                  if r.solved and r.solved_at_wall_seconds is not None else f"best eval {_fmt(r.best_eval_return)}")
        lines.append(f"  {r.run_id}  {r.config_id or '?'}  {result}")
    if b.configs:
        lines.append("configs over their seeds, best first (the share of seeds solved, its 95% lower bound; then "
                     "the median env steps to solve):")
        lines.extend(f"{format_group(g)}  (share solved >= {g.solved_share_low:.2f})" for g in b.configs)
        lines.extend(vs_preset_lines(b.configs))
    if b.note:
        lines.append(b.note)
    return "\n".join(lines)


def cmd_compare(args: argparse.Namespace) -> int:
    store = rs.RunStore(args.runs_dir)
    if bool(args.runs) == bool(args.env_id):
        raise CliError("give runs to compare (ids, prefixes, @last, ENV:VARIANT) or --env ENV to rank an "
                       "environment's runs and configs, not both and not neither")
    if args.algo and not args.env_id:
        raise CliError("--algo filters the runs of --env; with runs named, leave it out")
    from gymnasium_solver.ops.seed_check import (
        with_vs_preset,  # each group of seeds against its preset's seeds
    )

    if args.env_id:
        best = with_vs_preset(store, rs.best_run(store, args.env_id, args.algo))
        print(best.model_dump_json(indent=2) if args.json else format_best(best))
        return 0 if best.best is not None or best.runs_considered else 2
    comparison = with_vs_preset(store, rs.compare_runs(store, list(args.runs), max_runs=None))  # no token budget
    print(comparison.model_dump_json(indent=2) if args.json else format_comparison(comparison))
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gymnasium_solver import plotting

    out = Path(args.output)
    if out.suffix.lower() != ".png":
        raise CliError(f"-o must name a .png file, got {args.output!r}")
    store = rs.RunStore(args.runs_dir)
    png, result = plotting.plot_groups(store, rs.select_runs(store, list(args.runs)), args.metric, args.group_by,
                                       args.smooth, args.band, args.title)
    out.write_bytes(png)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(result.title)
        print("\n".join(g.text for g in result.groups))
        print(f"wrote {out} ({len(png) // 1024} KiB)")
    return 0
