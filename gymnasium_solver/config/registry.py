"""The config as one tagged union over the algorithms' models, and what is derived from the models:
every key with its bound and reason, which algorithms a key belongs to, which keys apply to a run."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic.fields import FieldInfo

from gymnasium_solver.config.model import Algo, ConfigBase
from gymnasium_solver.config.native_models import (
    A2CConfig,
    DQNConfig,
    OffPolicyConfigBase,
    PPOConfig,
    ReinforceConfig,
)
from gymnasium_solver.config.sb3_models import QRDQNConfig, SACConfig, TD3Config, TQCConfig
from gymnasium_solver.contract.algorithms import NATIVE_ALGOS  # noqa: F401 - re-exported (config.NATIVE_ALGOS)

# The config is a tagged union on ``algo``: an algorithm's own keys exist only on its model, so
# "which keys belong to which algorithm" is declared once, by the model that declares them.
Config = Annotated[
    PPOConfig | ReinforceConfig | DQNConfig | QRDQNConfig | A2CConfig | SACConfig | TD3Config | TQCConfig,
    Field(discriminator="algo"),
]

CONFIG_MODELS: dict[Algo, type[ConfigBase]] = {
    Algo.PPO: PPOConfig, Algo.REINFORCE: ReinforceConfig, Algo.DQN: DQNConfig, Algo.QRDQN: QRDQNConfig,
    Algo.A2C: A2CConfig, Algo.SAC: SACConfig, Algo.TD3: TD3Config, Algo.TQC: TQCConfig,
}


_ALL_MODELS: tuple[type[ConfigBase], ...] = (ConfigBase, *CONFIG_MODELS.values())
# A key's first declaration (ConfigBase, then the models in Algo order) is the one whose bound and
# reason are documented; an SB3 model that redeclares a shared key changes only its default.
CONFIG_FIELDS: dict[str, FieldInfo] = {}
for _model in _ALL_MODELS:
    for _key, _field in _model.model_fields.items():
        CONFIG_FIELDS.setdefault(_key, _field)


CONFIG_KEYS: tuple[str, ...] = tuple(CONFIG_FIELDS)


# Keys that choose where a run's results also go and which checkpoints are kept; they never change
# what is trained, so they are not a deviation from a preset, and the user config file
# (config/user.py) may set their defaults.
OUTPUT_KEYS: tuple[str, ...] = ("tensorboard", "mlflow", "mlflow_tracking_uri", "mlflow_experiment", "wandb",
                                "wandb_project", "otel", "keep_best_checkpoints", "keep_last_checkpoints")


# Keys that add measurements to a run's metrics.csv without changing what is trained: not a deviation from a
# preset and not saved into one, like OUTPUT_KEYS; not a user-config default (an algorithm that cannot measure
# them refuses them).
MEASUREMENT_KEYS: tuple[str, ...] = ("grad_norm_parts",)


# Keys that only judge a run (whether an evaluation at the threshold solves it), never what it learns: not a deviation
# from a preset, and not part of a preset's fingerprint (references trained before confirm_episodes existed still
# describe how the preset learns; their solves were judged by the first evaluation alone).
JUDGING_KEYS: tuple[str, ...] = ("confirm_episodes",)


# Keys that change what a run records, never what it learns (OUTPUT_KEYS and MEASUREMENT_KEYS): runs that differ
# only in them are seeds of one config, and they are never a difference from a preset nor part of one.
RECORDING_KEYS: tuple[str, ...] = (*OUTPUT_KEYS, *MEASUREMENT_KEYS)


# Keys that name a location or a host (a path, a URI), each with the output switch that makes the run
# use it: declared on the field (``json_schema_extra['location_of']``), checked by locations.py.
LOCATION_KEYS: dict[str, str] = {
    key: str(field.json_schema_extra["location_of"]) for key, field in CONFIG_FIELDS.items()
    if isinstance(field.json_schema_extra, dict) and "location_of" in field.json_schema_extra
}


def algos_for_key(key: str) -> tuple[Algo, ...]:
    """The algorithms whose config has ``key`` (all of them for a shared key, none for an unknown one)."""
    return tuple(a for a, model in CONFIG_MODELS.items() if key in model.model_fields)


def applies_to(key: str, algo: str | None, action_kind: str | None = None) -> bool:
    """Whether config ``key`` means anything for a run of ``algo`` whose action space is of
    ``action_kind`` ('discrete' or 'box'). Unknown keys and unknown algo/kind (None) count as applying."""
    field = CONFIG_FIELDS.get(key)
    if field is None:
        return True
    if algo in CONFIG_MODELS:
        model = CONFIG_MODELS[Algo(algo)]
        if key not in model.model_fields:
            return False
        if issubclass(model, OffPolicyConfigBase) and key in model.ignored_keys():
            return False  # a shared key this replay algorithm ignores (it must keep its default)
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    kinds = extra.get("action_kinds")
    return action_kind is None or not isinstance(kinds, list) or action_kind in kinds


def config_field(key: str, model: type[ConfigBase] | None = None) -> FieldInfo | None:
    """``key``'s field in ``model`` (an algorithm's config model), or in any model when it is None:
    two algorithms can give one key different meanings (PPO's rollout n_steps, DQN's n-step returns)."""
    return model.model_fields.get(key) if model is not None else CONFIG_FIELDS.get(key)


def limit_reason(key: str, model: type[ConfigBase] | None = None) -> str:
    """Why ``key`` is bounded as it is in ``model`` (any model when None; '' for an unknown key)."""
    field = config_field(key, model)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    return str(extra.get("why", ""))
