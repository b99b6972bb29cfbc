"""Typed, validated training configs loaded from ``config/environments/<EnvId>.yaml``.

A preset file looks like::

    env_id: CartPole-v1          # optional; defaults to the file name
    base:                        # shared by every variant of this file
      n_envs: 16
      max_env_steps: 200000
    variants:
      ppo:
        algo: ppo
        learning_rate: {start: 0.001, end: 0.0}
      reinforce:
        algo: reinforce

A variant is ``base`` deep-merged with the variant's own keys (a variant may also say
``inherits: other_variant``). The result is validated into :class:`Config`; an unknown key, a wrong
type or an impossible value is a :class:`ConfigError` naming the file, the key and a close match.
This module does not import torch: the read side uses it too.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

CONFIG_DIR_ENV = "GSOLVE_CONFIG_DIR"
PACKAGE_CONFIG_DIR = Path(__file__).resolve().parent.parent / "config" / "environments"


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


class Algo(StrEnum):
    """The training algorithms; the one list argparse choices, MCP schemas and the config derive from."""

    PPO = "ppo"
    REINFORCE = "reinforce"


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

# Limits that involve more than one field, checked by the model validators below; each has a row
# (with the reason) in the Limits table of docs/configs.md.
CROSS_FIELD_LIMITS = ("n_envs * n_steps", "vectorization: async", "hidden_sizes (weights)",
                      "checkpoint_freq (count)", "torch_threads (machine)")


def _why(reason: str, **extra: Any) -> dict[str, Any]:
    """The ``json_schema_extra`` of a bounded field: why the limit is what it is."""
    return {"why": reason, **extra}


def limit_reason(key: str) -> str:
    """Why ``key`` is bounded as it is ('' for an unknown key)."""
    field = CONFIG_FIELDS.get(key)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    return str(extra.get("why", ""))


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
    reward_scale: float = Field(default=1.0, gt=0.0, description="multiply rewards by this before learning",
                                json_schema_extra=_why("any finite positive factor"))

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
        default_factory=lambda: [64, 64], min_length=1, max_length=MAX_HIDDEN_LAYERS,
        description="MLP hidden layer sizes",
        json_schema_extra=_why(f"1..{MAX_HIDDEN_LAYERS} layers of 1..{MAX_LAYER_WIDTH} units, and at most "
                               f"{MAX_HIDDEN_WEIGHTS:,} hidden-to-hidden weights: wider MLPs do not fit "
                               "a CPU trainer's memory and time"),
    )
    activation: Literal["tanh", "relu"] = Field(default="tanh", description="MLP activation")
    shared_network: bool = Field(default=False, description="actor and critic share the hidden layers")
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
    torch_threads: int = Field(default=1, ge=1, le=MAX_TORCH_THREADS,
                               description="torch intra-op threads (small nets are fastest on 1)",
                               json_schema_extra=_why(f"at most {MAX_TORCH_THREADS}, and at most this machine's "
                                                      "CPU count when a run starts: more threads than cores "
                                                      "only oversubscribe them"))

    @field_validator("reward_threshold")
    @classmethod
    def _threshold_not_nan(cls, v: float | None) -> float | None:
        if v is not None and (math.isnan(v) or v == -math.inf):
            raise ValueError("must be a finite number, or .inf to never stop early")
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
        if self.checkpoint_freq and self.max_env_steps / self.checkpoint_freq > MAX_PERIODIC_CHECKPOINTS:
            least = -(-self.max_env_steps // MAX_PERIODIC_CHECKPOINTS)
            raise ValueError(
                f"checkpoint_freq={self.checkpoint_freq} would keep {self.max_env_steps // self.checkpoint_freq:,} "
                f"checkpoints over max_env_steps={self.max_env_steps:,}; use checkpoint_freq >= {least} or 0")
        return self

    @property
    def config_id(self) -> str:
        return f"{self.env_id}:{self.variant}"


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

    @model_validator(mode="after")
    def _check_ppo(self) -> Self:
        _check_schedule("clip_range", self.clip_range, start_above_zero=True)
        rollout = self.n_envs * self.n_steps
        if rollout > MAX_ROLLOUT_SAMPLES:
            raise ValueError(
                f"the rollout n_envs*n_steps = {self.n_envs}*{self.n_steps} = {rollout:,} samples is more "
                f"than the {MAX_ROLLOUT_SAMPLES:,} held in memory at once; use n_steps <= "
                f"{MAX_ROLLOUT_SAMPLES // self.n_envs} for {self.n_envs} envs")
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


# The config is a tagged union on ``algo``: an algorithm's own keys exist only on its model, so
# "which keys belong to which algorithm" is declared once, by the model that declares them.
Config = Annotated[PPOConfig | ReinforceConfig, Field(discriminator="algo")]
CONFIG_MODELS: dict[Algo, type[PPOConfig] | type[ReinforceConfig]] = {
    Algo.PPO: PPOConfig, Algo.REINFORCE: ReinforceConfig,
}
CONFIG_FIELDS: dict[str, FieldInfo] = {
    k: f for model in (ConfigBase, *CONFIG_MODELS.values()) for k, f in model.model_fields.items()
}
CONFIG_KEYS: tuple[str, ...] = tuple(CONFIG_FIELDS)


def algos_for_key(key: str) -> tuple[Algo, ...]:
    """The algorithms whose config has ``key`` (all of them for a shared key, none for an unknown one)."""
    return tuple(a for a, model in CONFIG_MODELS.items() if key in model.model_fields)


def applies_to(key: str, algo: str | None, action_kind: str | None = None) -> bool:
    """Whether config ``key`` means anything for a run of ``algo`` whose action space is of
    ``action_kind`` ('discrete' or 'box'). Unknown keys and unknown algo/kind (None) count as applying."""
    field = CONFIG_FIELDS.get(key)
    if field is None:
        return True
    if algo in CONFIG_MODELS and key not in CONFIG_MODELS[Algo(algo)].model_fields:
        return False
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    kinds = extra.get("action_kinds")
    return action_kind is None or not isinstance(kinds, list) or action_kind in kinds


# Keys a preset may carry that are not config fields.
_PRESET_ONLY_KEYS = {"inherits", "description"}


def close_matches(word: str, options: list[str] | tuple[str, ...], n: int = 3) -> list[str]:
    return difflib.get_close_matches(word, list(options), n=n, cutoff=0.5)


def _did_you_mean(word: str, options: list[str] | tuple[str, ...]) -> str:
    m = close_matches(word, options)
    return f"; did you mean {' or '.join(repr(x) for x in m)}?" if m else ""


def config_dir() -> Path:
    import os

    env = os.environ.get(CONFIG_DIR_ENV)
    return Path(env) if env else PACKAGE_CONFIG_DIR


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) and k == "env_kwargs":
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid")
    env_id: str
    description: str = ""
    base: dict[str, Any] = Field(default_factory=dict)
    variants: dict[str, dict[str, Any]]
    path: str


@lru_cache(maxsize=64)
def _load_preset_cached(path: str, mtime: float) -> Preset:
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: expected a mapping with 'base' and 'variants' at the top level")
    allowed = {"env_id", "description", "base", "variants"}
    for key in raw:
        if key not in allowed:
            raise ConfigError(f"{p}: unknown top-level key {key!r}{_did_you_mean(key, sorted(allowed))}")
    variants = raw.get("variants")
    if not isinstance(variants, dict) or not variants:
        raise ConfigError(f"{p}: 'variants' must map variant names to settings, e.g. 'ppo: {{algo: ppo}}'")
    return Preset(
        env_id=raw.get("env_id") or p.stem,
        description=raw.get("description") or "",
        base=raw.get("base") or {},
        variants={k: (v or {}) for k, v in variants.items()},
        path=str(p),
    )


def list_env_files() -> dict[str, Path]:
    folder = config_dir()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def load_preset(env_id: str) -> Preset:
    files = list_env_files()
    if env_id not in files:
        raise ConfigError(
            f"no preset for environment {env_id!r}{_did_you_mean(env_id, list(files))} "
            f"(presets: {', '.join(files) or 'none'}; folder {config_dir()})"
        )
    path = files[env_id]
    return _load_preset_cached(str(path), path.stat().st_mtime)


def parse_config_id(config_id: str) -> tuple[str, str]:
    """Split ``ENV:VARIANT``; a bare ``ENV`` is an error that says which variants exist."""
    if ":" not in config_id:
        variants = ""
        try:
            variants = ", ".join(f"{config_id}:{v}" for v in load_preset(config_id).variants)
        except ConfigError:
            pass
        raise ConfigError(
            f"expected ENV:VARIANT, got {config_id!r}" + (f"; available: {variants}" if variants else "")
        )
    env_id, variant = config_id.split(":", 1)
    return env_id, variant


def _resolve_variant_dict(preset: Preset, variant: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    if variant not in preset.variants:
        raise ConfigError(
            f"{preset.path}: no variant {variant!r}{_did_you_mean(variant, list(preset.variants))} "
            f"(variants: {', '.join(preset.variants)})"
        )
    if variant in seen:
        raise ConfigError(f"{preset.path}: variant inheritance loop {' -> '.join(seen + (variant,))}")
    own = dict(preset.variants[variant])
    parent = own.pop("inherits", None)
    base = _resolve_variant_dict(preset, parent, seen + (variant,)) if parent else dict(preset.base)
    return _deep_merge(base, own)


class _NoAliasLoader(yaml.SafeLoader):
    """YAML without anchors and aliases: a few hundred bytes of nested aliases expand into gigabytes
    when the value is used or serialised (a "billion laughs"), and no config value needs them."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ConfigError("YAML anchors and aliases (&name, *name) are not allowed in a --set value; "
                              "write the value out, e.g. hidden_sizes=[64, 64]")
        return super().compose_node(parent, index)


