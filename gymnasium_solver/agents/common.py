"""Pieces our agents share: the MLP actor-critic (Discrete or diagonal-Gaussian policy), running
observation normalisation, and the records (rollout, batch, update stats) the loop hands them.

Distributions are written out by hand instead of using ``torch.distributions``: for the tiny
networks we train, the distribution objects' argument validation and broadcasting cost more than
the network itself, and rollout speed is a headline feature.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812 - torch's own convention

from gymnasium_solver.agents.networks import (
    init_linear,
    linear_params,
    mlp,
    nature_cnn,
    numpy_mlp,
    numpy_views,
    torch_mlp,
)
from gymnasium_solver.agents.numpy_grad import NumpyActorCritic, numpy_trainable
from gymnasium_solver.agents.optim import Adam, RMSprop
from gymnasium_solver.config import Config, schedule_value
from gymnasium_solver.contract.metric_names import M
from gymnasium_solver.envs import SpaceSpec

_LOG_2PI = math.log(2.0 * math.pi)
# Pixel observations scored per forward pass (~50 MB of CNN activations at 84x84).
SCORE_CHUNK = 1024


class ActOutput(NamedTuple):
    """One batched policy step. ``actions`` is what is stored and trained on (the unclipped
    Gaussian sample); ``env_actions`` is what the environment receives (clipped to the Box)."""

    actions: np.ndarray
    env_actions: np.ndarray


class Rollout(NamedTuple):
    """One rollout, time-major ``[T, N, ...]``. ``valid`` marks steps to train on."""

    obs: np.ndarray  # observations the policy acted on (normalised when configured)
    actions: np.ndarray
    rewards: np.ndarray  # multiplied by reward_scale
    terminated: np.ndarray
    truncated: np.ndarray
    valid: np.ndarray
    last_obs: np.ndarray  # observation after the last step, per sub-env (for bootstrapping)
    env_steps: int  # sub-environment steps taken by this rollout


class RolloutSource(Protocol):
    """What an algorithm collects its rollouts from (gymnasium_solver.train.rollout.RolloutCollector).
    A protocol, so the algorithms depend on this contract, never on the machinery that drives them."""

    def collect_steps(self, policy: ActorCritic, n_steps: int) -> Rollout: ...

    def collect_episodes(self, policy: ActorCritic, n_episodes: int, max_steps: int) -> Rollout: ...


class RolloutScores(NamedTuple):
    """Log-probs and values of a whole rollout, computed in one batch after collecting it."""

    log_probs: np.ndarray  # [T, N]
    values: np.ndarray  # [T, N]; zeros without a critic
    last_values: np.ndarray  # [N], value of the observation after the last step


class PolicyEval(NamedTuple):
    """Differentiable quantities for stored (obs, action) pairs, used by the updates."""

    log_probs: torch.Tensor
    entropy: torch.Tensor
    values: torch.Tensor | None


def resolve_device(cfg: Config) -> torch.device:
    """The device PPO's network runs on: ``device: auto`` is CUDA when torch sees a GPU and the network
    is the CNN (the MLP acts in numpy, so it always runs on the CPU; REINFORCE always runs on the CPU)."""
    if cfg.network == "mlp":
        return torch.device("cpu")
    if cfg.device == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("device: cuda, but torch sees no CUDA GPU on this machine "
                             f"(torch {torch.__version__}); use device: auto or cpu")
        return torch.device("cuda")
    return torch.device("cuda" if cfg.device == "auto" and torch.cuda.is_available() else "cpu")


class ActorCritic(nn.Module):
    """MLP policy with an optional value head. Discrete: categorical over logits. Box: diagonal
    Gaussian with a state-independent, learned log std; or, with ``use_sde`` (PPO), generalized
    state-dependent exploration (gSDE, Raffin et al. 2022, https://arxiv.org/abs/2005.05719) as SB3
    implements it: the noise is the actor's last hidden layer ``h`` times a matrix ``W`` whose entries
    are drawn with std ``exp(log_std)`` (a learned ``[hidden, actions]`` parameter) and kept for
    ``sde_sample_freq`` steps, so exploration is smooth in time. The action's std given ``h`` is
    ``sqrt(h^2 @ exp(log_std)^2)``, with ``h`` held fixed (detached) in it, as SB3 does."""

    def __init__(self, spec: SpaceSpec, cfg: Config, with_critic: bool = True):
        super().__init__()
        self.spec = spec
        self.discrete = spec.discrete
        self.pixels = cfg.network == "nature_cnn"
        self.critic_body: nn.Module | None = None
        if self.pixels:
            # One trunk for actor and critic, as SB3's CnnPolicy and CleanRL's ppo_atari.
            self.actor_body: nn.Sequential = nature_cnn(*spec.observation_shape)
            width = 512
        else:
            sizes = [spec.obs_dim, *cfg.hidden_sizes]
            self.actor_body = mlp(sizes, cfg.activation)
            if with_critic and not cfg.shared_network:
                self.critic_body = mlp(sizes, cfg.activation)
            width = sizes[-1]
        self.actor_head = nn.Linear(width, spec.n_actions)
        self.value_head = nn.Linear(width, 1) if with_critic else None
        if cfg.ortho_init:  # else torch's default initialisation, as SB3's ortho_init=False
            for module in self.modules():
                if isinstance(module, nn.Linear | nn.Conv2d):
                    init_linear(module, math.sqrt(2.0))
            init_linear(self.actor_head, 0.01)
            if self.value_head is not None:
                init_linear(self.value_head, 1.0)
        self.sde = bool(getattr(cfg, "use_sde", False))
        if self.sde and spec.discrete:
            raise ValueError("use_sde: true needs a Box action space; this environment's actions are Discrete "
                             "(set use_sde: false)")
        std_shape = (width, spec.n_actions) if self.sde else (spec.n_actions,)
        self.log_std = None if spec.discrete else nn.Parameter(torch.full(std_shape, cfg.log_std_init))
        self._sde_sample_freq = int(getattr(cfg, "sde_sample_freq", -1))
        self._sde_weights: np.ndarray | None = None  # [n_envs, hidden, actions], drawn by act()
        self._sde_steps = 0
        self._sde_mean_std: float | None = None  # the mean action std over the last scored rollout
        if spec.action_low is not None and spec.action_high is not None:
            self._low, self._high = spec.action_low, spec.action_high
        self.activation = cfg.activation
        self._np_cache: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._numpy_net: NumpyActorCritic | None = None  # numpy_net()'s, on views of the parameters
        self._weights: list[torch.Tensor] | None = None  # the parameters, for all_finite after every update
        # The MLP bodies' (weight, bias) per layer: the actor's, the critic's (None when shared).
        self._layers: tuple[list[tuple[torch.Tensor, torch.Tensor]],
                            list[tuple[torch.Tensor, torch.Tensor]] | None] | None = None

    def grad_parts(self) -> dict[str, list[nn.Parameter]]:
        """The parameters of each part ``grad_norm_parts`` measures: the policy's own (hidden layers unless
        shared, head, log std), the value function's own, and the layers both share (nature_cnn's, or the
        MLP's with shared_network). Together they are every parameter."""
        shared = self.pixels or (self.value_head is not None and self.critic_body is None)
        actor = [*([] if shared else self.actor_body.parameters()), *self.actor_head.parameters(),
                 *([] if self.log_std is None else [self.log_std])]
        critic = [*([] if self.critic_body is None else self.critic_body.parameters()),
                  *([] if self.value_head is None else self.value_head.parameters())]
        trunk = list(self.actor_body.parameters()) if shared else []
        return {M.GRAD_NORM_ACTOR: actor, M.GRAD_NORM_CRITIC: critic, M.GRAD_NORM_TRUNK: trunk}

    def numpy_net(self) -> NumpyActorCritic | None:
        """The forward and backward pass in numpy (agents/numpy_grad.py) PPO's and A2C's updates take; None where
        autograd stays (pixels, gSDE, no critic)."""
        if self._numpy_net is None and self.value_head is not None and numpy_trainable(self, list(self.parameters())):
            self._numpy_net = NumpyActorCritic(self.actor_body, self.critic_body, self.actor_head, self.value_head,
                                               self.activation, self.log_std)
        return self._numpy_net

    @property
    def has_critic(self) -> bool:
        return self.value_head is not None

    @property
    def device(self) -> torch.device:
        return self.actor_head.weight.device

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        # The numpy views used by act() must follow the parameters if assign=True replaces them.
        self._np_cache = self._weights = self._layers = self._numpy_net = None
        return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def _heads(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The actor's last hidden layer, its head's output and the value (None without a critic)."""
        if self.pixels:
            hidden = self.actor_body(obs)
            value = None if self.value_head is None else self.value_head(hidden).squeeze(-1)
            return hidden, self.actor_head(hidden), value
        if self._layers is None:  # the MLP's kernels called directly (networks.torch_mlp says why)
            self._layers = (linear_params(self.actor_body),
                            None if self.critic_body is None else linear_params(self.critic_body))
        actor_layers, critic_layers = self._layers
        hidden = torch_mlp(actor_layers, self.activation, obs)
        value = None
        if self.value_head is not None:
            critic_hidden = hidden if critic_layers is None else torch_mlp(critic_layers, self.activation, obs)
            value = F.linear(critic_hidden, self.value_head.weight, self.value_head.bias).squeeze(-1)
        return hidden, F.linear(hidden, self.actor_head.weight, self.actor_head.bias), value

    def _sde_std(self, hidden: torch.Tensor) -> torch.Tensor:
        """gSDE: the action std for each sample, sqrt(h^2 @ exp(log_std)^2) (+1e-6 inside, as SB3)."""
        assert self.log_std is not None
        return (hidden.detach().pow(2) @ (2 * self.log_std).exp() + 1e-6).sqrt()

    def _log_prob_entropy(self, out: torch.Tensor, actions: torch.Tensor,
                          hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.discrete:
            logp_all = torch.log_softmax(out, dim=-1)
            log_probs = logp_all.gather(1, actions.long().unsqueeze(1)).squeeze(1)
            entropy = -(logp_all.exp() * logp_all).sum(-1)
            return log_probs, entropy
        assert self.log_std is not None
        if self.sde:
            std = self._sde_std(hidden)
            log_std = std.log()
            z = (actions - out) / std
            log_probs = (-0.5 * z.pow(2) - log_std - 0.5 * _LOG_2PI).sum(-1)
            return log_probs, (0.5 + 0.5 * _LOG_2PI + log_std).sum(-1)
        z = (actions - out) / self.log_std.exp()
        log_probs = (-0.5 * z.pow(2) - self.log_std - 0.5 * _LOG_2PI).sum(-1)
        entropy = (0.5 + 0.5 * _LOG_2PI + self.log_std).sum().expand(out.shape[0])
        return log_probs, entropy

    def reset_noise(self) -> None:
        """gSDE: draw new noise matrices at the next sampled step (called at the start of each rollout)."""
        self._sde_weights, self._sde_steps = None, 0

    def _sde_noise(self, hidden: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """gSDE noise for a batch, one matrix per sub-env, redrawn every sde_sample_freq steps."""
        assert self.log_std is not None
        n = hidden.shape[0]
        redraw = self._sde_sample_freq > 0 and self._sde_steps % self._sde_sample_freq == 0
        if self._sde_weights is None or self._sde_weights.shape[0] != n or redraw:
            std = np.exp(self.log_std.detach().numpy())
            self._sde_weights = (rng.standard_normal((n, *std.shape)) * std).astype(np.float32)
        self._sde_steps += 1
        return np.einsum("nh,nha->na", hidden, self._sde_weights)

    def act(self, obs: np.ndarray, rng: np.random.Generator | None, deterministic: bool = False) -> ActOutput:
        """Sample (or, deterministic, take the argmax / Gaussian mean of) actions for a batch.

        Runs the actor in numpy on views of the torch parameters (the optimizer updates them in
        place, so the views are always current): for batches of a few observations a numpy forward
        is several times faster than torch's per-op dispatch, and this runs once per env step.
        Log-probs and values are computed later for the whole rollout at once (``score_rollout``).
        """
        hidden, out = self._actor_out(obs)
        if self.discrete:
            if deterministic or rng is None:
                actions = out.argmax(-1)
            else:
                # Inverse-CDF sampling from softmax(out).
                p = np.exp(out - out.max(-1, keepdims=True))
                cdf = np.cumsum(p, -1)
                u = rng.random((out.shape[0], 1)) * cdf[:, -1:]
                actions = np.minimum((u > cdf).sum(-1), out.shape[-1] - 1)
            return ActOutput(actions, actions)
        if deterministic or rng is None:
            actions = out
        elif self.sde:
            actions = (out + self._sde_noise(hidden, rng)).astype(np.float32)
        else:
            assert self.log_std is not None
            std = np.exp(self.log_std.detach().numpy())
            actions = (out + std * rng.standard_normal(out.shape)).astype(np.float32)
        return ActOutput(actions, np.clip(actions, self._low, self._high))

    def _actor_out(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The actor's last hidden layer and head output for a batch: the MLP in numpy, the CNN in
        torch on its device (its hidden layer is not returned: gSDE is for the MLP only)."""
        if self.pixels:
            with torch.no_grad():
                hidden = self.actor_body(torch.from_numpy(obs).to(self.device))
                return obs, self.actor_head(hidden).cpu().numpy()
        if self._np_cache is None:
            self._np_cache = numpy_views([m for m in self.actor_body if isinstance(m, nn.Linear)] + [self.actor_head])
        return numpy_mlp(self._np_cache, self.activation, obs)

    @torch.no_grad()
    def score_rollout(self, obs: np.ndarray, actions: np.ndarray, last_obs: np.ndarray) -> RolloutScores:
        """Log-probs of the taken actions and values of every observation of a ``[T, N]`` rollout
        (pixels in chunks of SCORE_CHUNK, so the CNN's activations of a long rollout never pile up)."""
        t, n = obs.shape[:2]
        sample_shape = obs.shape[2:] if self.pixels else (-1,)
        flat_obs = np.concatenate([obs.reshape(t * n, *sample_shape), last_obs])
        chunk = SCORE_CHUNK if self.pixels else len(flat_obs)
        hiddens, outs, vals = [], [], []
        for start in range(0, len(flat_obs), chunk):
            hidden, out, value = self._heads(torch.from_numpy(flat_obs[start : start + chunk]).to(self.device))
            outs.append(out)
            if self.sde:
                hiddens.append(hidden)
            if value is not None:
                vals.append(value)
        flat_actions = torch.from_numpy(actions.reshape(t * n, *actions.shape[2:])).to(self.device)
        hidden_all = torch.cat(hiddens)[: t * n] if self.sde else flat_actions  # unused without gSDE
        log_probs, _ = self._log_prob_entropy(torch.cat(outs)[: t * n], flat_actions, hidden_all)
        if self.sde:
            self._sde_mean_std = float(self._sde_std(hidden_all).mean())
        values = np.zeros(t * n + n, np.float32) if not vals else torch.cat(vals).cpu().numpy()
        return RolloutScores(log_probs.cpu().numpy().reshape(t, n), values[: t * n].reshape(t, n), values[t * n :])

    def score_and_evaluate(self, obs: np.ndarray, actions: np.ndarray,
                           last_obs: np.ndarray) -> tuple[RolloutScores, PolicyEval]:
        """:meth:`score_rollout` and :meth:`evaluate` of the flattened rollout in one forward pass with
        gradients (an MLP policy; A2C's one gradient step per rollout needs nothing else): the scores are
        its detached values."""
        t, n = obs.shape[:2]
        hidden, out, value = self._heads(torch.from_numpy(np.concatenate([obs.reshape(t * n, -1), last_obs])))
        flat_actions = torch.from_numpy(actions.reshape(t * n, *actions.shape[2:]))
        log_probs, entropy = self._log_prob_entropy(out[: t * n], flat_actions, hidden[: t * n])
        if self.sde:
            self._sde_mean_std = float(self._sde_std(hidden[: t * n]).mean())
        values = np.zeros(t * n + n, np.float32) if value is None else value.detach().numpy()
        scores = RolloutScores(log_probs.detach().numpy().reshape(t, n), values[: t * n].reshape(t, n), values[t * n :])
        return scores, PolicyEval(log_probs, entropy, None if value is None else value[: t * n])

    def evaluate(self, obs: torch.Tensor, actions: torch.Tensor) -> PolicyEval:
        """Log-probs, entropies and values of stored actions, with gradients."""
        hidden, out, value = self._heads(obs)
        log_probs, entropy = self._log_prob_entropy(out, actions, hidden)
        return PolicyEval(log_probs, entropy, value)

    def action_std(self) -> float | None:
        """Mean of exp(log_std) over the action dimensions (Box); with gSDE, the mean action std over
        the last scored rollout; None for a Discrete policy."""
        if self.log_std is None:
            return None
        if self.sde:
            return self._sde_mean_std
        return float(self.log_std.detach().exp().mean())

    def all_finite(self) -> bool:
        if self._weights is None:  # the same Parameter objects until a load may assign new ones
            self._weights = [p for p in self.parameters() if p.is_floating_point()]
        return tensors_finite(self._weights)


class ObsNormalizer:
    """Running mean/std of observations (parallel-variance update, as SB3's RunningMeanStd);
    ``enabled=False`` makes it a float32 pass-through. Its state is saved in checkpoints."""

    CLIP = 10.0

    def __init__(self, shape: tuple[int, ...], enabled: bool):
        self.enabled = enabled
        self.mean = np.zeros(shape, np.float64)
        self.var = np.ones(shape, np.float64)
        self.count = 1e-4

    def update(self, batch: np.ndarray) -> None:
        if not self.enabled:
            return
        b_mean, b_var, b_count = batch.mean(0), batch.var(0), batch.shape[0]
        delta = b_mean - self.mean
        total = self.count + b_count
        self.mean = self.mean + delta * b_count / total
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / total
        self.var = m2 / total
        self.count = total

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        if not self.enabled:
            # uint8 pixels pass through as they are: the CNN scales them (rollouts store uint8).
            return obs if obs.dtype == np.uint8 else obs.astype(np.float32, copy=False)
        out = (obs - self.mean) / np.sqrt(self.var + 1e-8)
        return np.clip(out, -self.CLIP, self.CLIP).astype(np.float32)

    def state_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "mean": self.mean.tolist(), "var": self.var.tolist(), "count": self.count}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.enabled = bool(state["enabled"])
        self.mean = np.asarray(state["mean"], np.float64)
        self.var = np.asarray(state["var"], np.float64)
        self.count = float(state["count"])


