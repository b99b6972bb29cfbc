"""What can be trained, as one typed answer: the environments with presets (with one environment's
variants and key settings) and, on request, a page of every registered Gymnasium id with where its
settings would come from. `gsolve list-envs --json` prints it and the MCP list_environments returns it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gymnasium_solver import config as config_mod
from gymnasium_solver.config import env_modules
from gymnasium_solver.config.catalog import (
    MAX_CATALOG_ROWS,
    EnvironmentSettings,
    environment_catalog,
    no_match_note,
)
from gymnasium_solver.config.chain import missing_extra
from gymnasium_solver.config.spaces import check_registered, choose_algo, env_spaces
from gymnasium_solver.contract.algorithms import takes
from gymnasium_solver.run_store import key_hyperparameters


class RegisteredEnvironment(BaseModel):
    env_id: str
    settings: str = Field(description="'preset' (ours), 'zoo' (the RL Zoo's tuned entry, for zoo_algos) or 'default' "
                          "(gsolve's documented defaults only)")
    preset_variants: dict[str, str] = Field(description="preset variant -> algorithm")
    zoo_algos: list[str] = Field(description="algorithms the installed RL Zoo has an entry for (for an ALE game "
                                 "without its own: those whose generic atari entry gsolve trains)")
    zoo_entry: str | None = Field(default=None, description="'atari' when zoo_algos are the RL Zoo's generic entry "
                                  "for ALE games, else None (the environment's own entry)")
    registered_by: str | None = Field(default=None, description="the flag this process was started with that made "
                                      "the id trainable (--env-class: the user's own class; --env-package), or None")


class EnvironmentPreset(BaseModel):
    env_id: str
    description: str
    variants: dict[str, str] = Field(description="variant name -> algorithm")
    config_ids: list[str] = Field(description="ENV:VARIANT ids to pass to start_training / get_config")


class VariantInfo(BaseModel):
    variant: str
    config_id: str
    algo: str
    settings: dict[str, Any] = Field(description="the variant's resolved key settings (get_config has all)")
    problem: str | None = Field(default=None, description="set if this variant does not validate, or this install "
                                "cannot train it (an extra it lacks, with the pip command)")


class EnvironmentList(BaseModel):
    environments: list[EnvironmentPreset] = Field(description="environments with presets (with env_id: that one)")
    config_dir: str
    variants: list[VariantInfo] | None = Field(
        default=None, description="with env_id: its variants with algorithm and key settings")
    registered: list[RegisteredEnvironment] = Field(
        default_factory=list, description="with registered=true or a filter: registered Gymnasium ids and where "
        "start_training would take their settings from")
    registered_total: int = Field(default=0, description="registered ids matching the filter (registered lists at most "
                                  "limit of them from offset)")
    own: list[RegisteredEnvironment] = Field(
        default_factory=list, description="ids the --env-class/--env-package this process was started with made "
        "trainable (at most limit; a filter finds the rest)")
    note: str = ""


def environment_list(env_id: str | None = None, filter: str | None = None, registered: bool = False,
                     offset: int = 0, limit: int = 50) -> EnvironmentList:
    """The presets (with ``env_id``: that environment and its variants' key settings); with ``registered``
    or a ``filter``, also a page of ``limit`` registered ids from ``offset`` whose id contains ``filter``."""
    if env_id is not None:
        if env_id not in config_mod.list_env_files():
            return _without_preset(env_id)
        preset = config_mod.load_preset(env_id)
        return EnvironmentList(environments=[preset_entry(preset.env_id)], config_dir=str(config_mod.config_dir()),
                               variants=variant_settings(preset.env_id))
    result = EnvironmentList(environments=[preset_entry(e) for e in config_mod.list_env_files()],
                             config_dir=str(config_mod.config_dir()))
    granted = env_modules.granted_ids()
    notes = []
    if registered or filter is not None:
        catalog = environment_catalog(filter, offset=offset, limit=limit)
        result.registered = [_registered(e, granted) for e in catalog.environments]
        result.registered_total = catalog.total
        end = offset + len(result.registered)
        if not catalog.total and filter:
            notes.append(no_match_note(filter))
        elif catalog.total and offset >= catalog.total:
            notes.append(f"offset {offset} is past the last of {catalog.total} registered ids: use 0..{catalog.total - 1}")
        else:
            notes.append(f"registered ids {offset + 1}-{end} of {catalog.total}"
                         + (f"; next page: offset={end}" if end < catalog.total else ""))
    elif granted:
        own = environment_catalog(None, offset=0, limit=MAX_CATALOG_ROWS, only=list(granted)[:limit])
        result.own = [_registered(e, granted) for e in own.environments]
        if len(granted) > len(result.own):
            notes.append(f"own: {len(result.own)} of the {len(granted)} ids this server's flags made trainable; "
                         "a filter (e.g. the package's prefix) lists the rest")
    result.note = "; ".join(notes)
    return result


def _registered(e: EnvironmentSettings, granted: dict[str, str]) -> RegisteredEnvironment:
    return RegisteredEnvironment(env_id=e.env_id, settings=e.settings, preset_variants=e.preset_variants,
                                 zoo_algos=e.zoo_algos, zoo_entry=e.zoo_entry, registered_by=granted.get(e.env_id))


def _without_preset(env_id: str) -> EnvironmentList:
    """A registered environment we have no preset for: where its settings come from, and one ENV:ALGO per
    algorithm that takes its spaces with its key settings (or why it cannot train). ConfigError for an id
    Gymnasium does not know (close matches among the registered ids)."""
    check_registered(env_id)
    [row] = environment_catalog(only=[env_id]).environments
    spaces = env_spaces(env_id)
    variants = [_algo_settings(env_id, algo) for algo in takes(spaces.action_kind)]
    note = (f"no preset for {env_id}: `start_training` takes {env_id}:ALGO for an algorithm below (a bare {env_id} "
            f"trains {choose_algo(spaces)[0]}), with settings from the RL Zoo's entry where it has one (zoo_algos), "
            "else gsolve's defaults")
    return EnvironmentList(environments=[], config_dir=str(config_mod.config_dir()), variants=variants,
                           registered=[_registered(row, env_modules.granted_ids())], registered_total=1, note=note)


def _algo_settings(env_id: str, algo: str) -> VariantInfo:
    cid = f"{env_id}:{algo}"
    try:
        resolved = config_mod.resolve_config(cid)
    except config_mod.ConfigError as exc:
        return VariantInfo(variant=algo, config_id=cid, algo=algo, settings={}, problem=str(exc))
    cfg = resolved.model_dump(mode="json")
    settings: dict[str, Any] = {k: cfg[k] for k in ("max_env_steps", "reward_threshold")}
    settings.update(key_hyperparameters(cfg))
    return VariantInfo(variant=algo, config_id=cid, algo=algo, settings=settings, problem=_cannot_train(resolved))


def _cannot_train(cfg: config_mod.Config) -> str | None:
    """Why this install cannot train a config that resolves (an extra it lacks, with the pip command), else None."""
    missing = missing_extra(cfg)
    return None if missing is None else f"this install cannot train it yet: {missing}"


def preset_entry(env_id: str) -> EnvironmentPreset:
    """One environment's preset as the list shows it; a broken preset says why."""
    try:
        preset = config_mod.load_preset(env_id)
        variants = config_mod.list_variants(env_id)
    except config_mod.ConfigError as exc:
        return EnvironmentPreset(env_id=env_id, description=f"preset is broken: {exc}", variants={}, config_ids=[])
    return EnvironmentPreset(env_id=preset.env_id, description=preset.description, variants=variants,
                             config_ids=[f"{env_id}:{v}" for v in variants])


def variant_settings(env_id: str) -> list[VariantInfo]:
    """Each preset variant of ``env_id`` with its algorithm and resolved key settings."""
    out = []
    for name, algo in config_mod.list_variants(env_id).items():
        cid = f"{env_id}:{name}"
        try:
            resolved = config_mod.resolve_config(cid)
            cfg = resolved.model_dump(mode="json")
            settings: dict[str, Any] = {k: cfg[k] for k in ("max_env_steps", "reward_threshold")}
            settings.update(key_hyperparameters(cfg))
            out.append(VariantInfo(variant=name, config_id=cid, algo=algo, settings=settings,
                                   problem=_cannot_train(resolved)))
        except config_mod.ConfigError as exc:
            out.append(VariantInfo(variant=name, config_id=cid, algo=algo, settings={}, problem=str(exc)))
    return out
