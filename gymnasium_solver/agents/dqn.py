"""Deep Q-Network (Mnih et al. 2015, https://doi.org/10.1038/nature14236): the update
Stable-Baselines3's DQN makes, on our vectorised environments.

The loop is SB3's: collect ``train_freq`` steps of every sub-environment (uniformly random actions
before ``learning_starts`` env steps, then epsilon-greedy with epsilon decaying linearly over
``exploration_fraction`` of the budget), then ``gradient_steps`` gradient steps on uniform replay
minibatches (``-1``: one per env step collected); ``DQN.learn`` runs ``iteration_steps`` env steps of it
(an off-policy agent, gymnasium_solver/agents/interface.py). A gradient step is SB3's: the TD target
``r + (1 - terminated) * gamma^k * max_a Q_target(s', a)`` (with ``double_q``, Double DQN's
``Q_target(s', argmax_a Q(s', a))``: the online network picks, the target values), Huber loss on ``Q(s, a)``, the global
gradient norm clipped at ``max_grad_norm``, Adam (torch's defaults). The target network moves
towards the online one (``tau``; 1 = copy) once every ``target_update_interval`` env steps.
``n_steps`` > 1 stores n-step returns: an episode's end (terminated or truncated) cuts them short,
and a truncated episode bootstraps from its last observation. tests/test_dqn.py checks a gradient
step against SB3's ``DQN.train()``.

Where ours differs from SB3's, on purpose: each sub-environment draws its own epsilon coin (SB3
draws one for all of them); n-step returns are summed when a transition is stored, not when it is
sampled (the same targets); Adam is torch's fused kernel (the same update, rounded differently), called
without torch.optim (gymnasium_solver/agents/optim.py: the same kernels and bits, without torch.optim's per-step
wrapping; docs/ecosystem.md has the measured difference).

Why ours and not SB3's: acting in numpy on our vectorised envs and a leaner gradient step cost
less per env step (docs/presets.md has the measured figures), and a run can be resumed: the replay
buffer is part of its resumable checkpoints.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 - torch's own convention

from gymnasium_solver.agents.common import ActOutput, NonFiniteLossError, Rollout, UpdateStats, tensors_finite
from gymnasium_solver.agents.interface import LearnChunk
from gymnasium_solver.agents.networks import linear_params, mlp, numpy_mlp, numpy_views, torch_mlp
from gymnasium_solver.agents.numpy_grad import NumpyMLP, cpu_float32, row_indices
from gymnasium_solver.agents.numpy_grad import clip_grad_norm as numpy_clip_grad_norm
from gymnasium_solver.agents.optim import Adam, GradParts, clip_grad_norm
from gymnasium_solver.config import Algo, DQNConfig, schedule_start, schedule_value
from gymnasium_solver.contract.algorithms import BOX, takes
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.envs import SpaceSpec

Q_SAMPLE = 256  # replay transitions the mean Q-value is measured on


class QNetwork(nn.Module):
    """Q-values of every action: SB3's DQN network (hidden layers, then one linear output per
    action; torch's default initialisation). Acts greedily, in numpy for a batch of observations."""

    def __init__(self, spec: SpaceSpec, cfg: DQNConfig):
        super().__init__()
        if not spec.discrete:
            raise ValueError(f"dqn needs discrete actions, but {cfg.env_id} has continuous (Box) actions; "
                             f"use {', '.join(takes(BOX))} for it")
        if spec.pixels:
            raise ValueError(f"dqn trains an MLP on vector observations, but {cfg.env_id} has image "
                             "observations; use ppo (network: nature_cnn) for it")
        self.spec = spec
        self.activation = cfg.activation
        sizes = [spec.obs_dim, *cfg.hidden_sizes]
        self.q_net = nn.Sequential(*mlp(sizes, cfg.activation), nn.Linear(sizes[-1], spec.n_actions))
        self._np_cache: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._layers: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self._numpy_net: NumpyMLP | None = None

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def grad_parts(self) -> dict[str, list[nn.Parameter]]:
        """The parameters of each part ``grad_norm_parts`` measures: the hidden layers and the output layer."""
        return {M.GRAD_NORM_TRUNK: list(self.q_net[:-1].parameters()),
                M.GRAD_NORM_HEAD: list(self.q_net[-1].parameters())}

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """``self.q_net(obs)``: the same kernels called directly (nn.Module's call machinery, twice per
        layer, costs as much as a 64-unit layer's kernel, several times per gradient step)."""
        if self._layers is None:
            self._layers = linear_params(self.q_net)
        weight, bias = self._layers[-1]
        return F.linear(torch_mlp(self._layers[:-1], self.activation, obs), weight, bias)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        # They must follow the parameters if assign=True replaces them.
        self._np_cache = self._layers = self._numpy_net = None
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def q_values(self, obs: np.ndarray) -> np.ndarray:
        """Q-values of a batch, in numpy on views of the parameters (the optimizer updates them in
        place): for a few observations per env step this is several times faster than torch."""
        if self._np_cache is None:
            self._np_cache = numpy_views([m for m in self.q_net if isinstance(m, nn.Linear)])
        return numpy_mlp(self._np_cache, self.activation, obs)[1]

    def act(self, obs: np.ndarray, rng: np.random.Generator | None, deterministic: bool = False) -> ActOutput:
        """The greedy action of each observation (exploration is the agent's: see ``Explorer``)."""
        actions = self.q_values(obs).argmax(-1)
        return ActOutput(actions, actions)

    def all_finite(self) -> bool:
        return tensors_finite(list(self.parameters()))

    def numpy_net(self) -> NumpyMLP | None:
        """The forward and backward pass in numpy (agents/numpy_grad.py) DQN's gradient steps take; None for
        parameters that are not float32 on the CPU."""
        if self._numpy_net is None and cpu_float32(list(self.parameters())):
            self._numpy_net = NumpyMLP(self.q_net, self.activation)
        return self._numpy_net


