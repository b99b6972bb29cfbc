"""`gsolve diagnose RUN` and `gsolve retry RUN`: thin adapters over gymnasium_solver.diagnostics.

``diagnose`` prints a readable report (``--json`` for machines). ``retry`` starts a new run of the
same ENV:VARIANT with the parent's overrides plus the diagnosis' top suggested changes, records
``parent_run_id`` and ``applied_changes`` in its run.json, and says how to compare the two.
torch is imported only when ``retry`` actually trains.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from gymnasium_solver.cli.env import add_env_module_flags, require_run
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.config import env_modules
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.diagnostics import Diagnosis, SuggestedChange, diagnose_run_dir
from gymnasium_solver.diagnostics.models import Finding, Severity
from gymnasium_solver.diagnostics.suggest import yaml_value
from gymnasium_solver.experiments.commands import command_line
from gymnasium_solver.experiments.parent import ParentConfig, parent_config
from gymnasium_solver.experiments.retry import RetryResult, retry_verdict
from gymnasium_solver.imports.mapping import source_setting
from gymnasium_solver.launcher import override_pairs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "diagnose",
        help="say why a run did not solve, with evidence and config changes that fix it",
        description="Diagnose a run: verdict, gap to the reward threshold, return trends and findings "
        "ranked by how likely they explain the outcome, each with a --set change that applies as printed.",
    )
    p.add_argument("run", help="run id, unique prefix of one, or @last")
    p.add_argument("--json", action="store_true", help="print the Diagnosis as JSON")
    p.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.set_defaults(func=cmd_diagnose)

    r = sub.add_parser(
        "retry",
        help="start a new run with the diagnosis' top suggested changes applied",
        description="Start a new run of the same ENV:VARIANT with the parent's overrides plus the changes "
        "of the top N findings of its diagnosis (and any --set of yours, which win). The new run records "
        "parent_run_id and applied_changes.",
    )
    r.add_argument("run", help="run id, unique prefix of one, or @last")
    r.add_argument("--top", type=int, default=1,
                   help="how many findings' change sets to apply, most likely first (default 1: the top "
                   "finding's changes, together, as `gsolve fix` tries them)")
    r.add_argument("--set", dest="overrides", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                   help="extra config override, applied after the suggested changes (repeatable)")
    r.add_argument("--runs-dir", default=None, help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    r.add_argument("--dry-run", action="store_true", help="print what would be run, do not train")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", action="store_true", help="print the changes, the new run and its comparison with "
                   "the parent as JSON (schema: gsolve schema retry)")
    r.add_argument("--no-fail", action="store_true", help="exit 0 when the new run finished unsolved (default 3, "
                   "as gsolve train); a failed run still exits 1 (docs/cli.md)")
    add_env_module_flags(r)
    r.set_defaults(func=cmd_retry)


# ---------------------------------------------------------------------------------------------
# plain functions (the CLI and tests call these)
# ---------------------------------------------------------------------------------------------
def diagnose_ref(ref: str, runs_dir: str | Path | None = None) -> Diagnosis:
    """Diagnose run ``ref`` (id, prefix or @last) in ``runs_dir`` through the run store."""
    from gymnasium_solver.run_store import RunStore

    store = RunStore(runs_dir)
    return diagnose_run_dir(store, store.resolve(ref))


def top_changes(diagnosis: Diagnosis, n: int) -> list[SuggestedChange]:
    """The changes of the first ``n`` findings that suggest any, in ranking order (warnings first),
    each finding's set whole, one change per config key (the higher-ranked finding's wins).

    A finding's changes are sized to go together (a budget raise with the exploration fraction that
    keeps epsilon's anneal as long; a learning rate with the entropy bonus that stops the collapse),
    and `gsolve fix` measures them together: half a set is a config nobody tested."""
    return one_per_key([f for f in diagnosis.findings if f.suggested_changes][:n])


def one_per_key(findings: list[Finding]) -> list[SuggestedChange]:
    """The findings' suggested changes in order, the first change to each config key only."""
    out: list[SuggestedChange] = []
    seen: set[str] = set()
    for finding in findings:
        for c in finding.suggested_changes:
            if c.key not in seen:
                out.append(c)
                seen.add(c.key)
    return out


