"""MLP forward passes and their gradients in numpy, for PPO's, A2C's and DQN's updates (issue 23 item 4).

A CartPole PPO update is 44 gradient steps on minibatches of 512 through two 64x64 tanh MLPs. Through torch
each step cost about 1.4 ms on our 2-core machine, most of it autograd's and the dispatcher's per-op
bookkeeping around kernels that take microseconds; the same arithmetic written out in numpy (the forward
pass, the loss's gradient with respect to the network's outputs, and each layer's backward pass by hand)
costs about half of that, and the update was two thirds of a solve's time (bench/bench_update.py measures
both paths per preset). The gradients land in the torch parameters' ``.grad`` (``torch.from_numpy``, no
copy), so clipping, ``grad_norm_parts``, the optimizers and their checkpointed state are torch's as before.

The gradients equal autograd's to float32 rounding (tests/test_numpy_grad.py holds them against torch's
on random networks and batches), not to the bit: the sums run in another order. The actor-critic's policy is
a Categorical or a diagonal Gaussian (:class:`NumpyActorCritic`); DQN's Q-network is :class:`NumpyMLP`. Which
actor-critics take this path is :func:`numpy_trainable`; the others (pixels, gSDE) keep torch's autograd.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple, Protocol

import numpy as np
import torch
from torch import nn

from gymnasium_solver.agents.networks import linear_params

Layer = tuple[np.ndarray, np.ndarray]  # (weight [out, in], bias [out]) as numpy views of the parameters
Params = tuple[torch.Tensor, torch.Tensor]


class _Kind(Protocol):
    pixels: bool
    discrete: bool
    sde: bool


def cpu_float32(params: list[torch.Tensor]) -> bool:
    """Whether numpy can take views of these parameters (and numpy's float32 sums stand for torch's)."""
    return all(p.device.type == "cpu" and p.dtype == torch.float32 for p in params)


def numpy_trainable(policy: _Kind, params: list[torch.Tensor]) -> bool:
    """Whether a policy's update runs here: an MLP (not the Nature CNN) with a Categorical or a diagonal Gaussian
    policy (not gSDE) on float32 CPU parameters."""
    return not policy.pixels and not policy.sde and cpu_float32(params)


class Tape(NamedTuple):
    """One forward pass of a batch, with what the backward pass needs."""

    actor: list[np.ndarray]  # the input, then each hidden layer's output (after the activation)
    critic: list[np.ndarray] | None  # the same for the critic's own body (None when it shares the actor's)
    logits: np.ndarray  # [B, n_actions]
    values: np.ndarray  # [B]


class Categorical(NamedTuple):
    """A Categorical policy's quantities for a batch of logits and taken actions."""

    log_probs_all: np.ndarray  # [B, n_actions], log softmax
    probs: np.ndarray  # [B, n_actions]
    log_probs: np.ndarray  # [B], of the taken actions
    entropy: np.ndarray  # [B]


