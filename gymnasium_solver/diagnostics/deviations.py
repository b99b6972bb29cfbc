"""Every config key a run differs from a config that works in, sized in the terms that matter.

A run is held against, in this order (the first that names a key wins; one deviation per key):

1. the preset it came from (ours, or the user's own from $GSOLVE_CONFIG_DIR): only the
   keys the run's own ``--set`` overrides changed (``changed_by_run``); the rest is the preset's drift;
2. when the run's preset is the user's own ($GSOLVE_CONFIG_DIR): our shipped preset for the
   same environment and algorithm, read from the package, every key that differs;
3. then the RL Zoo's tuned entry for the environment and algorithm (installed rl_zoo3, ``config/zoo.py``),
   for the keys no shipped preset settles (ours sets every key, so in practice: where we ship none).

A run whose settings came from the RL Zoo or gsolve's defaults (an environment with no preset: its
run.json's ``config_origin``) is held against the Zoo's entry, as in 3, and then

4. against gsolve's defaults for its algorithm, action space and observations (``config.chain.defaults_for`` over the
   model's defaults), for the keys its own ``--set`` overrides changed that no Zoo entry sets, except
   those that say where and how long it runs (budget, threshold, evaluation, ...). The defaults are
   not tuned for the environment; they are what the run would have trained with, and ``gsolve fix``
   tests a revert by running it.

The Zoo's entry sets more than the numbers the diagnosis sizes (``zoo._COMPARED``): its on/off switches
(``normalize``, gSDE), network and exploration schedule. A run that differs from the entry there gets those keys
as ``unranked`` deviations: listed, never evidence for a finding (the rules do not see them), and tried last by
``gsolve fix``, which decides by running whether reverting one solves.

A run of our presets from a
machine that lacks its variant, and an imported run, are held against nothing here (their configs were
not made from ours; docs/diagnostics.md, Limitations).

A user's preset is theirs, so its values are not faults by themselves; the tuned configs (ours, the
Zoo's) solve, so a key that differs from one is a candidate, exactly as a change to the run's preset.
Pure functions over plain data, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from gymnasium_solver.config.chain import TABULAR, defaults_for, preset_config, shipped_preset
from gymnasium_solver.config.presets import is_shipped_variant, preset_differences, user_config_dir
from gymnasium_solver.config.registry import CONFIG_MODELS, JUDGING_KEYS, RECORDING_KEYS, applies_to
from gymnasium_solver.config.spaces import observation_kind_of
from gymnasium_solver.config.zoo import zoo_entry
from gymnasium_solver.contract.run_folder import M, RunInfo
from gymnasium_solver.diagnostics.models import Deviation, DeviationSource
from gymnasium_solver.diagnostics.references import (
    ReferenceSet,
    action_half_range,
    changed_by_run,
    episode_length,
    horizon,
    std_at,
)
from gymnasium_solver.diagnostics.series import RunData, median
from gymnasium_solver.diagnostics.suggest import change, fmt, possessive, start_value, yaml_value


class Comparison(NamedTuple):
    """One config the run is held against."""

    source: DeviationSource
    ref_id: str  # ENV:VARIANT, or the Zoo entry's name
    reference: str  # its name in a sentence: "the preset", "our shipped preset Acrobot-v1:ppo"
    described: str  # what References.compared_with says of it
    values: dict[str, Any]  # key -> the reference's value
    only: set[str] | None  # count only these keys (the run's own overrides); None: every difference
    context: Mapping[str, Any] | None = None  # the reference's whole config, where ``values`` is only what is compared

    @property
    def owner(self) -> str:
        return possessive(self.reference)


class DeviationReport(NamedTuple):
    preset: str | None  # the run's own preset id, when this machine has it
    deviations: list[Deviation]  # largest first, the run's own changes before the outside references'
    drift: list[str]  # keys the run's preset changed since the run, sorted
    compared_with: list[str]  # every config the run was held against, for the reader
    unranked: list[Deviation] = []  # the Zoo entry's other settings this run differs in (module docstring)


def _ratio(value: Any, preset: Any) -> float | None:
    try:
        a, b = start_value(value), start_value(preset)
    except (TypeError, ValueError):
        return None
    return a / b if b else None


def narrowest(hidden_sizes: Any) -> int:
    """The narrowest hidden layer's units; 0 for ``[]``, no hidden layer (the observation goes straight to the
    heads: a linear network)."""
    return min((int(h) for h in hidden_sizes), default=0)


def _direction(key: str, value: Any, preset: Any) -> str:
    if value is None:
        return "enable"
    if preset is None:
        return "disable"
    if isinstance(preset, bool):
        return "enable" if preset else "disable"
    if key == "hidden_sizes":
        return "increase" if narrowest(preset) > narrowest(value) else "decrease"
    try:
        return "increase" if start_value(value) < start_value(preset) else "decrease"
    except (TypeError, ValueError):
        return "increase" if str(value) < str(preset) else "decrease"


def _std_size(value: float, preset: float, config: Mapping[str, Any], ref: Mapping[str, Any], data: RunData,
              info: RunInfo, owner: str) -> str:
    """log_std_init as the std it starts at: the run's logged first action std when there is one (with
    gSDE the std is exp(log_std_init) times the features' scale, so exp alone is wrong), the
    reference's as exp(log_std_init) without gSDE, or scaled like the run's when both use it."""
    h = action_half_range(info)
    rng = f" (action half-range {fmt(h)})" if h else ""
    _, y = data.finite(M.ACTION_STD)
    mine = f"initial action std {fmt(float(y[0]))} (logged)" if len(y) else f"initial {std_at(value, config, data)}"
    if not ref.get("use_sde"):
        theirs = f"{owner} {fmt(math.exp(preset))} (log_std_init={preset})"
    elif config.get("use_sde") and len(y):
        theirs = f"{owner} log_std_init={preset}, {std_at(preset, config, data)}"
    else:
        theirs = f"{owner} log_std_init={preset} (gSDE: its std is exp(log_std_init) times the features' scale)"
    return f"{mine} vs {theirs}{rng}"


def size(key: str, value: Any, preset: Any, config: Mapping[str, Any], ref: Mapping[str, Any], data: RunData,
         info: RunInfo, refs: ReferenceSet, owner: str = "the preset's") -> str:
    """The difference in the terms that matter for this key; ``owner`` names the reference ("the preset's")."""
    if key == "gamma":
        ep = episode_length(data)
        tail = f"; episodes last ~{fmt(ep)} steps" if ep else ""
        return f"effective horizon 1/(1-gamma) = {fmt(horizon(value))} steps vs {owner} {fmt(horizon(preset))}{tail}"
    if key == "gae_lambda":
        g = float(config.get("gamma", 0.99))
        return (f"GAE credit horizon 1/(1-gamma*lambda) ~ {fmt(horizon(g * value))} steps vs {owner} "
                f"{fmt(horizon(g * preset))}")
    if key == "hidden_sizes":
        return f"narrowest layer {narrowest(value)} units vs {owner} {narrowest(preset)} ({value} vs {preset})"
    if key == "log_std_init":
        return _std_size(float(value), float(preset), config, ref, data, info, owner)
    if key == "max_grad_norm" and value is not None and preset is not None:
        _, grads = data.finite(M.GRAD_NORM)
        seen = f"; observed pre-clip gradient norm median {fmt(median(grads))} = {fmt(median(grads) / value)}x the clip" \
            if len(grads) else ""
        return f"clip at {fmt(value)} vs {owner} {fmt(preset)} ({fmt(value / preset)}x){seen}"
    if key == "max_env_steps":
        s = refs.steps_to_solve
        need = f"; solved references needed {s[0]:,}-{s[1]:,} env steps" if s else ""
        return f"budget {value:,} vs {owner} {preset:,}{need}"
    r = _ratio(value, preset)
    if r is not None and math.isfinite(r) and not isinstance(value, bool):
        return f"{fmt(r)}x {owner} {fmt(start_value(preset))}"
    return f"{value} instead of {owner} {preset}"


# Keys of a run's own overrides that say where and how long it runs, not how it learns: gsolve's defaults say
# nothing about them (a budget and a threshold are the environment's; the rest does not change what is learned).
_NOT_SET_BY_DEFAULTS = frozenset({"seed", "env_kwargs", "max_env_steps", "reward_threshold", "vectorization",
                                  "device", "eval_freq", "eval_episodes", "checkpoint_freq", "last_checkpoint_seconds",
                                  "torch_threads", "atari_wrappers", *RECORDING_KEYS, *JUDGING_KEYS})


def _defaults_comparison(info: RunInfo, algo: str, zoo_keys: set[str]) -> Comparison | None:
    """gsolve's defaults for the run's algorithm and action space, for the keys its overrides changed that the
    Zoo's entry does not set (module docstring, 4); None when there are none or the algorithm is unknown."""
    model = next((m for a, m in CONFIG_MODELS.items() if a.value == algo), None)
    kind = info.action_space.kind if info.action_space is not None else None
    own = changed_by_run(info) or set()
    if model is None or kind is None:
        return None
    whole = {k: f.get_default(call_default_factory=True) for k, f in model.model_fields.items() if not f.is_required()}
    whole |= defaults_for(algo, kind, (info.observation_kind or observation_kind_of(info.env_id)) if algo in TABULAR else None)
    keys = sorted(k for k in own - zoo_keys - _NOT_SET_BY_DEFAULTS if k in whole)
    if not keys:
        return None
    return Comparison("default", "gsolve's defaults", "gsolve's defaults",
                      f"gsolve's defaults for {algo} with {kind} actions (docs/configs.md; not tuned for "
                      f"{info.env_id}), for the keys this run's --set changed: {', '.join(keys)}",
                      {k: whole[k] for k in keys}, None, whole)


