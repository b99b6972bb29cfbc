"""gSDE (use_sde) in our PPO: the noise the numpy actor samples is the distribution the torch
log-probs score, it stays fixed for sde_sample_freq steps, and bad settings are refused in a sentence."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gymnasium_solver.agents.common import ActorCritic
from gymnasium_solver.config import ConfigError, build_config
from gymnasium_solver.envs import make_vec_env, space_spec


def _policy(env_id: str = "Pendulum-v1", **extra: object) -> ActorCritic:
    cfg = build_config({"env_id": env_id, "variant": "t", "algo": "ppo", "n_envs": 1, "n_steps": 64,
                        "batch_size": 64, "hidden_sizes": [16, 8], "use_sde": True, "log_std_init": -0.5, **extra})
    env = make_vec_env(cfg, 1)
    spec = space_spec(env)
    env.close()
    torch.manual_seed(0)
    return ActorCritic(spec, cfg)


def test_sde_samples_follow_the_scored_distribution() -> None:
    policy = _policy(sde_sample_freq=1)
    assert policy.log_std is not None and tuple(policy.log_std.shape) == (8, 1)  # [hidden, actions]
    obs = np.random.default_rng(0).normal(size=(1, 3)).astype(np.float32).repeat(20_000, 0)
    rng = np.random.default_rng(1)
    mean = policy.act(obs, None, deterministic=True).actions
    policy.reset_noise()
    sampled = policy.act(obs, rng).actions  # one state, 20,000 sub-envs: one noise matrix each
    with torch.no_grad():
        hidden, out, _ = policy._heads(torch.from_numpy(obs[:1]))
        std = float(policy._sde_std(hidden))
        np.testing.assert_allclose(mean[:1], out.numpy(), rtol=1e-5, atol=1e-5)
        # The log-prob is a Gaussian with that std, as torch.distributions computes it.
        action = torch.tensor([[0.3]])
        ours = policy.evaluate(torch.from_numpy(obs[:1]), action).log_probs
        ref = torch.distributions.Normal(out, std).log_prob(action).sum(-1)
    assert float(ours) == pytest.approx(float(ref), abs=1e-5)
    assert np.std(sampled - mean) == pytest.approx(std, rel=0.03)
    assert policy.action_std() is None  # no rollout scored yet


def test_sde_noise_is_held_for_sde_sample_freq_steps_and_redrawn_per_rollout() -> None:
    policy = _policy(sde_sample_freq=4)
    obs = np.random.default_rng(0).normal(size=(3, 3)).astype(np.float32)
    rng = np.random.default_rng(1)
    mean = policy.act(obs, None, deterministic=True).actions
    noise = [policy.act(obs, rng).actions - mean for _ in range(8)]
    for step in (1, 2, 3, 5, 6, 7):  # same state and the same matrix: the same noise
        np.testing.assert_allclose(noise[step], noise[step - 1], atol=1e-6)
    assert not np.allclose(noise[4], noise[3])  # redrawn after 4 steps
    assert not np.allclose(noise[0][0], noise[0][1])  # one matrix per sub-env
    policy.reset_noise()
    assert not np.allclose(policy.act(obs, rng).actions - mean, noise[7])

    once = _policy(sde_sample_freq=-1)
    held = [once.act(obs, rng).actions for _ in range(10)]
    assert all(np.allclose(h, held[0]) for h in held)  # -1: only at the start of each rollout


def test_sde_settings_that_cannot_work_are_refused_in_a_sentence() -> None:
    with pytest.raises(ConfigError, match="sde_sample_freq=0 would never draw"):
        _policy(sde_sample_freq=0)
    with pytest.raises(ConfigError, match="use_sde: true needs network: mlp"):
        build_config({"env_id": "PongNoFrameskip-v4", "variant": "t", "algo": "ppo", "use_sde": True,
                      "network": "nature_cnn", "atari_wrappers": True, "normalize_observations": False})
    with pytest.raises(ValueError, match="needs a Box action space; this environment's actions are Discrete"):
        _policy("CartPole-v1")


def test_sde_rollout_scores_and_reports_the_mean_action_std() -> None:
    policy = _policy()
    obs = np.random.default_rng(0).normal(size=(16, 2, 3)).astype(np.float32)
    actions = np.zeros((16, 2, 1), np.float32)
    scores = policy.score_rollout(obs, actions, obs[-1])
    assert np.isfinite(scores.log_probs).all() and scores.log_probs.shape == (16, 2)
    std = policy.action_std()
    assert std is not None and 0 < std < math.sqrt(8) * math.exp(-0.5) + 1e-3  # |h| <= 1 per tanh unit


def test_ortho_init_false_keeps_torchs_default_initialisation() -> None:
    """The Zoo's policy_kwargs.ortho_init=False (its MountainCarContinuous-v0 entry): no orthogonal init, so the
    policy head starts at torch's default scale, not 0.01 of it (bigger initial actions: more exploration)."""
    ortho, plain = _policy(), _policy(ortho_init=False)
    hidden = ortho.actor_body[0].weight.detach()  # 16 x 3: orthonormal columns scaled by sqrt(2)
    torch.testing.assert_close(hidden.T @ hidden, 2.0 * torch.eye(3), atol=1e-5, rtol=0)
    plain_hidden = plain.actor_body[0].weight.detach()
    assert not torch.allclose(plain_hidden.T @ plain_hidden, 2.0 * torch.eye(3), atol=1e-2)
    bound = 1 / math.sqrt(3)  # torch's nn.Linear default: uniform within 1/sqrt(fan_in)
    assert plain_hidden.abs().max() <= bound
    assert plain.actor_head.weight.abs().max() > 10 * ortho.actor_head.weight.abs().max()
