"""The RL Zoo's and Stable-Baselines3's names for our config keys, and the Zoo's ways of writing values,
mapped onto ours in one table (``ZOO_NAMES``), for every reader: ``--set`` and MCP overrides, presets
(ours and the user's), the RL Zoo's hyperparams files (``zoo.py``) and imported SB3 models
(``imports/``). Our names mostly are SB3's (``ent_coef``, ``n_steps``, ``learning_starts``, ...); the
table holds the names that differ (``n_timesteps`` -> ``max_env_steps``, ``policy_kwargs.net_arch`` ->
``hidden_sizes``), the values the Zoo writes in its own forms (``lin_0.001``, ``auto_0.1``,
``[4, step]``, ``dict(net_arch=[64, 64])``, read as data with ``ast``, never evaluated), and the Zoo's
keys we have nothing for, each refused with what would work. docs/configs.md shows the table
(``markdown_table``; a test holds them together). No I/O.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from gymnasium_solver.config.model import ConfigError


class Unmappable(ValueError):
    """A Zoo key or value we cannot reproduce; the message says why and what would work."""


class Read(NamedTuple):
    values: dict[str, Any]  # our key -> value
    note: str = ""  # what was mapped, or what is not reproduced and why that is harmless
    caveat: bool = False  # True: the note says something is not reproduced (shown for the Zoo's entries too)


Reader = Callable[[Any], Read]


class ZooName(NamedTuple):
    ours: tuple[str, ...]  # the keys of ours it sets; () when it sets none (accepted as is, or refused)
    read: Reader
    how: str  # the docs table's column: what is accepted and how it is read
    rename: bool = False  # our key's name for the same value (our_key, zoo_name_of)


# ---------------------------------------------------------------------------------------------
# Readers of one value (each raises Unmappable with a sentence saying what would work)
# ---------------------------------------------------------------------------------------------
def literal(raw: Any) -> Any:
    """A value written as Python source (``"dict(net_arch=[64, 64], activation_fn=nn.ReLU)"``,
    ``"{'norm_obs': True}"``) as data: literals, ``dict(...)`` and dotted names only, never evaluated.
    Anything that is not a string is returned as is; ValueError for any other expression."""
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

    if len(raw) > 4000:
        raise ValueError("longer than 4000 characters")
    try:
        return conv(ast.parse(raw.strip(), mode="eval").body)
    except (SyntaxError, RecursionError) as exc:
        raise ValueError(f"not Python data ({type(exc).__name__})") from None


def _float(raw: Any) -> float | None:
    """A finite number, also from text ('1e6': YAML 1.1 reads it as a string), else None."""
    if isinstance(raw, bool):
        return None
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _steps(key: str, ours: str) -> Reader:
    def read(raw: Any) -> Read:
        value = _float(raw)
        if value is None or not value.is_integer():
            raise Unmappable(f"{ours} is a whole number of env steps, e.g. {ours}=100000")
        return Read({ours: int(value)}, f"{key} -> {ours}")
    return read


def _renamed(key: str, ours: str) -> Reader:
    """The same value under our name (the config validates it)."""
    return lambda raw: Read({ours: raw}, f"{key} -> {ours}")


def _bool(key: str, ours: str) -> Reader:
    def read(raw: Any) -> Read:
        value = raw.strip().lower() == "true" if isinstance(raw, str) and raw.strip().lower() in ("true", "false") else raw
        if not isinstance(value, bool):
            raise Unmappable(f"{ours} is true or false")
        return Read({ours: value}, f"{key} -> {ours}")
    return read


# A value in the Zoo's ``name_number`` form (lin_0.001, exp_0.001): a schedule of theirs. Any other text is
# left to the config's own validation, which says what a value of that key may be.
_ZOO_FORM = re.compile(r"^[a-z]+_[-+0-9.eE]+$")


def _schedule(key: str) -> Reader:
    """``lin_X`` (the Zoo's linear schedule from X to 0 over the budget) -> ``{start: X, end: 0.0}``."""
    def read(raw: Any) -> Read:
        if isinstance(raw, str) and raw.strip().startswith("lin_"):
            start = _float(raw.strip()[4:])
            if start is None:
                raise Unmappable(f"lin_ takes a number, e.g. {key}=lin_0.001")
            return Read({key: {"start": start, "end": 0.0}}, f"{key}={raw} -> {key}={{start: {start:g}, end: 0.0}}")
        if isinstance(raw, str) and _float(raw) is None and _ZOO_FORM.match(raw.strip()):  # e.g. exp_0.001
            raise Unmappable(f"gsolve's schedules are linear: write a number, {key}={{start: x, end: y}} or the Zoo's "
                             f"lin_x (from x to 0)")
        return Read({key: raw})
    return read


def _ent_coef(raw: Any) -> Read:
    """SAC/TQC's ``auto`` / ``auto_0.1`` (learned, starting at 1 / 0.1), else a number or schedule."""
    if isinstance(raw, str) and raw.strip().startswith("auto"):
        text = raw.strip()
        if text == "auto":
            return Read({"ent_coef_auto": True}, "ent_coef=auto -> ent_coef_auto=true (learned, from 1)")
        start = _float(text[5:]) if text.startswith("auto_") else None
        if start is None or start <= 0:
            raise Unmappable("a learned coefficient is auto or auto_<start>, e.g. ent_coef=auto_0.1 (SAC, TQC)")
        return Read({"ent_coef_auto": True, "ent_coef": start},
                    f"ent_coef={text} -> ent_coef_auto=true, ent_coef={start:g} (learned, from {start:g})")
    return _schedule("ent_coef")(raw)


def _train_freq(raw: Any) -> Read:
    """SB3's ``(4, "step")`` / ``[4, step]`` -> 4; training every N episodes has no counterpart."""
    try:
        value = literal(raw) if isinstance(raw, str) and raw.strip().startswith(("(", "[")) else raw
    except ValueError:
        value = raw
    if isinstance(value, list) and len(value) == 2 and value[1] in ("step", "episode"):
        if value[1] == "episode":
            raise Unmappable("gsolve's train_freq counts env steps per sub-environment, not episodes: write "
                             "train_freq=N steps")
        steps = _float(value[0])
        if steps is None or not steps.is_integer():
            raise Unmappable("train_freq is a whole number of steps, e.g. train_freq=4")
        return Read({"train_freq": int(steps)}, f"train_freq={raw} -> train_freq={int(steps)}")
    return Read({"train_freq": raw})


def _normalize(raw: Any) -> Read:
    """The Zoo's VecNormalize: ``true`` normalises observations and rewards (SB3's defaults)."""
    try:
        value = literal(raw) if isinstance(raw, str) and raw.strip().startswith(("{", "dict(")) else raw
    except ValueError as exc:
        raise Unmappable(f"not plain data ({exc}); write true, false or {{norm_obs: true, norm_reward: false}}") from None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        value = value.strip().lower() == "true"
    if isinstance(value, bool):
        obs, rew = value, value
    elif isinstance(value, dict):
        obs, rew = bool(value.get("norm_obs", True)), bool(value.get("norm_reward", True))
    else:
        raise Unmappable("expected true, false or {norm_obs: true, norm_reward: false}; or normalize_observations=true")
    note = f"normalize -> normalize_observations={str(obs).lower()}, normalize_rewards={str(rew).lower()}"
    return Read({"normalize_observations": obs, "normalize_rewards": rew}, note)


def _net_arch(raw: Any) -> Read:
    """SB3's net_arch as our hidden_sizes: a list, or a dict (pi/vf/qf) whose networks are all that list."""
    arch = raw
    if isinstance(arch, list) and len(arch) == 1 and isinstance(arch[0], dict):
        arch = arch[0]  # SB3 < 1.8 wrote [dict(pi=..., vf=...)]
    if isinstance(arch, dict):
        nets = list(arch.values())
        arch = nets[0] if nets and all(n == nets[0] for n in nets) else None
        if arch is None:
            raise Unmappable("separate actor and critic networks of different sizes; gsolve has one hidden_sizes "
                             "for both, e.g. hidden_sizes=[64, 64]")
    if isinstance(arch, list) and arch and all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in arch):
        return Read({"hidden_sizes": list(arch)}, f"policy_kwargs.net_arch -> hidden_sizes={list(arch)}")
    raise Unmappable("net_arch is a list of layer widths, e.g. hidden_sizes=[64, 64]")


