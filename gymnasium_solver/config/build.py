"""Turning a plain mapping into a validated Config: unknown keys with close matches, pydantic errors as
sentences that name the key and the bound, machine limits, and config.yaml text in and out."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import ValidationError

from gymnasium_solver.config.model import Algo, ConfigBase, ConfigError
from gymnasium_solver.config.registry import (
    CONFIG_KEYS,
    CONFIG_MODELS,
    Config,
    algos_for_key,
    config_field,
    limit_reason,
)

# Keys a preset may carry that are not config fields.
PRESET_ONLY_KEYS = {"inherits", "description"}


def close_matches(word: str, options: list[str] | tuple[str, ...], n: int = 3) -> list[str]:
    """The options nearest ``word``; one that differs only in case first (``PPO`` for ``ppo``, which difflib ranks
    below nothing at all: it compares characters as they are)."""
    same = [o for o in options if o.lower() == word.lower() and o != word]
    near = difflib.get_close_matches(word.lower(), [o.lower() for o in options], n=n, cutoff=0.5)
    by_lower = {o.lower(): o for o in options}
    return list(dict.fromkeys([*same, *(by_lower[m] for m in near)]))[:n]


def did_you_mean(word: str, options: list[str] | tuple[str, ...]) -> str:
    m = close_matches(word, options)
    return f"; did you mean {' or '.join(repr(x) for x in m)}?" if m else ""


def check_keys(data: Mapping[str, Any], where: str) -> None:
    for key in data:
        if key in PRESET_ONLY_KEYS:
            continue
        if key not in CONFIG_KEYS:
            raise ConfigError(f"{where}: unknown key {key!r}{did_you_mean(key, CONFIG_KEYS)}")


SCHEDULE_KEYS = ("learning_rate", "clip_range", "ent_coef")  # a number or a {start, end} schedule


# pydantic's range messages, said the way the rest of our errors are ("must be <= 100").
_BOUND_WORDS = {"less_than_equal": ("le", "<="), "less_than": ("lt", "<"), "greater_than_equal": ("ge", ">="),
                "greater_than": ("gt", ">"), "too_long": ("max_length", "at most"),
                "too_short": ("min_length", "at least"), "string_too_long": ("max_length", "at most"),
                "string_too_short": ("min_length", "at least")}


def _whole_number(text: Any) -> int | None:
    """1e4 -> 10000: a string that is a whole number in float notation, else None."""
    try:
        value = float(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return int(value) if value is not None and value.is_integer() and abs(value) < 1e18 else None


def _error_message(err: Any, key: str, model: type[ConfigBase]) -> str:
    kind, ctx = err["type"], err.get("ctx") or {}
    if kind in _BOUND_WORDS and _BOUND_WORDS[kind][0] in ctx:
        name, word = _BOUND_WORDS[kind]
        unit = " characters" if kind.startswith("string") else (" items" if kind.startswith("too") else "")
        msg = f"must be {word} {ctx[name]}{unit}"
    elif kind == "finite_number":
        msg = "must be a finite number"
    elif kind == "int_parsing_size":
        bounds = [m.le for m in getattr(config_field(key, model), "metadata", []) if hasattr(m, "le")]
        msg = f"is far too large; must be <= {bounds[0]}" if bounds else "is far too large"
    elif kind == "int_parsing" and (whole := _whole_number(err.get("input"))) is not None:
        # YAML 1.1 (PyYAML) reads 1e4 as a string, and an integer field does not take it.
        return f"must be an integer written out, e.g. {whole} (YAML reads {err['input']} as text)"
    else:
        return str(err["msg"]).removeprefix("Value error, ")
    why = limit_reason(key, model)
    return f"{msg} ({why})" if why else msg


def _format_validation_error(exc: ValidationError, where: str, model: type[ConfigBase]) -> str:
    lines: list[str] = []
    errors = exc.errors()
    for err in errors:
        parts = [str(p) for p in err["loc"] if not str(p).startswith(("function-after", "float", "Schedule"))]
        loc = ".".join(parts)
        got = err.get("input")
        if parts and parts[0] in SCHEDULE_KEYS and len(parts) == 1:
            # The float-or-Schedule union reports one error per branch; say it once, plainly.
            if isinstance(got, dict) and any(len(e["loc"]) > 2 and e["loc"][0] == parts[0] for e in errors):
                continue  # a schedule with a bad end: the Schedule branch's own error says which
            finite = any(e["type"] == "finite_number" and e["loc"][:1] == err["loc"][:1] for e in errors)
            what = "a finite number" if finite else "a number or a schedule {start: x, end: y}"
            line = f"{loc}: must be {what} (got {got!r})"
            if line not in lines:
                lines.append(line)
            continue
        msg = _error_message(err, parts[0] if parts else "", model)
        got_s = "" if isinstance(got, dict) and not loc else f" (got {got!r})"
        if err["type"] == "list_type" and isinstance(got, int | float) and len(parts) == 1:
            got_s += f"; write a list, e.g. {loc}=[{got}, {got}]"  # hidden_sizes=64 meant one width per layer
        # A check across keys has no location, and its message names the keys itself.
        lines.append(f"{loc}: {msg}{got_s}" if loc else f"{msg}{got_s}")
    return f"{where}: invalid config: " + "; ".join(lines)


def _config_model(data: Mapping[str, Any], where: str) -> type[ConfigBase]:
    """The union member ``data['algo']`` selects, refusing keys that belong to another algorithm."""
    choices = ", ".join(a.value for a in Algo)
    if "algo" not in data:
        raise ConfigError(f"{where}: missing key 'algo'; set it to one of {choices}")
    algo = data["algo"]
    if not isinstance(algo, str) or algo not in CONFIG_MODELS:
        raise ConfigError(f"{where}: algo: unknown algorithm {algo!r}{did_you_mean(str(algo), [a.value for a in Algo])} "
                          f"(algorithms: {choices})")
    model = CONFIG_MODELS[Algo(algo)]
    for key in data:
        owners = algos_for_key(key)
        if owners and key not in model.model_fields:
            names = " or ".join(a.value for a in owners)
            article = "an" if algo[0] in "aeiou" else "a"
            raise ConfigError(f"{where}: {key!r} is a {names} key; {article} {algo} config has no {key!r} "
                              f"(remove it, or use a {names} variant)")
    return model


def build_config(data: Mapping[str, Any], where: str = "config") -> Config:
    """Validate a plain dict into the Config of its ``algo``, with errors that name the key, a close
    match and what would be right. A key of another algorithm is an error that names that algorithm."""
    check_keys(data, where)
    clean = {k: v for k, v in data.items() if k not in PRESET_ONLY_KEYS}
    model = _config_model(clean, where)
    try:
        return model.model_validate(clean)  # type: ignore[return-value]
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, where, model)) from exc


def error_reason(exc: ConfigError, where: str = "") -> str:
    """What a ConfigError says is wrong (and what would be right), without where it was raised: for a sentence
    that names its own subject (a suggested change, a fix candidate)."""
    text = str(exc)
    text = text.split("invalid config: ", 1)[1] if "invalid config: " in text else text.removeprefix(f"{where}: ")
    return text.removeprefix("config: ")


def check_machine_limits(cfg: Config, where: str = "config") -> None:
    """Limits that depend on the machine a run starts on (a run folder from a larger machine still
    loads; starting it here is refused): torch_threads <= CPU count."""
    import os

    cpus = os.cpu_count() or 1
    if cfg.torch_threads > cpus:
        raise ConfigError(f"{where}: torch_threads={cfg.torch_threads} is more than this machine's {cpus} CPUs; "
                          f"use torch_threads between 1 and {cpus} ({limit_reason('torch_threads')})")


def config_to_yaml(cfg: Config) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)


def config_from_yaml_text(text: str, where: str = "config.yaml") -> Config:
    """Load a config.yaml written by the trainer. Files written before the config became a union per
    algorithm hold every key of every algorithm: the keys of other algorithms are dropped here
    (and only here; a preset or --set naming one is an error)."""
    try:
        raw = yaml.safe_load(text)  # safe: a python tag is refused, never constructed
    except yaml.YAMLError as exc:  # one line, not PyYAML's multi-line excerpt with a caret
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: not the YAML the trainer writes ({problem})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    algo = raw.get("algo")
    if isinstance(algo, str) and algo in CONFIG_MODELS:
        own = CONFIG_MODELS[Algo(algo)].model_fields
        raw = {k: v for k, v in raw.items() if k in own or not algos_for_key(k)}
    return build_config(raw, where)
