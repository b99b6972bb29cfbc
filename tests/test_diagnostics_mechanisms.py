"""The mechanism rules (diagnostics/rules/onpolicy_settings.py, offpolicy_settings.py) on hand-built runs with no preset: each names
its mechanism from the run's own settings and metrics, suggests the change that undoes it, and stays
quiet just inside its bound and on a solved run."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from test_diagnostics_offpolicy import dqn_config, dqn_series
from test_diagnostics_rules import BASE_CONFIG, N, healthy_series, ids, run, unsolved

from gymnasium_solver.contract.run_folder import ActionSpaceInfo, M
from gymnasium_solver.diagnostics.thresholds import ALL

# CartPole-like episodes: 100 steps, reward 1 per step.
EPISODES = {M.EP_LEN_MEAN: np.full(N, 100.0)}


def top(d: Any) -> Any:
    return next(f for f in d.findings if f.severity != "info")


def fired(series: dict[str, np.ndarray], config: dict[str, Any], rule_id: str, **info: Any) -> Any:
    d = run({**series, **EPISODES}, config, **info)
    found = [f for f in d.findings if f.id == rule_id]
    assert found, (rule_id, ids(d))
    assert found[0].evidence and found[0].suggested_changes
    return found[0]


def quiet(series: dict[str, np.ndarray], config: dict[str, Any], rule_id: str, **info: Any) -> None:
    assert rule_id not in ids(run({**series, **EPISODES}, config, **info))


FAILED = unsolved(healthy_series())


def a2c(**changes: Any) -> dict[str, Any]:
    base = {k: v for k, v in BASE_CONFIG.items() if k not in ("n_epochs", "batch_size", "clip_range", "target_kl")}
    return {**base, "variant": "a2c", "algo": "a2c", "n_envs": 8, "n_steps": 16, "learning_rate": 7e-4,
            "gamma": 0.99, "gae_lambda": 1.0, **changes}


def test_a2c_critic_without_gradient_is_named_and_a_small_weight_is_not() -> None:
    f = fired(FAILED, a2c(vf_coef=0.0), "critic_not_trained")
    assert f.suggested_changes[0].set_arg == "vf_coef=0.5" and f.suggested_changes[0].direction == "increase"
    quiet(FAILED, a2c(vf_coef=0.01), "critic_not_trained")
    quiet(healthy_series(), a2c(vf_coef=0.0), "critic_not_trained")  # solved anyway: not a finding


def test_value_clip_the_critic_cannot_follow_is_disabled() -> None:
    # The value loss starts near 12 (a typical error of ~3.5): a clip of 0.001 is 0.03% of it.
    cfg = {"gamma": 0.99, "gae_lambda": 0.95}
    f = fired(FAILED, {**cfg, "clip_range_vf": 0.001}, "value_clip_too_tight")
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("clip_range_vf=null", "disable")
    assert top(run({**FAILED, **EPISODES}, {**cfg, "clip_range_vf": 0.001})).id == "value_clip_too_tight"
    quiet(FAILED, {**cfg, "clip_range_vf": 0.2}, "value_clip_too_tight")  # 6% of the errors: the usual use


def test_reward_clip_far_below_the_rewards_is_disabled() -> None:
    f = fired(FAILED, {"gamma": 0.99, "reward_clip": 0.01}, "reward_clip_erases_signal")
    assert f.suggested_changes[0].set_arg == "reward_clip=null"
    quiet(FAILED, {"gamma": 0.99, "reward_clip": 1.0}, "reward_clip_erases_signal")  # Atari-style: reward 1 fits


def test_value_targets_too_large_blame_the_scale_or_a_horizon_past_the_episodes() -> None:
    # ~1.5 reward per step x 10 x horizon 100 = 1500: scale the rewards down toward 20.
    f = fired(FAILED, {"gamma": 0.99, "reward_scale": 10.0}, "value_targets_too_large")
    assert f.suggested_changes[0].key == "reward_scale" and f.suggested_changes[0].suggested == pytest.approx(0.133, rel=0.02)
    # Horizon 1000 in 100-step episodes: the discount is the cause.
    f = fired(FAILED, {"gamma": 0.999}, "value_targets_too_large")
    assert f.suggested_changes[0].key == "gamma" and f.suggested_changes[0].suggested == pytest.approx(0.96)
    quiet(FAILED, {"gamma": 0.98}, "value_targets_too_large")  # 1.5 x 50 = 75: inside the healthy range


def test_value_targets_too_large_seen_in_the_critics_own_loss_on_a2c() -> None:
    # Shaping rewards that cancel over an episode hide the scale from the returns (0.0015 per step x 1000 x 100 =
    # 150 < 200), but the critic's late value loss of ~2,000 shows it (heldout84 c03: A2C, reward_scale=1000).
    lossy = {**FAILED, M.EP_RETURN_MEAN: np.full(N, 0.15), M.VALUE_LOSS: np.full(N, 2000.0)}
    f = fired(lossy, a2c(reward_scale=1000.0, gamma=0.99), "value_targets_too_large")
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("reward_scale=1.0", "decrease")
    assert top(run({**lossy, **EPISODES}, a2c(reward_scale=1000.0, gamma=0.99))).id == "value_targets_too_large"
    # Unscaled rewards: scale the critic's error (sqrt 2,000 ~ 45) down to a few units.
    f = fired(lossy, a2c(gamma=0.99), "value_targets_too_large")
    assert f.suggested_changes[0].suggested == pytest.approx(3.0 / math.sqrt(2000.0), rel=0.02)
    quiet({**lossy, M.VALUE_LOSS: np.full(N, 500.0)}, a2c(reward_scale=1000.0, gamma=0.99), "value_targets_too_large")
    quiet({**healthy_series(), M.VALUE_LOSS: np.full(N, 2000.0)}, a2c(gamma=0.99), "value_targets_too_large")


def test_a_value_loss_that_grew_there_is_divergence_not_scale() -> None:
    # 16 -> 14,500 (heldout87 c19, ReLU layers): the critic diverged; the rewards' scale (0.15 per step) is fine.
    grown = {**FAILED, M.EP_RETURN_MEAN: np.full(N, 0.15), M.VALUE_LOSS: np.where(np.arange(N) < N // 2, 16.0, 14500.0)}
    quiet(grown, a2c(gamma=0.99), "value_targets_too_large")


def test_relu_layers_a_run_chose_are_named_when_its_gradients_explode() -> None:
    # heldout87 c19: a user's A2C with ReLU layers where gsolve's defaults use tanh; the gradient norm 65 -> 51,900.
    from pathlib import Path

    from gymnasium_solver.api import Runs

    d = Runs(Path(__file__).parent / "fixtures" / "heldout87").get("c19_s8719").diagnose()
    f = top(d)
    assert f.id == "grad_norm_explosion"
    assert (f.suggested_changes[0].key, f.suggested_changes[0].suggested) == ("activation", "tanh")
    assert "preset_deviation" not in ids(d)  # the finding explains the deviation it reverts
    # A run at the defaults' tanh (no deviation to name): the learning rate, as before.
    f = fired({**FAILED, M.GRAD_NORM: np.geomspace(1.0, 5e4, N)}, a2c(), "grad_norm_explosion")
    assert all(c.key != "activation" for c in f.suggested_changes)


def test_td3_noise_wider_than_the_action_range_is_named() -> None:
    # heldout89 c07: a user's TD3 with action_noise_std=10 (ten half-ranges); c09, the same class and config with the
    # default 0.1 and another fault (policy_delay=1000), is not told about its noise.
    from pathlib import Path

    from gymnasium_solver.api import Runs

    runs = Runs(Path(__file__).parent / "fixtures" / "heldout89")
    f = top(runs.get("c07_s8907").diagnose())
    assert f.id == "action_noise_saturates"
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("action_noise_std=0.1", "decrease")
    assert "action_noise_saturates" not in ids(runs.get("c09_s8909").diagnose())


def test_close_to_solving_means_where_the_run_stopped() -> None:
    # Best evaluation 430 of 475 at the start, then far below for the rest of the run: not "close to solving".
    fell = {**FAILED, M.EVAL_RETURN_MEAN: np.where(np.arange(N) < N // 5, 430.0, 50.0)}
    d = run({**fell, **EPISODES}, a2c())
    assert not any(f.id == "budget_exhausted_improving" and "within 10%" in f.title for f in d.findings)
    near = {**FAILED, M.EVAL_RETURN_MEAN: np.where(np.arange(N) < N - 1, 50.0, 430.0)}
    d = run({**near, **EPISODES}, a2c())
    assert any(f.id == "budget_exhausted_improving" for f in d.findings), ids(d)


def test_a_reward_scaled_down_shrinks_a2cs_policy_gradient() -> None:
    # Returns of 0.5 per 100-step episode x 0.001 x horizon 100: a value scale of 5e-5 (heldout88 c17).
    small = {**FAILED, M.EP_RETURN_MEAN: np.full(N, 0.5)}
    f = fired(small, a2c(reward_scale=0.001), "reward_scale_shrinks_gradient")
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("reward_scale=1.0", "increase")
    assert top(run({**small, **EPISODES}, a2c(reward_scale=0.001))).id == "reward_scale_shrinks_gradient"
    quiet(small, a2c(reward_scale=0.001, normalize_advantages=True), "reward_scale_shrinks_gradient")  # normalised
    quiet(small, a2c(reward_scale=0.1), "reward_scale_shrinks_gradient")  # 10x: inside the bound
    # CartPole-like rewards (1 per step) x 0.01 x 100 = 1: large enough rewards, scaled to a normal size.
    quiet(FAILED, a2c(reward_scale=0.01), "reward_scale_shrinks_gradient")
    quiet(small, {"reward_scale": 0.001}, "reward_scale_shrinks_gradient")  # PPO normalises its advantages


def test_ppo_one_gradient_step_per_rollout() -> None:
    rollout = BASE_CONFIG["n_envs"] * BASE_CONFIG["n_steps"]
    f = fired(FAILED, {"n_epochs": 1, "batch_size": rollout}, "ppo_one_step_per_rollout")
    assert [c.set_arg for c in f.suggested_changes] == ["n_epochs=10", f"batch_size={rollout // 16}"]
    quiet(FAILED, {"n_epochs": 1, "batch_size": rollout // 4}, "ppo_one_step_per_rollout")  # 4 steps a rollout


def test_a_zero_kl_from_one_gradient_step_per_rollout_is_not_read_as_a_low_learning_rate() -> None:
    """The KL is measured before each gradient step, so with one step per rollout it is 0 at any learning rate: the
    one-step rollout explains it (heldout15 u10, in-sample). With two steps a rollout a zero KL is the rate's."""
    rollout = BASE_CONFIG["n_envs"] * BASE_CONFIG["n_steps"]
    s = {**FAILED, M.APPROX_KL: np.zeros(N), M.CLIP_FRACTION: np.zeros(N)}
    one = {"n_epochs": 1, "batch_size": rollout}
    quiet(s, one, "approx_kl_near_zero")
    assert top(run({**s, **EPISODES}, one)).id == "ppo_one_step_per_rollout"
    fired(s, {"n_epochs": 2, "batch_size": rollout}, "approx_kl_near_zero")