_ACTIVATIONS = {"nn.ReLU": "relu", "nn.Tanh": "tanh", "torch.nn.ReLU": "relu", "torch.nn.Tanh": "tanh",
                "ReLU": "relu", "Tanh": "tanh", "relu": "relu", "tanh": "tanh"}


def _activation(raw: Any) -> Read:
    if isinstance(raw, str) and raw.strip() in _ACTIVATIONS:
        return Read({"activation": _ACTIVATIONS[raw.strip()]},
                    f"policy_kwargs.activation_fn -> activation={_ACTIVATIONS[raw.strip()]}")
    raise Unmappable("gsolve's activations are tanh and relu: write activation=relu or activation_fn=nn.ReLU")


def _only(key: str, accepted: Any, why: str, instead: str) -> Reader:
    """A Zoo key that is gsolve's fixed behaviour at ``accepted``: accepted then, refused otherwise."""
    def read(raw: Any) -> Read:
        if raw == accepted or (isinstance(raw, str) and raw.strip().lower() == str(accepted).lower()):
            return Read({}, f"{key}={raw}: {why}")
        raise Unmappable(instead)
    return read


def _noted(key: str, why: str) -> Reader:
    """A Zoo key that changes nothing we can reproduce: accepted, with a note saying so."""
    return lambda raw: Read({}, f"{key}={raw} not reproduced: {why}", caveat=True)