def explained_variance(values: np.ndarray, returns: np.ndarray) -> float | None:
    """1 - Var(returns - values) / Var(returns); None when the returns do not vary."""
    var = float(np.var(returns))
    if var == 0.0:
        return None
    return 1.0 - float(np.var(returns - values)) / var


class UpdateStats(NamedTuple):
    """What one update measured (None = not measured by this algorithm)."""

    policy_loss: float | None
    value_loss: float | None
    entropy: float | None
    grad_norm: float | None
    learning_rate: float | None
    ent_coef: float | None
    explained_variance: float | None
    approx_kl: float | None = None
    clip_fraction: float | None = None
    clip_range: float | None = None
    epochs_completed: int | None = None
    action_std: float | None = None
    # Further metrics.csv columns an algorithm measures (run_folder.M names), e.g. SB3's q-values.
    extra: dict[str, float | None] | None = None


class Policy(Protocol):
    """What evaluation, checkpoints and the non-finite guard need of a policy: ActorCritic, and
    gymnasium_solver/agents/sb3.SB3Policy around a Stable-Baselines3 model."""

    spec: SpaceSpec

    @property
    def device(self) -> torch.device: ...

    def act(self, obs: np.ndarray, rng: np.random.Generator | None, deterministic: bool = False) -> ActOutput: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any: ...

    def all_finite(self) -> bool: ...


