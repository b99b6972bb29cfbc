"""`gsolve retry RUN`'s result as one typed record (what `retry --json` prints), and its verdict: did the
change help, judged on the parent and the child side by side (run_store.compare_runs)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.diagnostics import SuggestedChange
from gymnasium_solver.run_store import Comparison, RunDetails


class RetryResult(BaseModel):
    """A retry: the changes applied to the parent's config and, unless it was a dry run, the new run and
    how it compares with its parent."""

    parent_run_id: str
    config_id: str
    changes: list[SuggestedChange] = Field(description="the diagnosis' suggested changes applied, top finding first")
    your_overrides: dict[str, Any] = Field(description="--set overrides, applied after the suggested changes")
    overrides: dict[str, Any] = Field(description="every override the new run trains with")
    command: str = Field(description="the equivalent `gsolve train` command")
    partial: bool = Field(description="the parent was still running: its diagnosis is based on partial data")
    dry_run: bool
    run: RunDetails | None = Field(default=None, description="the new run as `gsolve show --json` prints it")
    comparison: Comparison | None = Field(default=None, description="parent and new run side by side")
    verdict: str | None = Field(default=None, description="did the change help, in one sentence")


def retry_verdict(comparison: Comparison, parent: str, child: str, seed: int | None = None,
                  judge: str = "") -> str | None:
    """One sentence: did the retry (``child``) do better than ``parent``, on their one seed? None if either is
    missing. A retry trains the parent's seed only, so a sentence that calls the change good says so and names
    the command that judges it over seeds (``judge``: that command's arguments after the run id, the change as
    --set and the run's --env-package/--env-class)."""
    after = next((r for r in comparison.runs if r.run_id == child), None)
    before = next((r for r in comparison.runs if r.run_id == parent), None)
    if after is None or before is None:
        return None
    on = f"on seed {seed}" if seed is not None else "on this seed"
    over_seeds = (f" (one seed, which can be luck: gsolve fix {parent}{judge} judges the change over 3 seeds, "
                  f"beside your unchanged config and the diagnosis' other candidates)")
    if after.solved and not before.solved:
        return f"the change helped {on}: the retry solved and the parent did not{over_seeds}"
    if after.solved and before.solved:
        return f"both solved {on}; first to the threshold: {comparison.first_to_threshold_env_steps}"
    if (after.best_eval_return or float("-inf")) > (before.best_eval_return or float("-inf")):
        return f"not solved yet, but the best evaluation improved {on}{over_seeds}"
    return f"the change did not help {on}; diagnose the retry for the next step"
