"""The user config file: a person's defaults for the output keys (``model.OUTPUT_KEYS``: TensorBoard,
MLflow, which checkpoints to keep), applied to every resolved config between the preset and ``--set``.

It is ``$GSOLVE_CONFIG`` when that is set (an empty value turns the file off), else
``$XDG_CONFIG_HOME/gsolve/config.yaml`` (``~/.config/gsolve/config.yaml``). Missing is fine (no
defaults); a key that is not an output key, or a value the field refuses, is a ConfigError naming
the file. No I/O beyond reading that one file."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from gymnasium_solver.config.build import did_you_mean
from gymnasium_solver.config.model import ConfigError
from gymnasium_solver.config.registry import CONFIG_KEYS, OUTPUT_KEYS

USER_CONFIG_ENV = "GSOLVE_CONFIG"
MAX_USER_CONFIG_BYTES = 64 * 1024  # a handful of keys; anything larger is not this file


def user_config_path() -> Path | None:
    """Where the user config file is looked for; None when ``$GSOLVE_CONFIG`` is set but empty."""
    env = os.environ.get(USER_CONFIG_ENV)
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gsolve" / "config.yaml"


def user_defaults() -> dict[str, Any]:
    """The user config file's defaults (``{}`` when there is none). ConfigError, naming the file and
    the key, for a file that cannot be read, is not a mapping, or names a key that is not an output key.
    The values are validated with the rest of the config by ``resolve_config``."""
    path = user_config_path()
    if path is None:
        return {}
    try:
        st = path.stat()
    except FileNotFoundError:
        if os.environ.get(USER_CONFIG_ENV):
            raise ConfigError(f"${USER_CONFIG_ENV} names {path}, which does not exist; create it, or unset "
                              f"${USER_CONFIG_ENV} (set it to an empty value to use no user config)") from None
        return {}
    except OSError as exc:
        raise ConfigError(f"user config {path} cannot be read: {exc.strerror}") from None
    return dict(_load(str(path), st.st_mtime_ns, st.st_size))


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, Any], ...]:
    if size > MAX_USER_CONFIG_BYTES:
        raise ConfigError(f"user config {path} is {size} bytes; it holds a few keys ({', '.join(OUTPUT_KEYS)}), "
                          f"at most {MAX_USER_CONFIG_BYTES} bytes")
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"user config {path} cannot be read: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"user config {path}: not valid YAML: {exc}") from None
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise ConfigError(f"user config {path}: expected a mapping such as 'tensorboard: true', got {type(raw).__name__}")
    for key in raw:
        if key not in OUTPUT_KEYS:
            hint = did_you_mean(str(key), OUTPUT_KEYS)
            what = ("is a training key: set it in a preset or with --set, the user config holds only where results "
                    "go and which checkpoints are kept" if key in CONFIG_KEYS else "is not a config key")
            raise ConfigError(f"user config {path}: {key!r} {what}{hint} (allowed: {', '.join(OUTPUT_KEYS)})")
    return tuple(raw.items())
