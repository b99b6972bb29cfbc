"""The overrides a retry or a fix trial starts from: what rebuilds the parent run's config today.

A child run is ``ENV:VARIANT`` plus overrides, resolved against today's preset file. When the preset
has changed since the parent trained (a retune), the parent's own overrides alone would rebuild
another config, and the child would differ from its parent in more than the change it tests: the
trial's verdict would be about the new preset, not about the change. So every key whose recorded
value (the parent's config.yaml) differs from what its overrides give today is added, with the
recorded value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gymnasium_solver import run_folder as rf
from gymnasium_solver.config import ConfigError, config_from_yaml_text, resolve_config


def parent_overrides(run_dir: Path, info: rf.RunInfo) -> dict[str, Any]:
    """The run's overrides plus the keys its preset has changed since (recorded values). Falls back
    to the run's own overrides when its config.yaml is missing or no longer validates (e.g. a key
    this version no longer has): then only those can be rebuilt."""
    own = dict(info.overrides or {})
    try:
        text = (run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8")
        recorded = config_from_yaml_text(text, f"{info.run_id}/{rf.CONFIG_YAML}").model_dump(mode="json")
        today = resolve_config(info.config_id, own).model_dump(mode="json")
    except (OSError, ConfigError, ValueError):
        return own
    drift = {k: v for k, v in recorded.items() if k not in own and today.get(k) != v}
    return {**drift, **own}
