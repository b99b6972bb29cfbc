"""Stable-Baselines3 algorithms (SAC, TD3; sb3-contrib's QR-DQN and TQC) behind our off-policy
interface (gymnasium_solver/agents/interface.OffPolicyAgent), so that our training loop drives them and writes the same
run folder.

SB3 interleaves collection and gradient steps (``train_freq``), so ``SB3Agent.learn`` runs one
iteration's ``iteration_steps`` env steps *with* their gradient steps, the way SB3's own ``learn()``
does (``collect_rollouts`` then ``train``, which we call ourselves, so the gradient steps are timed
apart from the collection), and ``stats`` reports what the iteration measured. SB3's logged values
reach us through a logger output format (``MetricsCapture``) and are renamed into our vocabulary
(``SB3_METRICS``). Evaluation, checkpoints, stop signals and failures stay ours (training.py).
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

from gymnasium_solver.agents import agent_class
from gymnasium_solver.agents.common import ActOutput, NonFiniteLossError, UpdateStats, tensors_finite
from gymnasium_solver.agents.interface import LearnChunk
from gymnasium_solver.config import (
    DQNConfig,
    OffPolicyConfigBase,
    QRDQNConfig,
    SACConfig,
    SB3Config,
    Schedule,
    TD3Config,
    TQCConfig,
)
from gymnasium_solver.contract.algorithms import ALGORITHMS, BOX, DISCRETE, Algo, takes
from gymnasium_solver.contract.run_folder import M
from gymnasium_solver.envs import SpaceSpec

# SB3's logger keys -> our metrics.csv columns (mean over the iteration's logger dumps). Keys not
# named here (SB3's time/ and rollout/ bookkeeping) are not ours to write.
SB3_METRICS: dict[str, str] = {
    "train/loss": M.TD_LOSS,
    "train/critic_loss": M.CRITIC_LOSS,
    "train/actor_loss": M.ACTOR_LOSS,
    "train/ent_coef": M.ENT_COEF,
    "train/ent_coef_loss": M.ENT_COEF_LOSS,
    "train/learning_rate": M.LEARNING_RATE,
    "rollout/exploration_rate": M.EXPLORATION_RATE,
    "train/policy_loss": M.POLICY_LOSS,
    "train/value_loss": M.VALUE_LOSS,
    "train/explained_variance": M.EXPLAINED_VARIANCE,
    "train/std": M.ACTION_STD,
}
_LOSSES = ("train/loss", "train/critic_loss", "train/actor_loss", "train/policy_loss", "train/value_loss")
Q_SAMPLE = 256  # replay transitions the mean Q-value is measured on


def sb3_class(algo: Algo) -> type[BaseAlgorithm]:
    """The library class that trains ``algo`` (its ``trainer`` in algorithms.py)."""
    cls: type[BaseAlgorithm] = agent_class(algo)
    return cls


def check_action_space(cfg: SB3Config, spec: SpaceSpec) -> None:
    """ValueError, naming what would work, when the algorithm cannot act in this action space."""
    kinds = ALGORITHMS[cfg.algo].action_kinds
    if BOX not in kinds and not spec.discrete:
        raise ValueError(f"{cfg.algo} needs discrete actions, but {cfg.env_id} has continuous (Box) actions; "
                         f"use {', '.join(takes(BOX))} for it")
    if DISCRETE not in kinds and spec.discrete:
        raise ValueError(f"{cfg.algo} needs continuous (Box) actions, but {cfg.env_id} has {spec.n_actions} discrete "
                         f"actions; use {', '.join(takes(DISCRETE))} for it")


def _schedule(value: float | Schedule) -> Any:
    """Our schedule (over the fraction of max_env_steps spent) as SB3's (over the fraction remaining)."""
    if isinstance(value, Schedule):
        return lambda remaining: value.at(1.0 - remaining)
    return float(value)


def _policy_kwargs(cfg: SB3Config) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"net_arch": list(cfg.hidden_sizes),
                              "activation_fn": torch.nn.Tanh if cfg.activation == "tanh" else torch.nn.ReLU}
    if isinstance(cfg, QRDQNConfig | TQCConfig):
        kwargs["n_quantiles"] = cfg.n_quantiles
    if isinstance(cfg, SACConfig):
        kwargs["log_std_init"] = cfg.log_std_init
    if isinstance(cfg, OffPolicyConfigBase):
        # Adam over all tensors at once (foreach): bitwise the same update as torch's default
        # per-tensor loop, which on these small networks is much of a gradient step (LunarLander
        # DQN, batch 128: 128x128 5.0 -> 3.8 ms, 256x256 8.3 -> 5.7 ms). fused=True is faster still
        # but rounds differently, so every seed would train differently.
        kwargs["optimizer_kwargs"] = {"foreach": True}
    return kwargs


