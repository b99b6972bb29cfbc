"""Advantage Actor-Critic (Mnih et al. 2016, https://arxiv.org/abs/1602.01783), synchronous (A2C).

The update Stable-Baselines3's A2C makes, on our rollouts: one gradient step per rollout on the whole
rollout, policy loss -(advantage x log pi), squared-error value loss, entropy bonus, global
gradient-norm clip, and RMSprop with SB3's settings (alpha 0.99, eps 1e-5). GAE advantages as PPO's
(``gae_lambda`` 1 is SB3's default, n-step returns), not normalised unless ``normalize_advantages``.

Why ours and not SB3's: the same update costs less than half as much per env step through our
numpy-acting policy and vectorised rollouts (docs/presets.md has the measured figures).
"""

from __future__ import annotations

import torch

from gymnasium_solver.agents.common import (
    ActorCritic,
    Batch,
    PolicyEval,
    Rollout,
    UpdateStats,
    check_finite,
    step_schedules,
)
from gymnasium_solver.agents.optim import GradParts, RMSprop, clip_grad_norm
from gymnasium_solver.agents.ppo import RolloutAgent, gae_targets
from gymnasium_solver.config import A2CConfig, Algo, schedule_start
from gymnasium_solver.envs import SpaceSpec

# SB3's A2C optimizer: torch's RMSprop with alpha 0.99 and eps 1e-5 (rms_prop_eps), no weight decay.
RMSPROP_ALPHA = 0.99
RMSPROP_EPS = 1e-5


class A2C(RolloutAgent):
    algo = Algo.A2C
    cfg: A2CConfig

    def __init__(self, cfg: A2CConfig, spec: SpaceSpec):
        self.cfg = cfg
        self.policy = ActorCritic(spec, cfg, with_critic=True)
        # torch.optim.RMSprop's foreach kernels without torch.optim (gymnasium_solver/agents/optim.py says why).
        self.optimizer = RMSprop(self.policy.parameters(), lr=schedule_start(cfg.learning_rate),
                                 alpha=RMSPROP_ALPHA, eps=RMSPROP_EPS)
        self.grad_parts = GradParts(self.policy.grad_parts()) if cfg.grad_norm_parts else None
        self._scored: tuple[Batch, PolicyEval] | None = None  # targets()' forward pass, kept for update()

    def targets(self, rollout: Rollout) -> Batch:
        """GAE targets from one forward pass with gradients, which update() then differentiates (its one
        gradient step is on these very weights): one pass of the network per rollout instead of two. A pixel
        policy (scored in chunks) and a rollout with invalid steps (an autoreset step) take the two passes: the
        gradient of the valid rows picked from the whole pass sums in another order, so its last bits differ
        from the two-pass update's, and A2C's results stay bit-identical to the recorded ones."""
        if self.policy.pixels or not rollout.valid.all():
            self._scored = None
            return gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda)
        scores, ev = self.policy.score_and_evaluate(rollout.obs, rollout.actions, rollout.last_obs)
        batch = gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda, scores)
        self._scored = (batch, ev)
        return batch

    def update(self, batch: Batch, progress: float) -> UpdateStats:
        """One gradient step on the whole rollout."""
        cfg = self.cfg
        lr, ent_coef = step_schedules(self.optimizer, cfg, progress)
        scored, self._scored = self._scored, None  # its graph serves one backward pass
        ev = scored[1] if scored is not None and scored[0] is batch else self.policy.evaluate(batch.obs, batch.actions)
        adv = batch.advantages
        if cfg.normalize_advantages:
            # SB3's A2C divides by the sample std (Bessel-corrected), unlike PPO's per-minibatch normalize().
            adv = (adv - adv.mean()) / (adv.std(correction=1 if adv.numel() > 1 else 0) + 1e-8)
        policy_loss = -(adv * ev.log_probs).mean()
        assert ev.values is not None
        value_loss = (batch.returns - ev.values).pow(2).mean()
        entropy = ev.entropy.mean()
        loss = policy_loss + cfg.vf_coef * value_loss - ent_coef * entropy
        self.optimizer.zero_grad()
        loss.backward()
        if self.grad_parts is not None:
            self.grad_parts.measure()
        max_norm = cfg.max_grad_norm if cfg.max_grad_norm is not None else float("inf")
        grad_norm = clip_grad_norm(self.optimizer.params, max_norm)
        if not torch.isfinite(loss.detach() + grad_norm):
            check_finite("A2C loss", loss.detach())
            check_finite("gradient norm", grad_norm)
        self.optimizer.step()
        return UpdateStats(
            policy_loss=float(policy_loss.detach()), value_loss=float(value_loss.detach()), entropy=float(entropy.detach()),
            grad_norm=float(grad_norm), learning_rate=lr, ent_coef=ent_coef,
            explained_variance=batch.explained_variance, action_std=self.policy.action_std(),
            extra=None if self.grad_parts is None else self.grad_parts.take(),
        )
