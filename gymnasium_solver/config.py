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
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

CONFIG_DIR_ENV = "GSOLVE_CONFIG_DIR"
PACKAGE_CONFIG_DIR = Path(__file__).resolve().parent.parent / "config" / "environments"


class ConfigError(ValueError):
    """A config problem, phrased for the person (or model) who has to fix it."""


class Schedule(BaseModel):
    """A value that moves linearly from ``start`` to ``end`` over the run's env-step budget."""

    model_config = ConfigDict(extra="forbid")
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


# Which runs a key means something for, declared once on the field it concerns (a field without
# a tag applies to every run). Read back with `applies_to`; summaries and tools derive from it.
_PPO: dict[str, Any] = {"algos": ["ppo"]}
_REINFORCE: dict[str, Any] = {"algos": ["reinforce"]}
_BOX_ACTIONS: dict[str, Any] = {"action_kinds": ["box"]}  # run_folder.ActionSpaceInfo.kind


class Config(BaseModel):
    """Everything that defines a run. Field descriptions are the documentation (`gsolve config`)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # identity
    env_id: str = Field(description="Gymnasium environment id, e.g. CartPole-v1")
    variant: str = Field(description="preset variant name, e.g. ppo")
    algo: Literal["ppo", "reinforce"] = Field(description="training algorithm")
    seed: int = Field(default=0, ge=0, description="seed for environments, network init and sampling")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="extra keyword arguments for gym.make")

    # budget and goal
    max_env_steps: int = Field(default=200_000, gt=0, description="env-step budget; the run stops when it is spent")
    reward_threshold: float | None = Field(
        default=None, description="eval mean return that counts as solved; None = the Gymnasium spec's threshold"
    )

    # environments and rollout
    n_envs: int = Field(default=8, ge=1, le=1024, description="parallel sub-environments")
    vectorization: Literal["auto", "sync", "async"] = Field(
        default="auto", description="auto = Gymnasium's numpy-vectorised env where one exists, else sync"
    )
    n_steps: int = Field(default=128, ge=1, description="steps per sub-environment per rollout (PPO)", json_schema_extra=_PPO)
    gamma: float = Field(default=0.99, gt=0.0, le=1.0, description="discount factor")
    gae_lambda: float = Field(default=0.95, ge=0.0, le=1.0, description="GAE lambda (PPO)", json_schema_extra=_PPO)
    normalize_observations: bool = Field(default=False, description="running mean/std observation normalisation")
    reward_scale: float = Field(default=1.0, gt=0.0, description="multiply rewards by this before learning")

    # optimisation
    learning_rate: ScheduleOrFloat = Field(default=3e-4, description="Adam learning rate, constant or {start, end}")
    n_epochs: int = Field(default=10, ge=1, description="passes over each rollout (PPO)", json_schema_extra=_PPO)
    batch_size: int = Field(default=64, ge=1, description="minibatch size in samples (PPO)", json_schema_extra=_PPO)
    clip_range: ScheduleOrFloat = Field(default=0.2, description="PPO ratio clip, constant or {start, end}", json_schema_extra=_PPO)
    clip_range_vf: float | None = Field(default=None, description="value-function clip range (PPO); None = off", json_schema_extra=_PPO)
    ent_coef: ScheduleOrFloat = Field(default=0.0, description="entropy bonus coefficient, constant or {start, end}")
    vf_coef: float = Field(default=0.5, ge=0.0, description="value loss coefficient (PPO critic, REINFORCE baseline)")
    max_grad_norm: float | None = Field(default=0.5, description="global gradient-norm clip; None = off")
    target_kl: float | None = Field(default=None, description="stop the epochs of an update early above this KL", json_schema_extra=_PPO)
    normalize_advantages: bool = Field(default=True, description="normalise advantages per minibatch")
    use_baseline: bool = Field(default=True, description="REINFORCE: subtract a learned value baseline", json_schema_extra=_REINFORCE)
    episodes_per_update: int = Field(default=8, ge=1, description="REINFORCE: complete episodes per update", json_schema_extra=_REINFORCE)

    # network
    hidden_sizes: list[int] = Field(default_factory=lambda: [64, 64], description="MLP hidden layer sizes")
    activation: Literal["tanh", "relu"] = Field(default="tanh", description="MLP activation")
    shared_network: bool = Field(default=False, description="actor and critic share the hidden layers")
    log_std_init: float = Field(default=0.0, description="initial log std of the Gaussian policy (Box actions)", json_schema_extra=_BOX_ACTIONS)

    # evaluation and checkpoints
    eval_freq: int = Field(default=10_000, ge=1, description="evaluate every this many env steps")
    eval_episodes: int = Field(default=10, ge=1, description="deterministic evaluation episodes, run in parallel")
    checkpoint_freq: int = Field(default=0, ge=0, description="periodic checkpoint every N env steps; 0 = only best/last")
    torch_threads: int = Field(default=1, ge=1, description="torch intra-op threads (small nets are fastest on 1)")

    @model_validator(mode="after")
    def _check_consistency(self) -> Config:
        for name in ("learning_rate", "clip_range", "ent_coef"):
            value = getattr(self, name)
            lo = min(value.start, value.end) if isinstance(value, Schedule) else float(value)
            if lo < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        if schedule_start(self.learning_rate) <= 0:
            raise ValueError(f"learning_rate must start above 0, got {self.learning_rate}")
        if self.algo == "ppo":
            rollout = self.n_envs * self.n_steps
            if self.batch_size > rollout:
                raise ValueError(
                    f"batch_size ({self.batch_size}) is larger than the rollout "
                    f"n_envs*n_steps = {self.n_envs}*{self.n_steps} = {rollout}; "
                    f"use batch_size <= {rollout} or a longer rollout"
                )
            if schedule_start(self.clip_range) <= 0:
                raise ValueError(f"clip_range must start above 0, got {self.clip_range}")
        if self.max_grad_norm is not None and self.max_grad_norm <= 0:
            raise ValueError(f"max_grad_norm must be > 0 or null, got {self.max_grad_norm}")
        if self.target_kl is not None and self.target_kl <= 0:
            raise ValueError(f"target_kl must be > 0 or null, got {self.target_kl}")
        if not self.hidden_sizes or any(h <= 0 for h in self.hidden_sizes):
            raise ValueError(f"hidden_sizes must be a non-empty list of positive ints, got {self.hidden_sizes}")
        return self

    @property
    def config_id(self) -> str:
        return f"{self.env_id}:{self.variant}"


CONFIG_KEYS: tuple[str, ...] = tuple(Config.model_fields)


def applies_to(key: str, algo: str | None, action_kind: str | None = None) -> bool:
    """Whether config ``key`` means anything for a run of ``algo`` whose action space is of
    ``action_kind`` ('discrete' or 'box'). Unknown keys and unknown algo/kind (None) count as applying."""
    field = Config.model_fields.get(key)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    algos, kinds = extra.get("algos"), extra.get("action_kinds")
    if algo is not None and isinstance(algos, list) and algo not in algos:
        return False
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


def _format_validation_error(exc: ValidationError, where: str) -> str:
    lines: list[str] = []
    for err in exc.errors():
        parts = [str(p) for p in err["loc"] if not str(p).startswith(("function-after", "float", "Schedule"))]
        loc = ".".join(parts)
        got = err.get("input")
        if parts and parts[0] in _SCHEDULE_KEYS and len(parts) == 1:
            # The float-or-Schedule union reports one error per branch; say it once, plainly.
            line = f"{loc}: must be a number or a schedule {{start: x, end: y}} (got {got!r})"
            if line not in lines:
                lines.append(line)
            continue
        msg = err["msg"].removeprefix("Value error, ")
        got_s = "" if isinstance(got, dict) and not loc else f" (got {got!r})"
        lines.append(f"{loc or 'config'}: {msg}{got_s}")
    return f"{where}: invalid config: " + "; ".join(lines)


def build_config(data: Mapping[str, Any], where: str = "config") -> Config:
    """Validate a plain dict into a Config, with errors that name the key and a close match."""
    _check_keys(data, where)
    clean = {k: v for k, v in data.items() if k not in _PRESET_ONLY_KEYS}
    try:
        return Config.model_validate(clean)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, where)) from exc


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
    cfg = build_config(data, f"{preset.path} (variant {variant!r})" if not overrides else f"{config_id} with --set")
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
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
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
