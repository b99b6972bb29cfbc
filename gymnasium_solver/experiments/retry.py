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


def retry_verdict(comparison: Comparison, parent: str, child: str) -> str | None:
    """One sentence: did the retry (``child``) do better than ``parent``? None if either is missing."""
    after = next((r for r in comparison.runs if r.run_id == child), None)
    before = next((r for r in comparison.runs if r.run_id == parent), None)
    if after is None or before is None:
        return None
    if after.solved and not before.solved:
        return "the change helped: the retry solved and the parent did not"
    if after.solved and before.solved:
        return f"both solved; first to the threshold: {comparison.first_to_threshold_env_steps}"
    if (after.best_eval_return or float("-inf")) > (before.best_eval_return or float("-inf")):
        return "not solved yet, but the best evaluation improved"
    return "the change did not help on this seed; diagnose the retry for the next step"