def test_a2c_rollouts_too_long_for_the_budget() -> None:
    # 30,720-step budget / (8 x 1024) = 3.75 updates.
    f = fired(FAILED, a2c(n_steps=1024), "rollout_too_long")
    assert (f.suggested_changes[0].key, f.suggested_changes[0].direction) == ("n_steps", "decrease")
    assert 5 <= f.suggested_changes[0].suggested <= ALL["a2c_n_steps_max"].value
    quiet(FAILED, a2c(n_steps=32), "rollout_too_long")  # a usual A2C rollout, whatever the budget


def test_replay_ratio_near_zero() -> None:
    s = dqn_series(solved=False)
    f = fired(s, dqn_config(train_freq=256, gradient_steps=1), "replay_ratio_too_low")
    assert f.suggested_changes[0].set_arg == "gradient_steps=128"
    quiet(s, dqn_config(train_freq=256, gradient_steps=16), "replay_ratio_too_low")  # 1/16: low but inside
    quiet(s, dqn_config(train_freq=4, gradient_steps=-1), "replay_ratio_too_low")  # -1: one per env step
    # 0: no gradient step at all is said so, not a division by zero (a heldout27 run crashed the diagnosis)
    f = fired(s, dqn_config(train_freq=4, gradient_steps=0), "replay_ratio_too_low")
    assert f.cause.startswith("The network takes no gradient step at all")
    assert (f.suggested_changes[0].key, f.suggested_changes[0].direction) == ("gradient_steps", "increase")


