"""The shared config model (:class:`ConfigBase`, every field with its bound and the reason for it).
Our own algorithms' models are in :mod:`.native_models`, the Stable-Baselines3 ones in :mod:`.sb3_models`;
the tagged union over all of them, and what is derived from it, in :mod:`.registry`. No I/O."""

from __future__ import annotations

import math
import re
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gymnasium_solver.contract.algorithms import Algo  # noqa: F401 - re-exported: the config names algorithms by it

# What env_package and env_class may hold (config/env_modules.py imports them): names, never code.
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
CLASS_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")


class ConfigError(ValueError):
    """A config problem, phrased for the person (or model) who has to fix it."""


class Schedule(BaseModel):
    """A value that moves linearly from ``start`` to ``end`` over the run's env-step budget."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    start: float
    end: float

    def at(self, progress: float) -> float:
        """Value at ``progress`` in [0, 1] (fraction of max_env_steps spent)."""
        p = min(max(progress, 0.0), 1.0)
        return self.start + (self.end - self.start) * p


ScheduleOrFloat = float | Schedule


def schedule_value(value: ScheduleOrFloat, progress: float) -> float:
    return value.at(progress) if isinstance(value, Schedule) else float(value)


def schedule_start(value: ScheduleOrFloat) -> float:
    return value.start if isinstance(value, Schedule) else float(value)


# ---------------------------------------------------------------------------------------------
# Limits. Each bound lives on its field with the reason (``_why``), which errors quote; the
# "Limits" table of docs/configs.md says the same at more length (a test holds it to the fields).
# ---------------------------------------------------------------------------------------------
MAX_SEED = 2**32 - 1


MAX_ENV_STEPS = 1_000_000_000


MAX_N_ENVS = 1024


MAX_ASYNC_PROCESSES = 64


MAX_ROLLOUT_SAMPLES = 2**20


MAX_LAYER_WIDTH = 4096


MAX_HIDDEN_LAYERS = 16


MAX_HIDDEN_WEIGHTS = 2**24


MAX_EVAL_EPISODES = 1000


MAX_PERIODIC_CHECKPOINTS = 1000


MAX_TORCH_THREADS = 256


MAX_ENV_KWARGS = 32


MAX_KEPT_CHECKPOINTS = 100


MAX_TRACKING_URI = 2048


# Limits that involve more than one field, checked by the model validators below; each has a row
# (with the reason) in the Limits table of docs/configs.md.
CROSS_FIELD_LIMITS = ("n_envs * n_steps", "vectorization: async", "hidden_sizes (weights)",
                      "checkpoint_freq (count)", "torch_threads (machine)", "network: nature_cnn",
                      "keep_last_checkpoints (needs checkpoint_freq)")


def _why(reason: str, **extra: Any) -> dict[str, Any]:
    """The ``json_schema_extra`` of a bounded field: why the limit is what it is."""
    return {"why": reason, **extra}


_FINITE = "any finite value; nan or inf would poison every weight at the first update"


# Hyperparameters that cost no resource are bounded only by what is meaningful: a bad value is a
# diagnosis (`gsolve diagnose`), not a config error, and the fault corpus trains with ent_coef=10
# and learning_rate=1000 on purpose.
_BAD_NOT_INVALID = "finite (nan/inf poison every weight); a large value is bad, not invalid: gsolve diagnose says so"


# A field marked _BOX_ACTIONS only means something for runs whose actions are a Box
# (run_folder.ActionSpaceInfo.kind); which *algorithms* use a key is which model declares it.
_BOX_ACTIONS = "box"


def _check_schedule(name: str, value: ScheduleOrFloat, start_above_zero: bool) -> None:
    lo_v = min(value.start, value.end) if isinstance(value, Schedule) else float(value)
    if lo_v < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    if start_above_zero and schedule_start(value) <= 0:
        raise ValueError(f"{name} must start above 0, got {value}")


def _check_rollout(n_envs: int, n_steps: int) -> int:
    """The rollout's size in samples (PPO, A2C); ValueError when it would not fit in memory."""
    rollout = n_envs * n_steps
    if rollout > MAX_ROLLOUT_SAMPLES:
        raise ValueError(
            f"the rollout n_envs*n_steps = {n_envs}*{n_steps} = {rollout:,} samples is more "
            f"than the {MAX_ROLLOUT_SAMPLES:,} held in memory at once; use n_steps <= "
            f"{MAX_ROLLOUT_SAMPLES // n_envs} for {n_envs} envs")
    return rollout