def _off_policy_kwargs(cfg: OffPolicyConfigBase, spec: SpaceSpec) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "buffer_size": cfg.buffer_size, "learning_starts": cfg.learning_starts, "batch_size": cfg.batch_size,
        "tau": cfg.tau, "train_freq": cfg.train_freq, "gradient_steps": cfg.gradient_steps,
        "n_steps": cfg.n_steps,
    }
    if isinstance(cfg, DQNConfig):
        kw |= {"target_update_interval": cfg.target_update_interval, "exploration_fraction": cfg.exploration_fraction,
               "exploration_initial_eps": cfg.exploration_initial_eps,
               "exploration_final_eps": cfg.exploration_final_eps, "max_grad_norm": cfg.max_grad_norm or math.inf}
    if isinstance(cfg, SACConfig):
        ent = float(schedule_or_float(cfg.ent_coef))
        kw |= {"ent_coef": (f"auto_{ent}" if ent > 0 else "auto") if cfg.ent_coef_auto else ent,
               "target_entropy": "auto" if cfg.target_entropy is None else cfg.target_entropy}
    if isinstance(cfg, TQCConfig):
        kw["top_quantiles_to_drop_per_net"] = cfg.top_quantiles_to_drop_per_net
    if isinstance(cfg, TD3Config):
        from stable_baselines3.common.noise import NormalActionNoise

        assert spec.action_low is not None and spec.action_high is not None
        half = (spec.action_high - spec.action_low) / 2.0
        kw |= {"policy_delay": cfg.policy_delay, "target_policy_noise": cfg.target_policy_noise,
               "target_noise_clip": cfg.target_noise_clip,
               "action_noise": NormalActionNoise(np.zeros(spec.n_actions), cfg.action_noise_std * half)
               if cfg.action_noise_std > 0 else None}
    return kw


def schedule_or_float(value: float | Schedule) -> float:
    return value.start if isinstance(value, Schedule) else float(value)


def sb3_kwargs(cfg: SB3Config, spec: SpaceSpec) -> dict[str, Any]:
    """The SB3 constructor arguments our config stands for (env and logger are added by the caller)."""
    kw: dict[str, Any] = {"learning_rate": _schedule(cfg.learning_rate), "gamma": cfg.gamma, "seed": cfg.seed,
                          "device": "cpu", "verbose": 0, "policy_kwargs": _policy_kwargs(cfg)}
    if isinstance(cfg, OffPolicyConfigBase):
        kw |= _off_policy_kwargs(cfg, spec)
    return kw


# Leaf modules whose output does not depend on train()/eval() (no dropout, no batch statistics).
_MODE_FREE = (torch.nn.Linear, torch.nn.Conv2d, torch.nn.Flatten, torch.nn.Identity, torch.nn.ReLU, torch.nn.Tanh,
              torch.nn.LeakyReLU, torch.nn.ELU, torch.nn.SiLU, torch.nn.GELU, torch.nn.Sigmoid, torch.nn.Softplus)


def skip_mode_switches(model: BaseAlgorithm) -> bool:
    """Make the policy's ``set_training_mode`` a no-op when no module in it behaves differently in
    training and evaluation, and say whether it did. SB3 calls it before every gradient step and every
    action; walking the modules to set a flag nothing reads was an eighth of a Pendulum TD3 run's time.
    The outputs, and so every seed's run, are bitwise the same."""
    policy = model.policy
    if not all(isinstance(m, _MODE_FREE) for m in policy.modules() if next(m.children(), None) is None):
        return False
    policy.set_training_mode = lambda mode: None  # type: ignore[method-assign]
    return True


class MetricsCapture(KVWriter):
    """An SB3 logger output format that keeps the mean of every numeric value SB3 dumps, until taken."""

    def __init__(self) -> None:
        self._sums: dict[str, float] = {}
        self._counts: dict[str, int] = {}

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0) -> None:
        for key, value in key_values.items():
            if isinstance(value, int | float | np.floating | np.integer) and not isinstance(value, bool):
                self._sums[key] = self._sums.get(key, 0.0) + float(value)
                self._counts[key] = self._counts.get(key, 0) + 1

    def take(self) -> dict[str, float]:
        means = {k: self._sums[k] / self._counts[k] for k in self._sums}
        self._sums, self._counts = {}, {}
        return means

    def close(self) -> None:
        pass


class _NoCallback(BaseCallback):
    def _on_step(self) -> bool:
        return True


