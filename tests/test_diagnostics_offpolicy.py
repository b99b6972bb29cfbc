"""The off-policy rules (diagnostics/rules/offpolicy.py) on hand-built DQN/SAC metrics: each fires on
its planted condition, citing its metric or setting, and stays quiet on a healthy run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_diagnostics_rules import BASE_CONFIG, STEP, N, healthy_series, ids, run, unsolved

from gymnasium_solver.contract.run_folder import M

DQN_CONFIG: dict[str, Any] = {
    "variant": "dqn", "algo": "dqn", "buffer_size": 100_000, "learning_starts": 1000, "train_freq": 256,
    "gradient_steps": 128, "target_update_interval": 10, "exploration_fraction": 0.16,
    "exploration_final_eps": 0.04, "batch_size": 64, "max_grad_norm": 10.0, "n_envs": 1, "n_steps": 1,
}
NOT_PPO = ("n_steps", "n_epochs", "clip_range", "target_kl", "vf_coef")


def dqn_config(**changes: Any) -> dict[str, Any]:
    base = {k: v for k, v in BASE_CONFIG.items() if k not in NOT_PPO}
    return {**base, **DQN_CONFIG, **changes}


def dqn_series(solved: bool = True) -> dict[str, np.ndarray]:
    s = healthy_series() if solved else unsolved(healthy_series())
    t = np.linspace(0, 1, N)
    steps = (np.arange(N) + 1) * STEP
    return {**s, M.EXPLORATION_RATE: np.maximum(1 - t / 0.16 * 0.96, 0.04), M.Q_MEAN: 5 + 40 * t,
            M.REPLAY_FILL: np.minimum(steps / 100_000, 1.0), M.N_UPDATES: np.maximum(steps - 1000, 0) / 2,
            M.TD_LOSS: 0.5 * np.ones(N)}


OFF_POLICY_IDS = {"exploration_ends_too_early", "exploration_never_ends", "target_updates_too_rare",
                  "target_updates_too_frequent", "q_value_divergence", "replay_buffer_too_small",
                  "learning_starts_too_late"}


@pytest.mark.parametrize("solved", [True, False])
def test_healthy_dqn_has_no_off_policy_finding(solved: bool) -> None:
    assert not OFF_POLICY_IDS & set(ids(run(dqn_series(solved), dqn_config())))


def _finding(series: dict[str, np.ndarray], config: dict[str, Any], rule_id: str) -> Any:
    d = run(series, config)
    found = [f for f in d.findings if f.id == rule_id]
    assert found, (rule_id, ids(d))
    assert found[0].evidence and found[0].suggested_changes
    return found[0]


def test_exploration_ending_at_once_is_found() -> None:
    s = {**dqn_series(solved=False), M.EXPLORATION_RATE: np.full(N, 0.04)}
    f = _finding(s, dqn_config(exploration_fraction=0.001), "exploration_ends_too_early")
    assert f.evidence[0].metric == M.EXPLORATION_RATE
    # Anneal over a tenth of the run's budget; the budget it also raises keeps that absolute length.
    by_key = {c.key: c.suggested for c in f.suggested_changes}
    assert f.suggested_changes[0].key == "exploration_fraction" and by_key["max_env_steps"] > N * STEP
    assert by_key["exploration_fraction"] * by_key["max_env_steps"] == pytest.approx(0.1 * N * STEP, rel=0.01)


def test_exploration_that_never_ends_is_found() -> None:
    s = {**dqn_series(solved=False), M.EXPLORATION_RATE: np.full(N, 0.6)}
    f = _finding(s, dqn_config(exploration_final_eps=0.6), "exploration_never_ends")
    assert f.suggested_changes[0].set_arg == "exploration_final_eps=0.05"


def test_exploration_never_ending_with_a_zero_floor_blames_the_fraction() -> None:
    # exploration_final_eps=0 is a real setting: the evidence must say 0 (not the logged epsilon) and
    # the fix must shorten the annealing, never "decrease" a floor that is already 0.
    s = {**dqn_series(solved=False), M.EXPLORATION_RATE: np.linspace(1.0, 0.4, N)}
    f = _finding(s, dqn_config(exploration_final_eps=0.0, exploration_fraction=0.95), "exploration_never_ends")
    assert "exploration_final_eps=0.0" in [e.observed for e in f.evidence]
    by_key = {c.key: c for c in f.suggested_changes}
    assert "exploration_final_eps" not in by_key and by_key["exploration_fraction"].direction == "decrease"


def test_target_updates_too_rare_and_too_frequent() -> None:
    s = dqn_series(solved=False)
    rare = _finding(s, dqn_config(target_update_interval=N * STEP // 2), "target_updates_too_rare")
    assert rare.evidence[0].metric == "config:target_update_interval"
    frequent = _finding(s, dqn_config(target_update_interval=1, train_freq=4, gradient_steps=1),
                        "target_updates_too_frequent")
    assert frequent.suggested_changes[0].key == "target_update_interval"
    sac = {**dqn_config(tau=1.0), "algo": "sac", "variant": "sac"}
    assert _finding(s, sac, "target_updates_too_frequent").suggested_changes[0].set_arg == "tau=0.005"


def test_q_value_divergence_is_found() -> None:
    s = {**dqn_series(solved=False), M.Q_MEAN: np.geomspace(10, 1e7, N)}
    f = _finding(s, dqn_config(), "q_value_divergence")
    assert f.evidence[0].metric == M.Q_MEAN and f.suggested_changes[0].key == "learning_rate"


def test_replay_buffer_too_small_is_found() -> None:
    s = {**dqn_series(solved=False), M.REPLAY_FILL: np.ones(N)}
    f = _finding(s, dqn_config(buffer_size=500), "replay_buffer_too_small")
    assert f.evidence[0].metric == M.REPLAY_FILL and f.suggested_changes[0].direction == "increase"


def test_learning_starts_too_late_is_found() -> None:
    steps = (np.arange(N) + 1) * STEP
    s = {**dqn_series(solved=False), M.N_UPDATES: np.where(steps < N * STEP * 0.6, 0, steps)}
    f = _finding(s, dqn_config(learning_starts=int(N * STEP * 0.6)), "learning_starts_too_late")
    assert [e.metric for e in f.evidence][:2] == ["config:learning_starts", M.N_UPDATES]


# --- the budget a fix needs (diagnostics/offpolicy_budget.py) -------------------------------------
# The synthetic run: N * STEP = 30,720 env steps; DQN_CONFIG's target period is max(10, 256 x 1 env) = 256,
# so 2 horizons of 1/(1-0.99) = 200 periods after learning_starts=1000 need 1000 + 200 * 256 = 52,200.
NEED = 52_200


def test_budget_need_counts_distinct_target_networks() -> None:
    from gymnasium_solver.diagnostics.offpolicy_budget import budget_need

    n = budget_need(dqn_config(gamma=0.99), 30_720)
    assert n is not None and (n.period, n.steps) == (256, NEED)
    assert n.periods == pytest.approx((30_720 - 1000) / 256)
    # SB3 copies the target between train calls with the same weights: 4 envs x train_freq 64 = 256 too.
    assert budget_need(dqn_config(n_envs=4, train_freq=64, target_update_interval=10), 1).period == 256  # type: ignore[union-attr]
    assert budget_need(dqn_config(target_update_interval=1000), 1).steps == 1000 + 200 * 1000  # type: ignore[union-attr]
    assert budget_need({**dqn_config(), "algo": "sac"}, 1) is None
    # Imported configs: SB3's (n, unit) train_freq; an episode-based one leaves only the target interval.
    assert budget_need(dqn_config(train_freq=[64, "step"], n_envs=4), 1).period == 256  # type: ignore[union-attr]
    assert budget_need(dqn_config(train_freq=[1, "episode"]), 1).period == 10  # type: ignore[union-attr]
    assert budget_need(dqn_config(target_update_interval="often"), 1) is None
    # A soft update moves the target tau of the way each copy: a distinct network every interval / tau env steps.
    assert budget_need(dqn_config(tau=0.005), 1).period == 2000  # type: ignore[union-attr]
    assert budget_need(dqn_config(tau=0.5), 1).period == 256  # type: ignore[union-attr]


def test_budget_ends_while_learning_cites_rising_q_values_and_sizes_the_budget() -> None:
    f = _finding(dqn_series(solved=False), dqn_config(), "budget_ends_while_learning")
    assert f.evidence[0].metric == M.Q_MEAN and "still rising" in f.evidence[0].observed
    assert any("target periods" in e.observed for e in f.evidence)
    assert f.suggested_changes[0].set_arg == f"max_env_steps={NEED}"
    # Nothing rising (values flat, evaluations flat at the start): no finding.
    flat = {**dqn_series(solved=False), M.Q_MEAN: np.full(N, 1.17), M.EVAL_RETURN_MEAN: np.full(N, 9.5),
            M.EP_RETURN_MEAN: np.full(N, 9.5)}
    assert "budget_ends_while_learning" not in ids(run(flat, dqn_config()))
    # A run that stopped early for another reason is not a budget question.
    stopped = run(dqn_series(solved=False), dqn_config(max_env_steps=100_000), stop_reason="user_stopped",
                  max_env_steps=100_000)
    assert "budget_ends_while_learning" not in ids(stopped)


def test_a_q_rising_from_near_zero_that_stays_far_below_the_returns_is_not_still_learning() -> None:
    # Returns and evaluations flat at 22 (episodes of 22 steps: values of ~22): a mean Q going 0.05 -> 0.08 rises by
    # far more than 10% of its own level, yet at that slope 10x the budget leaves it under a tenth of 22.
    t = np.linspace(0, 1, N)
    flat = {**dqn_series(solved=False), M.EVAL_RETURN_MEAN: np.full(N, 22.0), M.EP_RETURN_MEAN: np.full(N, 22.0),
            M.EP_LEN_MEAN: np.full(N, 22.0)}
    assert "budget_ends_while_learning" not in ids(run({**flat, M.Q_MEAN: 0.05 + 0.03 * t}, dqn_config()))
    assert "budget_ends_while_learning" in ids(run({**flat, M.Q_MEAN: 0.5 + 3.0 * t}, dqn_config()))


def test_a_deviation_that_slows_learning_explains_the_budget_finding() -> None:
    # heldout22 v29: SAC's tau=0.005 in a DQN config (a target 2,000 env steps behind instead of 256); the
    # run was still learning when its budget ended. The budget is the symptom: reverting tau leads.
    d = run(dqn_series(solved=False), dqn_config(tau=0.005), config_id="CartPole-v1:dqn", variant="dqn",
            overrides={"tau": 0.005, "seed": 0})
    top = d.findings[0]
    assert top.id == "budget_ends_while_learning", ids(d)
    assert top.suggested_changes[0].set_arg == "tau=1.0"
    assert top.evidence[0].metric == "config:tau"
    assert any("max_env_steps >= 401,000" in e.healthy for e in top.evidence)  # 1000 + 200 periods of 2,000
    # The same run with the preset's tau: the budget itself is what the finding changes.
    d = run(dqn_series(solved=False), dqn_config(tau=1.0), config_id="CartPole-v1:dqn", variant="dqn",
            overrides={"seed": 0})
    f = next(f for f in d.findings if f.id == "budget_ends_while_learning")
    assert f.suggested_changes[0].key == "max_env_steps"


def test_budget_ends_while_learning_projects_the_evaluation_curve() -> None:
    # SAC has no hard target period: the raise comes from the evaluations rising since learning started.
    steps = (np.arange(N) + 1) * STEP
    rising = np.where(steps < 10_000, 20.0, 20 + (steps - 10_000) * 0.01)  # 0.01 per step from 10k: 227 at the end
    s = {**dqn_series(solved=False), M.EVAL_RETURN_MEAN: rising, M.EP_RETURN_MEAN: rising, M.Q_MEAN: np.full(N, 5.0),
         M.N_UPDATES: np.maximum(steps - 10_000, 0)}
    sac = {**dqn_config(), "algo": "sac", "variant": "sac"}
    f = _finding(s, sac, "budget_ends_while_learning")
    assert f.evidence[0].metric == M.EVAL_RETURN_MEAN and "in all" in f.evidence[0].observed
    # (475 - ~217) / 0.01 more steps after 30,720: ~56,000; at least that is suggested.
    assert 50_000 < f.suggested_changes[0].suggested < 65_000


def test_a_fix_for_a_run_that_learned_nothing_is_completed_with_the_budget_it_needs() -> None:
    # target_update_interval 100,000 over a 30,720 budget: values never move, so nothing says "still learning";
    # the corrected interval (budget / 50) still needs more than the budget; exploration keeps its 4,915 steps.
    flat = {**dqn_series(solved=False), M.Q_MEAN: np.full(N, 1.17), M.EVAL_RETURN_MEAN: np.full(N, 9.5),
            M.EP_RETURN_MEAN: np.full(N, 9.5)}
    d = run(flat, dqn_config(target_update_interval=100_000))
    top = d.findings[0]
    assert top.id == "target_updates_too_rare", ids(d)
    by_key = {c.key: c.suggested for c in top.suggested_changes}
    interval = by_key["target_update_interval"]
    assert interval == N * STEP // 50
    assert by_key["max_env_steps"] >= 1000 + 200 * interval
    assert by_key["exploration_fraction"] * by_key["max_env_steps"] == pytest.approx(0.16 * N * STEP, rel=0.01)
    assert any(e.metric == "config:max_env_steps" and "with these changes" in e.observed for e in top.evidence)
    # A run that solved gets no such completion (nothing to fix).
    solved = run(dqn_series(solved=True), dqn_config(target_update_interval=100_000))
    assert all("max_env_steps" not in {c.key for c in f.suggested_changes} for f in solved.findings)


def test_reverting_the_budget_to_the_zoos_keeps_the_zoos_exploration_fraction(tmp_path) -> None:  # noqa: ANN001
    """MountainCar-v0:dqn from the RL Zoo's entry with its budget cut to 1,500: the revert to the Zoo's 120,000 is the
    Zoo's config, whose exploration_fraction (0.2) is tuned for that budget. It came with exploration_fraction=0.01
    (the run's 300-step anneal kept), a config no reference tuned, offered under the Zoo's name."""
    from gymnasium_solver.config import resolve_with_origin
    from gymnasium_solver.config.zoo import zoo_entry
    from gymnasium_solver.diagnostics.diagnose import diagnose_run_dir
    from gymnasium_solver.run_store import RunStore
    from gymnasium_solver.train import training

    if zoo_entry("MountainCar-v0", "dqn") is None:
        pytest.skip("rl_zoo3 is not installed")
    overrides = {"max_env_steps": 1500, "eval_episodes": 1}
    cfg, origin = resolve_with_origin("MountainCar-v0:dqn", overrides)
    run_dir = training.train(cfg, tmp_path, overrides=overrides, config_origin=origin).run_dir
    d = diagnose_run_dir(RunStore(tmp_path), run_dir)
    revert = next(f for f in d.findings if f.id == "preset_deviation")
    assert {c.key: c.suggested for c in revert.suggested_changes} == {"max_env_steps": 120_000}
    # A change that raises the budget beyond any reference still keeps the run's anneal length.
    others = [c for f in d.findings if f.id != "preset_deviation" for c in f.suggested_changes]
    assert any(c.key == "exploration_fraction" for c in others)