def _comparisons(config_id: str, info: RunInfo, algo: str) -> list[Comparison]:
    """The configs to hold the run against, in order (module docstring)."""
    out: list[Comparison] = []
    own = preset_config(config_id)
    # ours: the run's config id is a variant of our presets (a user's variant of the same name replaces ours); a
    # config id this machine has no preset for counts as ours unless a user's preset folder is set, as it always did.
    ours = is_shipped_variant(config_id) if own is not None else user_config_dir() is None
    if own is not None:
        source: DeviationSource = "preset" if ours else "user_preset"
        name = "the preset" if ours else "your preset"
        out.append(Comparison(source, config_id, name, f"{name} {config_id} (the keys this run's --set changed)",
                              own.model_dump(mode="json"), changed_by_run(info)))
    # Imported runs have no preset here and their changes apply in another framework's config. A run of our
    # preset is held against it only (ours differ from the Zoo's on purpose); one whose settings came from the
    # Zoo or gsolve's defaults (no preset: nothing of ours to revert to) goes on to the Zoo's entry (issue 22).
    outside = info.config_origin is not None and info.config_origin.settings in ("zoo", "default")
    if info.source is not None or (ours and not outside):
        return out
    shipped = shipped_preset(info.env_id, algo, info.variant)
    if shipped is not None:
        sid, cfg = shipped
        out.append(Comparison("shipped_preset", sid, f"our shipped preset {sid}",
                              f"our shipped preset {sid} (gymnasium_solver/presets/environments/, every key)", cfg.model_dump(mode="json"),
                              None))
    zoo = zoo_entry(info.env_id, algo, by_name=True)  # as the settings chain found it (another version's, by name)
    if zoo is not None:
        values = zoo.trained_values
        skipped = [k for k in zoo.skipped if k != "policy_kwargs" or "log_std_init" not in values]
        not_compared = f"; not comparable: {', '.join(skipped)}" if skipped else ""
        out.append(Comparison("rl_zoo", f"rl_zoo3 hyperparams/{zoo.path.name}, {zoo.env_id}", "the RL Zoo",
                              f"{zoo.label}: {', '.join(sorted(values))}{not_compared}", values, None, zoo.settings))
    defaults = _defaults_comparison(info, algo, set(zoo.settings) if zoo is not None else set()) if outside else None
    return out + ([defaults] if defaults is not None else [])


