"""The RL Zoo's tuned entry for an environment and algorithm, read from the installed ``rl_zoo3``
(``rl_zoo3/hyperparams/<algo>.yml``) and mapped onto our config keys by the one table of the Zoo's
names (``zoo_names.ZOO_NAMES``, which ``--set``, presets and imports read through too), for two readers:

- ``values``: the numeric settings the diagnosis compares a run with (``_COMPARED``; a ``lin_``
  schedule as its initial value); every other entry key is listed in ``skipped``;
- ``settings``: the whole entry as a config to train (``gsolve train ENV:ALGO`` without a preset),
  with the SB3 defaults the Zoo trains with where the entry is silent (``ZOO_IMPLICIT``).
  What we cannot train as the Zoo does is ``refused`` with a sentence naming the key (``frame_stack``,
  ``env_wrapper``, a custom optimizer, a key we have no setting for; SB3's ``AtariWrapper`` with 4 stacked
  frames is ``atari_wrappers: true``, ``atari.py``); what changes nothing we can reproduce is in ``notes``.

An environment without an entry of its own takes another version's (``by_name``), and an ALE game the
Zoo's generic ``atari`` entry, as rl_zoo3 itself does.

The package is located without importing it (importing rl_zoo3 imports torch and Stable-Baselines3,
which the read side never does).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from gymnasium_solver.config.atari import ZOO_ATARI_ENTRY, is_ale_game, read_atari_wrapper
from gymnasium_solver.config.registry import CONFIG_KEYS, applies_to
from gymnasium_solver.config.zoo_names import Read, Unmappable, read_key
from gymnasium_solver.contract.algorithms import MAX_ENTROPY, ZOO

# Our keys whose Zoo value the diagnosis compares a run's with (numbers; a schedule by its start).
_COMPARED = frozenset({"gamma", "gae_lambda", "learning_rate", "n_steps", "batch_size", "n_epochs", "ent_coef",
                       "clip_range", "n_envs", "max_grad_norm", "vf_coef", "max_env_steps",
                       "buffer_size", "learning_starts", "target_update_interval", "train_freq", "gradient_steps"})
# Our algorithms the Zoo has a hyperparams file for (same names; algorithms.py's ``zoo``).
ZOO_ALGOS = frozenset(a.value for a in ZOO)
MAX_ZOO_FILE_BYTES = 1 << 20  # the Zoo's largest hyperparams file is ~40 kB

# What the Zoo trains with where an entry says nothing (its n_envs default, SB3's constructor and policy
# defaults) and ours differ: a Zoo entry is those defaults plus the entry.
_OFF_POLICY_NET = {"activation": "relu"}
ZOO_IMPLICIT: dict[str, dict[str, Any]] = {
    "ppo": {"n_envs": 1, "n_steps": 2048},
    "a2c": {"n_envs": 1},
    "dqn": {"n_envs": 1, **_OFF_POLICY_NET},
    "qrdqn": {"n_envs": 1, **_OFF_POLICY_NET},
    "sac": {"n_envs": 1, "hidden_sizes": [256, 256], **_OFF_POLICY_NET},
    "tqc": {"n_envs": 1, "hidden_sizes": [256, 256], **_OFF_POLICY_NET},
    "td3": {"n_envs": 1, "hidden_sizes": [400, 300], **_OFF_POLICY_NET},
}


class ZooEntry(NamedTuple):
    env_id: str  # the Zoo's entry name (another version of the environment when matched by name)
    algo: str
    path: Path
    values: dict[str, Any]  # our key -> the Zoo's number (a lin_ schedule as its initial value): _COMPARED
    skipped: list[str]  # the entry's keys that have no counterpart in ``values``
    settings: dict[str, Any] = {}  # the entry as our config keys to train, with ZOO_IMPLICIT where it is silent
    refused: list[str] = []  # one sentence per key we cannot train with
    notes: list[str] = []  # keys read but not reproduced, and why that is harmless (or not)

    @property
    def label(self) -> str:
        return f"the RL Zoo's {self.env_id} entry (rl_zoo3 hyperparams/{self.path.name})"

    @property
    def trained_values(self) -> dict[str, Any]:
        """``values`` as gsolve trains the entry (what `gsolve config` resolves): a ``policy_kwargs`` log_std_init
        too, and a PPO batch larger than the rollout as the rollout (SB3 trains on the whole rollout then), so a
        run of the entry is never held against a batch it could not take."""
        values = dict(self.values)
        log_std = self.settings.get("log_std_init")
        if isinstance(log_std, int | float) and not isinstance(log_std, bool):
            values["log_std_init"] = log_std
        rollout = whole_rollout_batch(self.settings, self.algo)
        if rollout is not None and "batch_size" in values:
            values["batch_size"] = rollout
        return values


def whole_rollout_batch(data: Mapping[str, Any], algo: str) -> int | None:
    """The rollout size when a Zoo PPO entry's batch_size is larger than its rollout (SB3 then trains on the whole
    rollout as one minibatch; our config refuses a batch larger than it, so the chain takes the rollout), else None."""
    rollout = int(data.get("n_envs", 1)) * int(data.get("n_steps", 1))
    return rollout if algo == "ppo" and int(data.get("batch_size", 64)) > rollout else None


def zoo_hyperparams_dir() -> Path | None:
    """rl_zoo3's hyperparams folder when the package is installed, else None (not imported)."""
    try:
        spec = importlib.util.find_spec("rl_zoo3")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    folder = Path(locations[0]) / "hyperparams" if locations else None
    return folder if folder is not None and folder.is_dir() else None