def flatten_overrides(overrides: dict[str, Any], prefix: str = "") -> list[str]:
    """{'learning_rate': {'start': 0.1}} -> ['learning_rate.start=0.1'] (the --set form)."""
    out: list[str] = []
    for k, v in overrides.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and k != "env_kwargs":
            out.extend(flatten_overrides(v, key + "."))
        else:
            out.append(f"{key}={yaml_value(v)}")
    return out


def _progress_lines(d: Diagnosis) -> list[str]:
    """How far the run got, and for a solved run of a preset with a seed sample, how fast among its seeds."""
    p = d.progress
    prog = f"Progress: {p.env_steps:,}/{p.max_env_steps:,} env steps ({100 * p.fraction:.0f}%)"
    if p.fps_recent:
        prog += f", {p.fps_recent:,.0f} fps"
    if p.eta_seconds is not None:
        prog += f", ETA {p.eta_seconds:.0f}s"
    return [prog, f"Among the preset's seeds: {d.speed}"] if d.speed else [prog]


def render_report(d: Diagnosis, parent: ParentConfig | None = None, flags: list[str] | None = None) -> str:
    """The diagnosis as text for a person at a terminal; the `try` commands start from ``parent``
    (the run's config as overrides, experiments/parent.py) and carry ``flags`` (the run's recorded
    --env-package/--env-class, as text)."""
    lines = [
        f"Run {d.run_id}  {d.config_id} ({d.algo})  status: {d.status}"
        + (f" ({d.stop_reason})" if d.stop_reason else "")
        + ("  [live: data is partial]" if d.partial else ""),
        f"Verdict: {d.verdict.upper()}",
        d.summary,
    ]
    lines += _progress_lines(d)
    for t in (d.eval_trend, d.train_trend):
        if t.direction == "unknown":
            lines.append(f"Trend {t.metric}: unknown ({t.note})")
        else:
            lines.append(
                f"Trend {t.metric}: {t.direction} (slope {t.slope_per_100k_steps:.3g}/100k steps, "
                f"95% CI {t.slope_low:.3g}..{t.slope_high:.3g}, steps {t.env_steps_from:,}-{t.env_steps_to:,})"
                + (f", because {t.why_flat}" if t.why_flat else "")
                # "flat" beside a large slope reads as a contradiction: say the interval could not tell it from 0 (once: the
                # line already says "flat")
                + (", because the interval spans 0 (too few or too noisy points to tell a slope)"
                   if t.direction == "flat" and not t.why_flat and t.slope_low is not None and t.slope_high is not None
                   and t.slope_low <= 0 <= t.slope_high else "")
            )
    if not d.findings:
        lines.append("\nNo findings.")
    else:
        lines.append("\nFindings, most likely explanation first:")
    parent = parent or ParentConfig({}, [])
    for i, f in enumerate(d.findings, 1):
        lines.append(f"{i}. [{f.severity}] {f.title}  ({f.id}, score {f.score:.2f})")
        for e in f.evidence:
            rng = f" steps {e.env_steps_from:,}-{e.env_steps_to:,}" if e.env_steps_from is not None else ""
            lines.append(f"   evidence: {e.metric}{rng}: {e.observed}; healthy: {e.healthy}")
        lines.append(f"   cause: {f.cause}")
        for c in f.suggested_changes:
            lines.append(f"   change: {c.key} {yaml_value(c.current)} -> {yaml_value(c.suggested)} ({c.why})")
            if d.imported_from:  # no preset to train: the change belongs in the source's config
                theirs = source_setting(d.imported_from.split()[0], c.set_arg)
                lines.append(f"     in the {d.imported_from} config: {theirs}")
        if f.suggested_changes and not d.imported_from:
            # One command per finding: its changes are sized to go together (top_changes).
            ours = one_per_key([f])
            keys = {c.key for c in ours}
            start = parent.base_for(d.config_id, {c.key: c.suggested for c in ours})
            keep = [a for a in flatten_overrides(start) if a.split("=", 1)[0].split(".")[0] not in keys]
            together = " (all together)" if len(ours) > 1 else ""
            command = command_line(d.config_id, [*keep, *(c.set_arg for c in ours)], flags, parent.use_zoo)
            lines.append(f"   try{together}: {command}")
    lines.extend(_references_lines(d))
    if d.notes:
        lines.append("\nNotes:")
        lines.extend(f"- {n}" for n in d.notes)
    if parent.drifted and not d.imported_from and any(f.suggested_changes for f in d.findings):
        lines.append(f"\nIts preset has changed {', '.join(parent.drifted)} since this run trained: a try command "
                     "keeps the run's own values of them (the run as it was, plus the change), except one that "
                     "only returns to the preset, which trains today's preset.")
    needs = "".join(f" {shlex.quote(f)}" for f in flags or [])  # what retry, fix and eval of this run refuse without
    if not d.imported_from and any(f.suggested_changes and f.severity != Severity.INFO for f in d.findings):
        lines.append(f"\nApply the top finding's changes in a new run: gsolve retry {d.run_id}{needs}")
    if d.next_step:
        lines.append(f"Next: {_NEEDS_FLAGS.sub(lambda m: f'`{m.group(1)}{needs}`', d.next_step)}")
    return "\n".join(lines)


