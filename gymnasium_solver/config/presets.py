"""Preset files (``gymnasium_solver/presets/environments/<EnvId>.yaml``): loading, variants and inheritance, ``--set``
overrides, and how a run's config differs from its preset. Resolving one is ``chain.py``'s."""

from __future__ import annotations

import importlib.resources
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from gymnasium_solver.config.build import SCHEDULE_KEYS, did_you_mean
from gymnasium_solver.config.model import ConfigError
from gymnasium_solver.config.registry import JUDGING_KEYS, RECORDING_KEYS, Config
from gymnasium_solver.config.zoo_names import in_our_names

CONFIG_DIR_ENV = "GSOLVE_CONFIG_DIR"

# Our presets and the diagnosis' shipped references are package data (gymnasium_solver/presets/), read
# through importlib.resources so that any install (a wheel, an editable checkout) finds them.
PACKAGE_DATA_DIR = Path(str(importlib.resources.files("gymnasium_solver") / "presets"))
PACKAGE_CONFIG_DIR = PACKAGE_DATA_DIR / "environments"


def config_dir() -> Path:
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
    # What was read from the RL Zoo's / SB3's names, per section (None: base; else the variant's name).
    zoo_notes: dict[str | None, list[str]] = Field(default_factory=dict)


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
            raise ConfigError(f"{p}: unknown top-level key {key!r}{did_you_mean(key, sorted(allowed))}")
    variants = raw.get("variants")
    if not isinstance(variants, dict) or not variants:
        raise ConfigError(f"{p}: 'variants' must map variant names to settings, e.g. 'ppo: {{algo: ppo}}'")
    sections: dict[str | None, Any] = {None: raw.get("base") or {}, **{str(k): v or {} for k, v in variants.items()}}
    mapped: dict[str | None, dict[str, Any]] = {}
    notes: dict[str | None, list[str]] = {}
    for name, section in sections.items():
        if not isinstance(section, dict):
            raise ConfigError(f"{p}: {'base' if name is None else f'variant {name!r}'} must map config keys to values")
        read = in_our_names(section, f"{p} ({'base' if name is None else f'variant {name!r}'})")
        mapped[name], notes[name] = read.values, read.notes
    return Preset(
        env_id=raw.get("env_id") or p.stem,
        description=raw.get("description") or "",
        base=mapped.pop(None),
        variants={str(k): v for k, v in mapped.items()},
        path=str(p),
        zoo_notes={k: v for k, v in notes.items() if v},
    )


def zoo_name_notes(preset: Preset, variant: str) -> list[str]:
    """What ``variant`` of ``preset`` (its base and the variants it inherits from) wrote in the RL Zoo's
    or SB3's names and was read into ours, e.g. "n_timesteps -> max_env_steps"."""
    chain: list[str | None] = []
    name: str | None = variant
    while name is not None and name in preset.variants and name not in chain:
        chain.append(name)
        parent = preset.variants[name].get("inherits")
        name = parent if isinstance(parent, str) else None
    if name is None or name not in preset.variants:
        chain.append(None)  # the chain ends at base
    return [note for section in reversed(chain) for note in preset.zoo_notes.get(section, [])]


def _files_in(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))}


def user_config_dir() -> Path | None:
    """The user's preset folder: $GSOLVE_CONFIG_DIR when set (None when it names ours), else the folder `gsolve presets
    save` writes to by default (``~/.config/gsolve/presets``) when it exists, else None."""
    folder = config_dir()
    if folder.resolve() != PACKAGE_CONFIG_DIR.resolve():
        return folder
    if _config_dir_set():
        return None
    saved = default_presets_dir()
    return saved if saved.is_dir() else None


def _config_dir_set() -> bool:
    return bool(os.environ.get(CONFIG_DIR_ENV))


def _adds_only(user: Path) -> bool:
    """Whether the user's folder only adds variants to ours: the default folder, read without $GSOLVE_CONFIG_DIR, never
    replaces a preset we ship (so `make bench-check` and our figures train ours); $GSOLVE_CONFIG_DIR's does, on purpose."""
    return not _config_dir_set() and user.resolve() == default_presets_dir().resolve()


def neutral_preset_paths(text: str) -> str:
    """``text`` with the preset folders named as a reader on another machine can take them (an MCP client): ours
    relative to the package, the user's as $GSOLVE_CONFIG_DIR; never where they lie on this disk."""
    user = user_config_dir()
    shown_user = "~/.config/gsolve/presets" if user is not None and _adds_only(user) else f"${CONFIG_DIR_ENV}"
    names = {PACKAGE_CONFIG_DIR: "gymnasium_solver/presets/environments",
             **({user: shown_user} if user is not None else {})}
    for folder, name in names.items():
        for shown in dict.fromkeys([str(folder.resolve()), str(folder)]):
            text = text.replace(shown, name)
    return text