def zoo_missing_note(algo: str) -> str | None:
    """What a run of ``algo`` misses without rl_zoo3 (its tuned entries), or None when it is installed or does not
    tune ``algo``."""
    if algo not in ZOO_ALGOS or zoo_hyperparams_dir() is not None:
        return None
    return ("rl_zoo3 is not installed, so the RL Zoo's tuned settings were not looked up: pip install "
            "\"gymnasium-solver[zoo]\" to train with its entry where it has one")


@lru_cache(maxsize=16)
def _table(path: str, mtime_ns: int) -> dict[str, Any]:
    p = Path(path)
    if p.stat().st_size > MAX_ZOO_FILE_BYTES:
        return {}
    raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    return raw if isinstance(raw, dict) else {}


_VERSION = re.compile(r"^(?P<name>.+)-v(?P<version>\d+)$")


def _by_name(table: dict[str, Any], env_id: str) -> str | None:
    """The entry of the newest other version of ``env_id`` (InvertedPendulum-v4 for -v5), or None."""
    m = _VERSION.match(env_id)
    if m is None:
        return None
    versions = [(int(v.group("version")), k) for k in table if isinstance(k, str) and (v := _VERSION.match(k))
                and v.group("name") == m.group("name")]
    return max(versions)[1] if versions else None


def _entry_name(table: dict[str, Any], env_id: str, by_name: bool) -> str | None:
    """The entry the chain trains ``env_id`` with: its own; with ``by_name``, else another version's, else (an
    ALE game) the Zoo's ``atari`` entry, as rl_zoo3 does for any Atari game without its own."""
    if env_id in table or not by_name:
        return env_id
    other = _by_name(table, env_id)
    if other is not None:
        return other
    return ZOO_ATARI_ENTRY if isinstance(table.get(ZOO_ATARI_ENTRY), dict) and is_ale_game(env_id) else None


def zoo_entry(env_id: str, algo: str, *, by_name: bool = False) -> ZooEntry | None:
    """The Zoo's entry for ``env_id`` trained with ``algo``, mapped onto our keys; None when rl_zoo3 is
    not installed, has no file for the algorithm or no entry for the environment, or cannot be read.
    ``by_name``: the entry as the settings chain finds it: without an entry for ``env_id``, the newest other
    version of the same environment (the Zoo tunes some environments only at an older version), else for an ALE
    game the ``atari`` entry (the returned ``env_id`` says which)."""
    folder = zoo_hyperparams_dir()
    if folder is None or algo not in ZOO_ALGOS:
        return None
    path = folder / f"{algo}.yml"
    try:
        table = _table(str(path), path.stat().st_mtime_ns)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    name = _entry_name(table, env_id, by_name)
    entry = table.get(name) if name is not None else None
    if not isinstance(entry, dict) or name is None:
        return None
    values, skipped = _comparable(entry)
    settings, refused, notes = _settings(algo, entry)
    if name == ZOO_ATARI_ENTRY and name != env_id:
        notes.insert(0, f"the RL Zoo has no {env_id} entry for {algo}; this is its {name} entry, which it trains "
                        "every ALE game without its own with")
    elif name != env_id:
        notes.insert(0, f"the RL Zoo has no {env_id} entry for {algo}; this is its {name} entry (another version "
                        "of the same environment, matched by name)")
    return ZooEntry(name, algo, path, values, sorted(skipped), settings, refused, notes)


def untrainable(zoo: ZooEntry) -> list[str]:
    """Why gsolve cannot train ``zoo`` as the Zoo does, one "key: value (why)" each; [] when it can."""
    refused = list(zoo.refused)
    for key, value in zoo.settings.items():
        if key != "algo" and not applies_to(key, zoo.algo):
            refused.append(f"{key}={value} (not used by {zoo.algo} in gsolve)")
    return refused