def test_off_policy_learning_rate_below_anything_tuned() -> None:
    s = dqn_series(solved=False)
    f = fired(s, dqn_config(learning_rate=1e-5), "learning_rate_below_tuned")
    assert f.suggested_changes[0].set_arg == "learning_rate=0.001"
    quiet(s, dqn_config(learning_rate=1e-4), "learning_rate_below_tuned")  # the Zoo's Atari DQN rate


def sac(**changes: Any) -> dict[str, Any]:
    return dqn_config(**{"algo": "sac", "variant": "sac", "tau": 0.005, "train_freq": 1, "gradient_steps": 1, "target_update_interval": 1,
                         **changes})


BOX = {"action_space": ActionSpaceInfo(kind="box", shape=[1], low=[-2.0], high=[2.0])}


def test_soft_target_that_never_moves() -> None:
    s = dqn_series(solved=False)  # ~15k gradient steps logged
    f = fired(s, sac(tau=0.0), "target_network_frozen", **BOX)
    assert f.suggested_changes[0].set_arg == "tau=0.005"
    fired(s, sac(tau=1e-5), "target_network_frozen", **BOX)  # half-life 69k updates: it barely moves
    quiet(s, sac(tau=0.001), "target_network_frozen", **BOX)  # half-life 693 of ~15k: it follows


def test_td3_actor_starved_by_policy_delay() -> None:
    s = dqn_series(solved=False)
    td3 = sac(algo="td3", variant="td3", policy_delay=1000)
    f = fired(s, td3, "actor_updates_starved", **BOX)
    assert f.suggested_changes[0].set_arg == "policy_delay=2"
    quiet(s, sac(algo="td3", variant="td3", policy_delay=10), "actor_updates_starved", **BOX)


