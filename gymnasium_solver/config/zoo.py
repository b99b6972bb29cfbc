"""The RL Zoo's tuned entry for an environment and algorithm, read from the installed ``rl_zoo3``
(``rl_zoo3/hyperparams/<algo>.yml``) and mapped onto our config keys.

Only keys whose meaning is the same in both are mapped (``ZOO_KEYS``); everything else in the entry
(``normalize``, ``policy_kwargs``, schedules other than ``lin_``, ...) is listed as skipped, never
translated by guesswork. The package is located without importing it (importing rl_zoo3 imports
torch and Stable-Baselines3, which the read side never does).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

# The Zoo's name -> ours, for keys that mean the same in both (SB3's names, which ours follow).
ZOO_KEYS: dict[str, str] = {
    "gamma": "gamma", "gae_lambda": "gae_lambda", "learning_rate": "learning_rate", "n_steps": "n_steps",
    "batch_size": "batch_size", "n_epochs": "n_epochs", "ent_coef": "ent_coef", "clip_range": "clip_range",
    "n_envs": "n_envs", "max_grad_norm": "max_grad_norm", "vf_coef": "vf_coef", "n_timesteps": "max_env_steps",
}
# Our algorithms the Zoo has a hyperparams file for (same names); REINFORCE has none.
ZOO_ALGOS = frozenset({"ppo", "a2c", "dqn", "qrdqn", "sac", "td3", "tqc"})
MAX_ZOO_FILE_BYTES = 1 << 20  # the Zoo's largest hyperparams file is ~40 kB


class ZooEntry(NamedTuple):
    env_id: str
    algo: str
    path: Path
    values: dict[str, Any]  # our key -> the Zoo's value (a lin_ schedule as its initial value)
    skipped: list[str]  # the entry's keys that have no counterpart here

    @property
    def label(self) -> str:
        return f"the RL Zoo's {self.env_id} entry (rl_zoo3 hyperparams/{self.path.name})"


def zoo_hyperparams_dir() -> Path | None:
    """rl_zoo3's hyperparams folder when the package is installed, else None (not imported)."""
    try:
        spec = importlib.util.find_spec("rl_zoo3")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    folder = Path(locations[0]) / "hyperparams" if locations else None
    return folder if folder is not None and folder.is_dir() else None


def _value(key: str, raw: Any) -> Any:
    """The Zoo's value as ours, or None when it cannot be mapped (a schedule we cannot read)."""
    if isinstance(raw, str):
        if raw.startswith("lin_"):  # linear from X to 0: its initial value is X
            raw = raw[4:]
        try:
            raw = float(raw)
        except ValueError:
            return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    if key in ("n_steps", "batch_size", "n_epochs", "n_envs", "n_timesteps"):
        return int(raw) if float(raw).is_integer() else None
    return float(raw)


@lru_cache(maxsize=16)
def _table(path: str, mtime_ns: int) -> dict[str, Any]:
    p = Path(path)
    if p.stat().st_size > MAX_ZOO_FILE_BYTES:
        return {}
    raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    return raw if isinstance(raw, dict) else {}


def zoo_entry(env_id: str, algo: str) -> ZooEntry | None:
    """The Zoo's entry for ``env_id`` trained with ``algo``, mapped onto our keys; None when rl_zoo3 is
    not installed, has no file for the algorithm or no entry for the environment, or cannot be read."""
    folder = zoo_hyperparams_dir()
    if folder is None or algo not in ZOO_ALGOS:
        return None
    path = folder / f"{algo}.yml"
    try:
        entry = _table(str(path), path.stat().st_mtime_ns).get(env_id)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(entry, dict):
        return None
    values: dict[str, Any] = {}
    skipped: list[str] = []
    for key, raw in entry.items():
        ours = ZOO_KEYS.get(str(key))
        value = None if ours is None else _value(str(key), raw)
        if ours is None or value is None:
            skipped.append(str(key))
        else:
            values[ours] = value
    return ZooEntry(env_id, algo, path, values, sorted(skipped))