def tensors_finite(tensors: list[torch.Tensor]) -> bool:
    """Whether every element of ``tensors`` is finite: one fused norm over them all first (a check tensor by
    tensor costs a sync each, after every update), confirmed element-wise when the norm is not finite (a norm
    can overflow where no element is infinite)."""
    tensors = [t for t in tensors if t.is_floating_point()]
    if not tensors or bool(torch.isfinite(torch.stack(torch._foreach_norm(tensors))).all()):
        return True
    return all(bool(torch.isfinite(t).all()) for t in tensors)


class Batch(NamedTuple):
    """The valid samples of a rollout, flattened, with their learning targets."""

    obs: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    explained_variance: float | None

    def to(self, device: torch.device) -> Batch:
        """The same batch on ``device`` (itself when it is already there; pixels stay uint8)."""
        if self.obs.device == device:
            return self
        return Batch(self.obs.to(device), self.actions.to(device), self.log_probs.to(device),
                     self.values.to(device), self.advantages.to(device), self.returns.to(device),
                     self.explained_variance)


class NonFiniteLossError(RuntimeError):
    """A loss or gradient norm was NaN/inf; raised before the optimizer step so weights stay finite."""


def check_finite(name: str, value: torch.Tensor | float) -> None:
    if not (math.isfinite(value) if isinstance(value, float) else bool(torch.isfinite(value).all())):
        shown = value if isinstance(value, float) else value.item() if value.numel() == 1 else "nan/inf"
        raise NonFiniteLossError(f"non-finite {name} ({shown})")


