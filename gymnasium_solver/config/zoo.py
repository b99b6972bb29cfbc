"""The RL Zoo's tuned entry for an environment and algorithm, read from the installed ``rl_zoo3``
(``rl_zoo3/hyperparams/<algo>.yml``) and mapped onto our config keys, once, for both readers:

- ``values``: the keys whose meaning is the same in both (``ZOO_KEYS``; a ``lin_`` schedule as its
  initial value), which the diagnosis compares a run with; everything else is listed in ``skipped``;
- ``settings``: the whole entry as a config to train (``gsolve train ENV:ALGO`` without a preset):
  ``n_timesteps``, ``lin_`` schedules, ``normalize``, ``policy_kwargs`` (read as data with ``ast``, never
  evaluated) and the SB3 defaults the Zoo trains with where the entry is silent (``ZOO_IMPLICIT``).
  What we cannot train as the Zoo does is ``refused`` with a sentence naming the key (``frame_stack``,
  ``env_wrapper``, a custom optimizer, ...); what changes nothing we can reproduce is in ``notes``.

The package is located without importing it (importing rl_zoo3 imports torch and Stable-Baselines3,
which the read side never does).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from gymnasium_solver.algorithms import MAX_ENTROPY, ZOO

# The Zoo's name -> ours, for keys that mean the same in both (SB3's names, which ours follow).
ZOO_KEYS: dict[str, str] = {
    "gamma": "gamma", "gae_lambda": "gae_lambda", "learning_rate": "learning_rate", "n_steps": "n_steps",
    "batch_size": "batch_size", "n_epochs": "n_epochs", "ent_coef": "ent_coef", "clip_range": "clip_range",
    "n_envs": "n_envs", "max_grad_norm": "max_grad_norm", "vf_coef": "vf_coef", "n_timesteps": "max_env_steps",
}
# Further SB3 constructor arguments with the same name and meaning here, mapped when training.
_SAME_NAME = ("target_kl", "clip_range_vf", "use_sde", "sde_sample_freq", "buffer_size", "learning_starts",
              "gradient_steps", "tau", "target_update_interval", "exploration_fraction", "exploration_initial_eps",
              "exploration_final_eps", "policy_delay", "target_policy_noise", "target_noise_clip",
              "top_quantiles_to_drop_per_net", "target_entropy")
_SCHEDULES = ("learning_rate", "clip_range", "ent_coef")
_INTEGERS = ("n_steps", "batch_size", "n_epochs", "n_envs", "n_timesteps", "buffer_size", "learning_starts",
             "gradient_steps", "target_update_interval", "policy_delay", "sde_sample_freq", "train_freq",
             "top_quantiles_to_drop_per_net", "n_quantiles")
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

# Entry keys that change nothing we can reproduce or that only concern SB3's bookkeeping: noted, not refused.
_NOTED = {
    "optimize_memory_usage": "a replay-buffer memory layout, not a learning setting",
    "use_sde_at_warmup": "gSDE during the random warm-up steps: ours explores uniformly at random then",
}
_POLICY_KWARGS_NOTED = {
    "ortho_init": "gsolve always initialises orthogonally (SB3's default)",
    "use_expln": "a gSDE variance parametrisation SB3 offers; gsolve uses exp()",
    "full_std": "a gSDE variance detail; gsolve uses one std per matrix entry",
    "squash_output": "SB3's tanh squashing for gSDE; gsolve clips actions to the bounds",
}
_ACTIVATIONS = {"nn.ReLU": "relu", "nn.Tanh": "tanh", "torch.nn.ReLU": "relu", "torch.nn.Tanh": "tanh"}


class ZooEntry(NamedTuple):
    env_id: str  # the Zoo's entry name (another version of the environment when matched by name)
    algo: str
    path: Path
    values: dict[str, Any]  # our key -> the Zoo's value (a lin_ schedule as its initial value)
    skipped: list[str]  # the entry's keys that have no counterpart in ``values``
    settings: dict[str, Any] = {}  # the entry as our config keys to train, with ZOO_IMPLICIT where it is silent
    refused: list[str] = []  # one sentence per key we cannot train with
    notes: list[str] = []  # keys read but not reproduced, and why that is harmless (or not)

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


def _number(key: str, raw: Any) -> Any:
    """The Zoo's scalar as ours, or None when it is not a number (``lin_`` read as its initial value)."""
    if isinstance(raw, str):
        try:
            raw = float(raw.removeprefix("lin_"))
        except ValueError:
            return None
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    if key in _INTEGERS:
        return int(raw) if float(raw).is_integer() else None
    return float(raw)


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


