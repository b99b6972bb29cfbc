"""The Stable-Baselines3 algorithms' config models (gymnasium_solver/agents/sb3.py trains them): QR-DQN, SAC, TD3 and
TQC, SB3's own constructor arguments, typed and bounded, on top of the replay-buffer keys of
:class:`OffPolicyConfigBase`. No I/O."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from gymnasium_solver.config.model import _BAD_NOT_INVALID, _BOX_ACTIONS, _FINITE, Algo, ScheduleOrFloat, _why
from gymnasium_solver.config.native_models import DQNConfig, OffPolicyConfigBase


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


# The config of an algorithm Stable-Baselines3 trains (algorithms.SB3 names the same ones).
SB3Config = QRDQNConfig | SACConfig | TD3Config | TQCConfig
