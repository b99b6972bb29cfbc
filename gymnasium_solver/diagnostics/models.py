"""Typed results of :func:`gymnasium_solver.diagnostics.diagnose`.

These models are the boundary between the pure diagnostics and its adapters (``gsolve diagnose``,
the MCP tools ``diagnose_run`` / ``get_metric_alerts``): everything a reader needs is in them, and
they stay small (a few findings, a few numbers each).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class Verdict(StrEnum):
    HEALTHY = "healthy"
    WARNING = "warning"
    CRITICAL = "critical"


SEVERITY_RANK: dict[Severity, int] = {Severity.INFO: 0, Severity.WARNING: 1, Severity.CRITICAL: 2}


class Trend(BaseModel):
    """Direction of a return curve from a robust (Theil-Sen) slope and its 95% interval."""

    metric: str
    direction: Literal["improving", "flat", "declining", "unknown"]
    slope_per_100k_steps: float | None = Field(
        default=None, description="Theil-Sen slope of the metric per 100,000 env steps"
    )
    slope_low: float | None = Field(default=None, description="lower end of the slope's 95% interval")
    slope_high: float | None = Field(default=None, description="upper end of the slope's 95% interval")
    env_steps_from: int | None = None
    env_steps_to: int | None = None
    n_points: int = 0
    note: str = ""


class Evidence(BaseModel):
    """One observation behind a finding: a metric over an env-step range against its healthy range."""

    metric: str = Field(description="a metrics.csv column, or 'run.json:<field>' for run state")
    env_steps_from: int | None = None
    env_steps_to: int | None = None
    observed: str = Field(description="what was measured, e.g. 'median 0.31 over 24 updates'")
    healthy: str = Field(description="the healthy range it is compared to, with its source")


class SuggestedChange(BaseModel):
    """A config change that applies as printed: ``gsolve train ENV:VARIANT --set <set_arg>``."""

    key: str = Field(description="a top-level config.Config field")
    current: Any = Field(description="the run's value")
    suggested: Any = Field(description="the value to try (a number, null, or {start, end} for a schedule)")
    direction: Literal["increase", "decrease", "enable", "disable"]
    why: str
    set_arg: str = Field(description="the --set argument, e.g. learning_rate=0.0003")


class Finding(BaseModel):
    """One diagnosed problem, ranked by how likely it explains the outcome (``score``)."""

    id: str = Field(description="stable rule id, e.g. 'approx_kl_high'")
    severity: Severity
    score: float = Field(description="0..1: how likely this explains the outcome; findings are sorted by it")
    title: str
    evidence: list[Evidence]
    cause: str
    suggested_changes: list[SuggestedChange] = Field(default_factory=list)


class ReturnSummary(BaseModel):
    """Where the run stands against its reward threshold."""

    reward_threshold: float | None
    solved: bool
    best_eval_return: float | None = None
    best_eval_env_steps: int | None = None
    last_eval_return: float | None = None
    last_train_return: float | None = None
    gap_abs: float | None = Field(default=None, description="threshold - best eval return (<= 0 when solved)")
    gap_pct: float | None = Field(default=None, description="gap_abs as a percentage of |threshold|")


class ProgressSummary(BaseModel):
    env_steps: int
    max_env_steps: int
    fraction: float = Field(description="env_steps / max_env_steps")
    fps_recent: float | None = None
    eta_seconds: float | None = Field(default=None, description="live runs: seconds left at the recent fps")


class Diagnosis(BaseModel):
    """The full diagnosis of one run: verdict, standing, trends and ranked findings."""

    run_id: str
    config_id: str
    algo: str
    status: str = Field(description="effective status: running, completed, failed, stopped or crashed")
    stop_reason: str | None = None
    partial: bool = Field(description="true when the run is still running: the data is incomplete")
    verdict: Verdict
    summary: str = Field(description="one line for a person")
    returns: ReturnSummary
    progress: ProgressSummary
    eval_trend: Trend
    train_trend: Trend
    findings: list[Finding]
    notes: list[str] = Field(default_factory=list, description="what could not be checked, and why")
