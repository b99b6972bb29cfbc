"""A sweep's search space: the YAML file, its validation against the config, and sampling a trial.

A space file maps config keys (``--set`` spelling, dotted for a schedule's part) to a distribution::

    learning_rate.start: {type: log_uniform, low: 1.0e-4, high: 1.0e-2}
    gae_lambda: {type: uniform, low: 0.8, high: 0.99}
    n_steps: {type: int, low: 16, high: 128, log: true}
    batch_size: {type: categorical, choices: [64, 128, 256]}

It is validated like ``--set`` before any trial starts: an unknown key names the close match, and
each distribution's extremes (both bounds, every choice) must pass the config's own bounds for the
sweep's ``ENV:VARIANT``. Sampling uses Optuna's ``trial.suggest_*`` so TPE learns from every value.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gymnasium_solver import config as config_mod
from gymnasium_solver.launcher import yaml_value

if TYPE_CHECKING:
    import optuna

MAX_SPACE_BYTES = 64_000
MAX_PARAMS = 32
MAX_CHOICES = 64

Scalar = bool | int | float | str | None


class _Dist(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogUniform(_Dist):
    type: Literal["log_uniform"]
    low: float = Field(gt=0, description="smallest value (> 0)")
    high: float = Field(gt=0, description="largest value")

    @model_validator(mode="after")
    def _ordered(self) -> LogUniform:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.high <= self.low:
            raise ValueError(f"needs finite 0 < low < high, got low={self.low:g}, high={self.high:g}")
        return self

    def extremes(self) -> list[Scalar]:
        return [self.low, self.high]

    def suggest(self, trial: optuna.Trial, name: str) -> Scalar:
        return trial.suggest_float(name, self.low, self.high, log=True)


class Uniform(_Dist):
    type: Literal["uniform"]
    low: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.high <= self.low:
            raise ValueError(f"needs finite low < high, got low={self.low:g}, high={self.high:g}")
        return self

    def extremes(self) -> list[Scalar]:
        return [self.low, self.high]

    def suggest(self, trial: optuna.Trial, name: str) -> Scalar:
        return trial.suggest_float(name, self.low, self.high)


class IntRange(_Dist):
    type: Literal["int"]
    low: int
    high: int
    step: int = Field(default=1, ge=1)
    log: bool = Field(default=False, description="sample on a log scale (low must be >= 1, step 1)")

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.high <= self.low:
            raise ValueError(f"needs low < high, got low={self.low}, high={self.high}")
        if self.log and (self.low < 1 or self.step != 1):
            raise ValueError("log: true needs low >= 1 and step 1")
        return self

    def extremes(self) -> list[Scalar]:
        return [self.low, self.high]

    def suggest(self, trial: optuna.Trial, name: str) -> Scalar:
        return trial.suggest_int(name, self.low, self.high, step=self.step, log=self.log)


class Categorical(_Dist):
    type: Literal["categorical"]
    choices: list[Scalar] = Field(min_length=2, max_length=MAX_CHOICES)

    def extremes(self) -> list[Scalar]:
        return list(self.choices)

    def suggest(self, trial: optuna.Trial, name: str) -> Scalar:
        return trial.suggest_categorical(name, self.choices)


Distribution = Annotated[LogUniform | Uniform | IntRange | Categorical, Field(discriminator="type")]
DIST_TYPES = ("log_uniform", "uniform", "int", "categorical")


class SearchSpace(BaseModel):
    """Config key (``--set`` spelling) -> distribution, validated against one ``ENV:VARIANT``."""

    params: dict[str, Distribution]

    def sample(self, trial: optuna.Trial) -> dict[str, Any]:
        """The trial's values, flat by key (``{'learning_rate.start': 0.002, 'n_steps': 64}``)."""
        return {key: dist.suggest(trial, key) for key, dist in self.params.items()}