def test_unreachable_entropy_target_and_the_q_growth_it_causes() -> None:
    t = np.linspace(0, 1, N)
    coef = 10.0 ** (8 * t)  # the temperature runs away
    s = {**dqn_series(solved=False), M.ENT_COEF: coef, M.Q_MEAN: 10.0 ** (6 * t)}
    d = run({**s, **EPISODES}, sac(target_entropy=5.0), **BOX)
    assert top(d).id == "entropy_target_unreachable", ids(d)
    assert top(d).suggested_changes[0].set_arg == "target_entropy=-1.0"
    # The Q growth is the temperature's doing, not a critical divergence with a learning-rate fix.
    q = next(f for f in d.findings if f.id == "q_value_divergence")
    assert q.severity == "warning" and q.suggested_changes[0].key == "target_entropy"
    quiet(s, sac(target_entropy=0.5), "entropy_target_unreachable", **BOX)  # below log 2: reachable
    assert math.log(2) > 0.5


def test_one_step_gae_advantages() -> None:
    f = fired(FAILED, {"gamma": 0.99, "gae_lambda": 0.0}, "gae_one_step")
    assert f.suggested_changes[0].set_arg == "gae_lambda=0.95"
    quiet(FAILED, {"gamma": 0.98, "gae_lambda": 0.8}, "gae_one_step")  # the Zoo's CartPole: 4.6 steps
    # A short discount horizon is its own finding (horizon_too_short), not this one.
    quiet(FAILED, {"gamma": 0.5, "gae_lambda": 0.0}, "gae_one_step")


def test_a_clip_range_too_wide_to_bound_the_update_is_blamed_before_the_learning_rate() -> None:
    s = {**FAILED, M.APPROX_KL: np.full(N, 0.2), M.CLIP_FRACTION: np.full(N, 0.1)}
    f = fired(s, {"clip_range": 1.0}, "approx_kl_high")
    assert [c.key for c in f.suggested_changes] == ["clip_range", "learning_rate"]
    assert f.suggested_changes[0].set_arg == "clip_range=0.2"
    assert fired(s, {"clip_range": 0.4}, "approx_kl_high").suggested_changes[0].key == "learning_rate"


def test_a_tuned_entropy_bonus_is_not_blamed_for_a_policy_that_does_not_move() -> None:
    s = {**FAILED, M.ENTROPY: np.full(N, math.log(2)), M.APPROX_KL: np.full(N, 1e-3)}
    assert fired(s, {"ent_coef": 1.0}, "entropy_bonus_dominates").suggested_changes[0].key == "ent_coef"
    d = run({**s, **EPISODES}, {"ent_coef": 0.01})
    assert "entropy_bonus_dominates" not in ids(d) and "entropy_no_decrease" in ids(d)


def test_ppo_rollouts_too_long_for_the_budget() -> None:
    # 30,720-step budget / (16 envs x 4096) = 0.5 updates; a usual 2048-step rollout is a budget question.
    f = fired(FAILED, {"n_steps": 4096, "batch_size": 256}, "rollout_too_long")
    assert (f.suggested_changes[0].key, f.suggested_changes[0].direction) == ("n_steps", "decrease")
    assert 32 <= f.suggested_changes[0].suggested <= 2048
    quiet(FAILED, {"n_steps": 2048, "batch_size": 256}, "rollout_too_long")


def test_a_fixed_sac_entropy_bonus_larger_than_the_rewards() -> None:
    # Rewards ~1.5 per step (returns ~150 over 100 steps); a bonus of up to 10 x log 2 = 6.9 per step.
    s = dqn_series(solved=False)
    f = fired(s, sac(ent_coef_auto=False, ent_coef=10.0), "fixed_entropy_bonus_too_large", **BOX)
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("ent_coef_auto=true", "enable")
    quiet(s, sac(ent_coef_auto=False, ent_coef=0.1), "fixed_entropy_bonus_too_large", **BOX)
    quiet(s, sac(ent_coef_auto=True, ent_coef=10.0), "fixed_entropy_bonus_too_large", **BOX)  # learned: it falls


def test_sac_initial_log_std_is_not_a_finding_without_gsde() -> None:
    s = {**dqn_series(solved=False), M.ACTION_STD: np.full(N, 0.05)}
    quiet(s, sac(log_std_init=-3.0), "action_noise_too_low", **BOX)


def test_too_much_action_noise_from_the_usual_start_is_told_a_real_decrease() -> None:
    """With gSDE the std is exp(log_std_init) x the features' scale, so it can run far past the action range from the
    usual log_std_init 0: the change then scales the noise down by the factor it is too large, never "0 -> 0"
    (heldout15 u04's miss, in-sample); from above 0 it is the usual start."""
    s = {**FAILED, M.ACTION_STD: np.linspace(0.6, 12.0, N)}  # 6x the half-range 2 late
    ppo = {"use_sde": True, "log_std_init": 0.0}
    change = fired(s, ppo, "action_noise_too_high", **BOX).suggested_changes[0]
    assert change.key == "log_std_init" and change.direction == "decrease" and change.suggested < -1.5
    assert fired(s, {**ppo, "log_std_init": 1.0}, "action_noise_too_high", **BOX).suggested_changes[0].suggested == 0.0