def _differences(config: Mapping[str, Any], comp: Comparison, algo: str, action_kind: str | None,
                 ) -> dict[str, tuple[Any, Any]]:
    if comp.source != "rl_zoo":
        return preset_differences(config, comp.values)
    out = {}
    for key, theirs in comp.values.items():
        if key not in config or not applies_to(key, algo, action_kind):
            continue
        try:
            same = start_value(config[key]) == float(theirs)  # a schedule starts where the Zoo's lin_ does
        except (TypeError, ValueError):
            continue
        if not same:
            out[key] = (config[key], theirs)
    return out


def _magnitude(d: Deviation, config: Mapping[str, Any]) -> float:
    """How far the run is from the reference, in the terms its size states: a log ratio, of the
    effective horizons for a discount (gamma 0.99 -> 1.0 is a 1% ratio but an infinite horizon)."""
    try:
        if d.key in ("gamma", "gae_lambda"):
            g = float(config.get("gamma", 0.99)) if d.key == "gae_lambda" else 1.0
            a, b = horizon(g * float(d.value)), horizon(g * float(d.preset))
            return 10.0 if math.isinf(a) != math.isinf(b) else abs(math.log(a / b)) if math.isfinite(a) else 0.0
    except (TypeError, ValueError, ZeroDivisionError):
        return 0.0
    r = d.ratio
    return abs(math.log(r)) if r and r > 0 and math.isfinite(r) else 0.0


