"""Our own algorithms' config models (gymnasium_solver/agents/ trains them): PPO, REINFORCE, A2C and DQN, on top of the
shared keys of :class:`ConfigBase`; and the replay-buffer keys DQN shares with the Stable-Baselines3
off-policy algorithms (:mod:`.sb3_models`). No I/O."""

from __future__ import annotations

from typing import ClassVar, Literal, Self

from pydantic import Field, model_validator

from gymnasium_solver.config.model import (
    _BAD_NOT_INVALID,
    _BOX_ACTIONS,
    MAX_ENV_STEPS,
    MAX_ROLLOUT_SAMPLES,
    Algo,
    ConfigBase,
    Schedule,
    ScheduleOrFloat,
    _check_rollout,
    _check_schedule,
    _why,
)


class PPOConfig(ConfigBase):
    """A PPO run: the shared keys plus PPO's rollout, minibatch and clipping keys."""

    algo: Literal[Algo.PPO] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    n_steps: int = Field(default=128, ge=1, le=65_536, description="steps per sub-environment per rollout",
                         json_schema_extra=_why(f"n_envs * n_steps must also be <= {MAX_ROLLOUT_SAMPLES:,}: "
                                                "one rollout is held in memory"))
    gae_lambda: float = Field(default=0.95, ge=0.0, le=1.0, description="GAE lambda",
                              json_schema_extra=_why("a mixing weight: 0 is one-step TD, 1 is Monte Carlo"))
    n_epochs: int = Field(default=10, ge=1, le=100, description="passes over each rollout",
                          json_schema_extra=_why("published settings use 1..30; more passes over one rollout "
                                                 "only overfit it, and 1e9 never finished an update"))
    batch_size: int = Field(default=64, ge=1, le=MAX_ROLLOUT_SAMPLES, description="minibatch size in samples",
                            json_schema_extra=_why("at most the rollout (n_envs * n_steps)"))
    clip_range: ScheduleOrFloat = Field(default=0.2, description="ratio clip, constant or {start, end}",
                                        json_schema_extra=_why(f">= 0 and starting above 0; {_BAD_NOT_INVALID}"))
    clip_range_vf: float | None = Field(default=None, gt=0.0, description="value-function clip range; None = off",
                                        json_schema_extra=_why("finite and > 0, or null for no clipping"))
    target_kl: float | None = Field(default=None, gt=0.0,
                                    description="stop the epochs of an update early above this KL; None = off",
                                    json_schema_extra=_why("finite and > 0, or null for no early stop"))
    adaptive_lr_kl: float | None = Field(
        default=None, gt=0.0,
        description="adapt the learning rate to this KL per update (rl_games' adaptive schedule): after an update "
                    "past 2x it the next one's learning rate is divided by 1.5, after one under half of it "
                    "multiplied by 1.5, never above learning_rate's own value; None = off",
        json_schema_extra=_why("finite and > 0, or null for the learning rate as set"))
    use_sde: bool = Field(
        default=False,
        description="generalized state-dependent exploration (gSDE, Raffin et al. 2022) for Box actions: the "
                    "exploration noise is the actor's last hidden layer times a random matrix, redrawn every "
                    "sde_sample_freq steps, so it is smooth in time; log_std_init is then the log std of that "
                    "matrix's entries (as in SB3's use_sde)",
        json_schema_extra=_why("true needs Box actions and network: mlp (the noise is a function of the MLP's "
                               "last hidden layer)", action_kinds=[_BOX_ACTIONS]))
    sde_sample_freq: int = Field(
        default=-1, ge=-1, le=65_536,
        description="with use_sde: redraw the noise matrix every this many env steps of each sub-environment; "
                    "-1 = only at the start of each rollout",
        json_schema_extra=_why("-1, or 1..65536 steps (the longest rollout per sub-environment); 0 would never "
                               "draw one", action_kinds=[_BOX_ACTIONS]))

    @model_validator(mode="after")
    def _check_ppo(self) -> Self:
        _check_schedule("clip_range", self.clip_range, start_above_zero=True)
        if self.sde_sample_freq == 0:
            raise ValueError("sde_sample_freq=0 would never draw a noise matrix; use -1 (once per rollout) or >= 1")
        if self.use_sde and self.network != "mlp":
            raise ValueError("use_sde: true needs network: mlp (its noise is a function of the MLP's last hidden "
                             "layer); set use_sde: false for nature_cnn")
        rollout = _check_rollout(self.n_envs, self.n_steps)
        if self.batch_size > rollout:
            raise ValueError(
                f"batch_size ({self.batch_size}) is larger than the rollout "
                f"n_envs*n_steps = {self.n_envs}*{self.n_steps} = {rollout}; "
                f"use batch_size <= {rollout} or a longer rollout"
            )
        return self


class ReinforceConfig(ConfigBase):
    """A REINFORCE run: the shared keys plus how many episodes make an update and the baseline."""

    algo: Literal[Algo.REINFORCE] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    use_baseline: bool = Field(default=True, description="subtract a learned value baseline")
    episodes_per_update: int = Field(default=8, ge=1, le=1000, description="complete episodes per update",
                                     json_schema_extra=_why("the episodes of one update are held in memory; "
                                                            "beyond ~1000 the gradient estimate stops improving"))

    def wasteful_settings(self) -> list[tuple[str, str]]:
        if self.n_envs <= self.episodes_per_update:
            return []
        return [("n_envs", f"n_envs={self.n_envs} > episodes_per_update={self.episodes_per_update}: each update keeps "
                 f"the first {self.episodes_per_update} episodes to end, the shortest, and discards the other envs' "
                 f"steps, so it learns from a biased sample; set episodes_per_update={self.n_envs} (or "
                 f"n_envs={self.episodes_per_update})")]