def list_env_files(folder: Path | None = None) -> dict[str, Path]:
    """Preset files by environment id, in ``folder``. Without one: ours and the user's
    ($GSOLVE_CONFIG_DIR), the user's file for an environment listed instead of ours (its variants add to ours:
    :func:`preset_folder`)."""
    if folder is not None:
        return _files_in(folder)
    user = user_config_dir()
    return {**_files_in(PACKAGE_CONFIG_DIR), **(_files_in(user) if user is not None else {})}


def preset_folder(env_id: str, variant: str | None = None) -> Path:
    """Where ``ENV:variant`` resolves from when no folder is named: the user's folder ($GSOLVE_CONFIG_DIR) when
    its file for ``env_id`` has that variant, else ours when ours does; a user's variants add to ours, one of the
    same name replaces ours. Without ``variant`` (a bare ENV): ours when we ship a file for it, else the user's.
    A variant in neither file: the user's file when there is one (its errors name its variants), else ours."""
    user = user_config_dir()
    theirs = user is not None and env_id in _files_in(user)
    ours = env_id in _files_in(PACKAGE_CONFIG_DIR)
    if variant is None:
        return PACKAGE_CONFIG_DIR if ours or not theirs else user  # type: ignore[return-value]
    if theirs and ours and _adds_only(user) and variant in load_preset(env_id, PACKAGE_CONFIG_DIR).variants:  # type: ignore[arg-type]
        return PACKAGE_CONFIG_DIR
    if theirs:
        try:
            if variant in load_preset(env_id, user).variants:
                return user  # type: ignore[return-value]
        except ConfigError:
            return user  # type: ignore[return-value]  # a broken file of the user's is reported as theirs
    if ours and variant in load_preset(env_id, PACKAGE_CONFIG_DIR).variants:
        return PACKAGE_CONFIG_DIR
    return user if theirs else PACKAGE_CONFIG_DIR  # type: ignore[return-value]


def is_shipped_variant(config_id: str) -> bool:
    """Whether ``ENV:VARIANT`` resolves from the presets shipped with the project, not the user's folder."""
    env_id, _, variant = config_id.partition(":")
    return preset_folder(env_id, variant or None).resolve() == PACKAGE_CONFIG_DIR.resolve()


def load_preset(env_id: str, folder: Path | None = None) -> Preset:
    """The preset file of ``env_id`` in ``folder`` (default: the user's ($GSOLVE_CONFIG_DIR) when it has one
    for ``env_id``, else ours; :func:`list_variants` lists both files' variants)."""
    files = list_env_files(folder)
    if env_id not in files:
        raise ConfigError(
            f"no preset for environment {env_id!r}{did_you_mean(env_id, list(files))} "
            f"(presets: {', '.join(files) or 'none'}; folder {config_dir() if folder is None else folder})"
        )
    path = files[env_id]
    return _load_preset_cached(str(path), path.stat().st_mtime)


def parse_config_id(config_id: str) -> tuple[str, str]:
    """Split ``ENV:VARIANT``; a bare ``ENV`` is an error that says which variants exist."""
    if ":" not in config_id:
        variants = ""
        try:
            variants = ", ".join(f"{config_id}:{v}" for v in list_variants(config_id))
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
            f"{preset.path}: no variant {variant!r}{did_you_mean(variant, list(preset.variants))} "
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


class Additions(dict):  # type: ignore[type-arg]
    """The keys dotted ``--set`` arguments put inside a dict value (``env_kwargs.gravity=-5``): added to the
    value the settings have. A whole value (``env_kwargs={...}``) replaces it, as for every other key."""


yaml.SafeDumper.add_representer(Additions, yaml.representer.SafeRepresenter.represent_dict)  # written as a dict


def parse_overrides(pairs: list[str] | None) -> dict[str, Any]:
    """``["lr=1e-3", "learning_rate.start=0.1"]`` -> nested dict. Values are parsed as YAML; a dotted key's
    dict is an :class:`Additions`."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            # The shell splits an unquoted value at its spaces: hidden_sizes=[64, 64] arrives as two words.
            split = any(c in pair for c in "]}") or pair.endswith(",")
            hint = (": the shell split a value at its spaces; quote the whole pair, e.g. --set 'hidden_sizes=[64, 64]'"
                    if split else "")
            raise ConfigError(f"override {pair!r} must look like key=value, e.g. learning_rate=0.001{hint}")
        key, value = pair.split("=", 1)
        key = key.strip()
        if not key:
            raise ConfigError(f"override {pair!r} has an empty key")
        parts = key.split(".")
        cursor = out
        for part in parts[:-1]:
            cursor = cursor.setdefault(part, Additions())
            if not isinstance(cursor, dict):
                raise ConfigError(f"override {pair!r} conflicts with another override of {part!r}")
        parsed = _parse_override_value(value)
        _check_flow_mapping(pair, parsed)
        cursor[parts[-1]] = parsed
    return out


def _check_flow_mapping(pair: str, value: Any) -> None:
    """``env_kwargs={map_name:8x8}`` is YAML for the key 'map_name:8x8' with no value (a flow mapping needs a space
    after the colon): refused with the spelling that was meant, before it reaches an environment's constructor."""
    if not isinstance(value, dict):
        return
    for k, v in value.items():
        if v is None and isinstance(k, str) and ":" in k:
            name, _, meant = k.partition(":")
            raise ConfigError(f"override {pair!r}: {k!r} reads as one key with no value (YAML needs a space after "
                              f"the colon); write {{{name}: {meant}}}")
        _check_flow_mapping(pair, v)


