"""Proximal Policy Optimization (Schulman et al. 2017, https://arxiv.org/abs/1707.06347).

Clipped surrogate objective, GAE advantages normalised per minibatch, value loss with optional
clipping, entropy bonus, global gradient-norm clipping, target-KL early stopping and linear
schedules for the learning rate, clip range and entropy coefficient.
"""

from __future__ import annotations

import itertools

import torch

from gymnasium_solver.agents.common import (
    ActorCritic,
    Batch,
    Rollout,
    RolloutScores,
    RolloutSource,
    UpdateStats,
    check_finite,
    make_batch,
    normalize,
    resolve_device,
    step_schedules,
)
from gymnasium_solver.agents.optim import Adam, GradParts, clip_grad_norm
from gymnasium_solver.config import A2CConfig, Algo, PPOConfig, schedule_start, schedule_value
from gymnasium_solver.envs import SpaceSpec
from gymnasium_solver.maths.advantages import compute_gae, shift_values


def gae_targets(policy: ActorCritic, rollout: Rollout, gamma: float, gae_lambda: float,
                scores: RolloutScores | None = None) -> Batch:
    """GAE advantages and value targets for the rollout's valid steps (PPO and A2C), from ``scores`` when the
    caller has scored the rollout already (A2C's one pass), else from :meth:`ActorCritic.score_rollout`."""
    if scores is None:
        scores = policy.score_rollout(rollout.obs, rollout.actions, rollout.last_obs)
    next_values = shift_values(scores.values, scores.last_values)
    adv, ret = compute_gae(rollout.rewards, scores.values, next_values, rollout.terminated, rollout.truncated,
                           gamma, gae_lambda)
    return make_batch(rollout.obs, rollout.actions, scores.log_probs, scores.values, adv, ret,
                      rollout.valid, with_critic=True).to(policy.device)


class RolloutAgent:
    """What PPO and A2C share: fixed-length rollouts of every sub-env, scored with GAE."""

    cfg: PPOConfig | A2CConfig
    policy: ActorCritic
    # PPO's Adam and A2C's RMSprop are gymnasium_solver/agents/optim.py's: training.py skips importing torch._dynamo.
    uses_torch_optim = False

    def collect(self, collector: RolloutSource) -> Rollout:
        self.policy.reset_noise()  # gSDE draws its noise matrices afresh for every rollout, as SB3's PPO
        return collector.collect_steps(self.policy, self.cfg.n_steps)

    def targets(self, rollout: Rollout) -> Batch:
        return gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda)


class PPO(RolloutAgent):
    algo = Algo.PPO
    cfg: PPOConfig

    def __init__(self, cfg: PPOConfig, spec: SpaceSpec):
        self.cfg = cfg
        self.policy = ActorCritic(spec, cfg, with_critic=True).to(resolve_device(cfg))
        # eps=1e-5 as in the reference implementation (ppo2), not torch's 1e-8. torch's fused Adam kernel
        # (one kernel for all parameters), called without torch.optim (gymnasium_solver/agents/optim.py says why).
        self.optimizer = Adam(self.policy.parameters(), lr=schedule_start(cfg.learning_rate), eps=1e-5)
        self.grad_parts = GradParts(self.policy.grad_parts()) if cfg.grad_norm_parts else None

    def update(self, batch: Batch, progress: float) -> UpdateStats:
        """n_epochs passes of minibatch gradient steps; stops early when the KL passes 1.5 * target_kl."""
        cfg = self.cfg
        lr, ent_coef = step_schedules(self.optimizer, cfg, progress)
        clip = schedule_value(cfg.clip_range, progress)
        n = batch.obs.shape[0]
        # Equal-sized minibatches (never a tiny remainder, whose advantage statistics are noise).
        n_minibatches = max(1, round(n / cfg.batch_size))
        size, extra = divmod(n, n_minibatches)  # tensor_split's sections: the first `extra` one sample longer
        bounds = [i * size + min(i, extra) for i in range(n_minibatches + 1)]
        max_norm = cfg.max_grad_norm if cfg.max_grad_norm is not None else float("inf")
        params = self.optimizer.params
        # Per-minibatch stats stay tensors until the end: every .item() and tiny op costs
        # microseconds that add up over thousands of minibatches.
        stats: list[torch.Tensor] = []  # policy loss, value loss, entropy, grad norm, clip fraction
        kls: list[torch.Tensor] = []
        epochs_completed, stop = 0, False
        for epoch in range(cfg.n_epochs):
            # The KL is needed on every minibatch for early stopping, else only for the last epoch's metric.
            measure_kl = cfg.target_kl is not None or epoch == cfg.n_epochs - 1
            kls = []
            # One gather per tensor per epoch; each minibatch is then a slice of it (the same samples as
            # indexing with its chunk of the permutation, without six index kernels per minibatch).
            perm = torch.randperm(n, device=batch.obs.device)
            obs, actions, old_log_probs, old_values, advantages, returns = (t[perm] for t in batch[:6])
            for start, end in itertools.pairwise(bounds):
                idx = slice(start, end)
                ev = self.policy.evaluate(obs[idx], actions[idx])
                log_ratio = ev.log_probs - old_log_probs[idx]
                ratio = log_ratio.exp()
                if measure_kl:
                    with torch.no_grad():
                        # Low-variance KL estimator, http://joschu.net/blog/kl-approx.html
                        kls.append(((ratio - 1) - log_ratio).mean())
                    if cfg.target_kl is not None and float(kls[-1]) > 1.5 * cfg.target_kl:
                        stop = True
                        break
                adv = normalize(advantages[idx]) if cfg.normalize_advantages else advantages[idx]
                policy_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                assert ev.values is not None
                value_loss = self._value_loss(ev.values, old_values[idx], returns[idx])
                entropy = ev.entropy.mean()
                loss = policy_loss + cfg.vf_coef * value_loss - ent_coef * entropy
                self.optimizer.zero_grad()
                loss.backward()
                if self.grad_parts is not None:
                    self.grad_parts.measure()
                grad_norm = clip_grad_norm(params, max_norm)
                # One check before the step covers both: a non-finite loss gives non-finite gradients.
                if not torch.isfinite(loss.detach() + grad_norm):
                    check_finite("PPO loss", loss.detach())
                    check_finite("gradient norm", grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    clip_fraction = ((ratio - 1).abs() > clip).float().mean()
                    stats.append(torch.stack([policy_loss, value_loss, entropy, grad_norm, clip_fraction]))
            if stop:
                break
            epochs_completed += 1
        # No step at all (KL above target on the first minibatch): nothing was measured.
        means: list[float | None] = torch.stack(stats).mean(0).tolist() if stats else [None] * 5
        return UpdateStats(
            policy_loss=means[0], value_loss=means[1], entropy=means[2], grad_norm=means[3],
            learning_rate=lr, ent_coef=ent_coef, explained_variance=batch.explained_variance,
            approx_kl=float(torch.stack(kls).mean()) if kls else None, clip_fraction=means[4], clip_range=clip,
            epochs_completed=epochs_completed, action_std=self.policy.action_std(),
            extra=None if self.grad_parts is None else self.grad_parts.take(),
        )

    def _value_loss(self, values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
        if self.cfg.clip_range_vf is None:
            return (values - returns).pow(2).mean()
        c = self.cfg.clip_range_vf
        clipped = old_values + (values - old_values).clamp(-c, c)
        return torch.max((values - returns).pow(2), (clipped - returns).pow(2)).mean()
