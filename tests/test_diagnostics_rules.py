"""Diagnostics on synthetic metrics: each rule fires on its condition and stays quiet on a healthy run.

The curves are hand-built (not random) so every expected number is known; the planted-fault corpus
of real runs (test_diagnostics_corpus.py) checks the same rules on our trainer's output.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

import numpy as np
import pytest

from gymnasium_solver.config import resolve_config
from gymnasium_solver.contract.run_folder import (
    PPO_COLUMNS,
    ActionSpaceInfo,
    EvalRecord,
    M,
    MetricsTable,
    RunInfo,
    RunStatus,
    RunWarning,
    StopReason,
    columns_for,
)
from gymnasium_solver.diagnostics import Severity, Verdict, diagnose, trend
from gymnasium_solver.diagnostics.rules import RULE_IDS
from gymnasium_solver.diagnostics.series import RunData, theil_sen
from gymnasium_solver.diagnostics.suggest import yaml_value

N = 60  # updates
STEP = 512  # env steps per update
THRESHOLD = 475.0
NOW = 2_000_000_000.0

BASE_CONFIG: dict[str, Any] = {
    "env_id": "CartPole-v1", "variant": "ppo", "algo": "ppo", "seed": 0, "max_env_steps": N * STEP,
    "reward_threshold": THRESHOLD, "n_envs": 16, "n_steps": 32, "n_epochs": 10, "batch_size": 256,
    "learning_rate": {"start": 0.001, "end": 0.0}, "clip_range": {"start": 0.2, "end": 0.0},
    "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": None,
}


def healthy_series(n: int = N) -> dict[str, np.ndarray]:
    """A PPO run that learns steadily and solves in the last third."""
    t = np.linspace(0, 1, n)
    ret = 20 + 480 * np.clip(t * 1.4, 0, 1)
    return {
        M.EP_RETURN_MEAN: ret,
        M.EVAL_RETURN_MEAN: np.minimum(ret + 10, 500),
        M.POLICY_LOSS: -0.01 * np.ones(n),
        M.VALUE_LOSS: 10 + 20 * t,
        M.ENTROPY: math.log(2) * (1 - 0.6 * t),
        M.GRAD_NORM: 0.5 + 0.1 * t,
        M.EXPLAINED_VARIANCE: np.clip(0.3 + 1.5 * t, 0, 0.95),
        M.APPROX_KL: 0.008 * np.ones(n),
        M.CLIP_FRACTION: 0.08 * np.ones(n),
        M.CLIP_RANGE: 0.2 * (1 - t),
        M.EPOCHS_COMPLETED: 10 * np.ones(n),
        M.FPS: 5000 * np.ones(n),
        M.LEARNING_RATE: 0.001 * (1 - t),
        M.ENT_COEF: np.zeros(n),
    }


def make_table(series: dict[str, np.ndarray], algo: str = "ppo", eval_every: int = 4) -> MetricsTable:
    cols = list(columns_for(algo))
    cols += [c for c in series if c not in cols]  # optional columns (grad_norm_parts') the series name
    n = len(next(iter(series.values())))
    rows: list[list[float | None]] = []
    for i in range(n):
        row: list[float | None] = []
        for c in cols:
            if c == M.ITERATION:
                row.append(float(i + 1))
            elif c == M.ENV_STEPS:
                row.append(float((i + 1) * STEP))
            elif c in (M.EVAL_RETURN_MEAN, M.EVAL_RETURN_STD, M.EVAL_EP_LEN_MEAN) and (i + 1) % eval_every:
                row.append(None)
            elif c in series:
                row.append(float(series[c][i]))
            elif c == M.EVAL_RETURN_STD:
                row.append(5.0)
            else:
                row.append(1.0)
        rows.append(row)
    return MetricsTable(cols, rows)


def make_info(table: MetricsTable, config: dict[str, Any], **kw: Any) -> RunInfo:
    ev = table.column(M.EVAL_RETURN_MEAN)
    evals = [v for v in ev if v is not None and math.isfinite(v)]
    best = max(evals) if evals else None
    data: dict[str, Any] = dict(
        run_id="20261125-000000-abcd", config_id="CartPole-v1:my_ppo", env_id="CartPole-v1", variant="my_ppo",
        algo=config["algo"], seed=0, status=RunStatus.COMPLETED, stop_reason=StopReason.BUDGET_EXHAUSTED,
        created_at="2026-11-25T00:00:00+00:00", updated_at="2026-11-25T00:10:00+00:00",
        reward_threshold=THRESHOLD, max_env_steps=config["max_env_steps"],
        action_space=ActionSpaceInfo(kind="discrete", n=2, max_entropy=math.log(2)),
        solved=best is not None and best >= THRESHOLD,
        best_eval=None if best is None else EvalRecord(return_mean=best, return_std=1, episodes=10,
                                                       env_steps=1, wall_seconds=1, iteration=1),
    )
    data["progress"] = {"env_steps": len(table) * STEP, "iteration": len(table)}
    if data["solved"]:
        data["stop_reason"] = StopReason.SOLVED
    data.update(kw)
    return RunInfo(**data)


def run(series: dict[str, np.ndarray], config: dict[str, Any] | None = None, **info_kw: Any):  # type: ignore[no-untyped-def]
    cfg = {**BASE_CONFIG, **(config or {})}
    table = make_table(series, cfg["algo"])
    return diagnose(make_info(table, cfg, **info_kw), cfg, table, now=NOW)


def unsolved(series: dict[str, np.ndarray], peak: float = 150.0) -> dict[str, np.ndarray]:
    """Same run, but the return creeps up to ``peak`` and stays flat (does not solve)."""
    n = len(series[M.ENTROPY])
    flat = np.minimum(20 + np.linspace(0, peak * 3, n), peak)
    return {**series, M.EP_RETURN_MEAN: flat, M.EVAL_RETURN_MEAN: flat}


def ids(d) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.id for f in d.findings]


def test_healthy_solved_run_has_no_warnings() -> None:
    d = run(healthy_series())
    assert d.verdict == Verdict.HEALTHY, d.findings
    assert d.returns.solved and d.returns.gap_abs is not None and d.returns.gap_abs <= 0
    assert all(f.severity == Severity.INFO for f in d.findings)


def test_approx_kl_high_suggests_lower_learning_rate() -> None:
    s = unsolved(healthy_series())
    s[M.APPROX_KL] = np.full(N, 0.2)
    s[M.CLIP_FRACTION] = np.full(N, 0.45)
    d = run(s)
    assert ids(d)[:2] == ["approx_kl_high", "clip_fraction_high"]
    top = d.findings[0].suggested_changes[0]
    assert top.key == "learning_rate" and top.direction == "decrease"
    assert top.suggested == {"start": 0.0001, "end": 0.0}
    assert top.set_arg == "learning_rate={start: 0.0001, end: 0.0}"
    lr = resolve_config("CartPole-v1:ppo", [top.set_arg]).learning_rate
    assert lr.start == 0.0001 and lr.end == 0.0  # type: ignore[union-attr]
    assert d.verdict == Verdict.WARNING
    # The headline's `try` pastes into a shell as one argument per --set (a schedule has spaces in it).
    assert d.summary.endswith("; try --set 'learning_rate={start: 0.0001, end: 0.0}'"), d.summary
    assert shlex.split(d.summary.split("; try ")[1]) == ["--set", top.set_arg]


def test_approx_kl_near_zero_suggests_higher_learning_rate() -> None:
    s = unsolved(healthy_series())
    s[M.APPROX_KL] = np.full(N, 2e-6)
    s[M.CLIP_FRACTION] = np.zeros(N)
    d = run(s, {"learning_rate": 1e-5})
    assert ids(d)[0] == "approx_kl_near_zero"
    top = d.findings[0].suggested_changes[0]
    assert (top.key, top.current, top.suggested, top.set_arg) == ("learning_rate", 1e-5, 3e-4, "learning_rate=0.0003")


def test_target_kl_cutting_epochs_suggests_larger_target_kl_not_learning_rate() -> None:
    s = unsolved(healthy_series())
    s[M.EPOCHS_COMPLETED] = np.ones(N)
    s[M.APPROX_KL] = np.full(N, 5e-5)  # small because the updates stop early
    s[M.CLIP_FRACTION] = np.zeros(N)
    d = run(s, {"target_kl": 0.0005})
    assert ids(d)[0] == "target_kl_stops_epochs"
    assert "approx_kl_near_zero" not in ids(d)
    top = d.findings[0].suggested_changes[0]
    assert top.key == "target_kl" and top.suggested > 0.0005


def test_entropy_bonus_that_drowns_the_reward() -> None:
    s = unsolved(healthy_series(), peak=60)
    s[M.ENTROPY] = np.full(N, 0.69)
    d = run(s, {"ent_coef": 0.5})
    assert ids(d)[0] == "entropy_bonus_dominates"
    top = d.findings[0].suggested_changes[0]
    assert top.key == "ent_coef" and top.direction == "decrease" and top.suggested < 0.5


def test_entropy_collapse_before_solving_suggests_entropy_bonus() -> None:
    s = unsolved(healthy_series())
    s[M.ENTROPY] = np.concatenate([np.linspace(0.69, 0.02, N // 3), np.full(N - N // 3, 0.02)])
    d = run(s)
    f = next(f for f in d.findings if f.id == "entropy_collapse")
    assert f.suggested_changes[0].key == "ent_coef" and f.suggested_changes[0].suggested == 0.01
    assert f.severity == Severity.WARNING and "before solving" in f.title
    # With no reward threshold nothing says it was too early: a converged policy is deterministic too (a new user's
    # Blackjack-v1 run, whose best play is a fixed rule, was told it collapsed "before solving", a warning).
    free = run(s, {"reward_threshold": None}, reward_threshold=None)
    g = next(f for f in free.findings if f.id == "entropy_collapse")
    assert g.severity == Severity.INFO and "before solving" not in g.title and g.suggested_changes == f.suggested_changes


def test_starved_value_function_suggests_vf_coef() -> None:
    s = unsolved(healthy_series())
    s[M.EXPLAINED_VARIANCE] = np.full(N, -0.1)
    d = run(s, {"vf_coef": 0.001})
    assert ids(d)[0] == "explained_variance_low"
    assert "negative" in d.findings[0].title
    top = d.findings[0].suggested_changes[0]
    assert (top.key, top.direction, top.suggested) == ("vf_coef", "increase", 0.5)


def test_budget_spent_while_improving_suggests_more_steps() -> None:
    s = healthy_series()
    ramp = 20 + np.linspace(0, 300, N)
    s[M.EP_RETURN_MEAN], s[M.EVAL_RETURN_MEAN] = ramp, ramp
    d = run(s)
    assert d.eval_trend.direction == "improving"
    assert ids(d)[0] == "budget_exhausted_improving"
    top = d.findings[0].suggested_changes[0]
    assert (top.key, top.current, top.suggested) == ("max_env_steps", N * STEP, 3 * N * STEP)


def test_plateau_is_flat_and_ranks_below_mechanisms() -> None:
    d = run(unsolved(healthy_series(), peak=100))
    assert d.eval_trend.direction == "flat"
    assert ids(d) == ["return_plateau"]
    assert d.findings[0].suggested_changes == []


def test_return_collapse_after_peak() -> None:
    s = healthy_series()
    up = np.concatenate([np.linspace(20, 400, N // 2), np.full(N - N // 2, 60.0)])
    s[M.EP_RETURN_MEAN], s[M.EVAL_RETURN_MEAN] = up, up
    d = run(s)
    f = next(f for f in d.findings if f.id == "return_collapse")
    assert f.suggested_changes[0].key == "learning_rate" and f.suggested_changes[0].direction == "decrease"


def test_an_evaluation_swing_within_its_noise_is_not_a_collapse() -> None:
    """A new user's Blackjack-v1 PPO run (no threshold): 10-episode evaluations of -1/0/+1 returns, each with a
    standard deviation near 0.9, swung between -0.7 and 0.7 with no trend, and 'return collapsed after a peak (100%
    of the gain lost)' was said. The drop from the best of many noisy evaluations is a collapse only when the
    episodes say so (Welch over the peak's and the last evaluations' episodes, Bonferroni over the evaluations);
    the same evaluations measured tightly still collapse."""
    evals = [0.0, -0.2, -0.3, 0.2, 0.0, -0.1, 0.2, -0.4, -0.4, -0.3, -0.7, 0.3, 0.7, 0.1, 0.1, -0.3, -0.3, -0.4, 0.0, 0.2]
    s = healthy_series(4 * len(evals))
    y = np.repeat(np.array(evals), 4)  # the table keeps every 4th row's evaluation
    s[M.EVAL_RETURN_MEAN], s[M.EP_RETURN_MEAN] = y, np.zeros(len(y))
    s[M.EVAL_RETURN_STD] = np.full(len(y), 0.9)
    s[M.APPROX_KL] = np.full(len(y), 0.02)  # the policy moved: the KL guard does not explain the swing away
    noisy = run(s, {"max_env_steps": len(y) * STEP, "reward_threshold": None}, reward_threshold=None)
    assert "return_collapse" not in ids(noisy), ids(noisy)
    s[M.EVAL_RETURN_STD] = np.full(len(y), 0.05)
    tight = run(s, {"max_env_steps": len(y) * STEP, "reward_threshold": None}, reward_threshold=None)
    assert "return_collapse" in ids(tight), ids(tight)


def test_non_finite_loss_is_critical_and_blank_cells_are_not_nan() -> None:
    s = unsolved(healthy_series())
    s[M.POLICY_LOSS] = s[M.POLICY_LOSS].copy()
    s[M.POLICY_LOSS][-3:] = np.nan
    d = run(s, {"max_grad_norm": None})
    assert d.verdict == Verdict.CRITICAL and ids(d)[0] == "non_finite_loss"
    assert [c.key for c in d.findings[0].suggested_changes] == ["max_grad_norm", "learning_rate"]
    # Blank eval cells (None) must never count as non-finite.
    assert "non_finite_loss" not in ids(run(healthy_series()))


def test_grad_norm_explosion() -> None:
    s = unsolved(healthy_series())
    s[M.GRAD_NORM] = np.geomspace(0.5, 500, N)
    d = run(s)
    assert "grad_norm_explosion" in ids(d)


def test_value_loss_explosion_and_throughput_drop() -> None:
    s = unsolved(healthy_series())
    s[M.VALUE_LOSS] = np.geomspace(1, 1e5, N)
    s[M.FPS] = np.concatenate([np.full(N // 2, 5000.0), np.full(N - N // 2, 1000.0)])
    d = run(s)
    assert {"value_loss_exploding", "throughput_drop"} <= set(ids(d))
    assert next(f for f in d.findings if f.id == "throughput_drop").severity == Severity.INFO


def test_train_solved_eval_not() -> None:
    s = healthy_series()
    s[M.EP_RETURN_MEAN] = np.full(N, 490.0)
    s[M.EVAL_RETURN_MEAN] = np.full(N, 100.0)
    d = run(s)
    assert "train_solved_eval_not" in ids(d)


def test_reinforce_skips_kl_rules_and_says_so() -> None:
    s = {k: v for k, v in unsolved(healthy_series()).items() if k not in PPO_COLUMNS[len(columns_for('reinforce')):]}
    d = run(s, {"algo": "reinforce"})
    assert any("reinforce writes no approx_kl" in n for n in d.notes)
    assert not {"approx_kl_high", "approx_kl_near_zero", "target_kl_stops_epochs"} & set(ids(d))


def test_live_run_is_partial_with_eta() -> None:
    s = {k: v[:30] for k, v in healthy_series().items()}
    cfg = {**BASE_CONFIG}
    table = make_table(s)
    info = make_info(table, cfg, status=RunStatus.RUNNING, stop_reason=None, pid=None,
                     updated_at="2033-05-18T03:33:10+00:00")
    d = diagnose(info, cfg, table, now=NOW)
    assert d.partial and d.status == "running"
    assert d.progress.eta_seconds == pytest.approx((N * STEP - 30 * STEP) / 5000, abs=0.05)
    assert "budget_exhausted_improving" not in ids(d)
    assert any("still running" in n for n in d.notes)


def test_empty_metrics_gives_an_answer_not_an_error() -> None:
    table = MetricsTable(list(PPO_COLUMNS), [])
    d = diagnose(make_info(table, BASE_CONFIG), BASE_CONFIG, table, now=NOW)
    assert d.eval_trend.direction == "unknown" and d.findings == []
    assert any("Only 0 update" in n for n in d.notes)


def test_store_arrays_and_table_give_the_same_diagnosis() -> None:
    class Arrays:
        def __init__(self, t: MetricsTable):
            self.columns = t.columns
            self.values = np.array(t.rows, dtype=float)
            self.missing = np.array([[v is None for v in r] for r in t.rows])

    s = unsolved(healthy_series())
    s[M.POLICY_LOSS] = s[M.POLICY_LOSS].copy()
    s[M.POLICY_LOSS][-1] = np.inf
    table = make_table(s)
    info = make_info(table, BASE_CONFIG)
    a = diagnose(info, BASE_CONFIG, table, now=NOW)
    b = diagnose(info, BASE_CONFIG, Arrays(table), now=NOW)
    assert a == b and a.findings[0].id == "non_finite_loss"


def test_theil_sen_matches_hand_computed_values() -> None:
    x = np.array([0.0, 1, 2, 3, 4])
    y = np.array([0.0, 1, 2, 3, 100])  # one outlier: least squares would say ~20, Theil-Sen says 1
    slope, lo, hi = theil_sen(x, y)  # type: ignore[misc]
    assert slope == 1.0 and lo <= 1.0 <= hi
    assert trend("m", np.arange(10.0), np.full(10, 3.0), 10).direction == "flat"
    assert trend("m", np.arange(3.0), np.arange(3.0), 10).direction == "unknown"
    assert trend("m", np.arange(10.0) * 1000, -np.arange(10.0) * 10, 100).direction == "declining"


def test_yaml_values_parse_back_as_numbers() -> None:
    assert yaml_value(1e-05) == "1.0e-05" and yaml_value(2.0) == "2.0" and yaml_value(None) == "null"
    cfg = resolve_config("CartPole-v1:ppo", [f"learning_rate={yaml_value(1e-05)}"])
    assert cfg.learning_rate == 1e-05


def test_rule_ids_are_unique() -> None:
    assert len(RULE_IDS) == len(set(RULE_IDS))


def test_run_data_distinguishes_blank_from_nan() -> None:
    t = MetricsTable([M.ENV_STEPS, M.POLICY_LOSS], [[1.0, None], [2.0, float("nan")], [3.0, 1.0]])
    assert RunData(t).non_finite_rows(M.POLICY_LOSS).tolist() == [1]


def test_trainer_error_and_crash_are_critical_findings() -> None:
    from gymnasium_solver.contract.run_folder import Failure

    s = unsolved(healthy_series())
    d = run(s, status=RunStatus.FAILED, stop_reason=StopReason.ERROR,
            failure=Failure(kind="RuntimeError", message="env exploded", env_steps=1024, iteration=2))
    assert d.verdict == Verdict.CRITICAL and ids(d)[0] == "run_error"
    assert "RuntimeError: env exploded" in d.findings[0].evidence[0].observed
    table = make_table(s)
    stale = make_info(table, BASE_CONFIG, status=RunStatus.RUNNING, stop_reason=None, pid=None,
                      updated_at="2026-11-25T00:00:00+00:00")
    c = diagnose(stale, BASE_CONFIG, table, now=NOW)
    assert c.status == "crashed" and not c.partial and ids(c)[0] == "run_crashed"


def test_read_side_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, gymnasium_solver.diagnostics, gymnasium_solver.cli.diagnose, mcp_server.diagnostic_tools; "
            "sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_rolling_median3_matches_numpy() -> None:
    from gymnasium_solver.diagnostics.context import rolling_median3

    y = np.array([5.0, 1.0, 9.0, 3.0, 3.0, 8.0, 0.0])
    want = [3.0] + [float(np.median(y[i - 1 : i + 2])) for i in range(1, len(y) - 1)] + [4.0]
    assert rolling_median3(y).tolist() == want


def test_fraction_of_a_negative_threshold_is_below_it() -> None:
    from gymnasium_solver.diagnostics.context import fraction_of

    assert fraction_of(475.0, 0.9) == pytest.approx(427.5)
    assert fraction_of(-100.0, 0.9) == pytest.approx(-110.0)
    assert fraction_of(-200.0, 0.5) == pytest.approx(-300.0)


# -- held against the preset ---------------------------------------------------------------------
def test_a_deviation_consistent_with_the_mechanism_is_reverted_to_the_preset() -> None:
    """lr 1e-5 on CartPole-v1:ppo: the KL-near-zero mechanism is explained by the learning rate
    being hundreds of times below the preset's, so the fix is the preset's schedule, not a 10x step."""
    from gymnasium_solver.config import resolve_config

    preset_lr = resolve_config("CartPole-v1:ppo").learning_rate.start  # type: ignore[union-attr]
    s = unsolved(healthy_series())
    s[M.APPROX_KL] = np.full(N, 2e-6)
    s[M.CLIP_FRACTION] = np.zeros(N)
    d = run(s, {"learning_rate": 1e-5}, config_id="CartPole-v1:ppo", variant="ppo", overrides={"learning_rate": 1e-5})
    top = d.findings[0]
    assert top.id == "approx_kl_near_zero"
    assert top.suggested_changes[0].set_arg == f"learning_rate={{start: {preset_lr:g}, end: 0.0}}"
    dev = next(x for x in d.references.deviations if x.key == "learning_rate")
    assert "approx_kl_near_zero" in dev.explains and dev.ratio == pytest.approx(1e-5 / preset_lr)
    assert d.references.preset == "CartPole-v1:ppo"


def test_an_unexplained_failure_with_deviations_names_them() -> None:
    """No mechanism fires, but the run differs from a preset that solves: the differences are the
    finding (largest first), each revert a suggested change; never 'healthy, no findings'."""
    d = run(unsolved(healthy_series(), peak=100), {"activation": "relu"}, config_id="CartPole-v1:ppo", variant="ppo",
            overrides={"activation": "relu"})
    assert d.verdict == Verdict.WARNING and d.findings[0].id == "preset_deviation"
    assert "activation=tanh" in [c.set_arg for c in d.findings[0].suggested_changes]
    assert d.next_step and "gsolve fix" in d.next_step


def test_an_unsolved_run_with_nothing_to_revert_is_never_healthy() -> None:
    d = run(unsolved(healthy_series(), peak=100))
    assert d.verdict != Verdict.HEALTHY
    assert ids(d) == ["return_plateau"] or "unexplained_failure" in ids(d)
    assert d.next_step is not None


def test_a_declining_evaluation_is_never_called_still_improving() -> None:
    """Training mean rising, evaluation falling: the budget rule must not say 'still improving',
    and the summary says the evaluation trend as it is."""
    s = healthy_series()
    s[M.EP_RETURN_MEAN] = 20 + np.linspace(0, 300, N)
    s[M.EVAL_RETURN_MEAN] = 320 - np.linspace(0, 300, N)
    d = run(s)
    assert d.eval_trend.direction == "declining"
    assert "budget_exhausted_improving" not in ids(d)
    assert "eval trend declining" in d.summary and "improving" not in d.summary
    assert d.verdict != Verdict.HEALTHY


def test_a_significant_but_immaterial_slope_says_why_it_is_flat() -> None:
    x = np.arange(40, dtype=float) * 1000
    y = 100 + 0.0001 * x  # rises for sure (CI excludes 0) but by 4 over the window: not material at 475
    t = trend(M.EVAL_RETURN_MEAN, x, y, THRESHOLD, horizon=40_000)
    assert t.direction == "flat" and t.slope_low is not None and t.slope_low > 0
    assert "excludes 0" in t.note


def test_a_key_the_run_did_not_set_is_preset_drift_not_a_deviation() -> None:
    """A run made before its preset changed differs from today's preset in keys it never set: those
    are named in a note, never counted or reverted as the run's changes; the key it did set is."""
    s = unsolved(healthy_series())
    s[M.APPROX_KL] = np.full(N, 2e-6)
    s[M.CLIP_FRACTION] = np.zeros(N)
    # n_epochs and gae_lambda differ from today's CartPole-v1:ppo, but only learning_rate was --set.
    cfg = {"learning_rate": 1e-5, "n_epochs": 3, "gae_lambda": 0.5}
    d = run(s, cfg, config_id="CartPole-v1:ppo", variant="ppo", overrides={"learning_rate": 1e-5, "seed": 0})
    assert [x.key for x in d.references.deviations] == ["learning_rate"]
    assert all(c.key not in ("n_epochs", "gae_lambda") for f in d.findings for c in f.suggested_changes)
    [note] = [n for n in d.notes if "has changed since this run" in n]
    assert "gae_lambda" in note and "n_epochs" in note and "learning_rate" not in note
    # Set by the run itself, the same keys are its deviations.
    d = run(s, cfg, config_id="CartPole-v1:ppo", variant="ppo", overrides=cfg)
    assert {x.key for x in d.references.deviations} == {"learning_rate", "n_epochs", "gae_lambda"}
    [note] = [n for n in d.notes if "has changed since this run" in n]  # the test's base config's other keys
    assert "n_epochs" not in note and "gae_lambda" not in note