def yaml_value(v: Any) -> str:
    """A config value as ``--set`` writes it (``0.004``, ``{end: 0.0, start: 0.004}``, ``null``)."""
    # The trainer parses --set values as YAML; PyYAML's own dump round-trips types exactly
    # (json.dumps would write 1e-05, which YAML 1.1 reads back as a string).
    if isinstance(v, str):
        return v
    return yaml.safe_dump(v, default_flow_style=True, width=1 << 30).removesuffix("\n...\n").strip()


def override_pairs(overrides: dict[str, Any]) -> list[str]:
    """``{'learning_rate': 0.004}`` -> ``['learning_rate=0.004']``: the --set arguments the trainer parses back."""
    return [f"{k}={yaml_value(v)}" for k, v in overrides.items()]


def recorded_overrides(overrides: Mapping[str, Any], cfg: Config) -> dict[str, Any]:
    """``--set`` overrides as run.json records them: in our names, and dotted ``env_kwargs`` keys as the whole
    env_kwargs the run used, so a retry (where a whole value replaces) rebuilds the same environment."""
    out = in_our_names(overrides, "--set").values
    if "env_kwargs" in out:
        out["env_kwargs"] = dict(cfg.env_kwargs)
    return out


def _apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for key, value in overrides.items():
        if isinstance(value, dict) and key in SCHEDULE_KEYS:
            current = out.get(key)
            if isinstance(current, dict):
                value = {**current, **value}
            elif current is not None and set(value) - {"start", "end"} == set():
                value = {"start": current, "end": current, **value}
        elif isinstance(value, Additions) and key == "env_kwargs":  # dotted: added; a whole dict replaces
            value = {**(out.get(key) or {}), **value}
        out[key] = value
    return out


def _spec(env_id: str) -> Any:
    """Gymnasium's registry entry for ``env_id`` (read without creating the environment), or None."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return None
    try:
        return gymnasium.spec(env_id)
    except Exception:  # noqa: BLE001 - gymnasium raises several error types for unknown ids
        return None


def spec_reward_threshold(env_id: str) -> float | None:
    """The reward threshold from Gymnasium's registry, read without creating the environment."""
    spec = _spec(env_id)
    return None if spec is None or spec.reward_threshold is None else float(spec.reward_threshold)


def spec_time_limit(env_id: str) -> int | None:
    """The time limit (max_episode_steps) Gymnasium's registry gives ``env_id``; None when it has none."""
    spec = _spec(env_id)
    return None if spec is None or spec.max_episode_steps is None else int(spec.max_episode_steps)


def _check_time_limit(cfg: Config, threshold: float, where: str) -> None:
    """ConfigError when ``env_kwargs: {max_episode_steps}`` lifts the spec's time limit while the spec's
    threshold, set for episodes of that limit, would still decide "solved" (issue 26): CartPole-v1's 475
    is near-perfect over 500 steps and a fraction of what 5,000-step episodes allow."""
    steps = cfg.env_kwargs.get("max_episode_steps")
    limit = spec_time_limit(cfg.env_id)
    if isinstance(steps, int | float) and not isinstance(steps, bool) and limit is not None and steps > limit:
        raise ConfigError(
            f"{where}: env_kwargs max_episode_steps={steps:g} lifts {cfg.env_id}'s time limit of {limit} steps while "
            f"the run would still be judged solved at the spec's reward_threshold {threshold:g}, which is set for "
            f"{limit}-step episodes; set reward_threshold explicitly if you mean it (e.g. reward_threshold={threshold:g}, "
            "or .inf to train for the whole budget)")


