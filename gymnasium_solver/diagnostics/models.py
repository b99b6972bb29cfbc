"""Typed results of :func:`gymnasium_solver.diagnostics.diagnose`.

These models are the boundary between the pure diagnostics and its adapters (``gsolve diagnose``,
the MCP tool ``diagnose_run``): everything a reader needs is in them, and
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
    why_flat: str | None = Field(
        default=None, description="when 'flat' although the slope's 95% interval excludes 0: why it is not a trend")


class Evidence(BaseModel):
    """One observation behind a finding: a metric over an env-step range against its healthy range."""

    metric: str = Field(description="a metrics.csv column, 'run.json:<field>' for run state, or "
                        "'config:<key>' for a setting")
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


# Limits whose null is no limit at all (+inf): disabling one loosens it, enabling one tightens it. adaptive_lr_kl is
# target_kl's kin: the KL past which the next update's learning rate is cut; null never cuts it.
UNLIMITED_WHEN_NULL = frozenset({"reward_clip", "max_grad_norm", "clip_range_vf", "target_kl", "adaptive_lr_kl"})


def lowers(key: str, direction: str) -> bool:
    """Does a change of ``key`` in ``direction`` lower its value (a limit's null counting as +inf)?"""
    if key in UNLIMITED_WHEN_NULL:
        return direction in ("decrease", "enable")
    return direction in ("decrease", "disable")


def same_direction(key: str, a: str | None, b: str | None) -> bool:
    """Do two directions of a change of ``key`` move it the same way (how a planted fault's label may name
    them)? A switch turned off is lowered ("disable" is "decrease": shared_network=true -> false); for a
    limit whose null is no limit, "disable" is "increase" and "enable" is "decrease". A label of "change" (a key
    that is not a number, such as activation, whose planted value has one alternative) matches any direction."""
    if a == b or "change" in (a, b):
        return True
    return a is not None and b is not None and lowers(key, a) == lowers(key, b)


# What a deviation is measured against: the preset the run came from (ours, or the user's own from
# $GSOLVE_CONFIG_DIR), our shipped preset for the same env and algorithm, the RL Zoo's entry, or gsolve's
# defaults (a run built on the defaults or the Zoo: the keys its own overrides changed that the Zoo does not set).
DeviationSource = Literal["preset", "user_preset", "shipped_preset", "rl_zoo", "default"]


class Deviation(BaseModel):
    """One config key that differs from a config that works (the run's preset first), sized in the
    terms that matter."""

    key: str
    value: Any = Field(description="the run's value")
    preset: Any = Field(description="the reference's value (see source)")
    source: DeviationSource = Field(
        default="preset", description="what the value is compared with: the run's own preset ('preset', or "
        "'user_preset' from the user's preset folder), our shipped preset ('shipped_preset'), the RL Zoo's "
        "tuned entry ('rl_zoo') for the same environment and algorithm, or gsolve's defaults for the algorithm "
        "and action space ('default': untuned for the environment, compared only for the keys the run's own "
        "overrides changed)")
    reference: str = Field(default="the preset", description="that config, named for a reader")
    size: str = Field(description="the difference in the terms that matter, e.g. '67x the preset's 0.0003' "
                      "or 'horizon 2 steps vs the preset's 50 (episodes last ~500)'")
    ratio: float | None = Field(default=None, description="run / preset for numbers (start values for schedules)")
    explains: list[str] = Field(default_factory=list,
                                description="ids of findings whose mechanism this difference is consistent with")
    revert: SuggestedChange = Field(description="the change back to the preset value")


class ReferenceBand(BaseModel):
    """One metric of this run next to the band of solved runs of the same environment and algorithm."""

    metric: str
    env_steps_from: int
    env_steps_to: int
    observed: float = Field(description="this run's median over the window")
    band_low: float = Field(description="lowest solved run's median over the same window")
    band_high: float = Field(description="highest solved run's median over the same window")
    ratio: float | None = Field(default=None, description="observed / the band's middle (median of the runs' medians)")
    position: Literal["below", "inside", "above"]


class References(BaseModel):
    """What the run was held against: its preset and the solved runs of the same environment."""

    preset: str | None = Field(default=None, description="the preset ENV:VARIANT, when this machine has it")
    compared_with: list[str] = Field(default_factory=list, description="every config the deviations were "
                                     "measured against, in order: the run's preset, then (when that is not ours) "
                                     "our shipped preset and the RL Zoo's entry")
    deviations: list[Deviation] = Field(default_factory=list, description="every key that differs from them "
                                        "(one per key, the first config that names it)")
    unranked: list[Deviation] = Field(default_factory=list, description="keys the RL Zoo's entry sets that the "
                                      "diagnosis does not compare (on/off switches such as normalize, the network, "
                                      "the exploration schedule) and this run has changed: listed, not evidence for "
                                      "any finding; `gsolve fix` tries reverting them after every other candidate")
    solved_runs: list[str] = Field(default_factory=list, description="run ids of the solved references used")
    solved_source: str = Field(default="", description="where the solved references come from")
    steps_to_solve: list[int] | None = Field(
        default=None, description="[min, max] env steps to solve of the solved references")
    bands: list[ReferenceBand] = Field(default_factory=list, description="metrics outside the solved runs' band")
    bands_inside: list[str] = Field(default_factory=list, description="metrics inside the solved runs' band")


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
    speed: str | None = Field(
        default=None, description="where the run's env steps to solve (unsolved: its budget) fall among the "
        "preset's shipped seeds")
    eval_trend: Trend
    train_trend: Trend
    findings: list[Finding]
    references: References = Field(default_factory=References)
    next_step: str | None = Field(
        default=None, description="when no finding explains an unsolved run: the experiment that would")
    notes: list[str] = Field(default_factory=list, description="what could not be checked, and why")
    imported_from: str | None = Field(
        default=None, description="set for a run imported from another framework (gsolve import): it is read-only, "
        "has no preset to revert to, and a suggested change applies in that framework's config, not as --set")
