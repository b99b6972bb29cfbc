"""A resolved config as an answer (`gsolve config --json`, the MCP get_config tool): every value with
its source and meaning."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver.config.chain import Resolved
from gymnasium_solver.config.origin import SettingSource
from gymnasium_solver.config.presets import is_shipped_variant
from gymnasium_solver.config.registry import CONFIG_FIELDS

USER_PRESET = "user_preset"


class ConfigResult(BaseModel):
    source: str = Field(description="'preset' (ours), 'user_preset' ($GSOLVE_CONFIG_DIR's), 'zoo' or 'default', "
                        "each + overrides; or 'run' (the run's config.yaml)")
    config_id: str | None
    run_id: str | None = None
    config: dict[str, Any]
    settings_from: str | None = Field(default=None, description="where the settings came from: 'preset', 'zoo' "
                                      "(the RL Zoo's entry) or 'default', with the file or entry")
    value_sources: dict[str, str] = Field(default_factory=dict, description="config key -> where its value came from: "
                                          "preset, zoo, default, user_config, override or spec")
    notes: list[str] = Field(default_factory=list, description="what the resolution chose or could not reproduce")
    descriptions: dict[str, str] = Field(description="what each config key means")


def config_descriptions() -> dict[str, str]:
    return {k: (f.description or "") for k, f in CONFIG_FIELDS.items()}


def resolved_config_result(resolved: Resolved) -> ConfigResult:
    """A config id's resolved config (ENV:VARIANT or ENV:ALGO plus overrides) with each value's source."""
    cfg, origin = resolved.config, resolved.origin
    # settings_from says 'preset' for ours and the user's alike (run.json's config_origin); source tells them apart.
    source = origin.settings
    if source == SettingSource.PRESET and not is_shipped_variant(cfg.config_id):
        source = USER_PRESET
    return ConfigResult(source=source, config_id=cfg.config_id, config=cfg.model_dump(mode="json"),
                        descriptions=config_descriptions(), settings_from=f"{origin.settings}: {origin.where}",
                        value_sources=origin.sources, notes=origin.notes)
