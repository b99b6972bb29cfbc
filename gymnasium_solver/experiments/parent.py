"""The overrides a retry or a fix trial starts from.

A child run is ``ENV:VARIANT`` plus overrides, resolved against today's preset file. When the preset
has changed since the parent trained (a retune), the parent's own overrides alone rebuild another
config. Which base a change set needs depends on what it says:

- a change sized against the run (a budget with the exploration fraction that keeps its anneal, a
  gamma raise, a learning rate ...) starts from the config the run trained with: its overrides plus
  every key its preset has changed since, with the recorded values (``parent_overrides``);
- a change set that only puts keys back to today's preset values is a return to the preset, and
  starts from today's preset with the run's own overrides (``child_base``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gymnasium_solver import run_folder as rf
from gymnasium_solver.config import ConfigError, config_from_yaml_text, resolve_config


def parent_overrides(run_dir: Path, info: rf.RunInfo) -> dict[str, Any]:
    """The run's overrides plus the keys its preset has changed since (recorded values). Falls back
    to the run's own overrides when its config.yaml is missing, damaged or no longer validates (e.g.
    a key this version no longer has): then only those can be rebuilt."""
    own = dict(info.overrides or {})
    try:
        text = (run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8")
        recorded = config_from_yaml_text(text, f"{info.run_id}/{rf.CONFIG_YAML}").model_dump(mode="json")
        today = resolve_config(info.config_id, own).model_dump(mode="json")
    except (OSError, ConfigError, ValueError, yaml.YAMLError):  # missing, damaged or outdated: what is certain
        return own
    drift = {k: v for k, v in recorded.items() if k not in own and today.get(k) != v}
    return {**drift, **own}


def is_preset_revert(config_id: str, changes: Mapping[str, Any]) -> bool:
    """Every change sets its key to today's value in the preset ``config_id`` (False without a preset)."""
    if not changes:
        return False
    try:
        preset = resolve_config(config_id, {}).model_dump(mode="json")
    except (OSError, ConfigError, ValueError):
        return False
    return all(k in preset and preset[k] == v for k, v in changes.items())


def child_base(config_id: str, base: Mapping[str, Any], drifted: list[str] | tuple[str, ...],
               changes: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides ``changes`` go on top of: ``base`` (``parent_overrides``) without the ``drifted``
    keys when the changes only return to today's preset, else ``base`` whole."""
    if drifted and is_preset_revert(config_id, changes):
        return {k: v for k, v in base.items() if k not in drifted}
    return dict(base)
