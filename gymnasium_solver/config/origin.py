"""Where a run's config values came from (run.json ``config_origin``): the chain's first match and a
source per key. The run-folder contract's part that the config chain writes; imports nothing of ours."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class SettingSource(StrEnum):
    """Where one config value of a run came from (run.json ``config_origin.sources``)."""

    PRESET = "preset"  # our preset file, or the user's ($GSOLVE_CONFIG_DIR)
    ZOO = "zoo"  # the RL Zoo's entry for the environment and algorithm (installed rl_zoo3)
    DEFAULT = "default"  # gsolve's documented defaults for the algorithm and action space (docs/configs.md)
    USER_CONFIG = "user_config"  # the user config file's output keys (~/.config/gsolve/config.yaml)
    OVERRIDE = "override"  # --set / --seed / an MCP tool's overrides
    SPEC = "spec"  # the Gymnasium spec (reward_threshold)


class ConfigOrigin(BaseModel):
    """How a run's config was resolved: the chain's first match (preset, else the RL Zoo, else defaults)
    and, for every key, where its value came from. Written at start; absent from runs written before."""

    model_config = ConfigDict(extra="ignore")
    settings: str = Field(description="where the settings came from: 'preset', 'zoo' or 'default'")
    where: str = Field(description="the preset file and variant, the RL Zoo file and entry, or the defaults used")
    sources: dict[str, str] = Field(default_factory=dict,
                                    description="config key -> where its value came from (a SettingSource value)")
    notes: list[str] = Field(default_factory=list, description="what the resolution could not reproduce or chose: "
                             "Zoo keys not reproduced, the algorithm picked from the spaces, no reward threshold")
