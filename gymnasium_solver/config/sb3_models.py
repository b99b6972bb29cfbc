"""The Stable-Baselines3 algorithms' config models (agents/sb3.py trains them): SB3's own constructor
arguments, typed and bounded, on top of the shared keys of :class:`ConfigBase`. No I/O."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from pydantic import Field, model_validator

from gymnasium_solver.config.model import (
    _BAD_NOT_INVALID,
    _BOX_ACTIONS,
    _FINITE,
    MAX_ENV_STEPS,
    Algo,
    ConfigBase,
    Schedule,
    ScheduleOrFloat,
    _why,
)

# ---------------------------------------------------------------------------------------------
# Stable-Baselines3 algorithms (agents/sb3.py). Their keys are SB3's own constructor arguments,
# typed and bounded here; the shared keys map onto SB3's (hidden_sizes -> net_arch, activation ->
# activation_fn, learning_rate schedules -> SB3 schedules over the same budget). Shared keys an SB3
# algorithm has no use for must keep their default: a set value would be silently ignored.
# ---------------------------------------------------------------------------------------------
MAX_REPLAY_BUFFER = 10_000_000
MAX_ITERATION_STEPS = 1_000_000
MAX_GRADIENT_STEPS = 10_000
MAX_SB3_BATCH = 65_536
MAX_N_STEP_RETURNS = 1000

_NATIVE_ONLY = ("normalize_observations", "reward_scale", "shared_network", "reward_clip", "atari_wrappers", "network")


class SB3ConfigBase(ConfigBase):
    """Keys every Stable-Baselines3 algorithm uses beyond the shared ones."""

    # Shared keys this algorithm ignores (beyond _NATIVE_ONLY): refused unless left at their default.
    unused_shared_keys: ClassVar[tuple[str, ...]] = ()

    iteration_steps: int = Field(
        default=1000, ge=1, le=MAX_ITERATION_STEPS,
        description="env steps per training iteration (one metrics.csv row, one stop-signal check): SB3 "
                    "interleaves collection and gradient steps (train_freq), so an iteration is a chunk of them",
        json_schema_extra=_why(f"1..{MAX_ITERATION_STEPS:,}: a stop request waits at most one iteration, and "
                               "metrics.csv gets a row per iteration"))

    @model_validator(mode="after")
    def _check_sb3(self) -> Self:
        defaults = {k: type(self).model_fields[k].get_default(call_default_factory=True)
                    for k in (*_NATIVE_ONLY, *self.unused_shared_keys)}
        for key, default in defaults.items():
            if getattr(self, key) != default:
                raise ValueError(f"{key} is not used by {self.algo.value} (it learns from the raw observations "
                                 f"and rewards); "
                                 f"remove it or set it back to {default!r}")
        if isinstance(self.ent_coef, Schedule):
            raise ValueError(f"ent_coef: {self.algo.value} takes a constant entropy coefficient, not a schedule")
        return self


class OffPolicyConfigBase(SB3ConfigBase):
    """Replay-buffer algorithms: DQN, QR-DQN, SAC, TD3, TQC."""

    buffer_size: int = Field(default=1_000_000, ge=1, le=MAX_REPLAY_BUFFER, description="replay buffer capacity (transitions)",
                             json_schema_extra=_why(f"at most {MAX_REPLAY_BUFFER:,} transitions: the buffer is "
                                                    "allocated at start, observations twice"))
    learning_starts: int = Field(default=100, ge=0, le=MAX_ENV_STEPS,
                                 description="env steps of random actions before the first gradient step",
                                 json_schema_extra=_why("at most the largest budget"))
    batch_size: int = Field(default=256, ge=1, le=MAX_SB3_BATCH, description="replay minibatch size",
                            json_schema_extra=_why(f"1..{MAX_SB3_BATCH:,} samples per gradient step"))
    tau: float = Field(default=0.005, ge=0.0, le=1.0, description="soft target update coefficient (1 = hard copy)",
                       json_schema_extra=_why("a mixing weight between target and online networks"))
    train_freq: int = Field(default=1, ge=1, le=MAX_ITERATION_STEPS,
                            description="collect this many steps per sub-environment between gradient phases",
                            json_schema_extra=_why(f"1..{MAX_ITERATION_STEPS:,} steps"))
    gradient_steps: int = Field(default=1, ge=-1, le=MAX_GRADIENT_STEPS,
                                description="gradient steps per gradient phase; -1 = as many as steps collected",
                                json_schema_extra=_why(f"-1, or 0..{MAX_GRADIENT_STEPS:,} per phase"))
    n_steps: int = Field(default=1, ge=1, le=MAX_N_STEP_RETURNS,
                         description="n-step returns (SB3's n_steps): the TD target bootstraps after this many "
                                     "rewards instead of one; reward reaches earlier states n times faster",
                         json_schema_extra=_why(f"1..{MAX_N_STEP_RETURNS}: each replay sample sums up to n rewards"))


class DQNConfig(OffPolicyConfigBase):
    """Deep Q-Network (Mnih et al. 2015): our own agent (agents/dqn.py), SB3's DQN update and keys."""

    unused_shared_keys: ClassVar[tuple[str, ...]] = ("ent_coef", "vf_coef", "normalize_advantages", "log_std_init")
    algo: Literal[Algo.DQN] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    learning_rate: ScheduleOrFloat = Field(default=1e-4, description="Adam learning rate, constant or {start, end}",
                                           json_schema_extra=_why(f">= 0 and starting above 0; {_BAD_NOT_INVALID}"))
    max_grad_norm: float | None = Field(default=10.0, gt=0.0, description="global gradient-norm clip; None = off",
                                        json_schema_extra=_why("finite and > 0, or null for no clipping"))
    buffer_size: int = Field(default=1_000_000, ge=1, le=MAX_REPLAY_BUFFER, description="replay buffer capacity (transitions)",
                             json_schema_extra=_why(f"at most {MAX_REPLAY_BUFFER:,} transitions"))
    batch_size: int = Field(default=32, ge=1, le=MAX_SB3_BATCH, description="replay minibatch size",
                            json_schema_extra=_why(f"1..{MAX_SB3_BATCH:,} samples per gradient step"))
    tau: float = Field(default=1.0, ge=0.0, le=1.0, description="soft target update coefficient (1 = hard copy)",
                       json_schema_extra=_why("a mixing weight between target and online networks"))
    train_freq: int = Field(default=4, ge=1, le=MAX_ITERATION_STEPS,
                            description="collect this many steps per sub-environment between gradient phases",
                            json_schema_extra=_why(f"1..{MAX_ITERATION_STEPS:,} steps"))
    target_update_interval: int = Field(default=10_000, ge=1, le=MAX_ENV_STEPS,
                                        description="env steps between target-network updates",
                                        json_schema_extra=_why("at most the largest budget"))
    exploration_fraction: float = Field(default=0.1, ge=0.0, le=1.0,
                                        description="fraction of max_env_steps over which epsilon decays",
                                        json_schema_extra=_why("a fraction of the budget"))
    exploration_initial_eps: float = Field(default=1.0, ge=0.0, le=1.0, description="epsilon at the start",
                                           json_schema_extra=_why("a probability"))
    exploration_final_eps: float = Field(default=0.05, ge=0.0, le=1.0, description="epsilon after the decay",
                                         json_schema_extra=_why("a probability"))