def _refused(why: str) -> ZooName:
    """A Zoo key we have nothing for: refused, saying what would work."""
    def read(raw: Any) -> Read:
        raise Unmappable(why)
    return ZooName((), read, f"refused: {why}")


def _refused_but_atari(why: str) -> ZooName:
    """Refused on its own; in an RL Zoo entry, SB3's AtariWrapper with 4 stacked frames is read by zoo.py."""
    return _refused(why)._replace(how=f"refused: {why}; in an RL Zoo entry, `env_wrapper: AtariWrapper` with "
                                      "`frame_stack: 4` is `atari_wrappers: true` (docs/atari.md)")


def _noted_entry(key: str, why: str) -> ZooName:
    return ZooName((), _noted(key, why), f"accepted, not reproduced: {why}")


def _policy(raw: Any) -> Read:
    if raw == "MlpPolicy":
        return Read({}, "policy=MlpPolicy: gsolve's MLP (hidden_sizes, activation)")
    if raw == "CnnPolicy":
        return Read({"network": "nature_cnn"}, "policy=CnnPolicy -> network=nature_cnn")
    raise Unmappable("gsolve's networks are the MLP (policy=MlpPolicy) and the Nature CNN (CnnPolicy, "
                     "network=nature_cnn, with atari_wrappers=true); remove policy otherwise")


def _policy_kwargs(raw: Any) -> Read:
    try:
        kwargs = literal(raw)
    except ValueError as exc:
        raise Unmappable(f"not plain data ({exc}); write e.g. policy_kwargs=dict(net_arch=[64, 64]) or "
                         "hidden_sizes=[64, 64]") from None
    if not isinstance(kwargs, dict):
        raise Unmappable("expected a mapping, e.g. policy_kwargs=dict(net_arch=[64, 64])")
    values: dict[str, Any] = {}
    notes: list[str] = []
    caveat = False
    for sub, value in kwargs.items():
        name = f"policy_kwargs.{sub}"
        entry = ZOO_NAMES.get(name)
        if entry is None:
            raise Unmappable(f"{name}: {POLICY_KWARGS_OTHER}")
        try:
            got = entry.read(value)
        except Unmappable as exc:
            raise Unmappable(f"{name}: {exc}") from None
        values.update(got.values)
        notes.append(got.note)
        caveat = caveat or got.caveat
    return Read(values, "; ".join(n for n in notes if n), caveat)


def _number(key: str, ours: str) -> Reader:
    def read(raw: Any) -> Read:
        value = _float(raw)
        if value is None:
            raise Unmappable(f"{ours} is a number, e.g. {ours}=0")
        return Read({ours: int(value) if ours == "n_quantiles" and value.is_integer() else value},
                    f"{key} -> {ours}")
    return read


POLICY_KWARGS_OTHER = ("gsolve's networks are set by hidden_sizes (net_arch), activation (activation_fn), "
                       "log_std_init and shared_network; custom optimizers and feature extractors are not supported")
WRAPPERS = ("gsolve applies no wrapper a config names (a config never makes gsolve import code): register a wrapped "
            "environment in your own package and train its id")
_BEHAVIOUR = "it is gsolve's behaviour too"
# SB3's NormalActionNoise sigma (the Zoo's noise_std) is in action units, our action_noise_std a fraction of the
# action half-range (gymnasium_solver/agents/sb3.py multiplies it back): config.chain divides by the environment's half-range.
NOISE_UNITS = "action_noise_std is a fraction of it; the same for actions in [-1, 1]"