def list_variants(env_id: str, folder: Path | None = None) -> dict[str, str]:
    """Variant name -> algorithm for one environment's preset file in ``folder``; without one, ours then the
    user's ($GSOLVE_CONFIG_DIR), whose variant of the same name replaces ours in place."""
    if folder is None:
        user = user_config_dir()
        ours = list_variants(env_id, PACKAGE_CONFIG_DIR) if env_id in _files_in(PACKAGE_CONFIG_DIR) else {}
        theirs = list_variants(env_id, user) if user is not None and env_id in _files_in(user) else {}
        if not ours and not theirs:
            load_preset(env_id)  # the error that names the presets there are
        if user is not None and _adds_only(user):
            return {**theirs, **ours}  # ours win: the default folder only adds
        return {**ours, **theirs}
    preset = load_preset(env_id, folder)
    out = {}
    for name in preset.variants:
        data = _resolve_variant_dict(preset, name)
        out[name] = str(data.get("algo", "?"))
    return out


# Keys that never count as a difference from the preset: identity, the seed (any seed of a
# preset is the preset), and what a run records besides its training (RECORDING_KEYS).
_NOT_A_DEVIATION = frozenset({"env_id", "variant", "seed", "env_package", "env_class", *RECORDING_KEYS, *JUDGING_KEYS})



def preset_differences(config: Mapping[str, Any], preset: Config | Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Every config key whose value differs from the preset's: ``{key: (run value, preset value)}``.

    ``config`` is a run's resolved config as read from config.yaml (a plain mapping); values are
    compared as YAML would write them, so ``{start: 0.004, end: 0.0}`` equals the preset's schedule.
    Keys the run's config lacks (written by an older trainer) are not differences. ``preset`` is a
    Config or its ``model_dump(mode="json")``.
    """
    ref = preset if isinstance(preset, Mapping) else preset.model_dump(mode="json")
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


# ---------------------------------------------------------------------------------------------
# The user's own presets: `gsolve presets save RUN NAME`
# ---------------------------------------------------------------------------------------------
VARIANT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Keys a saved preset leaves out: its identity (the file and variant name say it) and where results go.
# env_package/env_class too: a run folder (maybe someone else's) must not become a preset that imports code.
_NOT_SAVED = frozenset({"env_id", "variant", "env_package", "env_class", *RECORDING_KEYS})


def user_presets_dir() -> Path:
    """Where `gsolve presets save` writes: $GSOLVE_CONFIG_DIR when set, else :func:`default_presets_dir`. Training
    reads either (the default folder adding variants to ours, never replacing one)."""
    env = os.environ.get(CONFIG_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return default_presets_dir()


def default_presets_dir() -> Path:
    """``$XDG_CONFIG_HOME/gsolve/presets`` (``~/.config/gsolve/presets``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gsolve" / "presets"


class SavedPreset(BaseModel):
    """`gsolve presets save`: where a run's config was saved as a preset variant, and how to train it."""

    run_id: str
    config_id: str = Field(description="the new ENV:VARIANT")
    path: str = Field(description="the preset file the variant was added to")
    folder: str = Field(description=f"the presets folder; gsolve reads it when ${CONFIG_DIR_ENV} names it, or when "
                        f"it is ~/.config/gsolve/presets and ${CONFIG_DIR_ENV} is unset")
    active: bool = Field(description="training reads this folder, so `gsolve train CONFIG_ID` finds the variant")
    train_command: str = Field(description="the shell command that trains the saved variant")


def save_user_preset(config: Config, name: str, folder: Path, description: str) -> Path:
    """Add ``config`` (a run's resolved config) as variant ``name`` of ``folder/<ENV>.yaml``, every key
    written out so it trains the same whatever the defaults become. ConfigError for a bad name, a
    variant that exists, a file that is not a preset, or our own presets' folder."""
    if not VARIANT_NAME.match(name):
        raise ConfigError(f"preset name {name!r} must be letters, digits, '_', '.', '-' (at most 64), e.g. my-ppo")
    if folder.resolve() == PACKAGE_CONFIG_DIR.resolve():
        raise ConfigError(f"{folder} holds the presets shipped with gsolve; save yours elsewhere (${CONFIG_DIR_ENV})")
    if (_adds_only(folder) and config.env_id in _files_in(PACKAGE_CONFIG_DIR)
            and name in load_preset(config.env_id, PACKAGE_CONFIG_DIR).variants):
        raise ConfigError(f"{config.env_id}:{name} is a preset shipped with gsolve, and {folder} adds variants to ours "
                          f"without replacing any; choose another name (to replace ours on purpose, save it in a "
                          f"folder of yours named by ${CONFIG_DIR_ENV})")
    path = folder / f"{config.env_id}.yaml"
    raw: dict[str, Any] = {"env_id": config.env_id, "variants": {}}
    if path.exists():
        existing = load_preset(config.env_id, folder)
        if name in existing.variants:
            raise ConfigError(f"{path} already has a variant {name!r}; choose another name "
                              f"(its variants: {', '.join(existing.variants)})")
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    variant = {k: v for k, v in config.model_dump(mode="json").items() if k not in _NOT_SAVED}
    raw["variants"][name] = {"description": description, **variant}
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    os.replace(tmp, path)
    return path