def zoo_entry(env_id: str, algo: str, *, by_name: bool = False) -> ZooEntry | None:
    """The Zoo's entry for ``env_id`` trained with ``algo``, mapped onto our keys; None when rl_zoo3 is
    not installed, has no file for the algorithm or no entry for the environment, or cannot be read.
    ``by_name``: without an entry for ``env_id``, take the newest other version of the same environment
    (the returned ``env_id`` says which; the Zoo tunes some environments only at an older version)."""
    folder = zoo_hyperparams_dir()
    if folder is None or algo not in ZOO_ALGOS:
        return None
    path = folder / f"{algo}.yml"
    try:
        table = _table(str(path), path.stat().st_mtime_ns)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    name = env_id if env_id in table or not by_name else _by_name(table, env_id)
    entry = table.get(name) if name is not None else None
    if not isinstance(entry, dict) or name is None:
        return None
    values: dict[str, Any] = {}
    skipped: list[str] = []
    for key, raw in entry.items():
        ours = ZOO_KEYS.get(str(key))
        value = None if ours is None else _number(str(key), raw)
        if ours is None or value is None:
            skipped.append(str(key))
        else:
            values[ours] = value
    settings, refused, notes = _settings(algo, entry)
    if name != env_id:
        notes.insert(0, f"the RL Zoo has no {env_id} entry for {algo}; this is its {name} entry (another version "
                        "of the same environment, matched by name)")
    return ZooEntry(name, algo, path, values, sorted(skipped), settings, refused, notes)


# ---------------------------------------------------------------------------------------------
# The whole entry as a config to train
# ---------------------------------------------------------------------------------------------
def _refusal(key: str, raw: Any, why: str) -> str:
    shown = raw if len(repr(raw)) <= 80 else repr(raw)[:77] + "..."
    return f"{key}: {shown} ({why})"


def _schedule(key: str, raw: Any) -> Any:
    """``lin_X`` -> ``{start: X, end: 0.0}`` (the Zoo's linear schedule to zero over the budget); a number as is."""
    if isinstance(raw, str) and raw.startswith("lin_"):
        start = _number(key, raw)
        return None if start is None else {"start": start, "end": 0.0}
    return _number(key, raw)


