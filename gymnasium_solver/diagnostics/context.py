"""What every rule looks at (``Ctx``, computed once by diagnose()) and the window helpers they share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from gymnasium_solver.config.model import ConfigBase
from gymnasium_solver.contract.run_folder import M, RunInfo, RunStatus
from gymnasium_solver.diagnostics import thresholds as T
from gymnasium_solver.diagnostics.models import Deviation, Evidence, ReferenceBand, Trend, lowers
from gymnasium_solver.diagnostics.series import RunData, median, split
from gymnasium_solver.maths.stats import sample_sd, welch_less

LOSS_COLUMNS = (M.POLICY_LOSS, M.VALUE_LOSS, M.ENTROPY, M.GRAD_NORM, M.APPROX_KL)


@dataclass
class Ctx:
    """Everything a rule may look at, computed once by diagnose()."""

    info: RunInfo
    config: dict[str, Any]
    data: RunData
    status: RunStatus
    finished: bool
    threshold: float | None
    solved: bool
    eval_x: np.ndarray
    eval_y: np.ndarray
    train_x: np.ndarray
    train_y: np.ndarray
    eval_trend: Trend
    train_trend: Trend
    notes: list[str] = field(default_factory=list)
    # References (references.py): keys that differ from the preset, solved runs' bands per metric.
    deviations: dict[str, Deviation] = field(default_factory=dict)
    # Keys that differ from today's preset only because the preset changed since the run (not its doing).
    preset_drift: list[str] = field(default_factory=list)
    bands: dict[str, ReferenceBand] = field(default_factory=dict)
    steps_to_solve: list[int] | None = None

    def deviation(self, key: str, sign: int = 0) -> Deviation | None:
        """The deviation of ``key`` from the preset, if any; ``sign`` +1 / -1 keeps only a run value
        above / below the preset's (the direction consistent with a mechanism)."""
        d = self.deviations.get(key)
        if d is None or sign == 0:
            return d
        up = lowers(d.key, d.revert.direction)  # reverting lowers it: the run's value is higher
        return d if (sign > 0) == up else None

    @property
    def too_early(self) -> bool:
        """A live run too early in its budget to be judged on 'has not learned yet' rules."""
        if self.status != RunStatus.RUNNING or not self.info.max_env_steps:
            return False
        steps = int(self.data.steps[-1]) if len(self.data) else self.info.progress.env_steps
        return steps / self.info.max_env_steps < T.LIVE_MIN_PROGRESS.value

    @property
    def settings_unknown(self) -> bool:
        """An imported run whose source records no config: a missing setting is unknown."""
        from gymnasium_solver.imports.mapping import KINDS_WITHOUT_CONFIG

        return self.info.source is not None and self.info.source.kind in KINDS_WITHOUT_CONFIG

    def setting(self, key: str, default: Any = None) -> Any:
        """A config value; when the config does not have it, ``default`` (the library's default, what
        our runs and the RL Zoo's use), or None for an imported run whose source records no config:
        an unknown setting is never evidence."""
        if key in self.config:
            return self.config[key]
        return None if self.settings_unknown else default

    def warning(self, kind: str) -> Any:
        """The run's first warning of ``kind`` (run.json's warnings, written by the trainer), or None."""
        return next((w for w in self.info.warnings if w.kind == kind), None)

    @property
    def eval_episodes(self) -> Any:
        """Episodes per evaluation: the run's setting, else our config's default (None when unknown)."""
        return self.setting("eval_episodes", ConfigBase.model_fields["eval_episodes"].default)

    @property
    def algo(self) -> str:
        return str(self.config.get("algo") or self.info.algo)

    @property
    def best_eval(self) -> float | None:
        return float(np.max(self.eval_y)) if len(self.eval_y) else None


# Why a budget that solved runs did not need is a symptom: shared by the on- and off-policy budget rules.
SLOWER_THAN_SOLVED = ("This run learns more slowly than runs that solve within this budget; more steps may get "
                      "there, but the reason it is slow is in the other findings or in what differs from the preset.")


