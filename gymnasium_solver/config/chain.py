"""Resolving a run's settings in one chain, first match wins, and recording where each value came from:

1. the preset for the environment (ours, or the user's variant of that name in $GSOLVE_CONFIG_DIR, which adds to ours);
2. else the RL Zoo's tuned entry for the environment and algorithm (installed rl_zoo3, ``zoo.py``);
3. else gsolve's defaults for the algorithm and the action space (``DEFAULTS``, docs/configs.md);

then the user config file's output keys, then the overrides (``--set``). A preset resolved without
overrides (``preset_config``, ``shipped_preset``) comes from here too. The reward threshold is the
config's, else the Gymnasium spec's; with neither the run trains for its whole budget, and says so.
``ENV_ID`` without an algorithm picks one from the environment's spaces (``spaces.choose_algo``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from gymnasium_solver.config import env_modules, run_notes
from gymnasium_solver.config.atari import frameskip_note
from gymnasium_solver.config.build import (
    SCHEDULE_KEYS,
    build_config,
    check_keys,
    check_machine_limits,
    did_you_mean,
)
from gymnasium_solver.config.model import Algo, ConfigError
from gymnasium_solver.config.origin import ConfigOrigin, SettingSource
from gymnasium_solver.config.presets import (
    CONFIG_DIR_ENV,
    PACKAGE_CONFIG_DIR,
    _apply_overrides,
    _check_time_limit,
    _resolve_variant_dict,
    default_presets_dir,
    list_env_files,
    list_variants,
    load_preset,
    parse_overrides,
    preset_folder,
    spec_reward_threshold,
    user_config_dir,
    yaml_value,
    zoo_name_notes,
)
from gymnasium_solver.config.registry import CONFIG_MODELS, Config, applies_to
from gymnasium_solver.config.spaces import (
    ATARI_SETTINGS,
    BOX2D_INSTALL,
    MUJOCO_INSTALL,
    SB3_INSTALL,
    EnvSpaces,
    check_algo_takes,
    check_images,
    check_registered,
    choose_algo,
    env_spaces,
)
from gymnasium_solver.config.user import user_defaults
from gymnasium_solver.config.zoo import (
    untrainable,
    whole_rollout_batch,
    zoo_atari_algos,
    zoo_entry,
    zoo_missing_note,
)
from gymnasium_solver.config.zoo_names import NOISE_UNITS, in_our_names
from gymnasium_solver.contract.algorithms import ALGORITHMS, BOX, ON_POLICY

# gsolve's defaults where neither a preset nor the RL Zoo has settings: each algorithm's model defaults
# (docs/configs.md, every key) with these on top, per algorithm and action space. Continuous control:
# observations of very different scales (normalised), and the Zoo's usual 1M-step budget; off-policy
# algorithms: one environment and SB3's ReLU networks (SB3's and the Zoo's defaults).
_ON_POLICY_BOX = {"normalize_observations": True, "max_env_steps": 1_000_000}
_OFF_POLICY = {"n_envs": 1, "activation": "relu"}
_OFF_POLICY_BOX = {"max_env_steps": 1_000_000}
_SB3_NET_ARCH = {Algo.SAC: [256, 256], Algo.TQC: [256, 256], Algo.TD3: [400, 300]}  # SB3's default net_arch
# A run is judged solved at its evaluations only: a policy that solves between two and has degraded by the
# next is never seen. When nothing sets eval_freq, a budget gets at least this many evaluations (the default
# 10,000 gave the RL Zoo's MountainCarContinuous-v0 entry, 20,000 env steps, two: seeds 1 and 6 failed at
# both, and solved at 2,000 and 4,000 env steps with ten; docs/configs.md).


def _defaults(algo: Algo, action_kind: str) -> dict[str, Any]:
    if algo in ON_POLICY:
        return dict(_ON_POLICY_BOX) if action_kind == BOX else {}
    net = {"hidden_sizes": _SB3_NET_ARCH[algo]} if algo in _SB3_NET_ARCH else {}
    return {**_OFF_POLICY, **net, **(_OFF_POLICY_BOX if action_kind == BOX else {})}


DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    (a.value, kind): d for a, spec in ALGORITHMS.items() for kind in spec.action_kinds if (d := _defaults(a, kind))
}
# Discrete observations (a state index, one-hot encoded: Taxi, FrozenLake, CliffWalking): DQN with a linear
# Q-network, which over a one-hot input is tabular Q-learning with replay (one weight per state and action).
# Its near-zero initial values sit above the true values of a task that costs reward per step, so, as with a
# zero-initialised table, unvisited actions look best and get tried; an MLP generalises across the one-hot
# states and loses that (Taxi-v4 with PPO's defaults, or DQN's with its MLP: never delivers a passenger in
# 200,000 env steps). Adam at 0.01 per state row, a target copy every 500 steps, a gradient step per env step.
TABULAR: dict[str, dict[str, Any]] = {
    Algo.DQN.value: {"hidden_sizes": [], "learning_rate": 0.01, "target_update_interval": 500, "train_freq": 1,
                     "buffer_size": 50_000, "learning_starts": 1_000, "batch_size": 64},
}


def defaults_for(algo: str, action_kind: str, observation_kind: str | None) -> dict[str, Any]:
    """gsolve's defaults on top of the model's for ``algo``, its action space and (when known) its observations."""
    tabular = TABULAR[algo] if is_tabular(algo, observation_kind) else {}
    return {**DEFAULTS.get((algo, action_kind), {}), **tabular}


def is_tabular(algo: str, observation_kind: str | None) -> bool:
    """Does ``algo`` learn a table on these observations (TABULAR's defaults apply)?"""
    return algo in TABULAR and observation_kind == "discrete"


NO_THRESHOLD = ("no reward threshold: {env_id}'s Gymnasium spec has none and the config sets none, so the run "
                "trains for its whole budget (set one with --set reward_threshold=...)")


class Resolved(NamedTuple):
    config: Config
    origin: ConfigOrigin


class _Base(NamedTuple):
    """The chain's first match: the settings, where they came from, and what was noted on the way."""

    data: dict[str, Any]
    source: SettingSource
    where: str
    notes: list[str]


def split_config_id(config_id: str) -> tuple[str, str | None]:
    """``ENV:VARIANT`` -> (ENV, VARIANT); a bare ``ENV`` -> (ENV, None). ConfigError for a module-qualified
    id (``module:EnvId:ppo``): Gymnasium would import that module, and a config never makes gsolve import code."""
    env_id, _, variant = config_id.partition(":")
    if ":" in variant:
        raise ConfigError(f"{config_id!r} names a Python module ('module:EnvId') for Gymnasium to import, which gsolve "
                          "never does; use the registered id alone, e.g. CartPole-v1:ppo")
    if not env_id:
        raise ConfigError(f"expected ENV or ENV:ALGO, got {config_id!r}")
    return env_id, (variant or None)


def _saved_elsewhere(env_id: str, variant: str, folder: Path | None) -> str:
    """'; ...' naming how to train ``ENV:variant`` when `gsolve presets save` put it in the default preset folder
    (~/.config/gsolve/presets) and training reads another ($GSOLVE_CONFIG_DIR names another folder), else ''."""
    saved = default_presets_dir()
    reading = folder or user_config_dir()
    if (reading is not None and saved.resolve() == reading.resolve()) or env_id not in list_env_files(saved):
        return ""
    try:
        if variant not in load_preset(env_id, saved).variants:
            return ""
    except ConfigError:
        return ""
    return (f"; your saved preset {env_id}:{variant} is in {saved}, which training does not read while "
            f"{CONFIG_DIR_ENV} names another folder: {CONFIG_DIR_ENV}={saved} gsolve train {env_id}:{variant}")


def _from_preset(env_id: str, variant: str | None, folder: Path | None) -> _Base | None:
    """The preset's variant; None when there is no preset file for ``env_id`` or (for an algorithm's
    name) no such variant in it. ConfigError for a variant name that is not an algorithm either. Without
    ``folder``: the user's file's variant when it has one, else ours (:func:`preset_folder`)."""
    if env_id not in list_env_files(folder):
        return None
    notes = []
    if variant is None:
        variants = list_variants(env_id, folder if folder is not None else preset_folder(env_id))
        variant = next((v for v, algo in variants.items() if algo == Algo.PPO), next(iter(variants)))
        notes.append(f"{env_id} has a preset: training its variant {variant!r} ({variants[variant]}); its variants: "
                     f"{', '.join(list_variants(env_id, folder))}")
    preset = load_preset(env_id, folder if folder is not None else preset_folder(env_id, variant))
    if variant not in preset.variants:
        if variant in Algo._value2member_map_:
            return None  # an algorithm the preset has no variant for: the Zoo, else the defaults
        variants = list_variants(env_id, folder)  # the environment's, ours and the user's
        names = list(dict.fromkeys([*variants, *(a.value for a in Algo)]))
        raise ConfigError(f"{preset.path}: no variant {variant!r}{did_you_mean(variant, names)} ({env_id}'s variants: "
                          f"{', '.join(variants)}; an algorithm's name trains without the preset: "
                          f"{', '.join(a.value for a in Algo)})"
                          f"{_saved_elsewhere(env_id, variant, folder)}")
    data = _resolve_variant_dict(preset, variant)
    check_keys(data, f"{preset.path} (variant {variant!r})")
    data = {**data, "env_id": preset.env_id, "variant": variant}
    notes += zoo_name_notes(preset, variant)  # what the preset wrote in the RL Zoo's / SB3's names
    return _Base(data, SettingSource.PRESET, f"{preset.path} (variant {variant!r})", notes)


def _from_zoo(env_id: str, algo: str) -> _Base | None:
    zoo = zoo_entry(env_id, algo, by_name=True)
    if zoo is None:
        return None
    if zoo.settings.get("atari_wrappers") and not applies_to("atari_wrappers", algo):
        takers = zoo_atari_algos()  # the algorithms whose atari entry gsolve trains
        how = f"gsolve train {env_id}:{takers[0]}" if takers else f"gsolve train {env_id}:ppo --set {ATARI_SETTINGS}"
        raise ConfigError(f"{zoo.label} trains {algo} on Atari frames with a CNN, which gsolve's {algo} cannot take "
                          f"(it learns on flat vectors): train {env_id} from pixels with "
                          f"{' or '.join(takers) or 'ppo'} instead: {how}")
    refused = untrainable(zoo)
    if refused and zoo.settings.get("atari_wrappers"):
        raise ConfigError(f"{zoo.label} cannot be trained as the Zoo trains it: {'; '.join(refused)}; train with "
                          f"gsolve's defaults instead: gsolve train {env_id}:{algo} --no-zoo --set {ATARI_SETTINGS}")
    if refused:
        raise ConfigError(f"{zoo.label} cannot be trained as the Zoo trains it: {'; '.join(refused)}; write a preset for "
                          f"{env_id} (docs/configs.md), or train with gsolve's defaults instead (--no-zoo; MCP: zoo=false)")
    data = {**zoo.settings, "env_id": env_id, "variant": algo}
    notes = list(zoo.notes)
    if "action_noise_std" in data:  # the Zoo's noise_std: in action units
        data["action_noise_std"] = _noise_in_half_ranges(data["action_noise_std"], env_id, notes)
    rollout = whole_rollout_batch(data, algo)
    if rollout is not None:
        notes.append(f"the Zoo's batch_size {data.get('batch_size', 64)} is larger than its rollout of {rollout} "
                     f"samples, so SB3 trains on the whole rollout at once: batch_size={rollout} here does the same")
        data["batch_size"] = rollout
    return _Base(data, SettingSource.ZOO, zoo.label, notes)


def _noise_in_half_ranges(std: float, env_id: str, notes: list[str]) -> float:
    """The Zoo's / SB3's noise_std (action units) as our action_noise_std (a fraction of the half-range)."""
    half = env_spaces(env_id).action_half_range
    if half is None or half <= 0:
        raise ConfigError(f"noise_std={std:g} is in action units and {env_id}'s actions have no single half-range to "
                          "divide it by: set action_noise_std (a fraction of each dimension's half-range) instead")
    if half != 1.0:
        notes.append(f"noise_std={std:g} is in action units: action_noise_std={std / half:g} ({env_id}'s actions "
                     f"have a half-range of {half:g}; {NOISE_UNITS})")
    return std / half


def _from_defaults(env_id: str, algo: str, spaces: EnvSpaces) -> _Base:
    check_algo_takes(algo, spaces)
    extra = defaults_for(algo, spaces.action_kind, spaces.observation_kind)
    tabular = " and Discrete observations (a linear Q-network: a table)" if is_tabular(algo, spaces.observation_kind) \
        else ""
    where = f"gsolve's defaults for {algo} with {spaces.action_kind} actions{tabular} (docs/configs.md)"
    return _Base({"algo": algo, **extra, "env_id": env_id, "variant": algo}, SettingSource.DEFAULT, where, [])


_MODULE_KEYS = ("env_package", "env_class")  # what makes gsolve import code: the command line or a preset only


def _with_env_modules(base: _Base) -> _Base:
    """The modules the environment needs: a preset's (imported now if this process trusts presets, else
    refused unless granted), else what this command's --env-package/--env-class registered it with."""
    data = base.data
    if base.source == SettingSource.PRESET and any(data.get(k) for k in _MODULE_KEYS):
        env_modules.require(data["env_id"], data.get("env_package") or (), data.get("env_class"), from_preset=True)
        return base
    found = {"env_package": env_modules.packages_registering(data["env_id"]),
             "env_class": env_modules.bound_class(data["env_id"])}
    return base._replace(data={**data, **{k: v for k, v in found.items() if v}})


def _base(env_id: str, variant: str | None, folder: Path | None, use_zoo: bool,
          env_kwargs: dict[str, Any] | None = None) -> _Base:
    """The chain's first match; ``env_kwargs`` (the run's --set) make the environment whose spaces choose the
    algorithm and its defaults (FrozenLake-v1 with map_name=8x8 has 64 states, not 16)."""
    preset = _from_preset(env_id, variant, folder)
    if preset is not None:
        return _with_env_modules(preset)
    check_registered(env_id)
    notes: list[str] = []
    spaces = env_spaces(env_id, env_kwargs)
    if variant is None:
        variant, why = choose_algo(spaces)
        notes.append(why)
    elif variant not in Algo._value2member_map_:
        names = [a.value for a in Algo]
        raise ConfigError(f"{env_id} has no preset, so {variant!r} must name an algorithm"
                          f"{did_you_mean(variant, names)} (algorithms: {', '.join(names)})"
                          f"{_saved_elsewhere(env_id, variant, folder)}")
    if spaces.observation_note:
        notes.append(spaces.observation_note)
    zoo = _from_zoo(env_id, variant) if use_zoo else None
    missing = zoo_missing_note(variant) if use_zoo else None
    notes += [missing] if missing else []
    base = zoo or _from_defaults(env_id, variant, spaces)
    return _with_env_modules(base._replace(notes=notes + base.notes))


def _with_schedule_defaults(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``--set learning_rate.end=0`` on a key the settings leave at its default: the default is the start."""
    model = CONFIG_MODELS.get(Algo(data["algo"])) if data.get("algo") in Algo._value2member_map_ else None
    out = dict(data)
    for key in SCHEDULE_KEYS:
        if isinstance(overrides.get(key), dict) and key not in out and model is not None and key in model.model_fields:
            out[key] = model.model_fields[key].get_default()
    return out


def _partial_schedule_notes(overrides: Mapping[str, Any], data: Mapping[str, Any]) -> list[str]:
    """A schedule override with start or end only keeps the other from the settings under it (the preset's, a
    constant's value for both): said, since a whole value replaces for every other key (docs/configs.md)."""
    notes = []
    for key in SCHEDULE_KEYS:
        given = overrides.get(key)
        if isinstance(given, dict) and set(given) < {"start", "end"} and isinstance(data.get(key), dict):
            kept = ({"start", "end"} - set(given)).pop()
            notes.append(f"--set {key}: {kept} {yaml_value(data[key][kept])} kept from the settings under the "
                         f"override ({key}={yaml_value(data[key])}); give both start and end to set the whole schedule")
    return notes


def resolve_with_origin(config_id: str, overrides: Mapping[str, Any] | list[str] | None = None,
                        folder: Path | None = None, *, use_zoo: bool = True) -> Resolved:
    """The validated config of ``ENV:VARIANT`` (or ``ENV:ALGO``, or a bare ``ENV``) through the chain (module
    docstring), with where each value came from. ConfigError names what is wrong and what would be right."""
    env_id, variant = split_config_id(config_id)
    if isinstance(overrides, list):
        overrides = parse_overrides(overrides)
    kwargs = (overrides or {}).get("env_kwargs")
    base = _base(env_id, variant, folder, use_zoo, kwargs if isinstance(kwargs, dict) else None)
    data = dict(base.data)
    sources = {k: base.source.value for k in data}
    defaults = user_defaults()  # output keys only (TensorBoard, MLflow, kept checkpoints); --set wins
    for key, value in defaults.items():
        if key not in data:
            data[key], sources[key] = value, SettingSource.USER_CONFIG.value
    zoo_names = in_our_names(overrides or {}, "--set")  # the RL Zoo's / SB3's names, read into ours
    if "noise_std" in (overrides or {}):
        zoo_names.values["action_noise_std"] = _noise_in_half_ranges(zoo_names.values["action_noise_std"], env_id,
                                                                     zoo_names.notes)
    overrides = zoo_names.values
    if overrides:
        check_keys(overrides, "--set override")
        for key in ("env_id", "variant"):
            if key in overrides:
                raise ConfigError(f"--set cannot change {key!r}; choose another ENV:VARIANT instead")
        for key in _MODULE_KEYS:
            if key in overrides:
                raise ConfigError(f"--set cannot change {key!r}: only the command line makes gsolve import code; pass "
                                  f"--{key.replace('_', '-')} instead (docs/security.md)")
        data = _apply_overrides(_with_schedule_defaults(data, overrides), overrides)
        sources.update({k: SettingSource.OVERRIDE.value for k in overrides})
        zoo_names.notes.extend(_partial_schedule_notes(overrides, data))
    where = base.where if not overrides else f"{data['env_id']}:{data['variant']} with --set"
    if defaults:
        where += " and the user config"
    cfg = _build(data, where, config_id, base.data.get("algo"))
    check_machine_limits(cfg, where)
    if base.source != SettingSource.PRESET and not cfg.atari_wrappers:  # its spaces are known by now (cached)
        check_images(cfg.algo.value, cfg.network, env_spaces(cfg.env_id, cfg.env_kwargs))
    notes = [*base.notes, *zoo_names.notes]
    skipping = frameskip_note(cfg.env_id, cfg.env_kwargs) if cfg.atari_wrappers else None
    notes += [skipping] if skipping else []
    if cfg.reward_threshold is None:
        threshold = spec_reward_threshold(cfg.env_id)
        if threshold is not None:
            _check_time_limit(cfg, threshold, where)
            cfg = cfg.model_copy(update={"reward_threshold": threshold})
            sources["reward_threshold"] = SettingSource.SPEC.value
        else:
            notes.append(NO_THRESHOLD.format(env_id=cfg.env_id))
    cfg = run_notes.budget_notes(cfg, "eval_freq" in sources, notes, where)
    notes += filter(None, [run_notes.luck_note(cfg)])
    sources = {k: sources.get(k, SettingSource.DEFAULT.value) for k in type(cfg).model_fields}
    return Resolved(cfg, ConfigOrigin(settings=base.source.value, where=base.where, sources=sources, notes=notes))


def _build(data: dict[str, Any], where: str, config_id: str, base_algo: Any) -> Config:
    """``build_config``; a config whose ``--set algo=X`` keeps base keys X does not have says why they are there."""
    try:
        return build_config(data, where)
    except ConfigError as exc:
        other = data.get("algo")
        if other == base_algo:
            raise
        # --set algo=X keeps the base config's keys (CartPole-v1:dqn with algo=qrdqn trains QR-DQN on DQN's
        # settings), which X may not have.
        env_id = config_id.split(":", 1)[0]
        raise ConfigError(f"{exc} (--set algo={other} keeps the other keys of {config_id}, a {base_algo} config; "
                          f"for {other}'s own settings name it in the config id: {env_id}:{other})") from None


def resolve_config(config_id: str, overrides: Mapping[str, Any] | list[str] | None = None,
                   folder: Path | None = None, *, use_zoo: bool = True) -> Config:
    """:func:`resolve_with_origin`'s config."""
    return resolve_with_origin(config_id, overrides, folder, use_zoo=use_zoo).config


def has_preset(config_id: str, folder: Path | None = None) -> bool:
    """Whether ``ENV:VARIANT`` is a variant of a preset file (in ``folder``, default ``config_dir()``)."""
    try:
        env_id, variant = split_config_id(config_id)
        return variant is not None and env_id in list_env_files(folder) and variant in list_variants(env_id, folder)
    except ConfigError:
        return False


def _algo_package_missing(cfg: Config) -> bool:
    """Whether the config's algorithm trains through a package this machine lacks (SAC, TD3: stable-baselines3;
    QR-DQN, TQC: sb3-contrib; both in the sb3 extra, which the core install leaves out). Looked up, not imported."""
    import importlib.util

    spec = ALGORITHMS[cfg.algo]
    return not spec.native and importlib.util.find_spec(spec.trainer.split(":")[0]) is None


def check_algo_installed(cfg: Config) -> None:
    """ConfigError, with the pip command and our own algorithms that would take the run, when the config's algorithm
    trains through a package this machine lacks."""
    if not _algo_package_missing(cfg):
        return
    spec = ALGORITHMS[cfg.algo]
    ours = [a.value for a, s in ALGORITHMS.items() if s.native and set(s.action_kinds) & set(spec.action_kinds)]
    raise ConfigError(f"{cfg.config_id}: {spec.title} trains through {spec.package}, which is not installed: "
                      f"{SB3_INSTALL}; or train one of gsolve's own algorithms ({', '.join(ours)}), e.g. "
                      f"gsolve train {cfg.env_id}:{ours[0]}")


def missing_extra(cfg: Config) -> str | None:
    """The pip command of the extra this install lacks for ``cfg`` (SB3's for SAC/TD3/QR-DQN/TQC; Box2D's or MuJoCo's,
    by making the environment once: env_spaces names them), else None. Atari configs are left to the trainer."""
    if _algo_package_missing(cfg):
        return SB3_INSTALL
    if cfg.atari_wrappers:
        return None
    try:
        env_spaces(cfg.env_id, cfg.env_kwargs)
    except ConfigError as exc:
        return next((c for c in (BOX2D_INSTALL, MUJOCO_INSTALL) if c in str(exc)), None)
    return None


def check_trainable(cfg: Config) -> None:
    """ConfigError, before any run folder exists, when this machine cannot create the environment (an
    unknown id, a missing extra such as box2d: named with its pip command) or the algorithm cannot take
    its spaces. Makes the environment once per id and kwargs. Atari configs are checked by the trainer
    (their ids exist only once the atari extra registers them)."""
    check_algo_installed(cfg)
    env_modules.require_config(cfg)  # its packages and class: granted by the command line, or refused
    if cfg.atari_wrappers:
        return
    spaces = env_spaces(cfg.env_id, cfg.env_kwargs)
    check_algo_takes(cfg.algo.value, spaces)
    check_images(cfg.algo.value, cfg.network, spaces)


def preset_config(config_id: str) -> Config | None:
    """The preset ``ENV:VARIANT`` resolved without overrides, or None when this machine has no
    such preset (a run from a user's own preset folder or from another machine, or one whose settings
    came from the RL Zoo or gsolve's defaults)."""
    if not has_preset(config_id):
        return None
    try:
        return resolve_config(config_id)
    except ConfigError:
        return None


def shipped_preset(env_id: str, algo: str, variant: str | None = None) -> tuple[str, Config] | None:
    """Our shipped preset for ``env_id`` trained with ``algo`` (read from PACKAGE_CONFIG_DIR even when
    a user's variant of the same name replaces it), as (config id, resolved config); None when we ship none.

    The variant is ``variant`` when ours has it with that algorithm, else the one named after the
    algorithm, else the first that trains with it (a file's variants are ordered)."""
    try:
        algos = list_variants(env_id, PACKAGE_CONFIG_DIR)
    except ConfigError:
        return None
    names = [v for v in (variant, algo, *algos) if v is not None and algos.get(v) == algo]
    if not names:
        return None
    config_id = f"{env_id}:{names[0]}"
    try:
        return config_id, resolve_config(config_id, folder=PACKAGE_CONFIG_DIR)
    except ConfigError:
        return None