# The one table: the RL Zoo's / SB3's name -> how it is read into our keys. Our own names that the Zoo
# writes in its own forms are listed too (learning_rate: lin_0.001). Every other name is ours or unknown.
ZOO_NAMES: dict[str, ZooName] = {
    "n_timesteps": ZooName(("max_env_steps",), _steps("n_timesteps", "max_env_steps"),
                           "the RL Zoo's budget; a whole number of env steps", rename=True),
    "total_timesteps": ZooName(("max_env_steps",), _steps("total_timesteps", "max_env_steps"),
                               "SB3's `learn(total_timesteps=...)`", rename=True),
    "normalize_advantage": ZooName(("normalize_advantages",), _bool("normalize_advantage", "normalize_advantages"),
                                   "SB3's PPO/A2C argument", rename=True),
    "normalize": ZooName(("normalize_observations", "normalize_rewards"), _normalize,
                         "`true`, `false` or `{norm_obs, norm_reward}`: VecNormalize's observation and reward "
                         "normalisation"),
    "policy_kwargs": ZooName((), _policy_kwargs, "a mapping or `dict(...)` text (read as data, never evaluated); "
                             "each key as `policy_kwargs.<key>` below, any other refused"),
    "policy_kwargs.net_arch": ZooName(("hidden_sizes",), _net_arch,
                                      "a list of widths, or `pi`/`vf`/`qf` networks of one size", rename=True),
    "policy_kwargs.activation_fn": ZooName(("activation",), _activation, "`nn.ReLU` / `nn.Tanh`", rename=True),
    "policy_kwargs.log_std_init": ZooName(("log_std_init",), _number("policy_kwargs.log_std_init", "log_std_init"),
                                          "a number", rename=True),
    "policy_kwargs.n_quantiles": ZooName(("n_quantiles",), _number("policy_kwargs.n_quantiles", "n_quantiles"),
                                         "QR-DQN, TQC", rename=True),
    "policy_kwargs.n_critics": ZooName((), _only("policy_kwargs.n_critics", 2, _BEHAVIOUR,
                                                 "gsolve's SAC, TD3 and TQC have 2 critics (SB3's default)"),
                                       "2 (SB3's default and ours); any other refused"),
    "policy_kwargs.ortho_init": ZooName(("ortho_init",), _bool("policy_kwargs.ortho_init", "ortho_init"),
                                        "`true` (SB3's default, ours) or `false` (torch's default initialisation)",
                                        rename=True),
    "policy_kwargs.use_expln": _noted_entry("policy_kwargs.use_expln", "a gSDE variance parametrisation SB3 "
                                                  "offers; gsolve uses exp()"),
    "policy_kwargs.full_std": _noted_entry("policy_kwargs.full_std", "a gSDE variance detail; gsolve uses one "
                                                 "std per matrix entry"),
    "policy_kwargs.squash_output": _noted_entry("policy_kwargs.squash_output", "SB3's tanh squashing for gSDE; "
                                                      "gsolve clips actions to the bounds"),
    "policy": ZooName(("network",), _policy, "`MlpPolicy` (accepted), `CnnPolicy` -> `network: nature_cnn`; "
                      "any other refused"),
    "use_rms_prop": ZooName((), _only("use_rms_prop", True, _BEHAVIOUR,
                                      "gsolve's A2C optimises with RMSprop, as SB3's does by default"),
                            "`true` (gsolve's A2C, as SB3's); `false` refused"),
    "optimize_memory_usage": _noted_entry("optimize_memory_usage", "a replay-buffer memory layout, not a "
                                                "learning setting"),
    "use_sde_at_warmup": _noted_entry("use_sde_at_warmup", "gSDE during the random warm-up steps: gsolve "
                                            "explores uniformly at random then"),
    # Our names, in the Zoo's forms of value.
    "learning_rate": ZooName(("learning_rate",), _schedule("learning_rate"), "`lin_X` -> `{start: X, end: 0.0}`"),
    "clip_range": ZooName(("clip_range",), _schedule("clip_range"), "`lin_X` -> `{start: X, end: 0.0}`"),
    "ent_coef": ZooName(("ent_coef", "ent_coef_auto"), _ent_coef,
                        "`lin_X` as above; `auto` / `auto_X` -> `ent_coef_auto: true` (from 1 / X; SAC, TQC)"),
    "train_freq": ZooName(("train_freq",), _train_freq, "`[N, step]` -> `N`; `[N, episode]` refused"),
    # The Zoo's keys we have nothing for.
    "frame_stack": _refused_but_atari("gsolve stacks frames only in atari_wrappers=true (4 frames of 84x84 pixels, "
                                      "for ALE environments)"),
    "env_wrapper": _refused_but_atari(WRAPPERS),
    "vec_env_wrapper": _refused(WRAPPERS),
    "callback": _refused("gsolve's evaluation, checkpoints and early stop are config keys: eval_freq, "
                                     "checkpoint_freq, reward_threshold"),
    "noise_type": ZooName((), _only("noise_type", "normal", "gsolve's TD3 explores with Gaussian noise (SB3's "
                                    "NormalActionNoise)", "gsolve's TD3 explores with Gaussian noise only: "
                                    "noise_type=normal with noise_std, or action_noise_std"),
                          "`normal` (gsolve's TD3 noise, SB3's NormalActionNoise); `ornstein-uhlenbeck` refused"),
    "noise_std": ZooName(("action_noise_std",), _number("noise_std", "action_noise_std"),
                         f"a number in action units, divided by the action space's half-range ({NOISE_UNITS})"),
    "replay_buffer_class": _refused("gsolve has one uniform replay buffer (buffer_size); HER and other "
                                                "buffer classes are not supported"),
    "replay_buffer_kwargs": _refused("gsolve has one uniform replay buffer, sized by buffer_size"),
    "monitor_kwargs": _refused("gsolve records every episode itself (metrics.csv)"),
}