def budget_covers_solved(ctx: Ctx, budget: float) -> Evidence | None:
    """Evidence that solved reference runs needed less than ``budget`` (so running out of it is a
    symptom of learning too slowly, not the cause), or None when nothing says so."""
    solved = ctx.steps_to_solve
    if solved is None or budget < solved[1]:
        return None
    return Evidence(metric="run.json:max_env_steps", observed=f"budget {int(budget):,} env steps",
                    healthy=f"solved reference runs needed {solved[0]:,}-{solved[1]:,}")


def fraction_of(threshold: float, fraction: float) -> float:
    """The return that is ``fraction`` of the way to ``threshold``, for positive and negative
    thresholds alike: 0.9 of 475 is 427.5, 0.9 of -100 is -110 (returns below it are worse)."""
    return threshold - (1.0 - fraction) * abs(threshold)


class Divergence(NamedTuple):
    bar: float  # the threshold it reached (the registered one when the run's is +inf)
    first: int  # index of the first evaluation at or above it
    best: int  # index of the best evaluation
    last: float  # median of the last 3 evaluations
    lost: float  # fraction of the gain over the first evaluation that was lost


def solving_bar(ctx: Ctx) -> float | None:
    """The return that counts as solved: the run's threshold, or Gymnasium's registered one for a run
    told never to stop (reward_threshold .inf)."""
    if ctx.threshold is not None and math.isfinite(ctx.threshold):
        return ctx.threshold
    from gymnasium_solver.config.presets import spec_reward_threshold

    return spec_reward_threshold(ctx.info.env_id)


def divergence(ctx: Ctx) -> Divergence | None:
    """Evaluations reached the threshold, and the last ones fell far below the best: more than
    COLLAPSE_PEAK_FRACTION of the gain lost, and below the near-solved bar."""
    y = ctx.eval_y
    bar = solving_bar(ctx)
    if bar is None or len(y) < T.TREND_MIN_POINTS.value:
        return None
    reached = np.flatnonzero(y >= bar)
    if not len(reached) or len(y) - int(reached[0]) < 4:  # the solving evaluation and 3 after it
        return None
    best, last, base = int(np.argmax(y)), median(y[-3:]), float(y[0])
    gain = float(y[best]) - base
    lost = (float(y[best]) - last) / gain if gain > 0 else 0.0
    if lost <= T.COLLAPSE_PEAK_FRACTION.value or last >= fraction_of(bar, T.NEAR_SOLVED_FRACTION.value):
        return None
    return Divergence(bar, int(reached[0]), best, last, lost)


def window(x: np.ndarray) -> tuple[int | None, int | None]:
    return (int(x[0]), int(x[-1])) if len(x) else (None, None)


def ev(metric: str, x: np.ndarray, observed: str, healthy: str) -> Evidence:
    lo, hi = window(x)
    return Evidence(metric=metric, env_steps_from=lo, env_steps_to=hi, observed=observed, healthy=healthy)


def strength(ratio: float, decades: float = 1.0) -> float:
    """0..1: how far past its threshold a value is, in decades (log10 of the ratio)."""
    if not math.isfinite(ratio) or ratio <= 1:
        return 0.0
    return min(1.0, math.log10(ratio) / decades)