def _read(key: str, raw: Any) -> Read | None:
    """An entry's ``key: raw`` through the table of the Zoo's names; one of our own names as it is; None for
    a key we have no setting for. Unmappable says why not."""
    got = read_key(key, raw)
    if got is not None:
        return got
    return Read({key: raw}) if key in CONFIG_KEYS else None


def _comparable(entry: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(values, skipped): the entry's numeric settings the diagnosis compares, under our keys."""
    values: dict[str, Any] = {}
    skipped: list[str] = []
    for key, raw in entry.items():
        try:
            got = _read(str(key), raw)
        except Unmappable:
            got = None
        ours, value = next(iter(got.values.items())) if got is not None and len(got.values) == 1 else ("", None)
        if isinstance(value, dict) and set(value) == {"start", "end"}:
            value = value["start"]
        if ours in _COMPARED and isinstance(value, int | float) and not isinstance(value, bool):
            values[ours] = value
        else:
            skipped.append(str(key))
    return values, sorted(skipped)


# ---------------------------------------------------------------------------------------------
# The whole entry as a config to train
# ---------------------------------------------------------------------------------------------
def _refusal(key: str, raw: Any, why: str) -> str:
    shown = raw if len(repr(raw)) <= 80 else repr(raw)[:77] + "..."
    return f"{key}: {shown} ({why})"


_NO_SETTING = ("gsolve has no setting for it: environment wrappers, frame stacking, callbacks, replay-buffer classes "
               "and action-noise processes are the Zoo's own")


def _one_key(algo: str, key: str, raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    try:
        got = _read(key, raw)
    except Unmappable as exc:
        refused.append(_refusal(key, raw, str(exc)))
        return
    if got is None:
        refused.append(_refusal(key, raw, _NO_SETTING))
        return
    out.update(got.values)
    if key == "ent_coef" and algo in MAX_ENTROPY and "ent_coef_auto" not in got.values:
        out["ent_coef_auto"] = False  # SB3's SAC/TQC: a number is a fixed coefficient, "auto" a learned one
    if got.caveat:
        notes.append(got.note)


def _settings(algo: str, entry: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """(settings, refused, notes): the entry as our config keys, with ZOO_IMPLICIT where it is silent."""
    out: dict[str, Any] = {"algo": algo}
    atari = read_atari_wrapper(entry)  # env_wrapper: AtariWrapper + frame_stack, read together
    refused: list[str] = list(atari.refused) if atari is not None else []
    notes: list[str] = list(atari.notes) if atari is not None else []
    out.update(atari.settings if atari is not None else {})
    for key, raw in entry.items():
        if atari is None or key not in ("env_wrapper", "frame_stack"):
            _one_key(algo, str(key), raw, out, refused, notes)
    implicit = {k: v for k, v in ZOO_IMPLICIT.get(algo, {}).items() if k not in out}
    if implicit:
        notes.append("where the entry is silent the Zoo trains with SB3's defaults, which are taken too: "
                     + ", ".join(f"{k}={v}" for k, v in implicit.items()))
    return {**implicit, **out}, refused, notes


@lru_cache(maxsize=4)
def _atari_algos(folder: Path, mtimes: tuple[int, ...]) -> tuple[str, ...]:  # mtimes: a changed file is re-read
    entries = [zoo_entry(ZOO_ATARI_ENTRY, algo) for algo in sorted(ZOO_ALGOS)]
    return tuple(e.algo for e in entries if e is not None and not untrainable(e))


def zoo_atari_algos() -> list[str]:
    """The algorithms whose RL Zoo ``atari`` entry (its settings for any ALE game without its own) gsolve trains
    as the Zoo does ([] without rl_zoo3): an entry gsolve refuses is not offered."""
    folder = zoo_hyperparams_dir()
    if folder is None:
        return []
    files = [folder / f"{algo}.yml" for algo in sorted(ZOO_ALGOS)]
    return list(_atari_algos(folder, tuple(f.stat().st_mtime_ns if f.is_file() else 0 for f in files)))


def zoo_algos_by_env() -> dict[str, list[str]]:
    """Environment id -> the algorithms of ours the installed RL Zoo has an entry for ({} without rl_zoo3); the
    generic ``atari`` entry is zoo_atari_algos'."""
    folder = zoo_hyperparams_dir()
    out: dict[str, list[str]] = {}
    if folder is None:
        return out
    for algo in sorted(ZOO_ALGOS):
        path = folder / f"{algo}.yml"
        try:
            table = _table(str(path), path.stat().st_mtime_ns)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        for env_id, entry in table.items():
            if isinstance(env_id, str) and isinstance(entry, dict) and env_id != ZOO_ATARI_ENTRY:
                out.setdefault(env_id, []).append(algo)
    return out
