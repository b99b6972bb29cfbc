"""`gsolve checkpoints RUN` (a thin adapter over ``run_store.list_checkpoints``), and the checkpoint a
`gsolve eval RUN --checkpoint NAME` names: found, or refused with the ones the run has. Torch-free."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from gymnasium_solver import run_store as rs
from gymnasium_solver.cli.error import CliError
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


def _checkpoints_of(run_dir: Path) -> list[str]:
    """The names of the run's checkpoints that are regular files (never through a link)."""
    from gymnasium_solver.run_store.files import RunFileError, regular_file_size

    try:
        names = sorted(os.listdir(run_dir / rf.CHECKPOINTS_DIR))
    except OSError:
        return []
    have = []
    for name in names:
        if name.endswith(rf.CHECKPOINT_SUFFIX) and not name.startswith("."):
            try:
                if regular_file_size(run_dir, f"{rf.CHECKPOINTS_DIR}/{name}") is not None:
                    have.append(name.removesuffix(rf.CHECKPOINT_SUFFIX))
            except RunFileError:
                continue
    return have


def other_checkpoints(run_dir: Path, name: str) -> str:
    """What to do instead: the run's other checkpoints as `gsolve eval` commands."""
    others = [c for c in _checkpoints_of(run_dir) if c != name]
    if not others:
        return (f"run {run_dir.name} has no other checkpoint to evaluate; list its checkpoints with `gsolve "
                f"checkpoints {run_dir.name}`, or resume or retrain the run to write new ones")
    prefer = rf.LAST_CHECKPOINT if rf.LAST_CHECKPOINT in others else others[-1]
    return (f"try `gsolve eval {run_dir.name} --checkpoint {prefer}` (its checkpoints: {', '.join(others)}; "
            f"details with `gsolve checkpoints {run_dir.name}`)")


def _why_none(run_dir: Path) -> str:
    """Why a run has no checkpoint: imported runs never have one (their weights stay with their framework)."""
    try:
        info = rs.RunStore(run_dir.parent).info(run_dir)
    except rs.RunFileError:
        info = None
    if info is not None and info.read_only:
        return ("it was imported (metrics and config only: its weights stay with the framework that trained it), "
                "so there is no policy to evaluate; train a run of our own (gsolve train ENV:VARIANT) to evaluate")
    return "it has no checkpoints yet (still starting, or it failed early)"


def checkpoint_file(run_dir: Path, name: str) -> Path:
    """The path of checkpoint ``name``, once it is known to be a regular file inside the run folder;
    CliError saying what stands there instead and which checkpoints the run has."""
    from gymnasium_solver.run_store.files import RunFileError, lstat_run_file

    path = run_dir / rf.CHECKPOINTS_DIR / f"{name}{rf.CHECKPOINT_SUFFIX}"
    if not os.path.lexists(path):
        have = _checkpoints_of(run_dir)
        raise CliError(
            f"run {run_dir.name} has no checkpoint {name!r}; "
            + (f"available: {', '.join(have)}" if have else _why_none(run_dir))
        )
    try:
        lstat_run_file(run_dir, f"{rf.CHECKPOINTS_DIR}/{path.name}")
    except RunFileError as exc:
        raise CliError(f"checkpoint {name!r} cannot be evaluated: {exc}; {other_checkpoints(run_dir, name)}") from None
    return path
