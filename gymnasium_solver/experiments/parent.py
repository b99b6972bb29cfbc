"""The overrides a retry or a fix trial starts from.

A child run is ``ENV:VARIANT`` plus overrides, resolved against today's preset file. When the preset
has changed since the parent trained (a retune), the parent's own overrides alone rebuild another
config. Which base a change set needs depends on what it says:

- a change sized against the run (a budget with the exploration fraction that keeps its anneal, a
  gamma raise, a learning rate ...) starts from the config the run trained with: its overrides plus
  the keys its preset has changed since, with the recorded values;
- a change set that only puts keys back to today's preset values is a return to the preset, and
  starts from today's preset with the run's own overrides.

The drift is found as the diagnosis finds it (``config.preset_differences`` over the keys the run did
not set, ``diagnostics.references.changed_by_run``), on the validated config: a key an older trainer
did not write counts with the default the run trained with.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from gymnasium_solver.config import (
    ConfigError,
    config_from_yaml_text,
    error_reason,
    preset_config,
    preset_differences,
    resolve_config,
)
from gymnasium_solver.config.presets import override_pairs
from gymnasium_solver.contract import run_folder as rf
from gymnasium_solver.diagnostics.references import changed_by_run
from gymnasium_solver.launcher import CAP_FLAGS, over_caps


class ParentConfig(NamedTuple):
    """A run's config as overrides of today's preset: its own overrides plus the ``drifted`` keys
    (those its preset has changed since it trained), with their recorded values."""

    overrides: dict[str, Any]
    drifted: list[str]
    use_zoo: bool = True  # False: the run took gsolve's defaults where the RL Zoo has an entry (--no-zoo)

    def base_for(self, config_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """What ``changes`` go on top of: the run as it was, or today's preset (the run's own overrides)
        when the changes only return keys to it."""
        if self.drifted and is_preset_revert(config_id, changes):
            return {k: v for k, v in self.overrides.items() if k not in self.drifted}
        return dict(self.overrides)


def parent_config(run_dir: Path, info: rf.RunInfo) -> ParentConfig:
    """The run's ParentConfig. Only its own overrides when its config.yaml is missing, damaged or no
    longer validates (e.g. a key this version no longer has), or its preset is not on this machine."""
    own = dict(info.overrides or {})
    use_zoo = resolved_with_zoo(info)
    preset = preset_config(info.config_id)
    changed = changed_by_run(info)
    try:
        text = (run_dir / rf.CONFIG_YAML).read_text(encoding="utf-8")
        # Validated, so a key an older trainer did not write comes back as the default the run used.
        recorded = config_from_yaml_text(text, f"{info.run_id}/{rf.CONFIG_YAML}").model_dump(mode="json")
    except (OSError, ConfigError, ValueError, yaml.YAMLError):  # missing, damaged or outdated: what is certain
        return ParentConfig(own, [], use_zoo)
    if preset is None or changed is None:
        return ParentConfig(own, [], use_zoo)
    drift = {k: value for k, (value, _) in preset_differences(recorded, preset).items() if k not in changed}
    return ParentConfig({**drift, **own}, list(drift), use_zoo)


def resolved_with_zoo(info: rf.RunInfo) -> bool:
    """Whether a child of the run (a retry, a fix trial) resolves its config id with the RL Zoo's entry, as the
    run did: False for a run that took gsolve's defaults (``--no-zoo``; with no Zoo entry both give the defaults)."""
    return info.config_origin is None or info.config_origin.settings != "default"


def is_preset_revert(config_id: str, changes: Mapping[str, Any]) -> bool:
    """Every change sets its key to today's value in the preset ``config_id`` (False without a preset)."""
    preset = preset_config(config_id)
    if preset is None or not changes or not set(changes) <= set(type(preset).model_fields):
        return False
    return not preset_differences(changes, preset)


def refusal(config_id: str, parent: ParentConfig, changes: Mapping[str, Any],
            caps: Mapping[str, int] | None = None) -> str | None:
    """Why the trainer refuses the parent's config with ``changes`` (built as a trial builds it), or None when it
    takes it: a fix candidate, a trim variant or a combination that cannot start is not tried. ``caps``: the MCP
    server's caps (launcher.CAP_FLAGS' keys) a trial of a fix it started must stay within."""
    try:
        cfg = resolve_config(config_id, override_pairs({**parent.base_for(config_id, changes), **changes}),
                             use_zoo=parent.use_zoo)
    except ConfigError as exc:
        return error_reason(exc)
    problems = over_caps({key: int(getattr(cfg, key)) for key in CAP_FLAGS}, caps or {})
    return problems[0] if problems else None