def test_dqn_exploration_that_starts_at_its_floor() -> None:
    s = {**dqn_series(solved=False), M.EXPLORATION_RATE: np.full(N, 0.05)}
    f = fired(s, dqn_config(exploration_initial_eps=0.05, exploration_final_eps=0.05), "exploration_ends_too_early")
    assert f.suggested_changes[0].set_arg == "exploration_initial_eps=1.0"
    quiet(dqn_series(solved=False), dqn_config(exploration_initial_eps=1.0), "exploration_ends_too_early")


def test_replay_minibatch_of_a_few_transitions() -> None:
    s = dqn_series(solved=False)
    f = fired(s, dqn_config(batch_size=1), "minibatch_too_small")
    assert f.suggested_changes[0].set_arg == "batch_size=64"
    quiet(s, dqn_config(batch_size=32), "minibatch_too_small")


def test_a2c_learning_rate_that_collapses_the_policy() -> None:
    s = {**FAILED, M.ENTROPY: np.full(N, 0.001)}
    f = fired(s, a2c(learning_rate=0.03), "learning_rate_too_high")
    # Down to A2C's tuned rate (the one suggested when too low), not Adam's sane maximum of 3e-3: 3e-3 left a
    # MiniGrid A2C run of heldout12 (x05) unsolved on 3 of 3 seeds where 1e-3 solved them.
    assert f.suggested_changes[0].direction == "decrease" and f.suggested_changes[0].suggested == 1e-3
    quiet(s, a2c(learning_rate=0.003), "learning_rate_too_high")  # a tuned rate: the collapse has another cause


def test_a_horizon_that_cannot_see_the_end_of_time_limited_episodes() -> None:
    # Every episode runs to a 500-step limit; gamma 0.9 looks 10 steps ahead (2% of it).
    s = {**FAILED, M.EP_LEN_MEAN: np.full(N, 500.0)}
    assert run(s, {"gamma": 0.9}).findings[0].id == "horizon_too_short"
    assert "horizon_too_short" not in ids(run(s, {"gamma": 0.98}))  # 50 steps: 10% of it
    # Episodes that end early (the task ends them) are not time-limited: 10 steps may be enough.
    short = {**FAILED, M.EP_LEN_MEAN: np.linspace(500.0, 100.0, N)}
    assert "horizon_too_short" not in ids(run(short, {"gamma": 0.9}))


def test_a_runaway_temperature_with_the_automatic_target_stays_a_divergence() -> None:
    # target_entropy null is already -(action dims): nothing to lower, so the Q growth is not blamed on it.
    t = np.linspace(0, 1, N)
    s = {**dqn_series(solved=False), M.ENT_COEF: 10.0 ** (8 * t), M.Q_MEAN: 10.0 ** (6 * t)}
    q = next(f for f in run({**s, **EPISODES}, sac(target_entropy=None), **BOX).findings if f.id == "q_value_divergence")
    assert q.severity == "critical" and q.suggested_changes[0].key == "learning_rate"


def test_the_replay_ratio_counts_every_env() -> None:
    # SB3 trains every train_freq steps of the vector env: 2 gradient steps per 4 x 8 = 32 env steps.
    s = dqn_series(solved=False)
    f = fired(s, sac(train_freq=4, gradient_steps=2, n_envs=8), "replay_ratio_too_low", **BOX)
    assert "per 4 step(s) x 8 envs = 32 env steps" in f.evidence[1].observed
    quiet(s, sac(train_freq=4, gradient_steps=2, n_envs=1), "replay_ratio_too_low", **BOX)  # 0.5: our preset's


def test_one_step_rollouts_are_one_step_advantages() -> None:
    f = fired(FAILED, a2c(n_steps=1), "gae_one_step")
    assert f.suggested_changes[0].set_arg == "n_steps=5"
    quiet(FAILED, a2c(n_steps=5), "gae_one_step")


def reinforce(**changes: Any) -> dict[str, Any]:
    base = {k: v for k, v in BASE_CONFIG.items() if k not in ("n_steps", "n_epochs", "batch_size", "clip_range",
                                                              "target_kl", "vf_coef")}
    return {**base, "variant": "reinforce", "algo": "reinforce", "learning_rate": 0.006, "gamma": 0.99,
            "n_envs": 8, "episodes_per_update": 8, **changes}