def _halves(early: float, late: float) -> np.ndarray:
    return np.concatenate([np.full(N // 2, early), np.full(N - N // 2, late)])


# Each threshold either side: exactly at it the rule stays quiet (the comparisons are strict), just past
# it the rule fires. A threshold doubled or halved, or a > turned into >=, moves one of the pair.
@pytest.mark.parametrize(("rule_id", "at", "past"), [
    ("approx_kl_high", {M.APPROX_KL: np.full(N, 0.05)}, {M.APPROX_KL: np.full(N, 0.0501)}),
    ("clip_fraction_high", {M.CLIP_FRACTION: np.full(N, 0.3)}, {M.CLIP_FRACTION: np.full(N, 0.301)}),
    ("grad_norm_explosion", {M.GRAD_NORM: _halves(1.0, 20.0)}, {M.GRAD_NORM: _halves(1.0, 20.02)}),
    ("approx_kl_near_zero", {M.APPROX_KL: np.full(N, 1e-4), M.CLIP_FRACTION: np.full(N, 0.005)},
     {M.APPROX_KL: np.full(N, 0.99e-4), M.CLIP_FRACTION: np.full(N, 0.005)}),
])
def test_each_update_size_threshold_either_side(rule_id: str, at: dict[str, np.ndarray],
                                                past: dict[str, np.ndarray]) -> None:
    base = unsolved(healthy_series())
    assert rule_id not in ids(run({**base, **at}))
    assert rule_id in ids(run({**base, **past}))


def test_the_thresholds_the_boundary_tests_hold() -> None:
    from gymnasium_solver.diagnostics import thresholds as T

    assert (T.APPROX_KL_HIGH.value, T.CLIP_FRACTION_HIGH.value, T.GRAD_NORM_GROWTH.value, T.APPROX_KL_LOW.value) == (
        0.05, 0.3, 20.0, 1e-4)


def test_grad_norm_growth_needs_a_late_norm_above_one() -> None:
    """A 25x growth from a tiny early norm (0.01 -> 0.25) is no explosion: the late median must pass 1.0."""
    base = unsolved(healthy_series())
    assert "grad_norm_explosion" not in ids(run({**base, M.GRAD_NORM: _halves(0.01, 0.25)}))
    d = run({**base, M.GRAD_NORM: _halves(0.1, 2.5)}, {"max_grad_norm": None})
    f = next(f for f in d.findings if f.id == "grad_norm_explosion")
    assert f.severity == Severity.CRITICAL and f.suggested_changes[0].key == "max_grad_norm"
    assert f.evidence[0].observed == "late median 2.5 vs early median 0.1 (25x)"


def test_grad_norm_explosion_says_which_part_grew_when_the_run_logged_them() -> None:
    """With grad_norm_parts' columns the finding shows each part's growth and names the one that grew most;
    without them it reads as before."""
    base = {**unsolved(healthy_series()), M.GRAD_NORM: _halves(1.0, 40.0)}
    parts = {M.GRAD_NORM_ACTOR: _halves(0.1, 0.12), M.GRAD_NORM_CRITIC: _halves(1.0, 40.0)}
    f = next(f for f in run({**base, **parts}).findings if f.id == "grad_norm_explosion")
    assert [(e.metric, e.observed) for e in f.evidence[1:]] == [
        (M.GRAD_NORM_ACTOR, "late median 0.12 vs early median 0.1 (1.2x)"),
        (M.GRAD_NORM_CRITIC, "late median 40 vs early median 1 (40x)")]
    assert f.cause.endswith("It grew most in the critic's gradient (40x; actor 1.2x).")
    plain = next(f for f in run(base).findings if f.id == "grad_norm_explosion")
    assert len(plain.evidence) == 1 and plain.cause == "The optimisation is diverging: each update makes the next " \
                                                        "gradient larger."


# ---------------------------------------------------------------------------------------------
# The update-size findings whole: hand-built curves, so every number, sentence and change is known.
# A rule that keeps firing but says something else (a wrong score, evidence or fix) fails here.
# ---------------------------------------------------------------------------------------------
LR_DOWN = ("learning_rate", {"start": 0.0001, "end": 0.0}, "decrease", "learning_rate={start: 0.0001, end: 0.0}")
ALL_UPDATES, LATE_HALF = (512, 30720), (15872, 30720)


def _finding(rule_id: str, overrides: dict[str, np.ndarray], config: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    d = run({**unsolved(healthy_series()), **overrides}, config)
    return next(f for f in d.findings if f.id == rule_id)


def _shape(f) -> tuple[Any, ...]:  # type: ignore[no-untyped-def]
    return (f.severity, f.title, f.cause,
            [(e.metric, e.env_steps_from, e.env_steps_to, e.observed, e.healthy) for e in f.evidence],
            [(c.key, c.suggested, c.direction, c.set_arg) for c in f.suggested_changes])


def test_approx_kl_high_whole() -> None:
    from gymnasium_solver.diagnostics import thresholds as T

    f = _finding("approx_kl_high", {M.APPROX_KL: np.full(N, 0.2), M.CLIP_FRACTION: np.full(N, 0.45)})
    assert f.score == pytest.approx(0.8 + 0.15 * math.log10(0.2 / 0.05))
    assert _shape(f) == (
        Severity.WARNING, "Policy moves too far per update (approximate KL sustained too high)",
        "The learning rate is too high for this problem: each update leaves the region where the rollout's "
        "advantages are valid, so progress is erratic or collapses.",
        [(M.APPROX_KL, *ALL_UPDATES, "median 0.2 over 60 updates (max 0.2)", f"< 0.05 ({T.APPROX_KL_HIGH.source})"),
         (M.CLIP_FRACTION, *ALL_UPDATES, "median 0.45", "< 0.3")],
        [LR_DOWN])
    assert f.suggested_changes[0].why == "smaller steps (at most 3e-3) keep approx_kl near 0.01-0.02"


def test_approx_kl_high_with_a_clip_range_too_wide_blames_the_clip_first() -> None:
    from gymnasium_solver.diagnostics import setting_bounds as B

    kl = np.concatenate([np.full(N - 1, 0.2), [0.9]])  # median 0.2, one spike
    f = _finding("approx_kl_high", {M.APPROX_KL: kl}, {"clip_range": {"start": 0.6, "end": 0.0}})
    assert f.score == pytest.approx(0.8 + 0.15 * math.log10(0.2 / 0.05))
    assert _shape(f) == (
        Severity.WARNING, "Policy moves too far per update: the clip range is too wide to hold it",
        "clip_range={'start': 0.6, 'end': 0.0} lets the probability ratio move far from 1 before the clip stops the "
        "gradient, so each update leaves the region where the rollout's advantages are valid.",
        [(M.APPROX_KL, *ALL_UPDATES, "median 0.2 over 60 updates (max 0.9)", f"< 0.05 ({T_SOURCE('APPROX_KL_HIGH')})"),
         (M.CLIP_FRACTION, *ALL_UPDATES, "median 0.08", "< 0.3"),
         ("config:clip_range", None, None, "clip_range={'start': 0.6, 'end': 0.0}",
          f"<= 0.5 ({B.CLIP_RANGE_MAX.source})")],
        [("clip_range", 0.2, "decrease", "clip_range=0.2"), LR_DOWN])
    assert f.suggested_changes[0].why == "the PPO paper's 0.2"
    assert f.suggested_changes[0].current == {"start": 0.6, "end": 0.0}
    # At the bound (0.5) the clip is not blamed.
    at_bound = _finding("approx_kl_high", {M.APPROX_KL: kl}, {"clip_range": {"start": 0.5, "end": 0.0}})
    assert [c.key for c in at_bound.suggested_changes] == ["learning_rate"]


def T_SOURCE(name: str) -> str:  # noqa: N802 - reads as the threshold it names
    from gymnasium_solver.diagnostics import thresholds as T

    return getattr(T, name).source


def test_clip_fraction_high_whole() -> None:
    f = _finding("clip_fraction_high", {M.CLIP_FRACTION: np.full(N, 0.5)})
    assert f.score == pytest.approx(0.75 + 0.1 * (0.5 - 0.3) / (1 - 0.3))
    assert _shape(f) == (
        Severity.WARNING, "Most samples hit the PPO clip",
        "Updates are larger than the clip range allows, so most of each update's gradient is discarded; usually a "
        "learning rate (or number of epochs) too high.",
        [(M.CLIP_FRACTION, *ALL_UPDATES, "median 0.5 over 60 updates", f"< 0.3 ({T_SOURCE('CLIP_FRACTION_HIGH')})")],
        [LR_DOWN])
    assert f.suggested_changes[0].why == "smaller updates stay inside the clip range"
    assert _finding("clip_fraction_high", {M.CLIP_FRACTION: np.full(N, 1.0)}).score == pytest.approx(0.85)


@pytest.mark.parametrize(("clip", "severity", "keys"), [(0.5, Severity.WARNING, ["learning_rate"]),
                                                        (None, Severity.CRITICAL, ["max_grad_norm", "learning_rate"])])
def test_grad_norm_explosion_whole(clip: float | None, severity: Severity, keys: list[str]) -> None:
    f = _finding("grad_norm_explosion", {M.GRAD_NORM: _halves(0.1, 2.5)}, {"max_grad_norm": clip})
    assert f.score == pytest.approx(0.85 + 0.1 * math.log10(2.5 / (20 * 0.1)))
    assert (f.severity, f.title, f.cause) == (severity, "Gradient norm exploded",
                                              "The optimisation is diverging: each update makes the next gradient larger.")
    assert [(e.metric, e.env_steps_from, e.env_steps_to, e.observed, e.healthy) for e in f.evidence] == [
        (M.GRAD_NORM, *LATE_HALF, "late median 2.5 vs early median 0.1 (25x)",
         f"< 20x the early median ({T_SOURCE('GRAD_NORM_GROWTH')})")]
    assert [c.key for c in f.suggested_changes] == keys
    assert f.suggested_changes[-1].why == "smaller steps stop the runaway"
    assert f.suggested_changes[-1].suggested == {"start": 0.0001, "end": 0.0}  # the learning rate / 10
    if clip is None:
        c = f.suggested_changes[0]
        assert (c.current, c.suggested, c.direction, c.why) == (None, 0.5, "enable",
                                                                "clip the global gradient norm (SB3 default 0.5)")
    # The late median must pass 1.0 (strictly), whatever the growth: 25x to exactly 1.0 is quiet, 30x to 1.5 fires.
    base = unsolved(healthy_series())
    assert "grad_norm_explosion" not in ids(run({**base, M.GRAD_NORM: _halves(0.04, 1.0)}))
    assert "grad_norm_explosion" in ids(run({**base, M.GRAD_NORM: _halves(0.05, 1.5)}))
    # From an early median of zero there is no growth to measure.
    assert "grad_norm_explosion" not in ids(run({**unsolved(healthy_series()), M.GRAD_NORM: _halves(0.0, 2.5)}))


def test_approx_kl_near_zero_whole() -> None:
    f = _finding("approx_kl_near_zero", {M.APPROX_KL: np.full(N, 1e-5), M.CLIP_FRACTION: np.full(N, 0.001)})
    assert f.score == pytest.approx(0.8 + 0.15 * 0.5)  # 10x below the limit: one of the two decades
    assert _shape(f) == (
        Severity.WARNING, "The policy barely changes between updates (approximate KL near zero)",
        "The learning rate is too low: each update moves the policy by a negligible amount, so the budget runs out "
        "long before it learns.",
        [(M.APPROX_KL, *ALL_UPDATES, "median 1e-05 over 60 updates", f"> 0.0001 ({T_SOURCE('APPROX_KL_LOW')})"),
         (M.CLIP_FRACTION, *ALL_UPDATES, "median 0.001", "> 0.001")],
        [("learning_rate", {"start": 0.01, "end": 0.0}, "increase", "learning_rate={start: 0.01, end: 0.0}")])
    assert f.suggested_changes[0].why == "larger steps (at least the usual 3e-4) move approx_kl toward 0.01"


@pytest.mark.parametrize(("overrides", "config", "fires"), [
    # The clip fraction must stay at or below 10x its low threshold (0.01): a clipping policy is moving.
    ({M.CLIP_FRACTION: np.full(N, 0.01)}, {}, True),
    ({M.CLIP_FRACTION: np.full(N, 0.0101)}, {}, False),
    # A deterministic policy (late entropy < 10% of the maximum) cannot move: entropy_collapse explains it.
    ({M.ENTROPY: np.full(N, 0.1001 * math.log(2))}, {}, True),
    ({M.ENTROPY: np.full(N, 0.0999 * math.log(2))}, {}, False),
    # An entropy bonus pinning the entropy near its maximum explains it too, only with a bonus.
    ({M.ENTROPY: np.full(N, 0.99 * math.log(2))}, {"ent_coef": 0.01}, False),
    ({M.ENTROPY: np.full(N, 0.99 * math.log(2))}, {}, True),
    # target_kl cutting most epochs keeps the KL small: target_kl_stops_epochs explains it.
    ({M.EPOCHS_COMPLETED: np.full(N, 4.0)}, {"target_kl": 0.01}, False),
    ({M.EPOCHS_COMPLETED: np.full(N, 5.0)}, {"target_kl": 0.01}, True),
])
def test_approx_kl_near_zero_defers_to_the_rule_that_explains_it(overrides: dict[str, np.ndarray],
                                                                  config: dict[str, Any], fires: bool) -> None:
    s = {M.APPROX_KL: np.full(N, 1e-5), M.CLIP_FRACTION: np.full(N, 0.001), **overrides}
    assert ("approx_kl_near_zero" in ids(run({**unsolved(healthy_series()), **s}, config))) is fires


def test_a_near_miss_shows_figures_that_agree_with_its_gap() -> None:
    """A best eval of 474.9 read "best eval 475 of 475 (gap 0.1)": three significant digits hid the gap they named.
    Wherever a best eval is held to the threshold, the two get the digits that show it."""
    d = run(unsolved(healthy_series(), peak=474.9))
    assert d.returns.gap_abs == pytest.approx(0.1)
    assert "best eval 474.9 of 475 (gap 0.1," in d.summary, d.summary
    texts = [d.summary, *(e.observed for f in d.findings for e in f.evidence), *(f.title for f in d.findings)]
    assert not any("475 of 475" in t for t in texts), texts
    assert "best eval 98.6 of 475 (gap 376," in run(unsolved(healthy_series(), peak=98.6)).summary  # as before



def test_a_network_without_hidden_layers_is_compared_not_crashed_on() -> None:
    """hidden_sizes=[] (the observation straight to the heads) against a reference's [64, 64]: the comparison
    took min() of the empty list and raised (a blind held-out set's two such runs stopped its scoring). No hidden
    layer is narrower than any: going back to the reference's layers is an increase."""
    from gymnasium_solver.diagnostics.deviations import _direction, narrowest

    assert narrowest([]) == 0 and narrowest([64, 32]) == 32
    assert _direction("hidden_sizes", [], [64, 64]) == "increase"
    assert _direction("hidden_sizes", [64, 64], []) == "decrease"


def test_a_network_without_hidden_layers_is_too_small() -> None:
    """hidden_sizes=[] is the smallest network there is (linear in the observation); the rule took the empty list
    for no setting at all and said nothing."""
    d = run(unsolved(healthy_series()), {"hidden_sizes": []})
    f = next(f for f in d.findings if f.id == "network_too_small")
    assert "no hidden layer (linear in the observation)" in f.evidence[0].observed
    assert f.suggested_changes[0].key == "hidden_sizes" and f.suggested_changes[0].direction == "increase"
    assert run(unsolved(healthy_series()), {"hidden_sizes": [64, 64]}).findings == [
        g for g in run(unsolved(healthy_series())).findings]  # a sized network: nothing said about it


def test_a_table_over_one_hot_states_is_not_a_network_too_small() -> None:
    """gsolve's own defaults learn a table on Discrete observations (DQN, hidden_sizes=[] over the one-hot state),
    and the diagnosis called that table 'too small to represent the policy or the value' (a new user's CliffWalking-v1
    run). Linear in a one-hot state represents any policy and value; on Box observations it is still too small."""
    s = unsolved(healthy_series())
    table = run(s, {"hidden_sizes": []}, observation_kind="discrete")
    assert "network_too_small" not in ids(table), ids(table)
    assert "network_too_small" in ids(run(s, {"hidden_sizes": []}, observation_kind="box"))
    assert "network_too_small" in ids(run(s, {"hidden_sizes": [2]}, observation_kind="discrete"))


def test_evaluations_that_end_later_leave_the_early_unfinished_ones_as_information() -> None:
    """A new user's CliffWalking-v1 DQN run (no time limit): the first 3 evaluations ran to their 100,000-step bound,
    every later one ended in 13 steps (the optimal path), and the run was told, critically, to judge nothing by its
    evaluations. It is judged on the ones that ended; when the last evaluations still do not end, it stays critical."""
    s = unsolved(healthy_series())  # a solved run's findings are capped at information anyway
    n_evals = N // 4
    lens = np.repeat(np.array([100_000.0] * 3 + [13.0] * (n_evals - 3)), 4)
    s[M.EVAL_EP_LEN_MEAN] = lens
    warned = RunWarning(kind="eval_episodes_unfinished", source="env_kwargs.max_episode_steps", env_steps=4 * STEP,
                        message="10 of 10 evaluation episodes had not ended after 100,000 steps", time="t")
    f = next(f for f in run(s, warnings=[warned]).findings if f.id == "eval_episodes_unfinished")
    assert f.severity == Severity.INFO and "from 8,192 env steps on ended" in f.evidence[1].observed, f
    s[M.EVAL_EP_LEN_MEAN] = np.full(N, 100_000.0)
    f = next(f for f in run(s, warnings=[warned]).findings if f.id == "eval_episodes_unfinished")
    assert f.severity == Severity.CRITICAL


def _never_rewarded(n: int = N) -> dict[str, np.ndarray]:
    """A run whose every episode returned 0 (a sparse reward it never reached), evaluations included."""
    s = healthy_series(n)
    s[M.EP_RETURN_MEAN], s[M.EP_RETURN_STD], s[M.EVAL_RETURN_MEAN] = np.zeros(n), np.zeros(n), np.zeros(n)
    s[M.ENTROPY] = math.log(2) * np.linspace(1.0, 0.7, n)
    return s


def test_a_run_that_never_found_its_reward_is_named_with_exploring_changes() -> None:
    """heldout15's u30 trial (in-sample): an A2C MiniGrid run whose episodes all returned 0 got only
    'return has plateaued'; the mechanism is that it never reached the reward, and the changes explore more."""
    d = run(_never_rewarded(), reward_threshold=0.9)
    top = d.findings[0]
    assert top.id == "reward_never_found", ids(d)
    assert [(c.key, c.current, c.suggested) for c in top.suggested_changes] == [("n_envs", 16, 32), ("ent_coef", 0.0, 0.01)]
    assert "every training episode returned 0" in top.evidence[0].observed
    # A live run is not judged on it: a sparse reward is often found late.
    live = run(_never_rewarded(), reward_threshold=0.9, status=RunStatus.RUNNING, stop_reason=None, pid=None,
               updated_at="2033-05-18T03:33:10+00:00")  # updated at NOW: alive
    assert "reward_never_found" not in ids(live)
    # An epsilon-greedy run explores longer instead: epsilon anneals over at least twice the env steps it did (the
    # budget this DQN config needs is added beside, with the fraction that keeps that anneal: offpolicy_budget).
    dqn = run(_never_rewarded(), {"algo": "dqn", "variant": "dqn", "exploration_fraction": 0.1}, reward_threshold=0.9)
    found = {c.key: c.suggested for c in next(f for f in dqn.findings if f.id == "reward_never_found").suggested_changes}
    assert found["exploration_fraction"] * found.get("max_env_steps", N * STEP) >= 2 * 0.1 * N * STEP, found


def test_returns_that_climb_to_the_floor_and_stop_are_a_reward_never_found() -> None:
    """A new user's Taxi-v4 PPO run: -1 a step, -10 a wrong pick-up or drop-off, +20 a delivery. The training mean rose
    from -822 to the time limit's -200 (it learned to stop paying penalties) and never above; all 20 evaluations
    returned -200; only 'return has plateaued' was said. Still climbing toward the floor at the end, or above it
    once, is not this."""
    s = _never_rewarded()
    s[M.EP_RETURN_MEAN] = np.minimum(0.0, np.linspace(-5.0, 10.0, N))
    s[M.EP_RETURN_STD] = np.ones(N)
    top = run(s, reward_threshold=0.9).findings[0]
    assert top.id == "reward_never_found", top.id
    assert "rose from -5 at 512 env steps to 0 and was never above 0" in top.evidence[0].observed
    assert top.title.endswith("the training returns never rose above 0") and "all 15 evaluations returned 0" in \
        top.evidence[1].observed
    assert "gsolve's own defaults learn a table" not in top.cause  # CartPole's observations are a Box
    # On one-hot states (Taxi's) the cause says what gsolve's own defaults train there instead: a table with DQN.
    taxi = run(s, reward_threshold=0.9, observation_kind="discrete", env_id="Taxi-v4").findings[0]
    assert taxi.id == "reward_never_found" and "`gsolve train Taxi-v4:dqn`" in taxi.cause, taxi.cause
    climbing = dict(s, **{M.EP_RETURN_MEAN: np.linspace(-5.0, -0.5, N)})
    assert "reward_never_found" not in ids(run(climbing, reward_threshold=0.9))
    above = dict(s, **{M.EP_RETURN_MEAN: np.minimum(0.0, np.linspace(-5.0, 10.0, N))})
    above[M.EP_RETURN_MEAN][N // 2] = 0.2
    assert "reward_never_found" not in ids(run(above, reward_threshold=0.9))


def test_a_climb_toward_the_evaluations_floor_is_not_a_budget_that_ran_out() -> None:
    """A new user's Taxi-v4 PPO run at 50,000 env steps: the training mean still rising (-822 to -202: fewer
    penalties) and every evaluation at the time limit's -200 was told 'the budget ran out while still learning, 3x the
    budget'; at 200,000 and 800,000 env steps that config sat at -200. A climb that never passes the floor every
    evaluation sits on is not progress toward the reward; once training passes the floor, the budget rule holds."""
    s = _never_rewarded()
    s[M.EP_RETURN_MEAN] = np.linspace(-5.0, -0.02, N)  # still rising at the end, never above the evaluations' 0
    s[M.EP_RETURN_STD] = np.ones(N)
    d = run(s, reward_threshold=0.9)
    assert "budget_exhausted_improving" not in ids(d) and d.findings[0].id == "reward_never_found", ids(d)
    s[M.EP_RETURN_MEAN] = np.linspace(-5.0, 0.5, N)  # passes the floor: the reward is being found
    assert "budget_exhausted_improving" in ids(run(s, reward_threshold=0.9))


@pytest.mark.parametrize("where", ["rollout", "eval"])
def test_one_paid_episode_means_the_reward_was_found(where: str) -> None:
    """Quiet as soon as one training log or one evaluation returned something else: the reward was reached."""
    s = _never_rewarded()
    s[M.EP_RETURN_MEAN if where == "rollout" else M.EVAL_RETURN_MEAN][31] = 0.3  # row 32: an evaluation row
    assert "reward_never_found" not in ids(run(s, reward_threshold=0.9))


def _rarely_rewarded(n: int = N, best: float = 0.04, episodes: float = 20) -> dict[str, np.ndarray]:
    """A run in which one training window paid a little (``best`` of a 0.9 threshold) and every evaluation returned
    0: a new user's MiniGrid-Empty-16x16 A2C run at 20,000 env steps (about 20 episodes of 1,024 steps)."""
    s = _never_rewarded(n)
    s[M.EP_RETURN_MEAN][n // 2: n // 2 + 8] = best
    s[M.EPISODES] = np.linspace(1, episodes, n)
    s[M.EP_LEN_MEAN] = np.full(n, 1024.0)  # each episode ran to MiniGrid-Empty-16x16's time limit
    return s


def test_a_run_that_rarely_found_its_reward_is_named_with_the_tries_it_needs() -> None:
    """One paid window in about 20 episodes of 1,024 steps, every evaluation 0: reward_never_found is quiet (an episode
    paid) and only 'return has plateaued' was said. With so few episodes, each run to its time limit, the budget sets
    the number of tries (twice the envs gives each half the steps): room for 100 episodes of that length, alone (a new
    user's MiniGrid-Empty-16x16 A2C: its config solved at 120,000 env steps, 16 envs with ent_coef=0.01 did not). With
    episodes enough, the changes explore more."""
    d = run(_rarely_rewarded(), reward_threshold=0.9)
    top = d.findings[0]
    assert top.id == "reward_rarely_found" and "reward_never_found" not in ids(d), ids(d)
    assert [(c.key, c.current, c.suggested) for c in top.suggested_changes] == [("max_env_steps", N * STEP, 103_000)]
    assert "4.44% of the way from 0 to the threshold 0.9" in top.evidence[0].observed, top.evidence[0].observed
    assert "20 training episodes finished" in top.evidence[2].observed
    assert "room for 100 episodes of 1,024 env steps each, as long as this run's last ones" in top.suggested_changes[0].why
    many = run(_rarely_rewarded(episodes=500), reward_threshold=0.9).findings[0]
    assert many.id == "reward_rarely_found" and [(c.key, c.suggested) for c in many.suggested_changes] == [
        ("n_envs", 32), ("ent_coef", 0.01)]
    assert "reward_rarely_found" not in ids(run(_rarely_rewarded(), reward_threshold=0.9, status=RunStatus.RUNNING,
                                                stop_reason=None, pid=None, updated_at="2033-05-18T03:33:10+00:00"))


def test_a_critic_fitting_returns_at_the_floor_is_not_said_to_collapse() -> None:
    """A new user's MiniGrid-DoorKey-8x8 PPO run: every evaluation 0, the training mean never above 0.016 of 0.9; its
    explained variance peaked at 0.79 and ended at -0.44, and 'the value function collapsed' led, with a learning rate
    cut. Returns at one floor leave the ratio nothing to measure: the reward found too rarely leads instead."""
    s = _rarely_rewarded(episodes=500)
    s[M.EXPLAINED_VARIANCE] = np.concatenate([np.linspace(0.0, 0.8, N // 3), np.full(N - N // 3, -0.4)])
    d = run(s, reward_threshold=0.9)
    assert d.findings[0].id == "reward_rarely_found", ids(d)
    assert not {"explained_variance_collapse", "explained_variance_low"} & set(ids(d)), ids(d)
    paid = dict(s, **{M.EVAL_RETURN_MEAN: np.linspace(0.0, 0.5, N)})  # the reward found: the critic is judged
    assert "explained_variance_collapse" in ids(run(paid, reward_threshold=0.9))


@pytest.mark.parametrize("case", ["learning", "evaluation_paid", "never_paid"])
def test_a_reward_found_often_or_never_is_not_rarely_found(case: str) -> None:
    """Quiet when a training window got past a quarter of the way to the threshold (the run is learning to reach it),
    when an evaluation paid (the greedy policy reaches it), and when nothing ever paid (reward_never_found's case)."""
    s = _rarely_rewarded(best=0.3) if case == "learning" else _rarely_rewarded()
    if case == "evaluation_paid":
        s[M.EVAL_RETURN_MEAN][-1] = 0.05  # the last row evaluates
    if case == "never_paid":
        s = _never_rewarded()
    d = run(s, reward_threshold=0.9)
    assert "reward_rarely_found" not in ids(d), ids(d)
    assert ("reward_never_found" in ids(d)) == (case == "never_paid"), ids(d)