def _parse_override_value(raw: str) -> Any:
    try:
        return yaml.load(raw, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return raw


def parse_overrides(pairs: list[str] | None) -> dict[str, Any]:
    """``["lr=1e-3", "learning_rate.start=0.1"]`` -> nested dict. Values are parsed as YAML."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ConfigError(f"override {pair!r} must look like key=value, e.g. learning_rate=0.001")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key:
            raise ConfigError(f"override {pair!r} has an empty key")
        parts = key.split(".")
        cursor = out
        for part in parts[:-1]:
            cursor = cursor.setdefault(part, {})
            if not isinstance(cursor, dict):
                raise ConfigError(f"override {pair!r} conflicts with another override of {part!r}")
        cursor[parts[-1]] = _parse_override_value(value)
    return out


def _check_keys(data: Mapping[str, Any], where: str) -> None:
    for key in data:
        if key in _PRESET_ONLY_KEYS:
            continue
        if key not in CONFIG_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r}{_did_you_mean(key, CONFIG_KEYS)}")


def _apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for key, value in overrides.items():
        if isinstance(value, dict) and key in ("learning_rate", "clip_range", "ent_coef"):
            current = out.get(key)
            if isinstance(current, dict):
                value = {**current, **value}
            elif current is not None and set(value) - {"start", "end"} == set():
                value = {"start": current, "end": current, **value}
        elif isinstance(value, dict) and key == "env_kwargs":
            value = {**(out.get(key) or {}), **value}
        out[key] = value
    return out


_SCHEDULE_KEYS = ("learning_rate", "clip_range", "ent_coef")


# pydantic's range messages, said the way the rest of our errors are ("must be <= 100").
_BOUND_WORDS = {"less_than_equal": ("le", "<="), "less_than": ("lt", "<"), "greater_than_equal": ("ge", ">="),
                "greater_than": ("gt", ">"), "too_long": ("max_length", "at most"),
                "too_short": ("min_length", "at least"), "string_too_long": ("max_length", "at most"),
                "string_too_short": ("min_length", "at least")}


def _error_message(err: Any, key: str) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _BOUND_WORDS and _BOUND_WORDS[kind][0] in ctx:
        name, word = _BOUND_WORDS[kind]
        unit = " characters" if kind.startswith("string") else (" items" if kind.startswith("too") else "")
        msg = f"must be {word} {ctx[name]}{unit}"
    elif kind == "finite_number":
        msg = "must be a finite number"
    elif kind == "int_parsing_size":
        bounds = [m.le for m in getattr(CONFIG_FIELDS.get(key), "metadata", []) if hasattr(m, "le")]
        msg = f"is far too large; must be <= {bounds[0]}" if bounds else "is far too large"
    else:
        return str(err["msg"]).removeprefix("Value error, ")
    why = limit_reason(key)
    return f"{msg} ({why})" if why else msg


def _format_validation_error(exc: ValidationError, where: str) -> str:
    lines: list[str] = []
    errors = exc.errors()
    for err in errors:
        parts = [str(p) for p in err["loc"] if not str(p).startswith(("function-after", "float", "Schedule"))]
        loc = ".".join(parts)
        got = err.get("input")
        if parts and parts[0] in _SCHEDULE_KEYS and len(parts) == 1:
            # The float-or-Schedule union reports one error per branch; say it once, plainly.
            if isinstance(got, dict) and any(len(e["loc"]) > 2 and e["loc"][0] == parts[0] for e in errors):
                continue  # a schedule with a bad end: the Schedule branch's own error says which
            finite = any(e["type"] == "finite_number" and e["loc"][:1] == err["loc"][:1] for e in errors)
            what = "a finite number" if finite else "a number or a schedule {start: x, end: y}"
            line = f"{loc}: must be {what} (got {got!r})"
            if line not in lines:
                lines.append(line)
            continue
        msg = _error_message(err, parts[0] if parts else "")
        got_s = "" if isinstance(got, dict) and not loc else f" (got {got!r})"
        lines.append(f"{loc or 'config'}: {msg}{got_s}")
    return f"{where}: invalid config: " + "; ".join(lines)


def _config_model(data: Mapping[str, Any], where: str) -> type[PPOConfig] | type[ReinforceConfig]:
    """The union member ``data['algo']`` selects, refusing keys that belong to another algorithm."""
    choices = ", ".join(a.value for a in Algo)
    if "algo" not in data:
        raise ConfigError(f"{where}: missing key 'algo'; set it to one of {choices}")
    algo = data["algo"]
    if not isinstance(algo, str) or algo not in CONFIG_MODELS:
        raise ConfigError(f"{where}: algo: unknown algorithm {algo!r}{_did_you_mean(str(algo), [a.value for a in Algo])} "
                          f"(algorithms: {choices})")
    model = CONFIG_MODELS[Algo(algo)]
    for key in data:
        owners = algos_for_key(key)
        if owners and key not in model.model_fields:
            names = " and ".join(a.value for a in owners)
            raise ConfigError(f"{where}: {key!r} is a {names} key; a {algo} config has no {key!r} "
                              f"(remove it, or use a {names} variant)")
    return model


def build_config(data: Mapping[str, Any], where: str = "config") -> Config:
    """Validate a plain dict into the Config of its ``algo``, with errors that name the key, a close
    match and what would be right. A key of another algorithm is an error that names that algorithm."""
    _check_keys(data, where)
    clean = {k: v for k, v in data.items() if k not in _PRESET_ONLY_KEYS}
    model = _config_model(clean, where)
    try:
        return model.model_validate(clean)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, where)) from exc


def check_machine_limits(cfg: Config, where: str = "config") -> None:
    """Limits that depend on the machine a run starts on (a run folder from a larger machine still
    loads; starting it here is refused): torch_threads <= CPU count."""
    import os

    cpus = os.cpu_count() or 1
    if cfg.torch_threads > cpus:
        raise ConfigError(f"{where}: torch_threads={cfg.torch_threads} is more than this machine's {cpus} CPUs; "
                          f"use torch_threads between 1 and {cpus} ({limit_reason('torch_threads')})")


def resolve_config(config_id: str, overrides: Mapping[str, Any] | list[str] | None = None) -> Config:
    """Load ``ENV:VARIANT`` from its preset file, apply overrides, validate and fill defaults.

    ``reward_threshold: null`` is replaced by the Gymnasium spec's threshold when one exists.
    """
    env_id, variant = parse_config_id(config_id)
    preset = load_preset(env_id)
    data = _resolve_variant_dict(preset, variant)
    _check_keys(data, f"{preset.path} (variant {variant!r})")
    data = {**data, "env_id": preset.env_id, "variant": variant}
    if isinstance(overrides, list):
        overrides = parse_overrides(overrides)
    if overrides:
        _check_keys(overrides, "--set override")
        for key in ("env_id", "variant"):
            if key in overrides:
                raise ConfigError(f"--set cannot change {key!r}; choose another ENV:VARIANT instead")
        data = _apply_overrides(data, overrides)
    where = f"{preset.path} (variant {variant!r})" if not overrides else f"{config_id} with --set"
    cfg = build_config(data, where)
    check_machine_limits(cfg, where)
    if cfg.reward_threshold is None:
        threshold = spec_reward_threshold(cfg.env_id)
        if threshold is not None:
            cfg = cfg.model_copy(update={"reward_threshold": threshold})
    return cfg


def spec_reward_threshold(env_id: str) -> float | None:
    """The reward threshold from Gymnasium's registry, read without creating the environment."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return None
    try:
        spec = gymnasium.spec(env_id)
    except Exception:  # noqa: BLE001 - gymnasium raises several error types for unknown ids
        return None
    return None if spec.reward_threshold is None else float(spec.reward_threshold)


def config_to_yaml(cfg: Config) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)


