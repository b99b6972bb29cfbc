"""`gsolve import PATH...`: a thin adapter over gymnasium_solver.imports (no torch)."""

from __future__ import annotations

import argparse

from gymnasium_solver.imports import EXPECTED, ImportResult, import_runs


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "import", help="import runs from the RL Zoo, Stable-Baselines3 or CleanRL as read-only runs",
        description=f"Import existing runs as read-only runs of the runs folder, so that runs, show, compare, "
                    f"diagnose and the MCP tools work on them. Each PATH is {EXPECTED}, or a folder holding such "
                    f"folders. Importing the same content again returns the run it already is.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="a run folder, an event folder, or a folder of them")
    p.add_argument("--name", help="label for the runs (config id ENV:NAME); default <framework>-<algo>, e.g. zoo-dqn")
    p.add_argument("--env", dest="env_id",
                   help="the Gymnasium id, when the source does not record it (SB3 event folders), e.g. CartPole-v1")
    p.add_argument("--runs-dir", help="runs folder (default: $GSOLVE_RUNS_DIR or ./runs)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_import)


def render(result: ImportResult) -> str:
    lines = []
    for r in result.runs:
        best = "-" if r.best_eval_return is None else f"{r.best_eval_return:.4g}"
        lines.append(f"{r.run_id}  {r.outcome:<16} {r.config_id:<28} {r.kind:<20} rows {r.rows:<7} best eval {best}"
                     f"{'  solved' if r.solved else ''}")
        lines.append(f"    from {r.source}")
        lines += [f"    unknown {k}: {v}" for k, v in r.unknown.items()]
    lines.append(result.note)
    return "\n".join(lines)


def cmd_import(args: argparse.Namespace) -> int:
    result = import_runs(args.paths, args.runs_dir, args.name, args.env_id)
    print(result.model_dump_json(indent=2) if args.json else render(result))
    return 0