_OUR_NAMES = frozenset({"learning_rate", "clip_range", "ent_coef", "train_freq"})  # ours, in the Zoo's forms
ZOO_ONLY_NAMES: tuple[str, ...] = tuple(name for name in ZOO_NAMES if name not in _OUR_NAMES)


def our_key(name: str) -> str:
    """Our key for a Zoo / SB3 name of the same value (``n_timesteps`` -> ``max_env_steps``); ``name``
    itself otherwise (ours are SB3's names)."""
    entry = ZOO_NAMES.get(name)
    return entry.ours[0] if entry is not None and entry.rename else name


def zoo_name_of(key: str) -> str:
    """The Zoo's name for our ``key`` where it differs (``max_env_steps`` -> ``n_timesteps``), else ``key``."""
    return next((name for name, e in ZOO_NAMES.items() if e.rename and e.ours == (key,) and "." not in name), key)


def read_key(key: str, raw: Any) -> Read | None:
    """``key: raw`` in our keys: a Read (possibly of no keys, with a note), or None when ``key`` is not in
    the table (ours as it is, or unknown). Unmappable says why not and what would work."""
    entry = ZOO_NAMES.get(key)
    if entry is None or (isinstance(raw, dict) and key in _OUR_NAMES):
        return None  # a schedule {start, end} (or a dotted part of one) is ours
    return entry.read(raw)


class InOurNames(NamedTuple):
    values: dict[str, Any]
    notes: list[str]  # one per name or value form read, e.g. "n_timesteps -> max_env_steps"


def in_our_names(data: Mapping[str, Any], where: str) -> InOurNames:
    """``data`` (``--set`` overrides, a preset's section, an MCP tool's overrides) with the Zoo's / SB3's names
    and forms of value read into ours; our keys and unknown keys pass as they are (the config's validation
    names an unknown key). ConfigError, in one sentence naming the key and what would work, for a Zoo key
    or value we cannot reproduce, and when two keys set the same one of ours (which would win is ambiguous)."""
    values: dict[str, Any] = {}
    notes: list[str] = []
    set_by: dict[str, str] = {}
    for key, raw in data.items():
        try:
            read = read_key(str(key), raw)
        except Unmappable as exc:
            shown = raw if len(repr(raw)) <= 60 else repr(raw)[:57] + "..."
            raise ConfigError(f"{where}: {key}={shown} cannot be mapped onto gsolve's keys: {exc}") from None
        got = {str(key): raw} if read is None else read.values
        for ours in got:
            if ours in set_by:
                first = set_by[ours]
                read_as = [k for k in (first, str(key)) if k != ours]
                raise ConfigError(f"{where}: {first} and {key} both set {ours} ({' and '.join(read_as)} "
                                  f"{'is' if len(read_as) == 1 else 'are'} read as {ours}), so which one wins is "
                                  "ambiguous; keep one of them")
            set_by[ours] = str(key)
        values.update(got)
        if read is not None and read.note:
            notes.append(f"{where}: {read.note}")
    return InOurNames(values, notes)


def markdown_table() -> str:
    """The table as docs/configs.md shows it."""
    lines = ["| RL Zoo / SB3 name | gsolve key | accepted values |", "|---|---|---|"]
    for name, entry in ZOO_NAMES.items():
        ours = ", ".join(f"`{k}`" for k in entry.ours) if entry.ours else "(none)"
        lines.append(f"| `{name}` | {ours} | {entry.how} |")
    return "\n".join(lines)