def _unranked(config: Mapping[str, Any], comps: list[Comparison], algo: str, action_kind: str | None,
              taken: set[str]) -> list[Deviation]:
    """The keys the Zoo's entry sets but the diagnosis does not compare (``values`` holds only the sized numbers)
    that this run has changed, each with its revert; ``taken``: keys a deviation or a shipped preset already
    covers."""
    zoo = next((c for c in comps if c.source == "rl_zoo"), None)
    if zoo is None or zoo.context is None:
        return []
    out = []
    for key, (value, theirs) in preset_differences(config, zoo.context).items():
        if key in taken or key in zoo.values or key in _NOT_SET_BY_DEFAULTS or key == "algo" \
                or not applies_to(key, algo, action_kind):
            continue
        out.append(Deviation(key=key, value=value, preset=theirs, size=f"{yaml_value(value)} instead of "
                             f"{zoo.owner} {yaml_value(theirs)}", source="rl_zoo", reference=zoo.reference,
                             revert=change(key, value, theirs, _direction(key, value, theirs),
                                           f"{zoo.owner} value ({zoo.ref_id})")))
    return out


_SOURCE_RANK = {"preset": 0, "user_preset": 0, "shipped_preset": 1, "rl_zoo": 2, "default": 3}


def deviations(config: Mapping[str, Any], config_id: str, info: RunInfo, data: RunData,
               refs: ReferenceSet) -> DeviationReport:
    """Every key the run changed from the configs it is held against (module docstring), sized."""
    algo = str(config.get("algo", info.algo))
    kind = info.action_space.kind if info.action_space is not None else None
    comps = _comparisons(config_id, info, algo)
    out: list[Deviation] = []
    drift: list[str] = []
    settled: set[str] = set()  # keys a tuned outside reference has already ruled on
    zoo = next((c for c in comps if c.source == "rl_zoo"), None)
    for comp in comps:
        diffs = _differences(config, comp, algo, kind)
        for key, (value, pre) in diffs.items():
            if key in settled or any(d.key == key for d in out):
                continue
            if comp.only is not None and key not in comp.only:
                drift.append(key)
                continue
            text = size(key, value, pre, config, comp.context or comp.values, data, info, refs, comp.owner)
            if zoo is not None and comp is not zoo and key in zoo.values and zoo.values[key] != pre:
                text += f"; {zoo.owner} {fmt(start_value(zoo.values[key]))}"
            named = "" if comp.ref_id in comp.reference else f" ({comp.ref_id})"
            revert = change(key, value, pre, _direction(key, value, pre), f"{comp.owner} value{named}")
            out.append(Deviation(key=key, value=value, preset=pre, size=text, ratio=_ratio(value, pre), revert=revert,
                                 source=comp.source, reference=comp.reference))
        if comp.source == "shipped_preset":
            settled |= {k for k in comp.values if k in config}
    out.sort(key=lambda d: (_SOURCE_RANK[d.source], -_magnitude(d, config)))
    own = comps[0].ref_id if comps and comps[0].source in ("preset", "user_preset") else None
    unranked = _unranked(config, comps, algo, kind, settled | {d.key for d in out} | set(drift))
    return DeviationReport(own, out, sorted(drift), [c.described for c in comps], unranked)
