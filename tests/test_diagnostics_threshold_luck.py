"""The threshold an optimal policy passes only some of the time (diagnostics/rules/threshold_luck.py), on hand-built
runs of Gymnasium's tabular envs, whose optimum config/run_notes.py knows exactly."""

from __future__ import annotations

from typing import Any

import numpy as np
from test_diagnostics_rules import N, healthy_series, ids, run

from gymnasium_solver.contract.run_folder import M

UNSOLVED = {"solved": False, "stop_reason": "budget_exhausted", "best_eval": None}


def tabular(env_id: str, threshold: float, eval_peak: float, env_kwargs: dict[str, Any] | None = None,
            evals: np.ndarray | None = None, **info: Any) -> Any:
    """An unsolved A2C-like run on ``env_id`` whose evaluations climb to ``eval_peak`` and stay there (or ``evals``,
    one value per row; the table keeps every 4th as an evaluation)."""
    t = np.linspace(0, 1, N)
    peak = np.minimum(t * 2, 1) * eval_peak if evals is None else evals
    series = {**healthy_series(), M.EP_RETURN_MEAN: peak * 0.8, M.EVAL_RETURN_MEAN: peak,
              M.EP_LEN_MEAN: 20 + 10 * np.sin(9 * t)}
    config = {"env_id": env_id, "reward_threshold": threshold, "eval_episodes": 10, "confirm_episodes": 50,
              "env_kwargs": env_kwargs or {}}
    return run(series, config, env_id=env_id, reward_threshold=threshold, **{**UNSOLVED, **info})


def finding(d: Any, rule_id: str) -> Any:
    found = [f for f in d.findings if f.id == rule_id]
    assert found, (rule_id, ids(d))
    return found[0]


def test_a_bar_above_the_optimum_that_the_run_got_near_is_the_cause() -> None:
    # FrozenLake-v1's 8x8 map within v1's 100 steps: an optimal policy succeeds 64% of the time, under the 0.7 bar.
    d = tabular("FrozenLake-v1", 0.7, 0.6, {"map_name": "8x8"})
    f = finding(d, "threshold_above_optimum")
    assert d.findings[0] is f and f.severity == "critical"
    assert [c.set_arg for c in f.suggested_changes] == ["reward_threshold=0.4"]  # one change: applied as one
    assert "env_kwargs={}" in f.cause  # the other way out, said
    # ... and tried as a candidate of its own: the default task's optimum (0.744) is above the bar.
    other = finding(d, "threshold_set_for_default_task")
    assert other.severity == "warning" and [c.set_arg for c in other.suggested_changes] == ["env_kwargs={}"]
    assert "a perfect policy passes 0.4 in >= 90% of its evaluations there" in other.cause
    assert d.findings.index(other) > d.findings.index(f)
    # A run that never got near the optimum still gets it: the bar belongs to another task whatever was learnt.
    assert "threshold_set_for_default_task" in ids(tabular("FrozenLake-v1", 0.7, 0.0, {"map_name": "8x8"}))
    assert "0.6407" in f.cause and "49% of the time" in f.cause
    # Taxi-v4's registered 8 is above the optimum's 7.93: a run whose evaluations reach 7.5 may be perfect.
    f = finding(tabular("Taxi-v4", 8.0, 7.5), "threshold_above_optimum")
    assert [c.set_arg for c in f.suggested_changes] == ["reward_threshold=6.9"]


def test_a_run_that_never_got_near_the_optimum_is_told_but_not_blamed_on_the_bar() -> None:
    d = tabular("Taxi-v4", 8.0, -50.0)
    f = finding(d, "threshold_luck")
    assert f.severity == "info" and "threshold_above_optimum" not in ids(d)
    assert "did not get as high as a perfect policy's" in f.cause


def test_the_bar_is_the_cause_only_when_the_run_had_a_perfect_policys_chances_and_used_them_as_one_would() -> None:
    # Taxi-v4: a perfect policy solves (an evaluation and its confirmation pass) about once in 5 evaluations.
    late = np.where(np.arange(N) >= N - 8, 7.5, -50.0)  # at that level in the last 2 evaluations only
    f = finding(tabular("Taxi-v4", 8.0, 0, evals=late), "threshold_luck")
    assert f.severity == "info" and "only 2 time(s)" in f.cause and "learning sooner is the lever" in f.cause
    # All 15 evaluations there: a perfect policy solves in as many 97% of the time, so this run is short of optimal.
    f = finding(tabular("Taxi-v4", 8.0, 0, evals=np.full(N, 7.5)), "threshold_luck")
    assert f.severity == "info" and "likely short of optimal" in f.cause


def test_a_close_bar_is_a_side_observation_only() -> None:
    # FrozenLake-v1's 0.7 is under the optimum's 0.744: a perfect policy passes 76% of its evaluations, and over a
    # run's many evaluations it solves; an unsolved run has another cause.
    d = tabular("FrozenLake-v1", 0.7, 0.6)
    assert finding(d, "threshold_luck").severity == "info" and "threshold_above_optimum" not in ids(d)


def test_quiet_on_a_reliable_bar_a_solved_run_and_an_env_without_published_dynamics() -> None:
    assert not {"threshold_luck", "threshold_above_optimum"} & set(ids(tabular("Taxi-v4", 6.0, 5.5)))
    assert not {"threshold_luck", "threshold_above_optimum"} & set(ids(tabular("FrozenLake-v1", 0.7, 0.6,
                                                                                 {"is_slippery": False})))
    assert "threshold_above_optimum" not in ids(tabular("Taxi-v4", 8.0, 7.5, solved=True, stop_reason="solved"))
    # env_kwargs that keep the optimum above the bar (not slippery), or a bar above the default task's optimum too.
    assert "threshold_set_for_default_task" not in ids(tabular("FrozenLake-v1", 0.7, 0.6, {"is_slippery": False}))
    assert "threshold_set_for_default_task" not in ids(tabular("FrozenLake-v1", 0.8, 0.6, {"map_name": "8x8"}))
    assert not {"threshold_luck", "threshold_above_optimum"} & set(ids(run(healthy_series(), {}, **UNSOLVED)))