_NEEDS_FLAGS = re.compile(r"`(gsolve (?:fix|eval|retry) [^`]*)`")  # the next step's commands that make the env


def _references_lines(d: Diagnosis) -> list[str]:
    """What the run was held against: its preset's differing keys and the solved runs' bands."""
    r = d.references
    lines = [f"\nCompared with the preset {r.preset}:" if r.preset else
             "\nNo preset on this machine to compare with (the absolute thresholds apply)."]
    if r.preset and not r.deviations:
        lines.append("   no key differs (the seed aside)")
    for dev in r.deviations:
        why = f"  (explains {', '.join(dev.explains)})" if dev.explains else ""
        lines.append(f"   {dev.key}: {yaml_value(dev.value)} vs {yaml_value(dev.preset)}: {dev.size}{why}")
    if r.unranked:
        lines.append(f"   also differs from {r.unranked[0].reference}'s entry (not weighed by the findings; "
                     f"`gsolve fix` tries reverting them): "
                     + "; ".join(f"{dev.key}: {dev.size}" for dev in r.unranked))
    lines.append(f"Compared with solved runs: {r.solved_source}")
    for b in r.bands:
        lines.append(f"   {b.metric}: median {b.observed:.4g} over steps {b.env_steps_from:,}-{b.env_steps_to:,} is "
                     f"{b.position} the solved band {b.band_low:.4g}..{b.band_high:.4g}")
    if r.bands_inside:
        lines.append(f"   inside the band: {', '.join(r.bands_inside)}")
    return lines


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------
def cmd_diagnose(args: argparse.Namespace) -> int:
    from gymnasium_solver.run_store import RunStore

    store = RunStore(args.runs_dir)
    run_dir = store.resolve(args.run)
    d = diagnose_run_dir(store, run_dir)
    if args.json:
        print(d.model_dump_json(indent=2))
    else:
        try:
            flags = env_modules.recorded_flags(store.config(run_dir))
        except ValueError:  # no readable config.yaml (an imported run): nothing recorded
            flags = []
        print(render_report(d, parent_config(run_dir, store.info(run_dir)), flags))
    return 0