def test_reinforce_with_more_envs_than_episodes_per_update() -> None:
    s = {**FAILED, M.ENTROPY: np.full(N, 0.5)}
    many_envs = fired(s, reinforce(n_envs=64), "reinforce_envs_outnumber_episodes")
    assert [c.set_arg for c in many_envs.suggested_changes] == ["n_envs=8"]  # one coherent config, not both
    # One episode per update is mostly noise: raise it to the envs rather than drop to one env.
    one_episode = fired(s, reinforce(episodes_per_update=1), "reinforce_envs_outnumber_episodes")
    assert [c.set_arg for c in one_episode.suggested_changes] == ["episodes_per_update=8"]
    quiet(s, reinforce(), "reinforce_envs_outnumber_episodes")


def test_a_threshold_above_the_best_return_the_reward_allows() -> None:
    # +1 per step (CartPole): returns equal lengths; evaluations that all ran 500 steps mark the time limit.
    t = np.linspace(0, 1, N)
    length = np.minimum(20 + 600 * t, 500.0)
    s = {**healthy_series(), M.EP_RETURN_MEAN: length, M.EP_LEN_MEAN: length, M.EVAL_RETURN_MEAN: length,
         M.EVAL_EP_LEN_MEAN: length}
    unsolved_at = {"solved": False, "stop_reason": "budget_exhausted", "best_eval": None}
    d = run(s, {"reward_threshold": 600.0}, reward_threshold=600.0, **unsolved_at)
    assert d.findings[0].id == "threshold_unreachable" and d.findings[0].severity == "critical", ids(d)
    assert d.findings[0].suggested_changes[0].set_arg == "reward_threshold=475.0"  # Gymnasium's, below 500
    # -1 per step (Acrobot): the shortest episode returns the most, about 0; a positive threshold cannot be met.
    neg = {**s, M.EP_RETURN_MEAN: -length, M.EVAL_RETURN_MEAN: -length}
    d = run(neg, {"env_id": "Acrobot-v1", "reward_threshold": 100.0}, reward_threshold=100.0, env_id="Acrobot-v1",
            **unsolved_at)
    assert d.findings[0].id == "threshold_unreachable"
    assert d.findings[0].suggested_changes[0].set_arg == "reward_threshold=-100.0"
    # Returns that are not a function of length say nothing about the best return.
    noisy = {**s, M.EP_RETURN_MEAN: length * (1 + 0.3 * np.sin(7 * t))}
    assert "threshold_unreachable" not in ids(run(noisy, {"reward_threshold": 600.0}, reward_threshold=600.0,
                                                  **unsolved_at))


def test_a_reinforce_learning_rate_below_anything_tuned_goes_to_a_tuned_one() -> None:
    # A x3 step from 2e-5 (entropy_no_decrease) stays 100x below tuned REINFORCE rates and did not solve.
    s = {**FAILED, M.ENTROPY: np.full(N, math.log(2))}
    f = fired(s, reinforce(learning_rate=2e-5), "learning_rate_below_tuned")
    assert f.suggested_changes[0].set_arg == "learning_rate=0.003"
    quiet(s, reinforce(learning_rate=1e-3), "learning_rate_below_tuned")


def test_ppo_passing_over_each_rollout_far_too_often_is_blamed_before_the_learning_rate() -> None:
    s = {**FAILED, M.APPROX_KL: np.full(N, 0.2), M.CLIP_FRACTION: np.full(N, 0.4)}
    d = run({**s, **EPISODES}, {"n_epochs": 100})
    assert top(d).id == "ppo_too_many_epochs", ids(d)
    assert top(d).suggested_changes[0].set_arg == "n_epochs=10" and top(d).suggested_changes[0].direction == "decrease"
    quiet(s, {"n_epochs": 30}, "ppo_too_many_epochs")  # the most the RL Zoo tunes
    quiet(healthy_series(), {"n_epochs": 100}, "ppo_too_many_epochs")  # solved anyway


def test_off_policy_learning_rate_far_above_anything_tuned() -> None:
    s = dqn_series(solved=False)
    f = fired(s, dqn_config(learning_rate=0.05), "learning_rate_above_tuned")
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("learning_rate=0.001", "decrease")
    assert any(e.metric == M.TD_LOSS for e in f.evidence)
    fired(s, sac(learning_rate=0.03), "learning_rate_above_tuned", **BOX)
    quiet(s, dqn_config(learning_rate=0.0063), "learning_rate_above_tuned")  # the Zoo's highest DQN rate


def test_a_dqn_soft_target_that_lags_most_of_the_budget() -> None:
    s = dqn_series(solved=False)  # budget N x STEP env steps
    f = fired(s, dqn_config(tau=0.001, target_update_interval=250), "dqn_target_frozen")  # 250k env steps
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("tau=1.0", "increase")
    quiet(s, dqn_config(tau=1.0, target_update_interval=250), "dqn_target_frozen")  # SB3's hard copy
    quiet(s, dqn_config(tau=0.1, target_update_interval=10), "dqn_target_frozen")  # 100 env steps


