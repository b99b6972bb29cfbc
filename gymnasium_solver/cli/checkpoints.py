"""`gsolve checkpoints RUN`: a thin adapter over ``run_store.list_checkpoints`` (torch-free)."""

from __future__ import annotations

import argparse

from gymnasium_solver import run_store as rs
from gymnasium_solver.contract import run_folder as rf


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("checkpoints", help="list a run's checkpoints (best, last, periodic, best-N)",
                       description="List a run's saved checkpoints with env steps, eval return, wall time and "
                       "iteration; each name works with `gsolve eval RUN --checkpoint NAME`.")
    p.add_argument("run", metavar="RUN", help="run id, unique prefix, or @last")
    p.add_argument("--runs-dir", help=f"runs folder (default: ${rf.RUNS_DIR_ENV} or ./runs)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (schema: gsolve schema checkpoints)")
    p.set_defaults(func=cmd_checkpoints)


def format_checkpoints(listing: rs.CheckpointList) -> str:
    """One line per checkpoint, ordered by env steps, then how to evaluate one."""
    head = ("name", "role", "rank", "env_steps", "eval_return", "wall_s", "iteration", "size")
    rows = [head]
    for c in listing.checkpoints:
        size = "missing" if not c.file_present else f"{(c.bytes or 0) / 1024:.0f} KiB"
        rows.append((c.name, c.role.value, "-" if c.rank is None else str(c.rank), str(c.env_steps),
                     "-" if c.eval_return_mean is None else f"{c.eval_return_mean:.4g}", f"{c.wall_seconds:.1f}",
                     str(c.iteration), size))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [f"run {listing.run_id}: {len(listing.checkpoints)} checkpoint(s)"]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    if listing.checkpoints:
        lines.append(f"evaluate one: gsolve eval {listing.run_id} --checkpoint NAME")
    if listing.note:
        lines.append(f"note: {listing.note}")
    return "\n".join(lines)


def cmd_checkpoints(args: argparse.Namespace) -> int:
    store = rs.RunStore(args.runs_dir)
    listing = rs.list_checkpoints(store.resolve(args.run))
    print(listing.model_dump_json(indent=2) if args.json else format_checkpoints(listing))
    return 0