def late_window(ctx: Ctx, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(all steps, all values, late values) of a metric with enough updates, else None."""
    x, y = ctx.data.finite(name)
    if len(y) < T.MIN_UPDATES.value:
        return None
    _, late = split(y, T.LATE_FRACTION.value)
    return x, y, late


def early_late(w: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[float, float]:
    """A late_window's medians: of the first half of its values and of its late values (how far a metric grew)."""
    return median(split(w[1])[0]), median(w[2])


def late_x(x: np.ndarray) -> np.ndarray:
    return split(x, T.LATE_FRACTION.value)[1]


def epochs_cut(ctx: Ctx) -> float | None:
    """Median fraction of n_epochs completed, or None when it cannot be measured."""
    n_epochs = ctx.config.get("n_epochs")
    _, y = ctx.data.finite(M.EPOCHS_COMPLETED)
    if not n_epochs or len(y) < T.MIN_UPDATES.value:
        return None
    return median(y) / float(n_epochs)


def entropy_reference(ctx: Ctx) -> tuple[float, str] | None:
    """The entropy a uniform policy would have: log(n) for Discrete, else the initial entropy."""
    space = ctx.info.action_space
    if space is not None and space.max_entropy:
        return float(space.max_entropy), "the action space's maximum log(n)"
    _, y = ctx.data.finite(M.ENTROPY)
    if len(y) >= 3:
        ref = median(y[:3])
        if ref > 0:
            return ref, "the initial entropy"
    return None


def late_entropy_fraction(ctx: Ctx) -> float | None:
    ref = entropy_reference(ctx)
    w = late_window(ctx, M.ENTROPY)
    if ref is None or w is None:
        return None
    return median(w[2]) / ref[0]


def policy_unmoved(ctx: Ctx) -> bool:
    """Entropy never decreased: the late entropy is still above ENTROPY_NO_DECREASE of a uniform policy's, over at
    least ENTROPY_MIN_UPDATES updates (entropy_no_decrease's test; budget_exhausted_improving's "not learning")."""
    frac = late_entropy_fraction(ctx)
    _, y = ctx.data.finite(M.ENTROPY)
    return frac is not None and frac > T.ENTROPY_NO_DECREASE.value and len(y) >= T.ENTROPY_MIN_UPDATES.value


def material(ctx: Ctx, y: np.ndarray) -> float:
    if ctx.threshold is not None and ctx.threshold != 0:
        return T.TREND_MATERIAL_FRACTION.value * abs(ctx.threshold)
    span = float(np.max(y) - np.min(y)) if len(y) else 0.0
    return T.TREND_MATERIAL_FRACTION.value * span


def rolling_median3(y: np.ndarray) -> np.ndarray:
    """Median of each point and its neighbours (vectorised: evals can number in the thousands)."""
    if len(y) < 3:
        return y.copy()
    a, b, c = y[:-2], y[1:-1], y[2:]
    mid = np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))
    return np.concatenate([[(y[0] + y[1]) / 2], mid, [(y[-2] + y[-1]) / 2]])


def eval_drop_p(ctx: Ctx, high: slice, low: slice) -> float | None:
    """One-sided p-value that the evaluations in ``low`` returned less than those in ``high``, over their episodes
    (Welch's t-test on the pooled episodes of each group, from each evaluation's mean and standard deviation), or
    None when the run records no evaluation spread (an import without eval/return_std): then nothing says how
    noisy one evaluation is."""
    sx, sd = ctx.data.finite(M.EVAL_RETURN_STD)
    if len(sx) == 0:
        return None
    std = dict(zip(sx.tolist(), sd.tolist(), strict=True))
    episodes = ctx.eval_episodes
    if not isinstance(episodes, int) or episodes < 2:
        return None
    groups = []
    for part in (high, low):
        xs, ms = ctx.eval_x[part], ctx.eval_y[part]
        if len(xs) == 0 or any(x not in std for x in xs.tolist()):
            return None
        mean = float(np.mean(ms))
        # the pooled episodes' variance: the mean of each evaluation's second moment, less the pooled mean squared
        var = float(np.mean([std[x] ** 2 + m * m for x, m in zip(xs.tolist(), ms.tolist(), strict=True)])) - mean**2
        n = episodes * len(xs)
        groups.append((mean, sample_sd(math.sqrt(max(var, 0.0)), n), n))
    (mh, sh, nh), (ml, sl, nl) = groups
    return welch_less(ml, sl, nl, mh, sh, nh).p_value


def eval_floor(ctx: Ctx) -> float | None:
    """The one value every evaluation returned (at least 2 of them), when it is below the threshold: the greedy policy
    never reached what the reward pays for. None otherwise, or with no threshold."""
    if ctx.threshold is None or len(ctx.eval_y) < 2 or float(np.ptp(ctx.eval_y)) > 0:
        return None
    floor = float(ctx.eval_y[0])
    return floor if floor < ctx.threshold else None


def returns_at_floor(ctx: Ctx) -> bool:
    """Every evaluation returned one value below the threshold (eval_floor) and no training window got a quarter of the
    way from it to the threshold: the reward was never or rarely found, so the returns the critic fits are nearly
    constant and its explained variance (a ratio to their variance) measures nothing."""
    floor = eval_floor(ctx)
    _, ret = ctx.data.finite(M.EP_RETURN_MEAN)
    return floor is not None and ctx.threshold is not None and len(ret) > 0 and \
        float(np.max(ret)) - floor <= T.RARE_REWARD_FRACTION.value * (ctx.threshold - floor)