def to_overrides(values: dict[str, Any], fixed: dict[str, Any] | None = None) -> dict[str, Any]:
    """Flat sampled values (dotted keys) over ``fixed`` overrides -> the nested mapping ``--set`` makes."""
    pairs = [f"{k}={yaml_value(v)}" for k, v in values.items()]
    nested = config_mod.parse_overrides(pairs)
    out = dict(fixed or {})
    for key, value in nested.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def parse_space(data: Any, where: str) -> SearchSpace:
    """A mapping (the YAML's top level) -> SearchSpace; ConfigError naming the key and what is allowed."""
    if not isinstance(data, dict) or not data:
        raise config_mod.ConfigError(
            f"{where}: expected a mapping of config keys to distributions, e.g. "
            f"'learning_rate.start: {{type: log_uniform, low: 1.0e-4, high: 1.0e-2}}'")
    if len(data) > MAX_PARAMS:
        raise config_mod.ConfigError(f"{where}: {len(data)} parameters; a sweep searches at most {MAX_PARAMS}")
    params: dict[str, Any] = {}
    for key, spec in data.items():
        params[str(key)] = _parse_dist(str(key), spec, where)
    return SearchSpace(params=params)


def _parse_dist(key: str, spec: Any, where: str) -> Any:
    if not isinstance(spec, dict) or "type" not in spec:
        raise config_mod.ConfigError(
            f"{where}: {key!r} needs a distribution with a type ({', '.join(DIST_TYPES)}), "
            f"e.g. {{type: uniform, low: 0.9, high: 0.999}}; got {spec!r}")
    if spec["type"] not in DIST_TYPES:
        raise config_mod.ConfigError(
            f"{where}: {key!r} has unknown type {spec['type']!r}"
            f"{config_mod.did_you_mean(str(spec['type']), list(DIST_TYPES))} (types: {', '.join(DIST_TYPES)})")
    model: Any = {"log_uniform": LogUniform, "uniform": Uniform, "int": IntRange,
                          "categorical": Categorical}[spec["type"]]
    try:
        return model.model_validate(spec)
    except ValidationError as exc:
        # A check across fields (low < high) has no location: its message names the fields itself.
        problems = "; ".join((f"{'.'.join(str(p) for p in e['loc'])}: " if e["loc"] else "")
                             + str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise config_mod.ConfigError(f"{where}: {key!r} ({spec['type']}): {problems}") from None


def load_space(path: Path | str) -> SearchSpace:
    """Read and parse a space file (not yet checked against a config: see :func:`validate_space`)."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_SPACE_BYTES:
            raise config_mod.ConfigError(f"{p}: a search space file is at most {MAX_SPACE_BYTES:,} bytes")
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise config_mod.ConfigError(f"cannot read the search space {p}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise config_mod.ConfigError(f"{p}: not a UTF-8 text file; a search space is YAML") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise config_mod.ConfigError(f"{p}: not valid YAML: {exc}") from None
    return parse_space(data, str(p))


def validate_space(space: SearchSpace, config_id: str, fixed: dict[str, Any] | None = None,
                   use_zoo: bool = True) -> config_mod.Config:
    """Check every key and every distribution's extremes against ``config_id``'s config bounds
    (each alone over ``fixed``); returns the base config (fixed overrides, no sampled value).

    ConfigError (a ValueError) names the key, the value and the bound, before any trial starts.
    """
    base = config_mod.resolve_config(config_id, fixed or {}, use_zoo=use_zoo)
    for key, dist in space.params.items():
        top = key.split(".", 1)[0]
        if top not in config_mod.CONFIG_KEYS:
            raise config_mod.ConfigError(
                f"search space: unknown config key {top!r}{config_mod.did_you_mean(top, config_mod.CONFIG_KEYS)}")
        if top in ("env_id", "variant"):
            raise config_mod.ConfigError(f"search space: {top!r} cannot be searched; sweep another ENV:VARIANT instead")
        for value in dist.extremes():
            try:
                config_mod.resolve_config(config_id, to_overrides({key: value}, fixed), use_zoo=use_zoo)
            except config_mod.ConfigError as exc:
                raise config_mod.ConfigError(f"search space: {key}={yaml_value(value)} ({dist.type}) is not a valid "
                                             f"value for {config_id}: {exc}") from None
    return base
