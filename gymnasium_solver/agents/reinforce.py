"""REINFORCE (Williams 1992) with an optional learned baseline.

Each update uses ``episodes_per_update`` complete episodes collected with the current policy:
the policy gradient of log pi(a|s) weighted by the discounted return-to-go (minus the baseline's
value when ``use_baseline``), one gradient step per update.
"""

from __future__ import annotations

import numpy as np

from gymnasium_solver.agents.common import (
    ActorCritic,
    Batch,
    Rollout,
    RolloutSource,
    UpdateStats,
    check_finite,
    make_batch,
    normalize,
    step_schedules,
)
from gymnasium_solver.agents.optim import Adam, GradParts, clip_grad_norm
from gymnasium_solver.config import Algo, ReinforceConfig, schedule_start
from gymnasium_solver.envs import SpaceSpec
from gymnasium_solver.maths.advantages import compute_returns_to_go, shift_values

# Upper bound on vector steps per rollout, so an environment whose episodes never end cannot
# hang the collection: the episodes that did finish are used.
MAX_ROLLOUT_STEPS = 100_000


class Reinforce:
    algo = Algo.REINFORCE
    uses_torch_optim = False  # Adam is gymnasium_solver/agents/optim.py's: training.py skips importing torch._dynamo

    def __init__(self, cfg: ReinforceConfig, spec: SpaceSpec):
        self.cfg = cfg
        self.policy = ActorCritic(spec, cfg, with_critic=cfg.use_baseline)
        # torch.optim.Adam(fused=True)'s kernel without torch.optim (gymnasium_solver/agents/optim.py says why).
        self.optimizer = Adam(self.policy.parameters(), lr=schedule_start(cfg.learning_rate))
        self.grad_parts = GradParts(self.policy.grad_parts()) if cfg.grad_norm_parts else None

    def collect(self, collector: RolloutSource) -> Rollout:
        return collector.collect_episodes(self.policy, self.cfg.episodes_per_update, MAX_ROLLOUT_STEPS)

    def targets(self, rollout: Rollout) -> Batch:
        """Returns-to-go of the complete episodes; advantages subtract the baseline when there is one.
        Truncated episodes bootstrap from the baseline's value of their final observation."""
        scores = self.policy.score_rollout(rollout.obs, rollout.actions, rollout.last_obs)
        if self.cfg.use_baseline:
            next_values = shift_values(scores.values, scores.last_values)
        else:
            next_values = np.zeros_like(scores.values)
        returns = compute_returns_to_go(
            rollout.rewards, rollout.terminated, rollout.truncated, next_values, self.cfg.gamma
        )
        advantages = returns - scores.values if self.cfg.use_baseline else returns
        return make_batch(rollout.obs, rollout.actions, scores.log_probs, scores.values, advantages, returns,
                          rollout.valid, with_critic=self.cfg.use_baseline)

    def update(self, batch: Batch, progress: float) -> UpdateStats:
        """One gradient step on the whole batch."""
        cfg = self.cfg
        lr, ent_coef = step_schedules(self.optimizer, cfg, progress)
        ev = self.policy.evaluate(batch.obs, batch.actions)
        adv = normalize(batch.advantages) if cfg.normalize_advantages else batch.advantages
        policy_loss = -(ev.log_probs * adv).mean()
        entropy = ev.entropy.mean()
        loss = policy_loss - ent_coef * entropy
        value_loss = None
        if ev.values is not None:
            value_loss = (ev.values - batch.returns).pow(2).mean()
            loss = loss + cfg.vf_coef * value_loss
        check_finite("REINFORCE loss", loss)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.grad_parts is not None:
            self.grad_parts.measure()
        grad_norm = clip_grad_norm(self.optimizer.params,
                                   cfg.max_grad_norm if cfg.max_grad_norm is not None else float("inf"))
        check_finite("gradient norm", grad_norm)
        self.optimizer.step()
        return UpdateStats(
            policy_loss=policy_loss.item(), value_loss=None if value_loss is None else value_loss.item(),
            entropy=entropy.item(), grad_norm=float(grad_norm), learning_rate=lr, ent_coef=ent_coef,
            explained_variance=batch.explained_variance, action_std=self.policy.action_std(),
            extra=None if self.grad_parts is None else self.grad_parts.take(),
        )