class SB3Policy:
    """A Stable-Baselines3 model seen as our Policy: deterministic actions for evaluation, and its
    networks' weights (online and target) for the non-finite guard."""

    def __init__(self, model: BaseAlgorithm, spec: SpaceSpec):
        self.model, self.spec = model, spec
        self._weights: list[torch.Tensor] | None = None  # the policy's tensors, updated in place by SB3

    @property
    def device(self) -> torch.device:
        return torch.device(self.model.device)

    def act(self, obs: np.ndarray, rng: np.random.Generator | None, deterministic: bool = False) -> ActOutput:
        actions, _ = self.model.predict(obs, deterministic=deterministic)
        return ActOutput(actions, actions)

    def state_dict(self) -> dict[str, Any]:
        return dict(self.model.policy.state_dict())

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        return self.model.policy.load_state_dict(state_dict, strict=strict)

    def all_finite(self) -> bool:
        """Checked after every train_freq (each env step for TD3): one fused norm over every weight
        (tensors_finite); a tensor-by-tensor check of the state_dict took a sixth of a Pendulum TD3 run's time."""
        if self._weights is None:
            self._weights = [*self.model.policy.parameters(), *self.model.policy.buffers()]
        return tensors_finite(self._weights)

    def saved_model(self) -> torch.Tensor:
        """The model as SB3's own .zip (weights, optimizers, hyperparameters; no replay buffer), as bytes in a tensor:
        for a person's own SB3 tools. We never read it back (``load_sb3_policy`` says why)."""
        buffer = io.BytesIO()
        self.model.save(buffer)
        return torch.frombuffer(bytearray(buffer.getvalue()), dtype=torch.uint8)


class _SpacesOnly(gym.Env[Any, Any]):
    """An environment that is only its spaces: what SB3's constructor needs to build a policy. Never stepped."""

    def __init__(self, observation_space: gym.Space[Any], action_space: gym.Space[Any]):
        self.observation_space, self.action_space = observation_space, action_space


def _spaces(spec: SpaceSpec) -> tuple[gym.Space[Any], gym.Space[Any]]:
    """The spaces ``spec`` describes, as SB3's policies read them: the bounds of a vector observation
    do not matter to an MLP, uint8 pixels do (SB3 scales image spaces by 1/255)."""
    obs: gym.Space[Any] = (spaces.Box(0, 255, spec.observation_shape, np.uint8) if spec.pixels
                           else spaces.Box(-np.inf, np.inf, spec.observation_shape, np.float32))
    if spec.discrete:
        return obs, spaces.Discrete(spec.n_actions)
    assert spec.action_low is not None and spec.action_high is not None
    return obs, spaces.Box(spec.action_low.astype(np.float32), spec.action_high.astype(np.float32), dtype=np.float32)