def cmd_retry(args: argparse.Namespace) -> int:
    from gymnasium_solver.config import in_our_names, parse_overrides, resolve_with_origin
    from gymnasium_solver.run_store import RunStore

    if args.top < 1:
        raise CliError(f"--top must be at least 1, got {args.top}")
    store = RunStore(args.runs_dir)
    run_dir = store.resolve(args.run)
    info = store.info(run_dir)
    rf.refuse_read_only(info, "retry (a retry trains its preset, which an imported run does not have)")
    require_run(run_dir)  # its --env-package/--env-class, before a new run of it is resolved
    d = diagnose_run_dir(store, run_dir)
    changes = top_changes(d, args.top)
    read = in_our_names(parse_overrides(args.overrides), "--set")  # the RL Zoo's / SB3's names, read into ours
    extra = read.values
    for note in read.notes:
        print(f"gsolve retry: note: {note}", file=sys.stderr)
    if not changes and not extra:
        raise CliError(
            f"the diagnosis of {info.run_id} suggests no config change (verdict {d.verdict}: {d.summary}); "
            f"run `gsolve diagnose {info.run_id}` to see why, or retry with your own change: "
            f"gsolve retry {info.run_id} --set key=value"
        )
    applied: dict[str, Any] = {c.key: c.suggested for c in changes}
    applied.update(extra)
    # The run's recorded config (today's preset for a pure revert), then the changes.
    parent = parent_config(run_dir, info)
    overrides = {**parent.base_for(info.config_id, applied), **applied}
    # ConfigError (a ValueError) names a bad key; a --no-zoo run's retry takes the defaults it took
    resolved = resolve_with_origin(info.config_id, overrides, use_zoo=parent.use_zoo)
    cfg = resolved.config
    if d.partial:
        print(f"note: {info.run_id} is still running; its diagnosis is based on partial data", file=sys.stderr)
    result = RetryResult(parent_run_id=info.run_id, config_id=info.config_id, changes=changes, your_overrides=extra,
                         overrides=overrides, command=command_line(info.config_id, flatten_overrides(overrides),
                                                                         use_zoo=parent.use_zoo),
                         partial=d.partial, dry_run=args.dry_run)
    if not args.json:
        print(f"Retrying {info.run_id} ({info.config_id}) with:")
        for c in changes:
            print(f"  {c.key}: {yaml_value(c.current)} -> {yaml_value(c.suggested)}  ({c.why})")
        for k, v in extra.items():
            print(f"  {k}: {yaml_value(v)}  (your --set)")
        print(f"  equivalent: {result.command}")
    code = ExitCode.OK  # a dry run; a retry that trains exits as `gsolve train` would (EXIT_MEANINGS)
    if not args.dry_run:
        from gymnasium_solver.cli.train import train_exit_code
        from gymnasium_solver.run_store import compare_runs, run_details
        from gymnasium_solver.train.training import train

        trained = train(cfg, store.runs_dir, show_progress=not args.quiet, parent_run_id=info.run_id,
                        applied_changes=applied, overrides=overrides, config_origin=resolved.origin)
        result.run = run_details(store, trained.run_dir)
        result.comparison = compare_runs(store, [info.run_id, trained.run_id])
        judge = "".join(f" {shlex.quote(a)}" for a in [*(x for pair in override_pairs(applied) for x in ("--set", pair)),
                                                      *env_modules.recorded_flags(store.config(run_dir))])
        result.verdict = retry_verdict(result.comparison, info.run_id, trained.run_id, cfg.seed, judge)
        code = train_exit_code(trained.status, trained.solved_at is not None, cfg.reward_threshold, args.no_fail)
        if not args.json:
            solved = "solved" if trained.solved else "not solved"
            best = f", best eval {trained.best_eval.return_mean:.4g}" if trained.best_eval else ""
            print(f"New run {trained.run_id}: {trained.status} ({trained.stop_reason}), {solved}{best}, "
                  f"{trained.env_steps:,} env steps in {trained.wall_seconds:.1f}s")
            print(render_comparison(result))
            print(f"Diagnose the new run: gsolve diagnose {trained.run_id}   "
                  f"(assistants: compare_runs / diagnose_run MCP tools)")
    if args.json:
        print(result.model_dump_json(indent=2))
    return code


def render_comparison(result: RetryResult) -> str:
    """Parent vs retry side by side: did the change help?"""
    c = result.comparison
    assert c is not None and result.run is not None
    parent = result.parent_run_id
    lines = ["Parent vs retry:"]
    for r in c.runs:
        role = "parent" if r.run_id == parent else "retry "
        at = f" at {r.solved_at_env_steps:,} env steps" if r.solved and r.solved_at_env_steps is not None else ""
        best = "n/a" if r.best_eval_return is None else f"{r.best_eval_return:.4g}"
        lines.append(f"  {role} {r.run_id}: {'solved' + at if r.solved else 'not solved'}, best eval {best}, "
                     f"{r.env_steps:,} env steps")
    lines.extend(f"  config {d.key}: " + ", ".join(f"{yaml_value(v)}" for v in d.values.values())
                 for d in c.config_differences if d.key != "seed")
    if result.verdict:
        lines.append(f"  -> {result.verdict}")
    return "\n".join(lines)