def test_off_policy_n_step_returns_far_too_long() -> None:
    s = dqn_series(solved=False)
    assert fired(s, dqn_config(n_steps=50), "nstep_returns_too_long").suggested_changes[0].set_arg == "n_steps=3"
    assert fired(s, sac(n_steps=50), "nstep_returns_too_long", **BOX).suggested_changes[0].set_arg == "n_steps=1"
    quiet(s, dqn_config(n_steps=3), "nstep_returns_too_long")  # Rainbow's


def test_env_kwargs_whose_reward_does_not_pay_for_the_threshold() -> None:
    # CartPole with sutton_barto_reward: episodes grow 20 -> 500 steps while every return stays in [-1, 0].
    length = np.linspace(20, 500, N)
    s = {**FAILED, M.EP_LEN_MEAN: length, M.EP_RETURN_MEAN: np.linspace(-1, -0.02, N), M.EVAL_RETURN_MEAN: np.zeros(N)}
    kwargs = {"sutton_barto_reward": True}
    d = run(s, {"env_kwargs": kwargs})
    f = top(d)
    assert f.id == "reward_does_not_pay" and f.severity == "critical", ids(d)
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("env_kwargs={}", "disable")
    assert "reward_does_not_pay" not in ids(run(s, {"env_kwargs": {}}))  # nothing changed the reward
    rising = {**s, M.EP_RETURN_MEAN: length.copy()}  # returns that track the episodes: the reward pays
    assert "reward_does_not_pay" not in ids(run(rising, {"env_kwargs": kwargs}))


def test_ppo_minibatches_of_a_few_samples() -> None:
    f = fired(FAILED, {"batch_size": 4}, "minibatch_too_small")
    assert f.suggested_changes[0].set_arg == "batch_size=64" and "normalised" in f.cause
    quiet(FAILED, {"batch_size": 32}, "minibatch_too_small")
    quiet(healthy_series(), {"batch_size": 4}, "minibatch_too_small")


def test_a_clip_that_provably_shrinks_adams_step_outranks_a_learning_rate_reading_of_the_tiny_kl() -> None:
    s = {**FAILED, M.APPROX_KL: np.full(N, 1e-7), M.CLIP_FRACTION: np.zeros(N), M.GRAD_NORM: np.full(N, 2.0)}
    # CartPole's shapes: 4 observations, 2 actions, a 64x64 actor and critic (~9k parameters).
    shapes = {"observation_shape": [4], "action_space": ActionSpaceInfo(kind="discrete", n=2)}
    d = run({**s, **EPISODES}, {"max_grad_norm": 1e-8, "hidden_sizes": [64, 64]}, **shapes)
    assert top(d).id == "grad_clip_throttles", ids(d)
    assert top(d).suggested_changes[0].key == "max_grad_norm"
    loose = run({**s, **EPISODES}, {"max_grad_norm": 0.5, "hidden_sizes": [64, 64]}, **shapes)
    assert top(loose).id == "approx_kl_near_zero"  # the clip does not bind: the learning rate is the reading


def test_an_actor_critic_training_rarely_is_told_to_train_more_often_not_only_more() -> None:
    s = dqn_series(solved=False)
    f = fired(s, sac(train_freq=200, gradient_steps=1), "replay_ratio_too_low", **BOX)
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("train_freq=1", "decrease")
    # DQN collects long stretches by design (the Zoo's CartPole: 256 steps, 128 gradient steps): more steps.
    assert fired(s, dqn_config(train_freq=256, gradient_steps=1), "replay_ratio_too_low").suggested_changes[0].key == \
        "gradient_steps"


def test_a_myopic_discount_is_named_even_when_episodes_are_short() -> None:
    # A gridworld: episodes of ~7 steps whose only reward is the goal at the end. gamma 0.1 looks 1.1 steps
    # ahead (the goal 6 steps out is worth 1e-6 of itself); gamma 0.9 looks 10 steps ahead.
    s = {**FAILED, M.EP_LEN_MEAN: np.full(N, 7.0)}
    d = run(s, {"gamma": 0.1})  # (not fired(): it forces 100-step episodes)
    f = next(x for x in d.findings if x.id == "horizon_too_short")
    assert (f.suggested_changes[0].key, f.suggested_changes[0].direction) == ("gamma", "increase")
    assert "horizon_too_short" not in ids(run(s, {"gamma": 0.9}))
    bandit = {**FAILED, M.EP_LEN_MEAN: np.full(N, 1.0)}  # one-step episodes: no later reward to see
    assert "horizon_too_short" not in ids(run(bandit, {"gamma": 0.1}))


def test_env_kwargs_of_the_dynamics_do_not_stop_the_reward_paying() -> None:
    # The same curves as the sutton_barto_reward case, under a keyword that changes the lake, not its reward.
    length = np.linspace(20, 500, N)
    s = {**FAILED, M.EP_LEN_MEAN: length, M.EP_RETURN_MEAN: np.linspace(-1, -0.02, N), M.EVAL_RETURN_MEAN: np.zeros(N)}
    assert "reward_does_not_pay" in ids(run(s, {"env_kwargs": {"goal_velocity": 0.5}}))
    assert "reward_does_not_pay" not in ids(run(s, {"env_kwargs": {"is_slippery": False}}))


