"""The one table that maps other frameworks' metric names onto our vocabulary (``run_folder.M``).

docs/metrics.md shows the same table (a test checks they agree). A source metric that has no
counterpart here is kept under its own name prefixed by its framework (``sb3/train/loss``,
``cleanrl/losses/old_approx_kl``), so nothing the source measured is lost and nothing is passed off
as one of ours.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from gymnasium_solver.config.zoo_names import ZOO_NAMES, Unmappable, our_key, read_key
from gymnasium_solver.contract.algorithms import EPSILON_GREEDY
from gymnasium_solver.contract.run_folder import M


class Framework(StrEnum):
    SB3 = "sb3"  # Stable-Baselines3's logger (progress.csv / TensorBoard), also what the RL Zoo writes
    CLEANRL = "cleanrl"


class Transform(StrEnum):
    SAME = "same"
    NEGATE = "negate"  # SB3 logs entropy_loss = -mean entropy
    EPISODES_MEAN = "mean of the last 100 episodes"  # per-episode events -> our rolling mean


class Mapping(NamedTuple):
    ours: str
    transform: Transform = Transform.SAME
    note: str = ""


# Source metric name -> our column. The step axis (SB3 time/total_timesteps, TensorBoard's step) is
# env_steps and is not listed.
METRIC_MAP: dict[Framework, dict[str, Mapping]] = {
    Framework.SB3: {
        "time/fps": Mapping(M.FPS),
        "time/time_elapsed": Mapping(M.WALL_SECONDS, note="whole seconds"),
        "rollout/ep_rew_mean": Mapping(M.EP_RETURN_MEAN),
        "rollout/ep_len_mean": Mapping(M.EP_LEN_MEAN),
        "eval/mean_reward": Mapping(M.EVAL_RETURN_MEAN),
        "eval/mean_ep_length": Mapping(M.EVAL_EP_LEN_MEAN),
        "train/policy_gradient_loss": Mapping(M.POLICY_LOSS, note="PPO"),
        "train/policy_loss": Mapping(M.POLICY_LOSS, note="A2C"),
        "train/actor_loss": Mapping(M.ACTOR_LOSS, note="SAC, TD3, DDPG"),
        "train/value_loss": Mapping(M.VALUE_LOSS),
        "train/critic_loss": Mapping(M.CRITIC_LOSS, note="SAC, TD3, DDPG: the Q-function loss"),
        "train/entropy_loss": Mapping(M.ENTROPY, Transform.NEGATE, "SB3 logs minus the mean entropy"),
        "train/approx_kl": Mapping(M.APPROX_KL),
        "train/clip_fraction": Mapping(M.CLIP_FRACTION),
        "train/clip_range": Mapping(M.CLIP_RANGE),
        "train/explained_variance": Mapping(M.EXPLAINED_VARIANCE),
        "train/learning_rate": Mapping(M.LEARNING_RATE),
        "train/ent_coef": Mapping(M.ENT_COEF, note="SAC's entropy coefficient"),
        "train/ent_coef_loss": Mapping(M.ENT_COEF_LOSS, note="SAC's automatic entropy tuning"),
        "rollout/exploration_rate": Mapping(M.EXPLORATION_RATE, note="DQN's epsilon"),
        "train/std": Mapping(M.ACTION_STD, note="gSDE / Gaussian policies"),
    },
    Framework.CLEANRL: {
        "charts/SPS": Mapping(M.FPS),
        "charts/episodic_return": Mapping(M.EP_RETURN_MEAN, Transform.EPISODES_MEAN, "CleanRL logs each episode"),
        "charts/episodic_length": Mapping(M.EP_LEN_MEAN, Transform.EPISODES_MEAN, "CleanRL logs each episode"),
        "charts/learning_rate": Mapping(M.LEARNING_RATE),
        "losses/policy_loss": Mapping(M.POLICY_LOSS),
        "losses/actor_loss": Mapping(M.ACTOR_LOSS, note="SAC, TD3, DDPG"),
        "losses/qf_loss": Mapping(M.CRITIC_LOSS, note="SAC: mean of the two Q-functions' losses"),
        "losses/qf1_values": Mapping(M.Q_MEAN, note="SAC, TD3: the first Q-function's mean on the batch"),
        "losses/td_loss": Mapping(M.TD_LOSS, note="DQN"),
        "losses/q_values": Mapping(M.Q_MEAN, note="DQN: mean Q of the batch's actions"),
        "losses/value_loss": Mapping(M.VALUE_LOSS),
        "losses/entropy": Mapping(M.ENTROPY),
        "losses/approx_kl": Mapping(M.APPROX_KL),
        "losses/clipfrac": Mapping(M.CLIP_FRACTION),
        "losses/explained_variance": Mapping(M.EXPLAINED_VARIANCE),
        "losses/alpha": Mapping(M.ENT_COEF, note="SAC's entropy coefficient"),
        "losses/alpha_loss": Mapping(M.ENT_COEF_LOSS, note="SAC's automatic entropy tuning"),
    },
}

# Source metrics whose meaning depends on the algorithm that logged them: (algorithms, mapping). SB3's
# DQN logs its TD loss as train/loss, where PPO logs its total loss under the same name. Until the
# algorithm is known such a metric is kept under its prefixed name; apply_algo_mappings renames it.
ALGO_METRIC_MAP: dict[Framework, dict[str, tuple[frozenset[str], Mapping]]] = {
    Framework.SB3: {
        "train/loss": (EPSILON_GREEDY, Mapping(M.TD_LOSS, note="DQN, QR-DQN only: the TD (Huber) loss")),
    },
    Framework.CLEANRL: {},
}

# Config keys other frameworks name differently from us (and from SB3, whose names we use). The
# imported run's config.yaml keeps the source's own names; the diagnosis reads it through these. SB3's
# and the RL Zoo's come from the one table of their names (config/zoo_names.py), which --set, presets
# and the Zoo's hyperparams reader use too.
CONFIG_ALIASES: dict[Framework, dict[str, str]] = {
    Framework.SB3: {name: our_key(name) for name, entry in ZOO_NAMES.items() if entry.rename and "." not in name},
    Framework.CLEANRL: {  # cleanrl/dqn.py's arguments
        "target_network_frequency": "target_update_interval", "train_frequency": "train_freq",
        "start_e": "exploration_initial_eps", "end_e": "exploration_final_eps", "num_envs": "n_envs",
        "total_timesteps": "max_env_steps",
    },
}
# Import kinds that carry no config at all (SB3's bare CSV / TensorBoard logger output): a setting
# missing from such a run's config is unknown, not the library's default. The RL Zoo's config.yml
# lists what the Zoo set (the rest is SB3's default) and CleanRL dumps every argument.
KINDS_WITHOUT_CONFIG = frozenset({"sb3_log_folder", "sb3_tensorboard"})


def _aliases(framework: str) -> dict[str, str]:
    return CONFIG_ALIASES.get(Framework(framework), {}) if framework in Framework._value2member_map_ else {}


def _sb3_view(config: dict[str, Any]) -> dict[str, Any]:
    """SB3's / the RL Zoo's settings read through the table of their names (``lin_0.001``, ``normalize``,
    ``policy_kwargs``, ...): each value it can read, under our key; what it cannot read is left out."""
    out: dict[str, Any] = {}
    for key, raw in config.items():
        try:
            read = read_key(str(key), raw)
        except Unmappable:
            continue
        for ours, value in (read.values.items() if read is not None else ()):
            if ours == key or ours not in config:
                out[ours] = value
    return out


def config_view(config: dict[str, Any], framework: str) -> dict[str, Any]:
    """An imported run's config with the source's names for our keys renamed to ours (where ours is absent)
    and, for SB3 and the RL Zoo, their forms of value read as ours (``lin_0.001`` as a schedule)."""
    aliases = _aliases(framework)
    out = dict(config)
    for theirs, ours in aliases.items():
        if theirs in config and ours not in config:
            out[ours] = config[theirs]
    if framework == Framework.SB3:
        out.update(_sb3_view(config))
    return out


def source_setting(framework: str, set_arg: str) -> str:
    """A change ``key=value`` to one of our settings, as the source framework names the key."""
    key, value = set_arg.split("=", 1)
    theirs = next((t for t, ours in _aliases(framework).items() if ours == key), key)
    return f"{theirs}={value}"


# Source columns that are the step axis or bookkeeping already in run.json: not kept as metrics.
SKIPPED: dict[Framework, frozenset[str]] = {
    Framework.SB3: frozenset({"time/total_timesteps", "time/iterations", "time/episodes"}),
    Framework.CLEANRL: frozenset(),
}

EPISODE_WINDOW = 100  # our rollout/ep_return_mean is the mean of the last 100 episodes, like SB3's


# SB3's progress.csv / event folder does not always name its algorithm; the keys its logger writes do.
# First match wins (each algorithm's train() logs its own keys; see stable_baselines3/*/<algo>.py).
SB3_ALGO_SIGNATURES: tuple[tuple[str, frozenset[str]], ...] = (
    ("ppo", frozenset({"train/clip_fraction"})),
    ("sac", frozenset({"train/actor_loss", "train/ent_coef"})),
    ("td3", frozenset({"train/actor_loss"})),
    ("dqn", frozenset({"rollout/exploration_rate"})),
    ("a2c", frozenset({"train/policy_loss", "train/entropy_loss"})),
)


def sb3_algo_from_keys(keys: set[str] | frozenset[str]) -> str | None:
    """The SB3 algorithm whose logger writes these keys, or None."""
    return next((algo for algo, need in SB3_ALGO_SIGNATURES if need <= keys), None)


def our_name(framework: Framework, source_name: str) -> str | None:
    """Our column for a source metric: the mapped name, ``<framework>/<name>`` when unmapped, or None
    for the step axis and bookkeeping."""
    if source_name in SKIPPED[framework]:
        return None
    m = METRIC_MAP[framework].get(source_name)
    return m.ours if m is not None else f"{framework.value}/{source_name}"


def algo_mapping(framework: Framework, source_name: str, algo: str | None) -> Mapping | None:
    """The mapping of a metric whose meaning depends on the algorithm, when ``algo`` is one it applies to."""
    entry = ALGO_METRIC_MAP[framework].get(source_name)
    return entry[1] if entry is not None and algo in entry[0] else None


def markdown_table() -> str:
    """The mapping as the markdown table in docs/metrics.md."""
    lines = ["| framework | source metric | our column | how |", "|---|---|---|---|"]
    for fw, table in METRIC_MAP.items():
        rows = [*table.items(), *((src, m) for src, (_, m) in ALGO_METRIC_MAP[fw].items())]
        for src, m in rows:
            how = m.transform.value if m.transform != Transform.SAME else ""
            how = "; ".join(x for x in (how, m.note) if x)
            lines.append(f"| {fw.value} | `{src}` | `{m.ours}` | {how} |")
    return "\n".join(lines)


# -- hyperparameters of an SB3 model zip -------------------------------------------------------------
# SB3's ``model.save()`` writes a zip whose ``data`` entry is JSON: plain values for what JSON can hold
# (gamma, n_steps, ...) and, for anything else (schedules, classes, spaces, buffers), an object with a
# cloudpickle payload under ":serialized:", which is never decoded (imports/sb3_zip.py). Only plain values
# are mapped, by this table: SB3's attribute -> (our config key, the JSON type it must have).
class ZipValue(StrEnum):
    FLOAT = "float"  # a finite number (not a boolean)
    INT = "int"
    BOOL = "bool"
    FLOAT_OR_NONE = "float or null"
    INT_OR_NONE = "int or null"


# SB3 attribute -> the JSON type its value must have. Our key for it comes from the table of SB3's names
# (config/zoo_names.py): the same name, or ours (_total_timesteps, learn()'s total_timesteps: max_env_steps).
_SB3_ZIP_TYPES: dict[str, ZipValue] = {
    "seed": ZipValue.INT_OR_NONE,
    "n_envs": ZipValue.INT,
    "_total_timesteps": ZipValue.INT,  # the budget of the last learn() call
    "gamma": ZipValue.FLOAT,
    "learning_rate": ZipValue.FLOAT,  # a schedule is serialised: not mapped
    "ent_coef": ZipValue.FLOAT,  # SAC/TQC's "auto" / "auto_0.1": see SB3_ZIP_AUTO_ENT_COEF
    "vf_coef": ZipValue.FLOAT,
    "max_grad_norm": ZipValue.FLOAT_OR_NONE,
    "use_sde": ZipValue.BOOL,
    "sde_sample_freq": ZipValue.INT,
    # on-policy (PPO, A2C)
    "n_steps": ZipValue.INT,  # off-policy algorithms: n-step returns, our n_steps there too
    "gae_lambda": ZipValue.FLOAT,
    "n_epochs": ZipValue.INT,
    "batch_size": ZipValue.INT,
    "clip_range_vf": ZipValue.FLOAT_OR_NONE,  # a schedule is serialised: not mapped
    "normalize_advantage": ZipValue.BOOL,
    "target_kl": ZipValue.FLOAT_OR_NONE,
    # off-policy (DQN, QR-DQN, SAC, TD3, TQC)
    "buffer_size": ZipValue.INT,
    "learning_starts": ZipValue.INT,
    "tau": ZipValue.FLOAT,
    "gradient_steps": ZipValue.INT,
    "target_update_interval": ZipValue.INT,  # DQN: SB3 keeps it divided by n_envs
    "exploration_fraction": ZipValue.FLOAT,
    "exploration_initial_eps": ZipValue.FLOAT,
    "exploration_final_eps": ZipValue.FLOAT,
    "target_entropy": ZipValue.FLOAT_OR_NONE,
    "policy_delay": ZipValue.INT,
    "target_policy_noise": ZipValue.FLOAT,
    "target_noise_clip": ZipValue.FLOAT,
    "n_quantiles": ZipValue.INT,
    "top_quantiles_to_drop_per_net": ZipValue.INT,
}
SB3_ZIP_CONFIG: dict[str, tuple[str, ZipValue]] = {
    attr: (our_key(attr.removeprefix("_")), kind) for attr, kind in _SB3_ZIP_TYPES.items()
}
# SAC/TQC store ent_coef as text when it is learned: "auto" (start at 1) or "auto_<start>".
SB3_ZIP_AUTO_ENT_COEF = ("ent_coef", "ent_coef_auto")  # (our start value key, our "learned" switch)
# A schedule SB3 2.x wraps a constant in (clip_range, lr_schedule): its plain-text repr is mapped, the
# pickled schedule never loaded. SB3 attribute -> our key.
SB3_ZIP_CONSTANT_SCHEDULES: dict[str, str] = {"clip_range": "clip_range"}
# policy_kwargs (plain JSON when it holds only plain values) is read through the table of SB3's names too:
# policy_kwargs.net_arch -> hidden_sizes (a list of widths, or pi/vf/qf networks of one size), ...

# The algorithm of a zip, from the plain "__module__" text SB3 writes beside its policy class
# (stable_baselines3.sac.policies -> sac). PPO and A2C share stable_baselines3.common.policies: PPO's data
# has the keys below, A2C's does not.
SB3_ZIP_POLICY_MODULES: dict[str, str] = {
    "stable_baselines3.sac.policies": "sac", "stable_baselines3.td3.policies": "td3",
    "stable_baselines3.dqn.policies": "dqn", "sb3_contrib.qrdqn.policies": "qrdqn", "sb3_contrib.tqc.policies": "tqc",
}  # DDPG saves TD3's policy class: a DDPG zip reads as td3
SB3_ZIP_PPO_KEYS = frozenset({"n_epochs", "clip_range"})


def sb3_zip_algo(policy_module: str | None, keys: set[str]) -> str | None:
    """The algorithm that saved a zip: from its policy class's module, else from its keys, else None."""
    if policy_module in SB3_ZIP_POLICY_MODULES:
        return SB3_ZIP_POLICY_MODULES[policy_module]
    if policy_module == "stable_baselines3.common.policies":
        return "ppo" if SB3_ZIP_PPO_KEYS <= keys else "a2c"
    return None
