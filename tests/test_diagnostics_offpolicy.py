"""The off-policy rules (diagnostics/rules/offpolicy.py) on hand-built DQN/SAC metrics: each fires on
its planted condition, citing its metric or setting, and stays quiet on a healthy run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_diagnostics_rules import BASE_CONFIG, STEP, N, healthy_series, ids, run, unsolved

from gymnasium_solver.run_folder import M

DQN_CONFIG: dict[str, Any] = {
    "variant": "dqn", "algo": "dqn", "buffer_size": 100_000, "learning_starts": 1000, "train_freq": 256,
    "gradient_steps": 128, "target_update_interval": 10, "exploration_fraction": 0.16,
    "exploration_final_eps": 0.04, "batch_size": 64, "max_grad_norm": 10.0,
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
    assert f.evidence[0].metric == M.EXPLORATION_RATE and f.suggested_changes[0].set_arg == "exploration_fraction=0.1"


def test_exploration_that_never_ends_is_found() -> None:
    s = {**dqn_series(solved=False), M.EXPLORATION_RATE: np.full(N, 0.6)}
    f = _finding(s, dqn_config(exploration_final_eps=0.6), "exploration_never_ends")
    assert f.suggested_changes[0].set_arg == "exploration_final_eps=0.05"


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
    assert [e.metric for e in f.evidence] == ["config:learning_starts", M.N_UPDATES]