class Explorer:
    """Epsilon-greedy over a QNetwork, what the collector steps the training envs with: uniformly
    random actions before ``learning_starts`` env steps, then each sub-env explores with probability
    ``epsilon`` (SB3's linear schedule over ``exploration_fraction`` of the budget)."""

    def __init__(self, q: QNetwork, cfg: DQNConfig):
        self.q, self.cfg = q, cfg
        self.env_steps = 0  # set by the agent before each collection; counts the steps acted on
        self.epsilon = cfg.exploration_initial_eps

    def epsilon_at(self, env_steps: int) -> float:
        cfg = self.cfg
        progress = env_steps / cfg.max_env_steps
        if cfg.exploration_fraction <= 0 or progress >= cfg.exploration_fraction:
            return cfg.exploration_final_eps
        return cfg.exploration_initial_eps + progress * (cfg.exploration_final_eps - cfg.exploration_initial_eps) \
            / cfg.exploration_fraction

    def act(self, obs: np.ndarray, rng: np.random.Generator | None, deterministic: bool = False) -> ActOutput:
        assert rng is not None
        n = obs.shape[0]
        random_actions = np.asarray(rng.integers(0, self.q.spec.n_actions, n))
        actions: np.ndarray
        if self.env_steps < self.cfg.learning_starts:
            actions = random_actions
        else:
            actions = np.where(rng.random(n) < self.epsilon, random_actions, self.q.q_values(obs).argmax(-1))
        self.env_steps += n
        self.epsilon = self.epsilon_at(self.env_steps)  # SB3 updates it after each step, for the next one
        return ActOutput(actions, actions)


class Sample(NamedTuple):
    obs: torch.Tensor
    actions: torch.Tensor
    returns: torch.Tensor  # the (n-step) discounted reward sum
    next_obs: torch.Tensor
    terminated: torch.Tensor  # 1.0 where the episode ended in a terminal state: no bootstrap
    discounts: torch.Tensor  # gamma^k, k the rewards summed


_BUFFER_ARRAYS = ("obs", "next_obs", "actions", "returns", "terminated", "discounts")