class A2CConfig(ConfigBase):
    """An A2C run (gymnasium_solver/agents/a2c.py): the shared keys plus the rollout and GAE keys; SB3's A2C defaults."""

    algo: Literal[Algo.A2C] = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    learning_rate: ScheduleOrFloat = Field(default=7e-4, description="RMSprop learning rate, constant or {start, end}",
                                           json_schema_extra=_why(f">= 0 and starting above 0; {_BAD_NOT_INVALID}"))
    normalize_advantages: bool = Field(default=False, description="normalise advantages per rollout")
    n_steps: int = Field(default=5, ge=1, le=65_536, description="steps per sub-environment per rollout (one update each)",
                         json_schema_extra=_why(f"n_envs * n_steps must also be <= {MAX_ROLLOUT_SAMPLES:,}: "
                                                "one rollout is held in memory"))
    gae_lambda: float = Field(default=1.0, ge=0.0, le=1.0, description="GAE lambda",
                              json_schema_extra=_why("a mixing weight: 0 is one-step TD, 1 is Monte Carlo"))

    @model_validator(mode="after")
    def _check_a2c(self) -> Self:
        _check_rollout(self.n_envs, self.n_steps)
        return self


# ---------------------------------------------------------------------------------------------
# Replay-buffer algorithms. Their keys are SB3's own constructor arguments, typed and bounded here;
# the shared keys map onto SB3's (hidden_sizes -> net_arch, activation -> activation_fn, learning_rate
# schedules -> SB3 schedules over the same budget). Shared keys such an algorithm has no use for must
# keep their default: a set value would be silently ignored.
# ---------------------------------------------------------------------------------------------
MAX_REPLAY_BUFFER = 10_000_000
MAX_ITERATION_STEPS = 1_000_000
MAX_GRADIENT_STEPS = 10_000
MAX_SB3_BATCH = 65_536
MAX_N_STEP_RETURNS = 1000

# Shared keys only the on-policy agents use: a replay algorithm learns from the raw observations and rewards.
_ON_POLICY_ONLY = ("normalize_observations", "normalize_rewards", "reward_scale", "shared_network", "reward_clip", "atari_wrappers",
                   "network", "ortho_init")


class OffPolicyConfigBase(ConfigBase):
    """Replay-buffer algorithms: our DQN, and SB3's QR-DQN, SAC, TD3, TQC. Their keys are SB3's
    constructor arguments (the same names for our DQN, whose update is SB3's)."""

    # Shared keys this algorithm ignores (beyond _ON_POLICY_ONLY): refused unless left at their default.
    unused_shared_keys: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def ignored_keys(cls) -> tuple[str, ...]:
        """The shared keys this algorithm has no use for: each must keep its default."""
        return (*_ON_POLICY_ONLY, *cls.unused_shared_keys)

    iteration_steps: int = Field(
        default=1000, ge=1, le=MAX_ITERATION_STEPS,
        description="env steps per training iteration (one metrics.csv row, one stop-signal check): SB3 "
                    "interleaves collection and gradient steps (train_freq), so an iteration is a chunk of them",
        json_schema_extra=_why(f"1..{MAX_ITERATION_STEPS:,}: a stop request waits at most one iteration, and "
                               "metrics.csv gets a row per iteration"))

    @model_validator(mode="after")
    def _check_unused(self) -> Self:
        defaults = {k: type(self).model_fields[k].get_default(call_default_factory=True)
                    for k in self.ignored_keys()}
        for key, default in defaults.items():
            if getattr(self, key) != default:
                raise ValueError(f"{key} is not used by {self.algo.value} (it learns from the raw observations "
                                 f"and rewards); "
                                 f"remove it or set it back to {default!r}")
        if isinstance(self.ent_coef, Schedule):
            raise ValueError(f"ent_coef: {self.algo.value} takes a constant entropy coefficient, not a schedule")
        if self.grad_norm_parts and self.algo is not Algo.DQN:
            raise ValueError(f"grad_norm_parts: {self.algo.value} trains in Stable-Baselines3, which does not expose "
                             "its gradients; gsolve's own ppo, a2c, reinforce and dqn log them (remove it, or "
                             "train one of those)")
        return self

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
    """Deep Q-Network (Mnih et al. 2015): our own agent (gymnasium_solver/agents/dqn.py), SB3's DQN update and keys."""

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
    double_q: bool = Field(default=False, description="Double DQN (van Hasselt et al. 2016): the online network "
                           "picks the next action, the target network values it (SB3's DQN: false)")
    exploration_fraction: float = Field(default=0.1, ge=0.0, le=1.0,
                                        description="fraction of max_env_steps over which epsilon decays",
                                        json_schema_extra=_why("a fraction of the budget"))
    exploration_initial_eps: float = Field(default=1.0, ge=0.0, le=1.0, description="epsilon at the start",
                                           json_schema_extra=_why("a probability"))
    exploration_final_eps: float = Field(default=0.05, ge=0.0, le=1.0, description="epsilon after the decay",
                                         json_schema_extra=_why("a probability"))
