"""PPO's clipped surrogate objective (gymnasium_solver/agents/ppo.py) against hand-computed values.

The batch's stored log-probs are the policy's own minus log r, so each sample's probability ratio is
exactly the r we choose; with one epoch, one minibatch and no advantage normalisation the reported
policy loss is the loss of that one step, before the optimizer moves anything.
"""

from __future__ import annotations

import math

import pytest
import torch

from gymnasium_solver.agents.common import Batch
from gymnasium_solver.agents.ppo import MIN_LR_SCALE, PPO, adapt_lr_scale
from gymnasium_solver.config import resolve_config
from gymnasium_solver.envs import make_vec_env, space_spec

# (advantage, ratio) per sample; clip range 0.2.
SAMPLES = [(2.0, 1.5), (1.0, 0.5), (-1.0, 1.5), (-3.0, 1.1)]
# min(A r, A clip(r, 0.8, 1.2)) per sample: 2*1.2 = 2.4 (clipped from above), 1*0.5 = 0.5 (the
# unclipped term is the smaller), -1*1.5 = -1.5 (the unclipped term is the smaller), -3*1.1 = -3.3
# (inside the clip range). Loss = -mean = -(2.4 + 0.5 - 1.5 - 3.3) / 4.
EXPECTED_POLICY_LOSS = 0.475
# |r - 1| > 0.2 for the first three samples.
EXPECTED_CLIP_FRACTION = 0.75


def _agent_and_batch(extra: list[str]) -> tuple[PPO, Batch]:
    cfg = resolve_config("CartPole-v1:ppo", ["n_envs=1", "n_epochs=1", "batch_size=4", "clip_range=0.2",
                                             "normalize_advantages=false", "target_kl=null", "ent_coef=0.0",
                                             "clip_range_vf=null", *extra])
    env = make_vec_env(cfg, 1)
    spec = space_spec(env)
    env.close()
    torch.manual_seed(0)
    agent = PPO(cfg, spec)
    obs = torch.tensor([[0.01, 0.0, 0.02, 0.0], [0.0, 0.1, 0.0, -0.1], [-0.02, 0.0, 0.01, 0.3],
                        [0.03, -0.2, 0.0, 0.0]], dtype=torch.float32)
    actions = torch.tensor([0, 1, 1, 0])
    with torch.no_grad():
        own = agent.policy.evaluate(obs, actions).log_probs
    ratios = torch.tensor([r for _, r in SAMPLES])
    advantages = torch.tensor([a for a, _ in SAMPLES])
    zeros = torch.zeros(4)
    return agent, Batch(obs, actions, own - ratios.log(), zeros, advantages, zeros, None)


def test_the_policy_loss_is_the_clipped_surrogate_of_hand_built_ratios() -> None:
    agent, batch = _agent_and_batch([])
    stats = agent.update(batch, 0.0)
    assert stats.policy_loss == pytest.approx(EXPECTED_POLICY_LOSS, abs=1e-5)
    assert stats.clip_fraction == pytest.approx(EXPECTED_CLIP_FRACTION)
    assert stats.clip_range == 0.2 and stats.epochs_completed == 1
    # approx_kl = mean((r - 1) - log r), the low-variance estimator.
    kl = sum((r - 1) - math.log(r) for _, r in SAMPLES) / len(SAMPLES)
    assert stats.approx_kl == pytest.approx(kl, rel=1e-5)


def test_the_value_loss_is_the_squared_error_and_its_clipped_form_takes_the_larger_term() -> None:
    agent, batch = _agent_and_batch([])
    with torch.no_grad():
        values = agent.policy.evaluate(batch.obs, batch.actions).values
    assert values is not None
    returns = values + torch.tensor([1.0, -2.0, 0.5, 0.0])
    old = values - torch.tensor([0.5, 0.5, 0.0, 0.0])
    assert float(agent._value_loss(values, old, returns)) == pytest.approx((1 + 4 + 0.25) / 4, rel=1e-5)
    agent.cfg = agent.cfg.model_copy(update={"clip_range_vf": 0.2})
    # Clipped predictions: old + clamp(0.5, -0.2, 0.2) = values - 0.3 for the first two samples, so their
    # errors become 1.3^2 (larger, kept) and 1.7^2 (smaller than 2^2, not kept); the others move by 0.
    expected = (1.3 ** 2 + 2.0 ** 2 + 0.25 + 0.0) / 4
    assert float(agent._value_loss(values, old, returns)) == pytest.approx(expected, rel=1e-5)


def test_target_kl_stops_before_the_first_step_when_the_ratios_are_far_off() -> None:
    """approx_kl of SAMPLES is ~0.08; with target_kl 0.01 the stop threshold is 1.5 * 0.01 = 0.015."""
    agent, batch = _agent_and_batch(["target_kl=0.01"])
    before = [p.detach().clone() for p in agent.policy.parameters()]
    stats = agent.update(batch, 0.0)
    assert stats.epochs_completed == 0 and stats.policy_loss is None
    assert all(torch.equal(a, b) for a, b in zip(before, agent.policy.parameters(), strict=True))


def test_the_adaptive_learning_rate_follows_the_kl_of_each_update_within_its_bounds() -> None:
    group: dict[str, float] = {}
    adapt_lr_scale(group, kl=0.5, target=0.1)  # past 2x: divided by 1.5
    assert group["lr_scale"] == pytest.approx(1 / 1.5)
    adapt_lr_scale(group, kl=0.15, target=0.1)  # between half and 2x: kept
    assert group["lr_scale"] == pytest.approx(1 / 1.5)
    adapt_lr_scale(group, kl=0.01, target=0.1)  # under half: multiplied by 1.5, never above 1
    adapt_lr_scale(group, kl=0.01, target=0.1)
    assert group["lr_scale"] == 1.0
    for _ in range(100):
        adapt_lr_scale(group, kl=9.0, target=0.1)
    assert group["lr_scale"] == MIN_LR_SCALE


def test_an_update_past_twice_the_adaptive_kl_lowers_the_next_learning_rate_and_a_resume_keeps_it() -> None:
    """SAMPLES' approx_kl is ~0.08: past 2x a target of 0.01, so the update after it runs at lr / 1.5."""
    agent, batch = _agent_and_batch(["adaptive_lr_kl=0.01", "learning_rate=0.001"])
    first = agent.update(batch, 0.0)
    assert first.learning_rate == pytest.approx(0.001) and first.approx_kl is not None and first.approx_kl > 0.02
    second = agent.update(batch, 0.0)
    assert second.learning_rate == pytest.approx(0.001 / 1.5)
    saved = agent.optimizer.state_dict()
    assert saved["param_groups"][0]["lr_scale"] == pytest.approx(1 / 1.5 ** 2)
    fresh, _ = _agent_and_batch(["adaptive_lr_kl=0.01", "learning_rate=0.001"])
    fresh.optimizer.load_state_dict(saved)
    assert fresh.update(batch, 0.0).learning_rate == pytest.approx(0.001 / 1.5 ** 2)
    plain, _ = _agent_and_batch(["learning_rate=0.001"])  # off by default: the rate as set, no scale kept
    plain.update(batch, 0.0)
    assert plain.update(batch, 0.0).learning_rate == pytest.approx(0.001)
    assert "lr_scale" not in plain.optimizer.state_dict()["param_groups"][0]