def make_batch(obs: np.ndarray, actions: np.ndarray, log_probs: np.ndarray, values: np.ndarray, advantages: np.ndarray,
               returns: np.ndarray, valid: np.ndarray, with_critic: bool) -> Batch:
    """Select the valid ``[T, N]`` samples and turn them into flat tensors."""
    ev = explained_variance(values[valid], returns[valid]) if with_critic else None
    return Batch(
        torch.from_numpy(obs[valid]),
        torch.from_numpy(actions[valid]),
        torch.from_numpy(log_probs[valid]),
        torch.from_numpy(values[valid]),
        torch.from_numpy(advantages[valid]),
        torch.from_numpy(returns[valid]),
        ev,
    )


def normalize(x: torch.Tensor) -> torch.Tensor:
    """Zero mean, unit std (population std, so a batch of one gives zeros rather than NaN)."""
    return (x - x.mean()) / (x.std(correction=0) + 1e-8)


def step_schedules(optimizer: torch.optim.Optimizer | Adam | RMSprop, cfg: Config, progress: float) -> tuple[float, float]:
    """Set the optimizer's learning rate to its schedule's value at ``progress`` (times the group's ``lr_scale``, PPO's
    adaptive_lr_kl); return (learning rate, entropy coefficient) there (PPO, A2C, REINFORCE: each update starts here)."""
    lr = schedule_value(cfg.learning_rate, progress)
    for group in optimizer.param_groups:
        group["lr"] = lr = lr * group.get("lr_scale", 1.0)
    return lr, schedule_value(cfg.ent_coef, progress)