def categorical(logits: np.ndarray, actions: np.ndarray) -> Categorical:
    shifted = logits - logits.max(1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(1, keepdims=True)
    probs = exp / total
    log_probs_all = shifted - np.log(total)
    log_probs = log_probs_all[row_indices(len(actions)), actions]
    return Categorical(log_probs_all, probs, log_probs, -(probs * log_probs_all).sum(1))


def categorical_logit_grad(dist: Categorical, actions: np.ndarray, d_log_probs: np.ndarray,
                           d_entropy: float) -> np.ndarray:
    """d loss / d logits, given d loss / d (each sample's log-prob of its action) and d loss / d (each sample's
    entropy), the same for every sample (``d_entropy``): d log p_a / d z = onehot(a) - p and
    d H / d z = -p (log p + H)."""
    grad = dist.probs * -d_log_probs[:, None]
    grad[row_indices(len(actions)), actions] += d_log_probs
    if d_entropy:
        grad -= d_entropy * dist.probs * (dist.log_probs_all + dist.entropy[:, None])
    return grad


class Gaussian(NamedTuple):
    """A diagonal Gaussian policy's quantities for a batch of means, its state-independent log std and the taken
    (unclipped) actions."""

    z: np.ndarray  # [B, A], (action - mean) / std
    std: np.ndarray  # [A]
    log_probs: np.ndarray  # [B]
    entropy: np.ndarray  # [B]


_LOG_2PI = math.log(2.0 * math.pi)


def gaussian(mean: np.ndarray, log_std: np.ndarray, actions: np.ndarray) -> Gaussian:
    std = np.exp(log_std)
    z = (actions - mean) / std
    log_probs = (-0.5 * z * z - log_std - np.float32(0.5 * _LOG_2PI)).sum(1)
    entropy = np.full(len(mean), float((0.5 + 0.5 * _LOG_2PI + log_std).sum()), np.float32)
    return Gaussian(z, std, log_probs, entropy)


def gaussian_grads(dist: Gaussian, d_log_probs: np.ndarray, d_entropy: float) -> tuple[np.ndarray, np.ndarray]:
    """(d loss / d means, d loss / d log std), given d loss / d (each sample's log-prob) and d loss / d (each sample's
    entropy), the same for every sample: d log p / d mean = z / std, d log p / d log std = z^2 - 1, and each
    sample's entropy grows by 1 with each log std."""
    d_mean = d_log_probs[:, None] * dist.z / dist.std
    d_log_std = d_log_probs @ (dist.z * dist.z - 1.0) + np.float32(d_entropy * len(d_log_probs))
    return d_mean, d_log_std.astype(np.float32)


Distribution = Categorical | Gaussian


def _forward(layers: list[Layer], activation: str, x: np.ndarray) -> list[np.ndarray]:
    out = [x]
    for weight, bias in layers:
        h = out[-1] @ weight.T
        h += bias
        out.append(np.tanh(h, out=h) if activation == "tanh" else np.maximum(h, 0.0, out=h))
    return out


def _backward(layers: list[Layer], activation: str, acts: list[np.ndarray], d_out: np.ndarray,
              grads: list[np.ndarray]) -> None:
    """Through an MLP's hidden layers from d loss / d (its last hidden output): each layer's (weight, bias)
    gradients appended to ``grads`` last layer first (the caller reverses)."""
    d = d_out
    ones = _ones(len(d_out))
    for i in range(len(layers) - 1, -1, -1):
        h = acts[i + 1]
        if activation == "tanh":
            slope = h * h  # tanh' = 1 - tanh^2, from the layer's output
            np.subtract(1.0, slope, out=slope)
            d = np.multiply(d, slope, out=slope)
        else:
            d = d * (h > 0)
        # The bias gradient, a column sum, as a product with ones: BLAS's, several times faster than sum(0).
        grads += [d.T @ acts[i], ones @ d]
        if i:
            d = d @ layers[i][0]


class NumpyActorCritic:
    """An ActorCritic MLP's forward pass and backward pass in numpy, on views of its torch parameters (the
    optimizers update them in place, so the views stay current; rebuild after a load with assign=True)."""

    def __init__(self, actor_body: nn.Module, critic_body: nn.Module | None, actor_head: nn.Linear,
                 value_head: nn.Linear, activation: str, log_std: torch.Tensor | None = None):
        self.activation = activation
        self._log_std = log_std  # a Gaussian policy's learned log std (None: Categorical)
        self._np_log_std = None if log_std is None else log_std.detach().numpy()
        self._actor = linear_params(actor_body)
        self._critic = None if critic_body is None else linear_params(critic_body)
        self._heads: list[Params] = [(actor_head.weight, actor_head.bias), (value_head.weight, value_head.bias)]
        self._np_actor = _views(self._actor)
        self._np_critic = None if self._critic is None else _views(self._critic)
        self._np_actor_head, self._np_value_head = _views(self._heads)

    def forward(self, obs: np.ndarray) -> Tape:
        actor = _forward(self._np_actor, self.activation, obs)
        critic = None if self._np_critic is None else _forward(self._np_critic, self.activation, obs)
        w, b = self._np_actor_head
        logits = actor[-1] @ w.T + b
        w, b = self._np_value_head
        values = (actor[-1] if critic is None else critic[-1]) @ w[0] + b[0]
        return Tape(actor, critic, logits, values)

    def distribution(self, out: np.ndarray, actions: np.ndarray) -> Distribution:
        """The policy's distribution of the tape's head output (logits, or a Gaussian's means) at ``actions``."""
        if self._np_log_std is None:
            return categorical(out, actions)
        return gaussian(out, self._np_log_std, actions)

    def head_grads(self, dist: Distribution, actions: np.ndarray, d_log_probs: np.ndarray,
                   d_entropy: float) -> tuple[np.ndarray, np.ndarray | None]:
        """(d loss / d head output, d loss / d log std or None) from the derivatives by the log-probs and entropies."""
        if isinstance(dist, Categorical):
            return categorical_logit_grad(dist, actions, d_log_probs, d_entropy), None
        return gaussian_grads(dist, d_log_probs, d_entropy)

    def backward(self, tape: Tape, d_logits: np.ndarray, d_values: np.ndarray,
                 d_log_std: np.ndarray | None = None) -> list[np.ndarray]:
        """Set every parameter's ``.grad`` to d loss / d parameter, given d loss / d logits and d loss / d values
        for the tape's rows (the first ``len(d_values)`` rows of a longer tape: A2C's pass includes the
        observations after the rollout, which no loss term reads). Returns the gradients as numpy arrays (the
        same memory as the ``.grad`` tensors)."""
        rows = len(d_values)
        hidden = tape.actor[-1][:rows]
        actor_acts = [a[:rows] for a in tape.actor]
        wa, _ = self._np_actor_head
        wv, _ = self._np_value_head
        head_grads = [d_logits.T @ hidden, _ones(rows) @ d_logits]
        critic_hidden = hidden if tape.critic is None else tape.critic[-1][:rows]
        value_grads = [(d_values @ critic_hidden)[None, :], np.array([d_values.sum()], np.float32)]
        d_hidden = d_logits @ wa
        if tape.critic is None:  # one body under both heads: both gradients pass through it
            d_hidden += d_values[:, None] * wv
        body: list[np.ndarray] = []
        _backward(self._np_actor, self.activation, actor_acts, d_hidden, body)
        grads = _assign(self._actor, _pairs_reversed(body))
        if tape.critic is not None and self._np_critic is not None and self._critic is not None:
            body = []
            _backward(self._np_critic, self.activation, [a[:rows] for a in tape.critic],
                      d_values[:, None] * wv, body)
            grads += _assign(self._critic, _pairs_reversed(body))
        grads += _assign(self._heads, [*head_grads, *value_grads])
        if self._log_std is not None and d_log_std is not None:
            grad = np.ascontiguousarray(d_log_std, dtype=np.float32)
            self._log_std.grad = torch.from_numpy(grad)
            grads.append(grad)
        return grads


@functools.cache
def _ones(n: int) -> np.ndarray:
    return np.ones(n, np.float32)


@functools.cache
def row_indices(n: int) -> np.ndarray:
    """0..n-1 for gathering one entry per row, made once per n (shared: index with it, never write to it)."""
    return np.arange(n)


class NumpyMLP:
    """An MLP ending in a linear layer (DQN's Q-network: ``mlp(...)`` then ``nn.Linear``), its forward and backward
    pass in numpy on views of its parameters, as :class:`NumpyActorCritic` does for the actor-critic."""

    def __init__(self, net: nn.Module, activation: str):
        self.activation = activation
        self._params = linear_params(net)
        self._np = _views(self._params)

    def forward(self, obs: np.ndarray) -> list[np.ndarray]:
        """The input, each hidden layer's output, and the last layer's output (the Q-values)."""
        acts = _forward(self._np[:-1], self.activation, obs)
        weight, bias = self._np[-1]
        return [*acts, acts[-1] @ weight.T + bias]

    def backward(self, acts: list[np.ndarray], d_out: np.ndarray) -> list[np.ndarray]:
        """Set every parameter's ``.grad`` from d loss / d (the last layer's output), given :meth:`forward`'s list;
        the gradients, as numpy arrays sharing the ``.grad`` tensors' memory."""
        weight, _ = self._np[-1]
        hidden = acts[-2]
        head = [d_out.T @ hidden, _ones(len(d_out)) @ d_out]
        body: list[np.ndarray] = []
        _backward(self._np[:-1], self.activation, acts[:-1], d_out @ weight, body)
        return _assign(self._params, [*_pairs_reversed(body), *head])


def _views(params: list[Params]) -> list[Layer]:
    return [(w.detach().numpy(), b.detach().numpy()) for w, b in params]


def _pairs_reversed(grads: list[np.ndarray]) -> list[np.ndarray]:
    """[gW_last, gb_last, ..., gW_first, gb_first] -> [gW_first, gb_first, ..., gW_last, gb_last]."""
    pairs = [grads[i : i + 2] for i in range(0, len(grads), 2)]
    return [g for pair in reversed(pairs) for g in pair]


def _assign(params: list[Params], grads: list[np.ndarray]) -> list[np.ndarray]:
    flat = [p for pair in params for p in pair]
    out = [np.ascontiguousarray(g, dtype=np.float32) for g in grads]
    for p, g in zip(flat, out, strict=True):
        p.grad = torch.from_numpy(g)
    return out


def clip_grad_norm(grads: list[np.ndarray], max_norm: float) -> float:
    """optim.clip_grad_norm on the numpy gradients :meth:`NumpyActorCritic.backward` returned (their memory is
    the parameters' ``.grad``): the global L2 norm (accumulated in float64), and every gradient times
    max_norm / (norm + 1e-6) when that is below 1 (torch's formula)."""
    norm = math.sqrt(sum(float(np.dot(g.ravel(), g.ravel())) for g in grads))
    scale = max_norm / (norm + 1e-6)
    if scale < 1.0:
        for g in grads:
            g *= np.float32(scale)
    return norm
