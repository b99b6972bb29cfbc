"""Which checkpoints a run keeps beyond ``best`` and ``last``: the policies of the
``keep_best_checkpoints`` best evaluations (``eval_<env_steps>``) and the ``keep_last_checkpoints``
most recent periodic ones (``step_<env_steps>``). Plain decisions over checkpoint metadata plus
the one function that deletes a pruned checkpoint; torch-free."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from gymnasium_solver.contract import run_folder as rf


class Kept(NamedTuple):
    """A checkpoint the retention policy ranks: its name, env steps and evaluation return."""

    name: str
    env_steps: int
    eval_return_mean: float | None


def top_eval_name(env_steps: int) -> str:
    return f"{rf.TOP_EVAL_CHECKPOINT_PREFIX}{env_steps}"


def periodic_name(env_steps: int) -> str:
    return f"{rf.PERIODIC_CHECKPOINT_PREFIX}{env_steps}"


def best_n(candidates: Iterable[Kept], n: int) -> list[Kept]:
    """The ``n`` candidates with the highest eval return, best first; a tie goes to the earlier one
    (it reached that return first), candidates without a return never rank."""
    ranked = sorted((c for c in candidates if c.eval_return_mean is not None),
                    key=lambda c: (-(c.eval_return_mean or 0.0), c.env_steps, c.name))
    return ranked[:n]


def last_n(candidates: Iterable[Kept], n: int) -> list[Kept]:
    """The ``n`` most recent candidates (by env steps), newest first."""
    return sorted(candidates, key=lambda c: (-c.env_steps, c.name))[:n]


def would_rank(kept: Iterable[Kept], eval_return: float, n: int) -> bool:
    """Whether a new evaluation with ``eval_return`` enters the best ``n`` of ``kept`` (it must be
    strictly better than the worst kept one once there are ``n``)."""
    ranked = best_n(kept, n)
    return n > 0 and (len(ranked) < n or eval_return > (ranked[-1].eval_return_mean or 0.0))


def existing(run_dir: Path, prefix: str) -> list[Kept]:
    """The run's checkpoints whose name starts with ``prefix``, from their metadata files."""
    return [Kept(m.name, m.env_steps, m.eval_return_mean) for m in rf.read_checkpoint_metas(run_dir)
            if m.name.startswith(prefix) and m.name[len(prefix):].isdigit()]


def to_prune(candidates: Iterable[Kept], keep: Iterable[Kept]) -> list[str]:
    names = {k.name for k in keep}
    return sorted(c.name for c in candidates if c.name not in names)


def delete_checkpoint(run_dir: Path, name: str) -> None:
    """Remove checkpoint ``name`` (its metadata first, so a listing never shows a missing file)."""
    folder = run_dir / rf.CHECKPOINTS_DIR
    for suffix in (rf.CHECKPOINT_META_SUFFIX, rf.CHECKPOINT_SUFFIX):
        (folder / f"{name}{suffix}").unlink(missing_ok=True)