def load_sb3_policy(cfg: SB3Config, weights: Mapping[str, torch.Tensor], spec: SpaceSpec) -> SB3Policy:
    """Rebuild an SB3 run's policy from our recorded config and its policy weights (a checkpoint's
    ``model``, read with ``torch.load(weights_only=True)``), for an environment with spaces ``spec``.

    Never SB3's ``.load()``: its zip's ``data`` JSON holds cloudpickle payloads that it unpickles, so a
    run folder from someone else could run code here (issue 26). The model is built the way training
    built it (``sb3_kwargs``), on an environment that is only the spaces; RuntimeError (torch's) when
    the weights do not fit the network the config describes."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    check_action_space(cfg, spec)
    kwargs = sb3_kwargs(cfg, spec)
    if isinstance(cfg, OffPolicyConfigBase):
        kwargs["buffer_size"] = 1  # acting needs no replay buffer; training's would be allocated for nothing
    obs_space, action_space = _spaces(spec)
    env = DummyVecEnv([lambda: _SpacesOnly(obs_space, action_space)])
    model = sb3_class(cfg.algo)("MlpPolicy", env, **kwargs)
    model.policy.load_state_dict(dict(weights), strict=True)
    skip_mode_switches(model)
    return SB3Policy(model, spec)


class SB3Agent:
    """Trains ``cfg``'s SB3 algorithm on the SB3 VecEnv ``env`` one chunk of ``iteration_steps`` at a time."""

    def __init__(self, cfg: SB3Config, spec: SpaceSpec, env: Any):
        check_action_space(cfg, spec)
        self.cfg = cfg
        self.capture = MetricsCapture()
        self.model = sb3_class(cfg.algo)("MlpPolicy", env, **sb3_kwargs(cfg, spec))
        skip_mode_switches(self.model)
        self.model.set_logger(Logger(folder=None, output_formats=[self.capture]))
        _, self.callback = self.model._setup_learn(cfg.max_env_steps, _NoCallback())
        self.policy = SB3Policy(self.model, spec)
        self.optimizer = None  # SB3 keeps its optimizers inside the model (saved in its .zip)

    def learn(self, collector: Any) -> LearnChunk:
        """Collect ``iteration_steps`` env steps with their gradient steps, as SB3's learn() does. A
        non-finite loss or weight raises NonFiniteLossError at once (the session puts back the
        iteration's starting weights)."""
        m = self.model
        start = m.num_timesteps
        target = min(start + self.cfg.iteration_steps, self.cfg.max_env_steps)
        gradient_seconds = 0.0
        while m.num_timesteps < target:
            gradient_seconds += self._collect_and_train()
            losses = [v for k, v in m.logger.name_to_value.items() if k in _LOSSES]  # before dump() clears them
            m.logger.dump(m.num_timesteps)
            if not all(math.isfinite(v) for v in losses) or not self.policy.all_finite():
                raise NonFiniteLossError(f"{self.cfg.algo} produced a non-finite loss or weight at "
                                         f"{m.num_timesteps} env steps")
        assert m.env is not None
        collector.episodes = sum(len(r) for r in m.env.env_method("get_episode_rewards"))  # Monitor's count
        return LearnChunk(int(m.num_timesteps - start), gradient_seconds)

    def _collect_and_train(self) -> float:
        """One ``train_freq`` of SB3's collection, then its gradient steps; the seconds those took."""
        m = self.model
        assert isinstance(m, OffPolicyAlgorithm)  # every SB3 algorithm we train is off-policy (A2C is ours)
        rollout = m.collect_rollouts(m.env, callback=self.callback, train_freq=m.train_freq,  # type: ignore[arg-type]
                                     replay_buffer=m.replay_buffer, action_noise=m.action_noise,  # type: ignore[arg-type]
                                     learning_starts=m.learning_starts, log_interval=None)
        if m.num_timesteps > m.learning_starts:
            steps = m.gradient_steps if m.gradient_steps >= 0 else rollout.episode_timesteps
            if steps > 0:
                t0 = time.perf_counter()
                m.train(batch_size=m.batch_size, gradient_steps=steps)
                return time.perf_counter() - t0
        return 0.0

    def stats(self) -> UpdateStats:
        """What the iteration measured: SB3's logged values (renamed) and our replay-buffer measures."""
        logged = self.capture.take()
        ours = {SB3_METRICS[k]: v for k, v in logged.items() if k in SB3_METRICS}
        if "train/entropy_loss" in logged:
            ours[M.ENTROPY] = -logged["train/entropy_loss"]
        extra: dict[str, float | None] = {M.N_UPDATES: float(getattr(self.model, "_n_updates", 0))}
        if isinstance(self.model, OffPolicyAlgorithm):
            buffer = self.model.replay_buffer
            assert buffer is not None
            extra[M.REPLAY_FILL] = buffer.size() / buffer.buffer_size
            extra[M.Q_MEAN] = self.q_mean()
        if isinstance(self.cfg, DQNConfig):
            extra[M.EXPLORATION_RATE] = float(self.model.exploration_rate)  # type: ignore[attr-defined]
        for key in (M.TD_LOSS, M.CRITIC_LOSS, M.ACTOR_LOSS, M.ENT_COEF_LOSS):
            if key in ours:
                extra[key] = ours[key]
        return UpdateStats(
            policy_loss=ours.get(M.POLICY_LOSS), value_loss=ours.get(M.VALUE_LOSS), entropy=ours.get(M.ENTROPY),
            grad_norm=None, learning_rate=ours.get(M.LEARNING_RATE), ent_coef=ours.get(M.ENT_COEF),
            explained_variance=ours.get(M.EXPLAINED_VARIANCE), action_std=ours.get(M.ACTION_STD), extra=extra,
        )

    @torch.no_grad()
    def q_mean(self) -> float | None:
        """Mean predicted Q of the policy's own action on a replay sample (None before any transition)."""
        m = self.model
        buffer = m.replay_buffer  # type: ignore[attr-defined]
        if buffer is None or buffer.size() == 0:
            return None
        obs = buffer.sample(min(Q_SAMPLE, buffer.size())).observations
        policy: Any = m.policy
        if isinstance(self.cfg, QRDQNConfig):
            q = policy.quantile_net(obs).mean(dim=1).max(dim=1).values
        elif isinstance(self.cfg, TQCConfig):
            q = policy.critic(obs, policy.actor(obs, deterministic=True)).mean(dim=(1, 2))
        else:
            q = policy.critic(obs, policy.actor(obs, deterministic=True) if isinstance(self.cfg, SACConfig)
                              else policy.actor(obs))[0]
        return float(q.mean())
