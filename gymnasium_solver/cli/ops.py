"""`gsolve serve-metrics`, `gsolve check`, `gsolve promote`, `gsolve models`, `gsolve rollback`: thin
adapters over ``telemetry``, ``regression``, ``promotion`` and ``model_registry`` (docs/ops.md).

torch is imported only by `promote` (its re-evaluation), inside ``promotion.reevaluate``.
"""

from __future__ import annotations

import argparse
import errno
import sys

from gymnasium_solver.cli.env import add_env_module_flags
from gymnasium_solver.cli.error import CliError, ExitCode
from gymnasium_solver.contract import run_folder as rf


def _runs_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs-dir", default=None, help=f"runs folder (default ${rf.RUNS_DIR_ENV} or ./runs)")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from gymnasium_solver.ops import promotion, regression, telemetry
    from gymnasium_solver.ops.registry_records import MAX_EPISODES, MIN_EPISODES

    p = sub.add_parser("serve-metrics", help="serve the live runs' metrics to Prometheus on /metrics",
                       description="A Prometheus exposition endpoint (http://HOST:PORT/metrics) with every running "
                       "run's env steps, fps, latest eval return, losses and status, labelled by run, env and algo. "
                       "Runs that finished stay exported with their final status for --keep-finished seconds.")
    p.add_argument("--port", type=int, default=9464, help="TCP port (default 9464; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; 0.0.0.0 for all)")
    p.add_argument("--keep-finished", type=float, default=telemetry.DEFAULT_KEEP_FINISHED_SECONDS, metavar="SECONDS",
                   help="keep exporting a finished run this long (default 600)")
    _runs_dir(p)
    p.set_defaults(func=cmd_serve_metrics)

    p = sub.add_parser("check", help="is RUN significantly worse than a baseline? (exit 0 no, 3 yes, 2 cannot say)",
                       description="Regression check for CI: against a baseline run, a one-sided Welch t-test on the "
                       "evaluation returns at matched env steps; against `preset`, the run's steps-to-solve ranked "
                       "among the preset's shipped seeds (a conformal p-value; a t prediction test on the preset's "
                       "reference runs where no seed sample ships). Exit code 0 = not worse, 3 = significantly "
                       "worse, 2 = cannot compare (the message says why).")
    p.add_argument("run", metavar="RUN", nargs="+", help="run id, unique id prefix, or @last; several runs (seeds "
                   "of one config) are checked together against `preset` (a Mann-Whitney U test)")
    p.add_argument("--against", required=True, metavar="BASELINE",
                   help="a baseline run (id, prefix, @last) or `preset` (the preset's seeds)")
    p.add_argument("--alpha", type=float, default=regression.DEFAULT_ALPHA, help="significance level (default 0.05)")
    p.add_argument("--json", action="store_true", help="print the full result as JSON")
    _runs_dir(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("promote", help="register RUN's best checkpoint as a model version if the policy passes",
                       description="Applies the promotion policy (solved; no critical or warning diagnosis finding; a "
                       "fresh re-evaluation over --episodes new episodes with mean >= the reward threshold, its 95% "
                       "lower confidence bound stated) and records the decision in the registry "
                       "(runs/.registry/ENV/decisions.jsonl). Exit 0 approved, 3 rejected, 2 bad input.")
    p.add_argument("run", metavar="RUN", help="run id, unique id prefix, or @last")
    p.add_argument("--episodes", type=int, default=promotion.DEFAULT_EPISODES,
                   help=f"re-evaluation episodes, {MIN_EPISODES}-{MAX_EPISODES} (default {promotion.DEFAULT_EPISODES})")
    p.add_argument("--approve-manually", action="store_true",
                   help="register it even if the policy fails (needs --reason; recorded as a manual approval)")
    p.add_argument("--reason", default=None, help="why (required with --approve-manually)")
    p.add_argument("--json", action="store_true", help="print the recorded decision as JSON")
    p.add_argument("--actor", default="cli", choices=["cli", "mcp"], help=argparse.SUPPRESS)
    _runs_dir(p)
    add_env_module_flags(p)
    p.set_defaults(func=cmd_promote)

    p = sub.add_parser("models", help="list registered model versions (current marked with *)")
    p.add_argument("env_id", metavar="ENV", nargs="?", default=None, help="only this environment, e.g. CartPole-v1")
    p.add_argument("--decisions", action="store_true", help="with ENV: also print its recent decisions")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    _runs_dir(p)
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("rollback", help="make ENV's previous approved version current again (recorded)")
    p.add_argument("env_id", metavar="ENV", help="e.g. CartPole-v1")
    p.add_argument("--reason", default=None, help="why (recorded)")
    p.add_argument("--json", action="store_true", help="print the recorded decision as JSON")
    _runs_dir(p)
    p.set_defaults(func=cmd_rollback)


def cmd_serve_metrics(args: argparse.Namespace) -> int:
    try:
        import prometheus_client  # noqa: F401 - only to say what to install
    except ImportError:
        raise CliError("serve-metrics needs prometheus-client: pip install 'gymnasium-solver[telemetry]'") from None
    from gymnasium_solver.ops import telemetry

    try:
        server = telemetry.make_metrics_server(args.host, args.port, args.runs_dir, args.keep_finished)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CliError(f"port {args.port} on {args.host} is already in use; pick another with --port") from None
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(f"serving metrics of the runs in {rf.resolve_runs_dir(args.runs_dir)} on http://{host}:{port}"
          f"{telemetry.METRICS_PATH} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from gymnasium_solver.ops import regression
    from gymnasium_solver.run_store import RunStore

    store = RunStore(args.runs_dir)
    if len(args.run) == 1:
        result = regression.check_run(store, args.run[0], args.against, args.alpha)
    elif args.against.strip().lower() != regression.PRESET_BASELINE:
        raise CliError(f"{len(args.run)} runs against {args.against}: several runs are checked together against "
                       "`preset` only (--against preset); against a baseline run, check one run at a time")
    else:
        from gymnasium_solver.ops.seed_check import check_runs_against_preset

        result = check_runs_against_preset(store, args.run, args.alpha)
    print(result.model_dump_json(indent=2) if args.json else result.summary)
    return result.exit_code


def cmd_promote(args: argparse.Namespace) -> int:
    from gymnasium_solver.ops import model_registry, promotion

    if args.reason is not None and not args.approve_manually:
        raise CliError("--reason goes with --approve-manually (the policy's own decisions need no reason)")
    decision = promotion.promote(args.runs_dir, args.run, args.episodes, args.approve_manually, args.reason, args.actor)
    if args.json:
        print(model_registry.decision_to_json(decision))
    else:
        print(promotion.describe(decision))
        for c in decision.checks:
            print(f"  {'pass' if c.passed else 'FAIL'}  {c.name}: {c.detail}")
    return ExitCode.UNSOLVED if decision.kind == model_registry.DecisionKind.REJECTED else ExitCode.OK


def cmd_models(args: argparse.Namespace) -> int:
    from gymnasium_solver.ops import model_registry

    listing = model_registry.list_models(args.runs_dir, args.env_id)
    if args.json:
        print(listing.model_dump_json(indent=2))
        return 0
    if listing.note and (not listing.models or listing.log_notes):
        print(listing.note)
    for note in listing.log_notes:
        print(f"  note: {note}")
    rows = [("", "MODEL", "RUN", "CONFIG", "DECISION", "EVAL MEAN", "LOWER BOUND", "EPISODES", "TIME")]
    for m in listing.models:
        ev = m.evaluation
        rows.append(("*" if m.current else "", m.model_ref, m.run_id or "-", m.config_id or "-", m.kind.value,
                     f"{ev.return_mean:.4g}" if ev else "-",
                     "-" if ev is None or ev.lower_bound is None else f"{ev.lower_bound:.4g}",
                     str(ev.episodes) if ev else "-", m.time[:19]))
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    if args.decisions and args.env_id:
        print("\ndecisions (oldest first):")
        for d in listing.recent_decisions:
            failed = f" failed: {', '.join(d.failed_checks)}" if d.failed_checks else ""
            why = f" reason: {d.reason}" if d.reason else ""
            version = f" v{d.version}" if d.version is not None else ""
            print(f"  #{d.seq} {d.time[:19]} {d.kind.value}{version} run {d.run_id}{failed}{why}")
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    from gymnasium_solver.ops import model_registry, promotion

    decision = model_registry.rollback(args.runs_dir, args.env_id, (args.reason or "").strip() or None)
    print(model_registry.decision_to_json(decision) if args.json else promotion.describe(decision))
    return 0