def test_a_dqn_that_trains_every_thousand_steps_is_told_to_train_more_often() -> None:
    s = dqn_series(solved=False)
    f = fired(s, dqn_config(train_freq=1000, gradient_steps=1, n_envs=1), "replay_ratio_too_low")
    assert (f.suggested_changes[0].key, f.suggested_changes[0].direction) == ("train_freq", "decrease")
    assert f.suggested_changes[0].suggested <= 4


def test_too_few_updates_names_the_rollout_key_furthest_above_the_default() -> None:
    # 4 updates of 64 envs x 128 steps recorded, then a 32,768-step budget ran out flat: 8 envs (the default) give
    # 32 updates of 1,024 env steps.
    four = {k: v[:4] for k, v in unsolved(healthy_series()).items()}
    four[M.EVAL_RETURN_MEAN] = four[M.EP_RETURN_MEAN] = np.full(4, 20.0)
    cfg = {"n_envs": 64, "n_steps": 128, "batch_size": 64, "max_env_steps": 32_768}
    d = run(four, cfg)
    f = next(x for x in d.findings if x.id == "budget_exhausted_improving")
    assert (f.suggested_changes[0].set_arg, f.suggested_changes[0].direction) == ("n_envs=8", "decrease"), f
    longer = run(four, {**cfg, "n_envs": 8, "n_steps": 2048})  # the rollout's length is the key above the default
    g = next(x for x in longer.findings if x.id == "budget_exhausted_improving")
    assert g.suggested_changes[0].key == "n_steps"


def test_far_more_envs_than_anyone_tunes_are_cut_before_the_budget_grows() -> None:
    # A2C, 128 envs x 5 steps: 60 updates of 640 env steps, still improving when a 38,400-step budget ran out.
    ret = np.linspace(20.0, 300.0, N)
    rising = {**healthy_series(), M.EP_RETURN_MEAN: ret, M.EVAL_RETURN_MEAN: ret}
    cfg = a2c(n_envs=128, n_steps=5, max_env_steps=38_400)
    f = next(x for x in run(rising, cfg).findings if x.id == "budget_exhausted_improving")
    assert [c.set_arg for c in f.suggested_changes] == ["n_envs=8", "max_env_steps=115200"], f
    usual = next(x for x in run(rising, {**cfg, "n_envs": 16}).findings if x.id == "budget_exhausted_improving")
    assert usual.suggested_changes[0].key == "max_env_steps"  # 16 envs: a usual count, the budget is the change


def test_a_budget_is_no_suspect_once_the_run_has_stalled() -> None:
    from types import SimpleNamespace

    from gymnasium_solver.diagnostics.attribution import stalled

    def ctx(ev: str, tr: str, solved: list[int] | None = None) -> Any:
        return SimpleNamespace(steps_to_solve=solved, eval_trend=SimpleNamespace(direction=ev),
                               train_trend=SimpleNamespace(direction=tr))

    assert stalled(ctx("flat", "flat")) and stalled(ctx("declining", "unknown"))
    # Too few evaluations for a trend: the training return decides (an Acrobot run at gamma 0.3, 3 evaluations).
    assert stalled(ctx("unknown", "declining")) and not stalled(ctx("unknown", "unknown"))
    assert not stalled(ctx("flat", "improving")) and not stalled(ctx("improving", "flat"))
    assert not stalled(ctx("flat", "flat", solved=[10_000, 20_000]))  # solved runs say what a budget needs


def test_a_dqn_whose_target_is_copied_before_every_starved_gradient_step() -> None:
    """heldout14 z04 (in-sample): the Zoo's CartPole DQN (a target copy every 10 env steps, train_freq 256) with
    SB3's default gradient_steps=1. The Q-values run away because each of the rare gradient steps regresses onto a
    copy of itself: more gradient steps per call end both, where a smaller learning rate ends neither."""
    s = {**dqn_series(solved=False), M.Q_MEAN: np.linspace(1, 15_000, N)}
    zoo = {"target_update_interval": 10, "train_freq": 256, "learning_rate": 0.0023}
    f = fired(s, dqn_config(**zoo, gradient_steps=1), "q_value_divergence")
    assert f.suggested_changes[0].set_arg == "gradient_steps=128"
    assert "0.039 gradient steps per copy" in f.evidence[1].observed
    assert top(run({**s, **EPISODES}, dqn_config(**zoo, gradient_steps=1))).id == "q_value_divergence"
    # The Zoo's own pairing (128 gradient steps a call: 5 per copy) diverging is a learning-rate matter.
    f = fired(s, dqn_config(**zoo, gradient_steps=128), "q_value_divergence")
    assert f.suggested_changes[0].key == "learning_rate"