class ReplayBuffer:
    """A circular buffer of (n-step) transitions in preallocated numpy arrays."""

    def __init__(self, capacity: int, obs_dim: int, n_envs: int, n_steps: int, gamma: float):
        self.capacity, self.n_steps, self.gamma = capacity, n_steps, gamma
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), np.float32)
        self.actions = np.zeros(capacity, np.int64)
        self.returns = np.zeros(capacity, np.float32)
        self.terminated = np.zeros(capacity, np.float32)
        self.discounts = np.zeros(capacity, np.float32)
        self.pos = 0
        self.size = 0
        # n-step returns: each sub-env's last (obs, action, reward) steps not yet stored.
        self._windows: list[deque[tuple[np.ndarray, int, float]]] = [deque() for _ in range(n_envs)]

    def add_rollout(self, rollout: Rollout) -> None:
        """Store a collected rollout's valid steps (time-major; reset steps are not transitions)."""
        next_obs = np.concatenate([rollout.obs[1:], rollout.last_obs[None]])
        for t in range(rollout.obs.shape[0]):
            self.add(rollout.obs[t], rollout.actions[t], rollout.rewards[t], rollout.terminated[t],
                     rollout.truncated[t], next_obs[t], rollout.valid[t])

    def add(self, obs: np.ndarray, actions: np.ndarray, rewards: np.ndarray, terminated: np.ndarray,
            truncated: np.ndarray, next_obs: np.ndarray, valid: np.ndarray) -> None:
        """One vector step: ``next_obs`` is each sub-env's observation after the step (its final
        observation where the episode ended)."""
        if self.n_steps == 1:
            keep = np.flatnonzero(valid)
            self._store(obs[keep], actions[keep], rewards[keep], next_obs[keep], terminated[keep],
                        np.full(len(keep), self.gamma, np.float32))
            return
        for i in np.flatnonzero(valid):
            window = self._windows[i]
            window.append((obs[i], int(actions[i]), float(rewards[i])))
            ended = bool(terminated[i] or truncated[i])
            if len(window) == self.n_steps or ended:
                self._flush(window, next_obs[i], bool(terminated[i]), everything=ended)

    def _flush(self, window: deque[tuple[np.ndarray, int, float]], next_obs: np.ndarray, terminated: bool,
               everything: bool) -> None:
        """Store the window's oldest step with the rewards after it (all of its steps if the episode ended)."""
        while window:
            ret = 0.0
            for k, (_, _, reward) in enumerate(window):
                ret += self.gamma**k * reward
            obs, action, _ = window.popleft()
            self._store(obs[None], np.array([action]), np.array([ret], np.float32), next_obs[None],
                        np.array([terminated], np.float32), np.array([self.gamma ** (len(window) + 1)], np.float32))
            if not everything:
                return

    def _store(self, obs: np.ndarray, actions: np.ndarray, returns: np.ndarray, next_obs: np.ndarray,
               terminated: np.ndarray, discounts: np.ndarray) -> None:
        for start in range(0, len(obs), self.capacity):  # more rows than capacity: the last ones win
            chunk = slice(start, start + self.capacity)
            idx = (self.pos + np.arange(len(obs[chunk]))) % self.capacity
            self.obs[idx], self.next_obs[idx], self.actions[idx] = obs[chunk], next_obs[chunk], actions[chunk]
            self.returns[idx], self.terminated[idx], self.discounts[idx] = returns[chunk], terminated[chunk], discounts[chunk]
            self.pos = int((self.pos + len(idx)) % self.capacity)
            self.size = min(self.size + len(idx), self.capacity)

    def sample(self, rng: np.random.Generator, batch_size: int) -> Sample:
        return Sample(*map(torch.from_numpy, self.sample_arrays(rng, batch_size)))

    def sample_arrays(self, rng: np.random.Generator, batch_size: int) -> tuple[np.ndarray, ...]:
        """:meth:`sample`'s arrays (the same draw), for the numpy gradient step."""
        idx = rng.integers(0, self.size, batch_size)
        return (self.obs[idx], self.actions[idx], self.returns[idx], self.next_obs[idx], self.terminated[idx],
                self.discounts[idx])

    def drop_pending(self) -> None:
        """Forget the unfinished n-step windows (a resumed run's envs start fresh episodes)."""
        for window in self._windows:
            window.clear()

    def state_dict(self) -> dict[str, Any]:
        """The filled part, as tensors (checkpoints are read with ``torch.load(weights_only=True)``)."""
        n = self.size
        state: dict[str, Any] = {"pos": self.pos, "size": n}
        for key in _BUFFER_ARRAYS:
            state[key] = torch.from_numpy(getattr(self, key)[:n].copy())
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        n = int(state["size"])
        for key in _BUFFER_ARRAYS:
            getattr(self, key)[:n] = np.asarray(state[key])
        self.pos, self.size = int(state["pos"]), n
        self.drop_pending()


