"""Proximal Policy Optimization (Schulman et al. 2017, https://arxiv.org/abs/1707.06347).

Clipped surrogate objective, GAE advantages normalised per minibatch, value loss with optional
clipping, entropy bonus, global gradient-norm clipping, target-KL early stopping and linear
schedules for the learning rate, clip range and entropy coefficient.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
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
from gymnasium_solver.agents.numpy_grad import Distribution, NumpyActorCritic, Tape
from gymnasium_solver.agents.numpy_grad import clip_grad_norm as numpy_clip_grad_norm
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


# A diverging update's overflow is caught by check_finite with a sentence, not by numpy's RuntimeWarnings on stderr.
_QUIET = np.errstate(over="ignore", invalid="ignore", divide="ignore")


@_QUIET
def numpy_actions(actions: np.ndarray) -> np.ndarray:
    """Actions as the numpy distributions take them: indices for a Categorical's, float32 for a Gaussian's."""
    return actions.astype(np.intp) if actions.ndim == 1 else actions.astype(np.float32, copy=False)


def numpy_scores(net: NumpyActorCritic, rollout: Rollout) -> tuple[RolloutScores, Tape, Distribution]:
    """:meth:`ActorCritic.score_rollout` through the numpy forward pass the update differentiates (so a step's
    probability ratios start at exactly 1), with the pass's tape and distribution."""
    t, n = rollout.obs.shape[:2]
    tape = net.forward(np.concatenate([rollout.obs.reshape(t * n, -1), rollout.last_obs]))
    dist = net.distribution(tape.logits[: t * n], numpy_actions(rollout.actions.reshape(t * n, *rollout.actions.shape[2:])))
    scores = RolloutScores(dist.log_probs.reshape(t, n), tape.values[: t * n].reshape(t, n), tape.values[t * n :])
    return scores, tape, dist


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
        net = self.policy.numpy_net()
        scores = None if net is None else numpy_scores(net, rollout)[0]
        return gae_targets(self.policy, rollout, self.cfg.gamma, self.cfg.gae_lambda, scores)


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
        lr, ent_coef = step_schedules(self.optimizer, cfg, progress)  # with adaptive_lr_kl's scale
        clip = schedule_value(cfg.clip_range, progress)
        n = batch.obs.shape[0]
        # Equal-sized minibatches (never a tiny remainder, whose advantage statistics are noise).
        n_minibatches = max(1, round(n / cfg.batch_size))
        size, extra = divmod(n, n_minibatches)  # tensor_split's sections: the first `extra` one sample longer
        bounds = [i * size + min(i, extra) for i in range(n_minibatches + 1)]
        max_norm = cfg.max_grad_norm if cfg.max_grad_norm is not None else float("inf")
        net = self.policy.numpy_net()
        # Per-minibatch stats stay tensors (numpy arrays and floats on the numpy path) until the end: every .item()
        # and tiny op costs microseconds that add up over thousands of minibatches.
        stats: list[Any] = []  # policy loss, value loss, entropy, grad norm, clip fraction
        kls: list[Any] = []
        epochs_completed, stop = 0, False
        if net is not None:
            unshuffled = [t.numpy() for t in batch[:6]]
            unshuffled[1] = numpy_actions(unshuffled[1])
        for epoch in range(cfg.n_epochs):
            # The KL is needed on every minibatch for early stopping, else only for the last epoch's metric.
            measure_kl = cfg.target_kl is not None or epoch == cfg.n_epochs - 1
            kls = []
            # One gather per tensor per epoch; each minibatch is then a slice of it (the same samples as
            # indexing with its chunk of the permutation, without six index kernels per minibatch).
            perm = torch.randperm(n, device=batch.obs.device)
            if net is not None:
                arrays = [a[perm.numpy()] for a in unshuffled]
            else:
                shuffled = [t[perm] for t in batch[:6]]
            for start, end in itertools.pairwise(bounds):
                step: tuple[Any, Any]
                if net is not None:
                    step = self._numpy_step(net, [a[start:end] for a in arrays], clip, ent_coef, measure_kl, max_norm)
                else:
                    step = self._torch_step([t[start:end] for t in shuffled], clip, ent_coef, measure_kl, max_norm)
                kl, measured = step
                if kl is not None:
                    kls.append(kl)
                if measured is None:
                    stop = True
                    break
                stats.append(measured)
            if stop:
                break
            epochs_completed += 1
        # No step at all (KL above target on the first minibatch): nothing was measured.
        means: list[float | None] = [None] * 5
        if stats:
            means = (np.mean(stats, 0) if net is not None else torch.stack(stats).mean(0)).tolist()
        approx_kl = _mean(kls)
        if cfg.adaptive_lr_kl is not None and approx_kl is not None:
            adapt_lr_scale(self.optimizer.param_groups[0], approx_kl, cfg.adaptive_lr_kl)
        return UpdateStats(
            policy_loss=means[0], value_loss=means[1], entropy=means[2], grad_norm=means[3],
            learning_rate=lr, ent_coef=ent_coef, explained_variance=batch.explained_variance,
            approx_kl=approx_kl, clip_fraction=means[4], clip_range=clip,
            epochs_completed=epochs_completed, action_std=self.policy.action_std(),
            extra=None if self.grad_parts is None else self.grad_parts.take(),
        )

    def _torch_step(self, mb: list[torch.Tensor], clip: float, ent_coef: float, measure_kl: bool,
                    max_norm: float) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """One gradient step through autograd: (the KL estimate or None, the five stats; None when the KL
        stopped the update before the step)."""
        cfg = self.cfg
        obs, actions, old_log_probs, old_values, advantages, returns = mb
        ev = self.policy.evaluate(obs, actions)
        log_ratio = ev.log_probs - old_log_probs
        ratio = log_ratio.exp()
        kl = None
        if measure_kl:
            with torch.no_grad():
                # Low-variance KL estimator, http://joschu.net/blog/kl-approx.html
                kl = ((ratio - 1) - log_ratio).mean()
            if cfg.target_kl is not None and float(kl) > 1.5 * cfg.target_kl:
                return kl, None
        adv = normalize(advantages) if cfg.normalize_advantages else advantages
        policy_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - clip, 1 + clip)).mean()
        assert ev.values is not None
        value_loss = self._value_loss(ev.values, old_values, returns)
        entropy = ev.entropy.mean()
        loss = policy_loss + cfg.vf_coef * value_loss - ent_coef * entropy
        self.optimizer.zero_grad()
        loss.backward()
        grad_norm = self._clip_and_step(loss.detach(), max_norm)
        with torch.no_grad():
            clip_fraction = ((ratio - 1).abs() > clip).float().mean()
            return kl, torch.stack([policy_loss, value_loss, entropy, grad_norm, clip_fraction])

    @_QUIET
    def _numpy_step(self, net: NumpyActorCritic, mb: list[np.ndarray], clip: float, ent_coef: float,
                    measure_kl: bool, max_norm: float) -> tuple[float | None, np.ndarray | None]:
        """:meth:`_torch_step`'s gradient step with the forward pass and the gradients in numpy
        (agents/numpy_grad.py): the same losses, their derivatives written out."""
        cfg = self.cfg
        obs, actions, old_log_probs, old_values, advantages, returns = mb
        tape = net.forward(obs)
        dist = net.distribution(tape.logits, actions)
        log_ratio = dist.log_probs - old_log_probs
        ratio = np.exp(log_ratio)
        kl = float(((ratio - 1) - log_ratio).sum()) / len(ratio) if measure_kl else None
        if kl is not None and cfg.target_kl is not None and kl > 1.5 * cfg.target_kl:
            return kl, None
        b = len(advantages)
        adv = advantages
        if cfg.normalize_advantages:
            centred = adv - adv.sum() / b
            adv = centred / (math.sqrt(float(np.dot(centred, centred)) / b) + 1e-8)
        surrogate = adv * ratio
        clipped = adv * np.clip(ratio, 1 - clip, 1 + clip)
        policy_loss = -float(np.minimum(surrogate, clipped).sum()) / b
        # -min(...).mean()'s derivative by each log-prob: the unclipped term's, -A r / B, where it is the smaller
        # (where the clipped one is smaller r lies outside the clip range and its derivative is 0).
        d_log_probs = np.where(surrogate <= clipped, surrogate * np.float32(-1.0 / b), np.float32(0.0))
        value_loss, d_values = self._numpy_value_loss(tape.values, old_values, returns)
        entropy = float(dist.entropy.sum()) / b
        loss = policy_loss + cfg.vf_coef * value_loss - ent_coef * entropy
        d_out, d_log_std = net.head_grads(dist, actions, d_log_probs, -ent_coef / b)
        grads = net.backward(tape, d_out, d_values * np.float32(cfg.vf_coef), d_log_std)
        if self.grad_parts is not None:
            self.grad_parts.measure()
        grad_norm = numpy_clip_grad_norm(grads, max_norm)
        if not math.isfinite(loss + grad_norm):  # a non-finite loss gives non-finite gradients
            check_finite("PPO loss", loss)
            check_finite("gradient norm", grad_norm)
        self.optimizer.step()
        clip_fraction = np.count_nonzero(np.abs(ratio - 1) > clip) / b
        return kl, np.array([policy_loss, value_loss, entropy, grad_norm, clip_fraction])

    def _clip_and_step(self, loss: torch.Tensor, max_norm: float) -> torch.Tensor:
        """Clip the gradients' global norm, check the loss and the norm are finite, step: the gradient norm."""
        if self.grad_parts is not None:
            self.grad_parts.measure()
        grad_norm = clip_grad_norm(self.optimizer.params, max_norm)
        # One check before the step covers both: a non-finite loss gives non-finite gradients.
        if not torch.isfinite(loss + grad_norm):
            check_finite("PPO loss", loss)
            check_finite("gradient norm", grad_norm)
        self.optimizer.step()
        return grad_norm

    def _numpy_value_loss(self, values: np.ndarray, old_values: np.ndarray,
                          returns: np.ndarray) -> tuple[float, np.ndarray]:
        """:meth:`_value_loss` and its derivative by each value."""
        b = len(values)
        error = values - returns
        if self.cfg.clip_range_vf is None:
            return float(np.dot(error, error)) / b, error * np.float32(2.0 / b)
        c = self.cfg.clip_range_vf
        moved = values - old_values
        clipped_error = old_values + np.clip(moved, -c, c) - returns
        unclipped_larger = error * error >= clipped_error * clipped_error
        loss = float(np.maximum(error * error, clipped_error * clipped_error).sum()) / b
        # The clipped term's derivative passes only inside the clip range (torch.clamp's, bounds included).
        inside = np.abs(moved) <= c
        d_values = np.where(unclipped_larger, error, np.where(inside, clipped_error, np.float32(0.0)))
        return loss, d_values * np.float32(2.0 / b)

    def _value_loss(self, values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
        if self.cfg.clip_range_vf is None:
            return (values - returns).pow(2).mean()
        c = self.cfg.clip_range_vf
        clipped = old_values + (values - old_values).clamp(-c, c)
        return torch.max((values - returns).pow(2), (clipped - returns).pow(2)).mean()


MIN_LR_SCALE = 1e-3  # the adaptive learning rate's floor, as a share of learning_rate's own value


def adapt_lr_scale(group: dict[str, Any], kl: float, target: float) -> None:
    """rl_games' adaptive learning rate (its ``lr_schedule: adaptive``): after an update whose KL passed 2x the
    target the next one's learning rate is divided by 1.5, after one under half of it multiplied by 1.5; the
    scale stays between MIN_LR_SCALE and 1 (never above learning_rate's own value, which a schedule still sets).
    It lives in the optimizer's group, so a resume keeps it, and step_schedules applies it."""
    scale = group.get("lr_scale", 1.0)
    if kl > 2.0 * target:
        scale = max(scale / 1.5, MIN_LR_SCALE)
    elif kl < 0.5 * target:
        scale = min(scale * 1.5, 1.0)
    group["lr_scale"] = scale


def _mean(kls: list[Any]) -> float | None:
    """The mean of an update's KL estimates (tensors from autograd's steps, floats from numpy's), None for none."""
    if not kls:
        return None
    return float(torch.stack(kls).mean()) if isinstance(kls[0], torch.Tensor) else float(np.mean(kls))