class QRDQNConfig(DQNConfig):
    """Quantile-regression DQN (Dabney et al. 2017) through sb3-contrib."""

    algo: Literal[Algo.QRDQN] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")  # type: ignore[assignment]
    n_quantiles: int = Field(default=50, ge=1, le=1000, description="quantiles per action (QR-DQN, TQC)",
                             json_schema_extra=_why("1..1000: each is an output unit per action (or critic)"))


class SACConfig(OffPolicyConfigBase):
    """Soft Actor-Critic (Haarnoja et al. 2018) through Stable-Baselines3; Box actions only."""

    unused_shared_keys: ClassVar[tuple[str, ...]] = ("vf_coef", "normalize_advantages", "max_grad_norm")
    algo: Literal[Algo.SAC] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    max_grad_norm: float | None = Field(default=None, gt=0.0, description="not used by SAC/TD3/TQC (SB3 does not clip)",
                                        json_schema_extra=_why("must stay null"))
    log_std_init: float = Field(default=-3.0, ge=-20.0, le=5.0,
                                description="initial log std of the Gaussian policy (SB3's SAC default: -3)",
                                json_schema_extra=_why("std from 2e-9 to 148; beyond, exp() under- or overflows",
                                                       action_kinds=[_BOX_ACTIONS]))
    ent_coef_auto: bool = Field(default=True, description="learn the entropy coefficient (SAC/TQC); ent_coef > 0 "
                                "is then its initial value, else it starts at 1")
    target_entropy: float | None = Field(default=None, description="entropy target when learned; null = -action dims",
                                         json_schema_extra=_why(_FINITE))


class TQCConfig(SACConfig):
    """Truncated Quantile Critics (Kuznetsov et al. 2020) through sb3-contrib; Box actions only."""

    algo: Literal[Algo.TQC] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")  # type: ignore[assignment]
    n_quantiles: int = Field(default=25, ge=1, le=1000, description="quantiles per action (QR-DQN, TQC)",
                             json_schema_extra=_why("1..1000: each is an output unit per action (or critic)"))
    top_quantiles_to_drop_per_net: int = Field(default=2, ge=0, le=1000,
                                               description="TQC: quantiles dropped per critic from the target",
                                               json_schema_extra=_why("fewer than n_quantiles"))


class TD3Config(OffPolicyConfigBase):
    """Twin Delayed DDPG (Fujimoto et al. 2018) through Stable-Baselines3; Box actions only."""

    unused_shared_keys: ClassVar[tuple[str, ...]] = ("ent_coef", "vf_coef", "normalize_advantages", "max_grad_norm",
                                                     "log_std_init")
    algo: Literal[Algo.TD3] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    learning_rate: ScheduleOrFloat = Field(default=1e-3, description="Adam learning rate, constant or {start, end}",
                                           json_schema_extra=_why(f">= 0 and starting above 0; {_BAD_NOT_INVALID}"))
    max_grad_norm: float | None = Field(default=None, gt=0.0, description="not used by SAC/TD3/TQC (SB3 does not clip)",
                                        json_schema_extra=_why("must stay null"))
    policy_delay: int = Field(default=2, ge=1, le=1000, description="critic updates per actor and target update",
                              json_schema_extra=_why("1..1000 gradient steps"))
    target_policy_noise: float = Field(default=0.2, ge=0.0, description="std of the target-policy smoothing noise",
                                       json_schema_extra=_why(_FINITE))
    target_noise_clip: float = Field(default=0.5, ge=0.0, description="clip of the target-policy smoothing noise",
                                     json_schema_extra=_why(_FINITE))
    action_noise_std: float = Field(default=0.1, ge=0.0, le=10.0,
                                    description="Gaussian exploration noise std, as a fraction of the action half-range",
                                    json_schema_extra=_why("0..10 half-ranges; beyond, every action is clipped"))
