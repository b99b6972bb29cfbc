"""Advantage Actor-Critic (Mnih et al. 2016, https://arxiv.org/abs/1602.01783), synchronous (A2C).

The update Stable-Baselines3's A2C makes, on our rollouts: one gradient step per rollout on the whole
rollout, policy loss -(advantage x log pi), squared-error value loss, entropy bonus, global
gradient-norm clip, and RMSprop with SB3's settings (alpha 0.99, eps 1e-5). GAE advantages as PPO's
(``gae_lambda`` 1 is SB3's default, n-step returns), not normalised unless ``normalize_advantages``.

Why ours and not SB3's: the same update costs less than half as much per env step through our
numpy-acting policy and vectorised rollouts (docs/presets.md has the measured figures).
"""

from __future__ import annotations

import math

import numpy as np
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
from gymnasium_solver.agents.numpy_grad import Distribution, NumpyActorCritic, Tape
from gymnasium_solver.agents.optim import GradParts, RMSprop, clip_grad_norm
from gymnasium_solver.agents.ppo import _QUIET, RolloutAgent, gae_targets, numpy_actions, numpy_scores
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
        self._taped: tuple[Batch, Tape, Distribution] | None = None  # the same on the numpy path

    def targets(self, rollout: Rollout) -> Batch:
        """GAE targets from one forward pass, which update() then differentiates (its one gradient step is on these
        very weights): one pass of the network per rollout instead of two. On the numpy path (agents/numpy_grad.py:
        an MLP with a Categorical policy) the pass is numpy's and keeps its activations for the backward pass;
        otherwise autograd's, with gradients. A pixel policy (scored in chunks) and a rollout with invalid steps
        (an autoreset step) take two passes: scoring the rollout, then the valid rows in update()."""
        self._scored = self._taped = None
        net = self.policy.numpy_net()
        if net is not None and rollout.valid.all():
            scores, tape, dist = numpy_scores(net, rollout)
            batch = gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda, scores)
            self._taped = (batch, tape, dist)
            return batch
        if self.policy.pixels or not rollout.valid.all():
            return gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda)
        scores, ev = self.policy.score_and_evaluate(rollout.obs, rollout.actions, rollout.last_obs)
        batch = gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda, scores)
        self._scored = (batch, ev)
        return batch

    def update(self, batch: Batch, progress: float) -> UpdateStats:
        """One gradient step on the whole rollout."""
        cfg = self.cfg
        lr, ent_coef = step_schedules(self.optimizer, cfg, progress)
        net = self.policy.numpy_net()
        if net is not None:
            policy_loss, value_loss, entropy, loss = self._numpy_gradients(net, batch, ent_coef)
        else:
            policy_loss, value_loss, entropy, loss = self._torch_gradients(batch, ent_coef)
        if self.grad_parts is not None:
            self.grad_parts.measure()
        max_norm = cfg.max_grad_norm if cfg.max_grad_norm is not None else float("inf")
        grad_norm = float(clip_grad_norm(self.optimizer.params, max_norm))
        if not math.isfinite(loss + grad_norm):  # a non-finite loss gives non-finite gradients
            check_finite("A2C loss", loss)
            check_finite("gradient norm", grad_norm)
        self.optimizer.step()
        return UpdateStats(
            policy_loss=policy_loss, value_loss=value_loss, entropy=entropy,
            grad_norm=grad_norm, learning_rate=lr, ent_coef=ent_coef,
            explained_variance=batch.explained_variance, action_std=self.policy.action_std(),
            extra=None if self.grad_parts is None else self.grad_parts.take(),
        )

    def _advantages(self, adv: torch.Tensor) -> torch.Tensor:
        if not self.cfg.normalize_advantages:
            return adv
        # SB3's A2C divides by the sample std (Bessel-corrected), unlike PPO's per-minibatch normalize().
        return (adv - adv.mean()) / (adv.std(correction=1 if adv.numel() > 1 else 0) + 1e-8)

    def _torch_gradients(self, batch: Batch, ent_coef: float) -> tuple[float, float, float, float]:
        """The loss's gradients through autograd, from targets()' pass when it scored this batch: the policy
        loss, value loss and entropy, and the loss."""
        scored, self._scored = self._scored, None  # its graph serves one backward pass
        ev = scored[1] if scored is not None and scored[0] is batch else self.policy.evaluate(batch.obs, batch.actions)
        policy_loss = -(self._advantages(batch.advantages) * ev.log_probs).mean()
        assert ev.values is not None
        value_loss = (batch.returns - ev.values).pow(2).mean()
        entropy = ev.entropy.mean()
        loss = policy_loss + self.cfg.vf_coef * value_loss - ent_coef * entropy
        self.optimizer.zero_grad()
        loss.backward()
        return float(policy_loss.detach()), float(value_loss.detach()), float(entropy.detach()), float(loss.detach())

    @_QUIET
    def _numpy_gradients(self, net: NumpyActorCritic, batch: Batch,
                         ent_coef: float) -> tuple[float, float, float, float]:
        """:meth:`_torch_gradients` with the forward pass and the gradients in numpy (agents/numpy_grad.py)."""
        taped, self._taped = self._taped, None
        actions = numpy_actions(batch.actions.numpy())
        if taped is not None and taped[0] is batch:
            tape, dist = taped[1], taped[2]
        else:
            tape = net.forward(batch.obs.numpy())
            dist = net.distribution(tape.logits, actions)
        rows = len(actions)
        adv = self._advantages(batch.advantages).numpy()
        values = tape.values[:rows]
        returns = batch.returns.numpy()
        policy_loss = -float((adv * dist.log_probs).mean())
        error = values - returns
        value_loss = float((error * error).mean())
        entropy = float(dist.entropy.mean())
        d_out, d_log_std = net.head_grads(dist, actions, adv * np.float32(-1.0 / rows), -ent_coef / rows)
        net.backward(tape, d_out, error * np.float32(2.0 * self.cfg.vf_coef / rows), d_log_std)
        return policy_loss, value_loss, entropy, policy_loss + self.cfg.vf_coef * value_loss - ent_coef * entropy