def config_from_yaml_text(text: str, where: str = "config.yaml") -> Config:
    """Load a config.yaml written by the trainer. Files written before the config became a union per
    algorithm hold every key of every algorithm: the keys of other algorithms are dropped here
    (and only here; a preset or --set naming one is an error)."""
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    algo = raw.get("algo")
    if isinstance(algo, str) and algo in CONFIG_MODELS:
        own = CONFIG_MODELS[Algo(algo)].model_fields
        raw = {k: v for k, v in raw.items() if k in own or not algos_for_key(k)}
    return build_config(raw, where)


def list_variants(env_id: str) -> dict[str, str]:
    """Variant name -> algorithm for one environment's preset file."""
    preset = load_preset(env_id)
    out = {}
    for name in preset.variants:
        data = _resolve_variant_dict(preset, name)
        out[name] = str(data.get("algo", "?"))
    return out


# Keys that never count as a difference from the preset: identity, and the seed (any seed of a
# preset is the preset).
_NOT_A_DEVIATION = frozenset({"env_id", "variant", "seed"})


def preset_config(config_id: str) -> Config | None:
    """The preset ``ENV:VARIANT`` resolved without overrides, or None when this machine has no
    such preset (a run from a user's own preset folder or from another machine)."""
    try:
        return resolve_config(config_id)
    except ConfigError:
        return None


def preset_differences(config: Mapping[str, Any], preset: Config) -> dict[str, tuple[Any, Any]]:
    """Every config key whose value differs from the preset's: ``{key: (run value, preset value)}``.

    ``config`` is a run's resolved config as read from config.yaml (a plain mapping); values are
    compared as YAML would write them, so ``{start: 0.004, end: 0.0}`` equals the preset's schedule.
    Keys the run's config lacks (written by an older trainer) are not differences.
    """
    ref = preset.model_dump(mode="json")
    out: dict[str, tuple[Any, Any]] = {}
    for key, preset_value in ref.items():
        if key in _NOT_A_DEVIATION or key not in config:
            continue
        value = config[key]
        if not _same_value(value, preset_value):
            out[key] = (value, preset_value)
    return out


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)