class TrainingParts:
    """What a resumable DQN checkpoint saves beyond the online weights (the trainer saves an agent's
    ``optimizer``): Adam's state, the target network, the replay buffer, the sampling RNG and the
    env-step counter the target updates follow."""

    def __init__(self, agent: DQN):
        self.agent = agent

    def state_dict(self) -> dict[str, Any]:
        a = self.agent
        return {"adam": a.adam.state_dict(), "target": a.target.state_dict(), "buffer": a.buffer.state_dict(),
                "rng": a.rng.bit_generator.state, "vector_steps": a.vector_steps}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        a = self.agent
        a.adam.load_state_dict(state["adam"])
        a.target.load_state_dict(state["target"])
        a.buffer.load_state_dict(state["buffer"])
        a.rng.bit_generator.state = state["rng"]
        a.vector_steps = int(state["vector_steps"])


class DQN:
    algo = Algo.DQN
    uses_torch_optim = False  # Adam is gymnasium_solver/agents/optim.py's: training.py skips importing torch._dynamo

    def __init__(self, cfg: DQNConfig, spec: SpaceSpec):
        self.cfg = cfg
        self.policy = QNetwork(spec, cfg)
        self.target = QNetwork(spec, cfg)
        self.target.load_state_dict(self.policy.state_dict())
        self.target.requires_grad_(False)
        # torch's fused Adam kernel for every parameter, SB3's update (Adam, eps 1e-8) rounded differently.
        self.adam = Adam(self.policy.parameters(), lr=schedule_start(cfg.learning_rate))
        self.grad_parts = GradParts(self.policy.grad_parts()) if cfg.grad_norm_parts else None
        self.optimizer = TrainingParts(self)
        self.explorer = Explorer(self.policy, cfg)
        self.buffer = ReplayBuffer(cfg.buffer_size, spec.obs_dim, cfg.n_envs, cfg.n_steps, cfg.gamma)
        self.rng = np.random.default_rng(cfg.seed)  # replay sampling
        self.vector_steps = 0  # SB3's _n_calls: env.step() calls, which the target updates count
        self.n_updates = 0
        self._losses: list[float] = []
        self._grad_norms: list[float] = []

    def learn(self, collector: Any) -> LearnChunk:
        """``iteration_steps`` env steps, each ``train_freq`` vector steps followed by its gradient steps.
        A non-finite loss raises NonFiniteLossError before the optimizer step (the session then puts
        back the iteration's starting weights, as it does for non-finite weights)."""
        cfg = self.cfg
        start = collector.env_steps
        target = min(start + cfg.iteration_steps, cfg.max_env_steps)
        gradient_seconds = 0.0
        while collector.env_steps < target:
            self.explorer.env_steps = collector.env_steps
            self.explorer.epsilon = self.explorer.epsilon_at(collector.env_steps)  # a resumed run's too
            rollout = collector.collect_steps(self.explorer, cfg.train_freq)
            self.buffer.add_rollout(rollout)
            self._update_target(rollout.obs.shape[0])
            if collector.env_steps > cfg.learning_starts and self.buffer.size > 0:
                t0 = time.perf_counter()
                steps = cfg.gradient_steps if cfg.gradient_steps >= 0 else rollout.env_steps
                self._set_learning_rate(collector.env_steps / cfg.max_env_steps)
                for _ in range(steps):
                    self._gradient_step()
                gradient_seconds += time.perf_counter() - t0
        return LearnChunk(collector.env_steps - start, gradient_seconds)

    def _update_target(self, vector_steps: int) -> None:
        """SB3 moves the target after every env.step() whose count is a multiple of the interval (in
        vector steps). The online network does not change while collecting, so k such moves by tau
        are one move by 1 - (1 - tau)^k."""
        every = max(self.cfg.target_update_interval // self.cfg.n_envs, 1)
        moves = (self.vector_steps + vector_steps) // every - self.vector_steps // every
        self.vector_steps += vector_steps
        if moves == 0:
            return
        tau = 1.0 - (1.0 - self.cfg.tau) ** moves
        with torch.no_grad():
            for t, p in zip(self.target.parameters(), self.policy.parameters(), strict=True):
                if tau < 1.0:
                    t.mul_(1.0 - tau).add_(p, alpha=tau)
                else:
                    t.copy_(p)
        self.target._np_cache = None

    def _set_learning_rate(self, progress: float) -> None:
        lr = schedule_value(self.cfg.learning_rate, progress)
        for group in self.adam.param_groups:
            group["lr"] = lr

    def _gradient_step(self) -> None:
        max_norm = self.cfg.max_grad_norm if self.cfg.max_grad_norm is not None else math.inf
        net = self.policy.numpy_net()
        if net is not None:
            loss_value, norm_value = self._numpy_gradients(net, self.buffer.sample_arrays(self.rng, self.cfg.batch_size),
                                                           max_norm)
        else:
            b = self.buffer.sample(self.rng, self.cfg.batch_size)
            with torch.no_grad():
                if self.cfg.double_q:
                    picked = self.policy(b.next_obs).argmax(dim=1, keepdim=True)
                    next_q = self.target(b.next_obs).gather(1, picked).squeeze(1)
                else:
                    next_q = self.target(b.next_obs).max(dim=1).values
                td_target = b.returns + (1.0 - b.terminated) * b.discounts * next_q
            q = self.policy(b.obs).gather(1, b.actions.unsqueeze(1)).squeeze(1)
            loss = F.smooth_l1_loss(q, td_target)
            self.adam.zero_grad(set_to_none=True)
            loss.backward()
            if self.grad_parts is not None:
                self.grad_parts.measure()
            loss_value, norm_value = float(loss.detach()), float(clip_grad_norm(self.adam.params, max_norm))
        if not math.isfinite(loss_value + norm_value):
            raise NonFiniteLossError(f"non-finite TD loss ({loss_value}) or gradient norm ({norm_value}) "
                                     f"at gradient step {self.n_updates + 1}")
        self.adam.step()
        self.n_updates += 1
        self._losses.append(loss_value)
        self._grad_norms.append(norm_value)

    @np.errstate(over="ignore", invalid="ignore")  # a non-finite loss raises NonFiniteLossError with a sentence
    def _numpy_gradients(self, net: NumpyMLP, sample: tuple[np.ndarray, ...], max_norm: float) -> tuple[float, float]:
        """The TD loss's gradients (Huber, SB3's smooth_l1_loss) through numpy (agents/numpy_grad.py), clipped: the
        loss and the gradient norm before the clip."""
        obs, actions, returns, next_obs, terminated, discounts = sample
        rows = row_indices(len(returns))
        next_q = self.target.q_values(next_obs)
        next_q = next_q[rows, self.policy.q_values(next_obs).argmax(1)] if self.cfg.double_q else next_q.max(1)
        td_target = returns + (1.0 - terminated) * discounts * next_q
        acts = net.forward(obs)
        error = acts[-1][rows, actions] - td_target
        size = np.abs(error)
        loss = float(np.where(size < 1.0, 0.5 * error * error, size - 0.5).sum()) / len(error)
        d_q = np.zeros_like(acts[-1])
        d_q[rows, actions] = np.clip(error, -1.0, 1.0) * np.float32(1.0 / len(error))
        grads = net.backward(acts, d_q)
        if self.grad_parts is not None:
            self.grad_parts.measure()
        return loss, numpy_clip_grad_norm(grads, max_norm)

    def stats(self) -> UpdateStats:
        """What the iteration's gradient steps measured (they ran while collecting, as SB3's do)."""
        losses, norms = self._losses, self._grad_norms
        self._losses, self._grad_norms = [], []
        extra: dict[str, float | None] = {
            M.TD_LOSS: float(np.mean(losses)) if losses else None, M.EXPLORATION_RATE: self.explorer.epsilon,
            M.N_UPDATES: float(self.n_updates), M.REPLAY_FILL: self.buffer.size / self.buffer.capacity,
            M.Q_MEAN: self.q_mean(),
        }
        if self.grad_parts is not None:
            extra |= self.grad_parts.take()
        return UpdateStats(policy_loss=None, value_loss=None, entropy=None,
                           grad_norm=float(np.mean(norms)) if norms else None,
                           learning_rate=float(self.adam.param_groups[0]["lr"]), ent_coef=None,
                           explained_variance=None, extra=extra)

    @torch.no_grad()
    def q_mean(self) -> float | None:
        """Mean greedy Q-value on a replay sample (None before any transition)."""
        if self.buffer.size == 0:
            return None
        idx = self.rng.integers(0, self.buffer.size, min(Q_SAMPLE, self.buffer.size))
        return float(self.policy.q_values(self.buffer.obs[idx]).max(-1).mean())