def _check_network(cfg: ConfigBase) -> None:
    """The keys that go with pixel observations and the CNN, checked together."""
    if cfg.atari_wrappers and cfg.network != "nature_cnn":
        raise ValueError("atari_wrappers: true gives 4x84x84 uint8 pixel observations; set network: nature_cnn")
    if cfg.network == "nature_cnn" and cfg.normalize_observations:
        raise ValueError("network: nature_cnn scales pixels by 1/255 itself; set normalize_observations: false")
    if cfg.device == "cuda" and cfg.network == "mlp":
        raise ValueError("device: cuda needs network: nature_cnn; the MLP acts in numpy on the CPU, which is "
                         "faster than a GPU for networks this small (use device: cpu or auto)")
    if cfg.device == "cuda" and cfg.algo != Algo.PPO:
        raise ValueError(f"device: cuda is for PPO; {cfg.algo} runs on the CPU (use device: cpu or auto)")


class ConfigBase(BaseModel):
    """The keys every algorithm uses. Field descriptions are the documentation (`gsolve config`);
    a bounded field says why in ``json_schema_extra['why']``. Every float is finite unless the
    field says otherwise (``allow_inf_nan=False``)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    # identity
    env_id: str = Field(min_length=1, max_length=128, description="Gymnasium environment id, e.g. CartPole-v1",
                        json_schema_extra=_why("a registered Gymnasium id; it is part of every run id and folder name"))
    variant: str = Field(min_length=1, max_length=64, description="preset variant name, e.g. ppo",
                         json_schema_extra=_why("a preset's variant name; it is part of the config id"))
    algo: Algo = Field(description="training algorithm (decides which of the algorithm-specific keys exist)")
    seed: int = Field(default=0, ge=0, le=MAX_SEED, description="seed for environments, network init and sampling",
                      json_schema_extra=_why("numpy's legacy seeding and many environments take 32-bit seeds; "
                                             "larger seeds validated, then failed inside the trainer"))
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="extra keyword arguments for gym.make",
                                       json_schema_extra=_why(f"at most {MAX_ENV_KWARGS} keys: they are copied "
                                                              "into every run's config and run.json"))
    env_package: list[str] = Field(
        default_factory=list, max_length=8,
        description="Python packages whose import registers env_id (e.g. minigrid), imported before the environment "
                    "is made; set by `--env-package PKG` or a preset, never by --set. A run folder naming one never "
                    "imports it: reloading the run needs the same --env-package on the command line (docs/security.md)",
        json_schema_extra=_why("at most 8 dotted module names: what a command line names, recorded so a reload "
                               "can say which flag to pass"))
    env_class: str | None = Field(
        default=None, max_length=200,
        description="MODULE:CLASS of a user's own gymnasium.Env registered as env_id; set by `--env-class "
                    "MODULE:CLASS` or a preset, never by --set; reloading the run needs the same --env-class",
        json_schema_extra=_why("one MODULE:CLASS path; imported only when the command line names it"))

    # budget and goal
    max_env_steps: int = Field(default=200_000, gt=0, le=MAX_ENV_STEPS,
                               description="env-step budget; the run stops when it is spent",
                               json_schema_extra=_why("1e9 steps is days of CPU time for the environments "
                                                      "this trainer runs; larger numbers are typos"))
    reward_threshold: float | None = Field(
        default=None, allow_inf_nan=True,
        description="eval mean return that counts as solved; None = the Gymnasium spec's threshold; "
                    ".inf = never stop early (spend the whole budget)",
        json_schema_extra=_why("any finite value, or +inf to train for the whole budget (the one way to "
                               "say 'never solved'); nan and -inf are refused: nothing compares "
                               "above nan, and every evaluation is above -inf"),
    )

    # environments and rollout
    n_envs: int = Field(default=8, ge=1, le=MAX_N_ENVS, description="parallel sub-environments",
                        json_schema_extra=_why(f"{MAX_N_ENVS} in one process already exceeds what a CPU "
                                               f"steps usefully; async allows {MAX_ASYNC_PROCESSES} (one "
                                               "process each)"))
    vectorization: Literal["auto", "sync", "async"] = Field(
        default="auto", description="auto = Gymnasium's numpy-vectorised env where one exists, else sync"
    )
    gamma: float = Field(default=0.99, gt=0.0, le=1.0, description="discount factor",
                         json_schema_extra=_why("a discount: 1 is undiscounted, 0 would learn nothing"))
    normalize_observations: bool = Field(default=False, description="running mean/std observation normalisation")
    normalize_rewards: bool = Field(
        default=False,
        description="divide learning rewards by the running std of the discounted return (gamma), clipped to "
                    "[-10, 10]: SB3's VecNormalize norm_reward, which the RL Zoo's `normalize: true` turns on; "
                    "episode returns and evaluations stay in game score; a resumed run estimates the std anew")
    reward_scale: float = Field(default=1.0, gt=0.0, description="multiply rewards by this before learning",
                                json_schema_extra=_why("any finite positive factor"))
    reward_clip: float | None = Field(
        default=None, gt=0.0,
        description="clip learning rewards to [-reward_clip, reward_clip] (after reward_scale); episode returns "
                    "and evaluations stay unclipped; None = off. Atari's reward clipping is 1.0 (Mnih et al. 2015)",
        json_schema_extra=_why("finite and > 0, or null for no clipping"))
    atari_wrappers: bool = Field(
        default=False,
        description="the standard Atari preprocessing (Gymnasium's AtariPreprocessing + FrameStackObservation): "
                    "up to 30 no-op actions at reset, frame skip 4 with max-pooling of the last two frames, "
                    "84x84 grayscale, a stack of the last 4 frames, not terminal on life loss; needs an ALE "
                    "environment with frameskip 1 (e.g. PongNoFrameskip-v4) and the atari extra (ale-py)",
        json_schema_extra=_why("true gives 4x84x84 uint8 pixel observations, which need network: nature_cnn"))

    # optimisation
    learning_rate: ScheduleOrFloat = Field(default=3e-4, description="Adam learning rate, constant or {start, end}",
                                           json_schema_extra=_why(f">= 0 and starting above 0; {_BAD_NOT_INVALID}"))
    ent_coef: ScheduleOrFloat = Field(default=0.0, description="entropy bonus coefficient, constant or {start, end}",
                                      json_schema_extra=_why(f">= 0; {_BAD_NOT_INVALID}"))
    vf_coef: float = Field(default=0.5, ge=0.0, description="value loss coefficient (PPO critic, REINFORCE baseline)",
                           json_schema_extra=_why(_FINITE))
    max_grad_norm: float | None = Field(default=0.5, gt=0.0, description="global gradient-norm clip; None = off",
                                        json_schema_extra=_why("finite and > 0, or null for no clipping; "
                                                               "nan validated, then failed in the trainer"))
    normalize_advantages: bool = Field(default=True, description="normalise advantages per minibatch")

    # network
    hidden_sizes: list[int] = Field(
        default_factory=lambda: [64, 64], min_length=0, max_length=MAX_HIDDEN_LAYERS,
        description="MLP hidden layer sizes; [] = no hidden layer, a linear network (over a one-hot Discrete "
                    "observation: a table, one row per state)",
        json_schema_extra=_why(f"0..{MAX_HIDDEN_LAYERS} layers of 1..{MAX_LAYER_WIDTH} units, and at most "
                               f"{MAX_HIDDEN_WEIGHTS:,} hidden-to-hidden weights: wider MLPs do not fit "
                               "a CPU trainer's memory and time"),
    )
    activation: Literal["tanh", "relu"] = Field(default="tanh", description="MLP activation")
    network: Literal["mlp", "nature_cnn"] = Field(
        default="mlp",
        description="mlp = the MLP of hidden_sizes/activation; nature_cnn = the Nature DQN CNN (Mnih et al. "
                    "2015) as SB3's CnnPolicy and CleanRL's ppo_atari use it, one trunk shared by actor and "
                    "critic, for 4x84x84 uint8 pixel observations (hidden_sizes, activation and "
                    "shared_network do not apply to it)",
        json_schema_extra=_why("a closed choice: the two policy networks the trainer has"))
    device: Literal["cpu", "auto", "cuda"] = Field(
        default="cpu",
        description="where the network runs: cpu; cuda; auto = cuda when torch sees a GPU, else cpu. "
                    "The MLP (it acts in numpy, faster than a GPU for small nets) and REINFORCE always run on the CPU",
        json_schema_extra=_why("a closed choice; cuda needs network: nature_cnn and algo: ppo"))
    shared_network: bool = Field(default=False, description="actor and critic share the hidden layers")
    ortho_init: bool = Field(default=True,
                             description="orthogonal initialisation of the actor and critic (gain sqrt(2) for hidden "
                                         "layers, 0.01 for the policy head, 1 for the value head), as SB3's "
                                         "on-policy algorithms do; false = torch's default initialisation (the RL "
                                         "Zoo's policy_kwargs.ortho_init=False)")
    log_std_init: float = Field(default=0.0, ge=-20.0, le=5.0,
                                description="initial log std of the Gaussian policy (Box actions)",
                                json_schema_extra=_why("std from 2e-9 (deterministic) to 148 (wider than any "
                                                       "action bound); beyond, exp() under- or overflows",
                                                       action_kinds=[_BOX_ACTIONS]))

    # evaluation and checkpoints
    eval_freq: int = Field(default=10_000, ge=1, le=MAX_ENV_STEPS, description="evaluate every this many env steps",
                           json_schema_extra=_why("at most the largest budget"))
    eval_episodes: int = Field(default=10, ge=1, le=MAX_EVAL_EPISODES,
                               description="deterministic evaluation episodes, run in parallel",
                               json_schema_extra=_why(f"all run at once, one sub-environment each; "
                                                      f"{MAX_EVAL_EPISODES} gives a standard error far below "
                                                      "any threshold's margin"))
    confirm_episodes: int = Field(default=50, ge=0, le=MAX_EVAL_EPISODES,
                                  description="an evaluation that reaches the reward threshold solves the run only "
                                  "if this many more episodes (fresh seeds, in rounds of eval_episodes) average "
                                  "at least the threshold too, and up to 4x as many while a t-test cannot tell "
                                  "their mean from it; 0 = the first evaluation decides (SB3's and the RL Zoo's "
                                  "definition)",
                                  json_schema_extra=_why("the evaluation that first reaches the threshold is "
                                                         "picked for being high: on a stochastic environment "
                                                         "a 10-episode mean of 1.0 can be luck"))
    checkpoint_freq: int = Field(default=0, ge=0, le=MAX_ENV_STEPS,
                                 description="periodic checkpoint every N env steps; 0 = only best/last",
                                 json_schema_extra=_why(f"0, or at most {MAX_PERIODIC_CHECKPOINTS} periodic "
                                                        "checkpoints per run (each is a kept file)"))
    last_checkpoint_seconds: float = Field(
        default=60.0, ge=0.0, le=3600.0,
        description="rewrite the `last` checkpoint (what `gsolve train --resume` continues from) after at most "
                    "this many seconds of training, so a crash loses at most that much; 0 = after every "
                    "iteration; at most an hour",
        json_schema_extra=_why("0..3600 s: a crash should never cost more than an hour of training"))
    keep_best_checkpoints: int = Field(
        default=0, ge=0, le=MAX_KEPT_CHECKPOINTS,
        description="keep the N best evaluations' policies as eval_<env_steps> checkpoints (ranked by eval "
                    "return, the rest pruned); 0 = off (`best` alone, as always)",
        json_schema_extra=_why(f"0..{MAX_KEPT_CHECKPOINTS}: each kept checkpoint is a file; more than "
                               f"{MAX_KEPT_CHECKPOINTS} best policies are no longer a selection"))
    keep_last_checkpoints: int = Field(
        default=0, ge=0, le=MAX_PERIODIC_CHECKPOINTS,
        description="keep only the N most recent periodic step_<env_steps> checkpoints (needs checkpoint_freq); "
                    "0 = keep them all",
        json_schema_extra=_why(f"0..{MAX_PERIODIC_CHECKPOINTS}, the most periodic checkpoints a run can write"))
    grad_norm_parts: bool = Field(
        default=False,
        description="also log the gradient norm of each part of the network before clipping: the actor's, the "
                    "critic's and the layers they share (train/grad_norm_actor, _critic, _trunk); DQN's hidden "
                    "and output layers (_trunk, _head). gsolve's own ppo, a2c, reinforce and dqn; costs a few "
                    "small kernels per gradient step",
        json_schema_extra=_why("true or false; Stable-Baselines3's algorithms do not expose their gradients"))
    tensorboard: bool = Field(default=False, description="also write TensorBoard event files to "
                              "runs/<run_id>/tensorboard/ (every metrics.csv column, keyed by env steps); "
                              "needs the tracking extra")
    mlflow: bool = Field(default=False, description="also log the run to MLflow: params, metrics, the run folder "
                         "as artifacts and the best checkpoint as a model; needs the tracking extra")
    mlflow_tracking_uri: str | None = Field(
        default=None, min_length=1, max_length=MAX_TRACKING_URI,
        description="MLflow tracking URI (http://host:5000, file:/path, sqlite:///mlflow.db); None = the SQLite "
                    "store sqlite:///<runs>/.mlflow/mlflow.db inside the runs folder, artifacts beside it",
        json_schema_extra=_why(f"a URI: at most {MAX_TRACKING_URI} characters; a run started over MCP (and every "
                               "process such a server starts) may only name the default store, a folder or "
                               "sqlite:/// database inside the runs folder, or what the server's operator allowed (gsolve mcp "
                               "--allow-tracking-uri): a client must not choose where the trainer writes or "
                               "which host it sends requests to (gymnasium_solver/contract/locations.py)",
                               location_of="mlflow"))
    mlflow_experiment: str | None = Field(
        default=None, min_length=1, max_length=256,
        description="MLflow experiment name; None = the environment id",
        json_schema_extra=_why("an MLflow experiment name: at most 256 characters"))
    wandb: bool = Field(default=False, description="also log the run to Weights & Biases, offline: config, metrics "
                        "and final results in runs/<run_id>/wandb/, uploaded later with `wandb sync`; needs the "
                        "wandb extra",
                        json_schema_extra=_why("true or false; offline unless the user's WANDB_MODE says online, and "
                                               "always offline for a run a confining MCP server starts: a client must "
                                               "not make the trainer upload anything (tracking/wandb_sink.py)"))
    wandb_project: str | None = Field(
        default=None, min_length=1, max_length=128, pattern=r"^[^/\\#?%:]+$",
        description="W&B project; None = gymnasium-solver",
        json_schema_extra=_why("a W&B project name: at most 128 characters, none of / \\ # ? % : (W&B refuses them)"))
    otel: bool = Field(default=False, description="also export the run to OpenTelemetry: one span per run with an "
                       "event per evaluation, and metrics; the OTLP endpoint comes from the standard "
                       "OTEL_EXPORTER_OTLP_* environment variables; needs the otel extra",
                       json_schema_extra=_why("true or false; the endpoint is never a config value, only the "
                                              "OTEL_EXPORTER_OTLP_* variables of whoever runs the trainer: a client "
                                              "must not choose which host it sends to"))
    torch_threads: int = Field(default=1, ge=1, le=MAX_TORCH_THREADS,
                               description="threads of torch's and numpy's (BLAS) math (small nets are fastest on 1)",
                               json_schema_extra=_why(f"at most {MAX_TORCH_THREADS}, and at most this machine's "
                                                      "CPU count when a run starts: more threads than cores "
                                                      "only oversubscribe them"))

    @field_validator("reward_threshold")
    @classmethod
    def _threshold_not_nan(cls, v: float | None) -> float | None:
        if v is not None and (math.isnan(v) or v == -math.inf):
            raise ValueError("must be a finite number, or .inf to never stop early")
        return v

    @field_validator("env_id")
    @classmethod
    def _no_module_prefix(cls, v: str) -> str:
        # Gymnasium imports the `module` of a "module:EnvId" id (gym.make), so a config in
        # a run folder from someone else could run code, even a file planted beside it (issue 26).
        if ":" in v:
            raise ValueError(f"{v!r} names a Python module for Gymnasium to import ('module:EnvId'), and a config "
                             f"never makes gsolve import code; use the registered id alone ({v.rsplit(':', 1)[-1]!r})")
        return v

    @field_validator("env_package")
    @classmethod
    def _package_names(cls, v: list[str]) -> list[str]:
        bad = [p for p in v if not MODULE_NAME.fullmatch(p)]
        if bad:
            raise ValueError(f"expected Python package names such as minigrid, got {bad[0]!r}")
        return v

    @field_validator("env_class")
    @classmethod
    def _class_path(cls, v: str | None) -> str | None:
        if v is not None and not CLASS_PATH.fullmatch(v):
            raise ValueError(f"expected MODULE:CLASS such as my_envs.corridor:Corridor, got {v!r}")
        return v

    @field_validator("env_kwargs")
    @classmethod
    def _few_env_kwargs(cls, v: dict[str, Any]) -> dict[str, Any]:
        if len(v) > MAX_ENV_KWARGS:
            raise ValueError(f"at most {MAX_ENV_KWARGS} keyword arguments, got {len(v)} of them")
        return v

    @field_validator("hidden_sizes")
    @classmethod
    def _network_fits(cls, v: list[int]) -> list[int]:
        if any(h < 1 or h > MAX_LAYER_WIDTH for h in v):
            raise ValueError(f"every layer needs 1..{MAX_LAYER_WIDTH} units")
        weights = sum(a * b for a, b in zip(v, v[1:], strict=False))
        if weights > MAX_HIDDEN_WEIGHTS:
            raise ValueError(f"{weights:,} hidden-to-hidden weights; at most {MAX_HIDDEN_WEIGHTS:,} fit "
                             "(e.g. [4096, 4096], or 16 layers of 1024)")
        return v

    @model_validator(mode="after")
    def _check_shared(self) -> Self:
        _check_schedule("learning_rate", self.learning_rate, start_above_zero=True)
        _check_schedule("ent_coef", self.ent_coef, start_above_zero=False)
        if self.vectorization == "async":
            for name in ("n_envs", "eval_episodes"):
                if getattr(self, name) > MAX_ASYNC_PROCESSES:
                    raise ValueError(
                        f"{name}={getattr(self, name)} with vectorization: async would start that many "
                        f"processes; use {name} <= {MAX_ASYNC_PROCESSES} or vectorization: sync")
        _check_network(self)
        if self.checkpoint_freq and self.max_env_steps / self.checkpoint_freq > MAX_PERIODIC_CHECKPOINTS:
            least = -(-self.max_env_steps // MAX_PERIODIC_CHECKPOINTS)
            raise ValueError(
                f"checkpoint_freq={self.checkpoint_freq} would keep {self.max_env_steps // self.checkpoint_freq:,} "
                f"checkpoints over max_env_steps={self.max_env_steps:,}; use checkpoint_freq >= {least} or 0")
        if self.keep_last_checkpoints and not self.checkpoint_freq:
            raise ValueError(
                f"keep_last_checkpoints={self.keep_last_checkpoints} prunes the periodic checkpoints, but "
                "checkpoint_freq is 0 so none are written; set checkpoint_freq too (e.g. checkpoint_freq=10000)")
        return self

    @property
    def config_id(self) -> str:
        return f"{self.env_id}:{self.variant}"

    def wasteful_settings(self) -> list[tuple[str, str]]:
        """(key, sentence) for valid settings that throw away what the run collects: trained as asked, with
        a warning in run.json and run.log (and on stderr from `gsolve train`)."""
        return []