def _literal(raw: Any) -> Any:
    """A Zoo value written as Python source (``"dict(net_arch=[64, 64], activation_fn=nn.ReLU)"``,
    ``"{'norm_obs': True}"``) as data: literals, ``dict(...)`` and dotted names only, never evaluated.
    ValueError for anything else."""
    if not isinstance(raw, str):
        return raw

    def conv(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            return [conv(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            return {conv(k): conv(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args:
            return {kw.arg: conv(kw.value) for kw in node.keywords if kw.arg is not None}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -conv(node.operand)
        if isinstance(node, ast.Attribute | ast.Name):
            return ast.unparse(node)  # a class such as nn.ReLU, by name
        raise ValueError(ast.unparse(node))

    return conv(ast.parse(raw.strip(), mode="eval").body)


def _net_arch(arch: Any) -> list[int] | None:
    """SB3's net_arch as our hidden_sizes: a list, or a dict whose networks (pi/vf/qf) are all that list."""
    if isinstance(arch, dict):
        nets = [v for v in arch.values()]
        arch = nets[0] if nets and all(n == nets[0] for n in nets) else None
    if isinstance(arch, list) and arch and all(isinstance(h, int) and not isinstance(h, bool) for h in arch):
        return arch
    return None


def _policy_kwargs(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    try:
        kwargs = _literal(raw)
    except (SyntaxError, ValueError) as exc:
        refused.append(_refusal("policy_kwargs", raw, f"not plain data: {exc}"))
        return
    if not isinstance(kwargs, dict):
        refused.append(_refusal("policy_kwargs", raw, "not a dict"))
        return
    for key, value in kwargs.items():
        name = f"policy_kwargs.{key}"
        if key == "net_arch":
            sizes = _net_arch(value)
            if sizes is None:
                refused.append(_refusal(name, value, "separate actor and critic networks of different sizes; "
                                        "gsolve has one hidden_sizes for both"))
            else:
                out["hidden_sizes"] = sizes
        elif key == "activation_fn":
            if value in _ACTIVATIONS:
                out["activation"] = _ACTIVATIONS[value]
            else:
                refused.append(_refusal(name, value, "gsolve's activations are tanh and relu"))
        elif key in ("log_std_init", "n_quantiles") and _number(key, value) is not None:
            out[key] = _number(key, value)
        elif key == "n_critics" and value == 2:
            continue  # SB3's default, and ours
        elif key in _POLICY_KWARGS_NOTED:
            notes.append(f"{name}={value} not reproduced: {_POLICY_KWARGS_NOTED[key]}")
        else:
            refused.append(_refusal(name, value, "gsolve has no such network setting"))


def _normalize(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    """The Zoo's VecNormalize: ``true`` normalises observations and rewards (SB3's defaults)."""
    try:
        value = _literal(raw) if isinstance(raw, str) and raw.strip().startswith(("{", "dict(")) else raw
    except (SyntaxError, ValueError) as exc:
        refused.append(_refusal("normalize", raw, f"not plain data: {exc}"))
        return
    if isinstance(value, str) and value.lower() in ("true", "false"):
        value = value.lower() == "true"
    if isinstance(value, bool):
        obs, rew = value, value
    elif isinstance(value, dict):
        obs, rew = bool(value.get("norm_obs", True)), bool(value.get("norm_reward", True))
    else:
        refused.append(_refusal("normalize", raw, "expected true, false or {norm_obs, norm_reward}"))
        return
    if obs:
        out["normalize_observations"] = True
    if rew:
        notes.append("normalize also scales rewards by a running std of the returns (VecNormalize norm_reward), which "
                     "gsolve has no setting for: rewards are learned as the environment gives them")


def _train_freq(raw: Any) -> int | None:
    value = _literal(raw) if isinstance(raw, str) else raw
    if isinstance(value, list) and len(value) == 2 and value[1] == "step":
        value = value[0]
    return _number("train_freq", value)


def _ent_coef(algo: str, raw: Any, out: dict[str, Any]) -> bool:
    """SAC/TQC's ``auto`` / ``auto_0.1`` (learned, from 1 / 0.1) or a constant; False if unreadable."""
    if algo in MAX_ENTROPY and isinstance(raw, str) and raw.startswith("auto"):
        out["ent_coef_auto"] = True
        if raw.startswith("auto_"):
            start = _number("ent_coef", raw[5:])
            if start is None:
                return False
            out["ent_coef"] = start
        return True
    value = _schedule("ent_coef", raw)
    if value is None:
        return False
    out["ent_coef"] = value
    if algo in MAX_ENTROPY:
        out["ent_coef_auto"] = False
    return True


def _scalar(algo: str, key: str, raw: Any, out: dict[str, Any]) -> bool | None:
    """A scalar key mapped into ``out``: True; a known key whose value cannot be read: False; not scalar: None."""
    if key == "n_timesteps":
        value = _number(key, raw)
        out.update({} if value is None else {"max_env_steps": value})
        return value is not None
    if key == "ent_coef":
        return _ent_coef(algo, raw, out)
    if key in _SCHEDULES:
        value = _schedule(key, raw)
        out.update({} if value is None else {key: value})
        return value is not None
    if key in ("gamma", "gae_lambda", "n_steps", "batch_size", "n_epochs", "n_envs", "max_grad_norm", "vf_coef",
               *_SAME_NAME):
        value = raw if isinstance(raw, bool) or raw is None else _number(key, raw)
        out.update({} if value is None and raw is not None else {key: value})
        return value is not None or raw is None
    if key == "normalize_advantage":
        out.update({"normalize_advantages": raw} if isinstance(raw, bool) else {})
        return isinstance(raw, bool)
    return None


def _policy(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    if raw != "MlpPolicy":
        refused.append(_refusal("policy", raw, "gsolve trains an MLP on Box observations; CnnPolicy goes with the "
                                "Zoo's Atari wrappers and MultiInputPolicy with Dict observations"))


def _train_freq_key(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    value = _train_freq(raw)
    if value is None:
        refused.append(_refusal("train_freq", raw, "training every N episodes; gsolve's train_freq counts env steps"))
    else:
        out["train_freq"] = value


def _env_kwargs(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    if isinstance(raw, dict):
        out["env_kwargs"] = dict(raw)
    else:
        refused.append(_refusal("env_kwargs", raw, "expected a mapping of gym.make keyword arguments"))


def _rms_prop(raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    if raw is not True:
        refused.append(_refusal("use_rms_prop", raw, "gsolve's A2C optimises with RMSprop, as SB3's does by default"))


# Entry keys that are more than a number: each read by its own function into (out, refused, notes).
_STRUCTURED = {"normalize": _normalize, "policy_kwargs": _policy_kwargs, "policy": _policy,
               "train_freq": _train_freq_key, "env_kwargs": _env_kwargs, "use_rms_prop": _rms_prop}


def _one_key(algo: str, key: str, raw: Any, out: dict[str, Any], refused: list[str], notes: list[str]) -> None:
    mapped = _scalar(algo, key, raw, out)
    if mapped is False:
        refused.append(_refusal(key, raw, "not a value gsolve can read"))
    elif mapped is None and key in _STRUCTURED:
        _STRUCTURED[key](raw, out, refused, notes)
    elif mapped is None and key in _NOTED:
        notes.append(f"{key}={raw} not reproduced: {_NOTED[key]}")
    elif mapped is None:
        refused.append(_refusal(key, raw, "gsolve has no setting for it: environment wrappers, frame stacking, "
                                "callbacks, replay-buffer classes and action-noise processes are the Zoo's own"))


def _settings(algo: str, entry: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """(settings, refused, notes): the entry as our config keys, with ZOO_IMPLICIT where it is silent."""
    out: dict[str, Any] = {"algo": algo}
    refused: list[str] = []
    notes: list[str] = []
    for key, raw in entry.items():
        _one_key(algo, str(key), raw, out, refused, notes)
    implicit = {k: v for k, v in ZOO_IMPLICIT.get(algo, {}).items() if k not in out}
    if implicit:
        notes.append("where the entry is silent the Zoo trains with SB3's defaults, which are taken too: "
                     + ", ".join(f"{k}={v}" for k, v in implicit.items()))
    return {**implicit, **out}, refused, notes


def zoo_algos_by_env() -> dict[str, list[str]]:
    """Environment id -> the algorithms of ours the installed RL Zoo has an entry for ({} without rl_zoo3)."""
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
            if isinstance(env_id, str) and isinstance(entry, dict):
                out.setdefault(env_id, []).append(algo)
    return out
