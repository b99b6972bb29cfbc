"""Typed, validated training configs loaded from ``gymnasium_solver/presets/environments/<EnvId>.yaml``.

A preset file looks like::

    env_id: CartPole-v1          # optional; defaults to the file name
    base:                        # shared by every variant of this file
      n_envs: 16
      max_env_steps: 200000
    variants:
      ppo:
        algo: ppo
        learning_rate: {start: 0.001, end: 0.0}
      reinforce:
        algo: reinforce

A variant is ``base`` deep-merged with the variant's own keys (a variant may also say
``inherits: other_variant``). The result is validated into :class:`Config`; an unknown key, a wrong
type or an impossible value is a :class:`ConfigError` naming the file, the key and a close match.
This module does not import torch: the read side uses it too.
"""

from __future__ import annotations

from gymnasium_solver.config.build import (  # noqa: F401 - the package's API
    PRESET_ONLY_KEYS,
    build_config,
    check_keys,
    check_machine_limits,
    close_matches,
    config_from_yaml_text,
    config_to_yaml,
    did_you_mean,
    error_reason,
)
from gymnasium_solver.config.chain import (  # noqa: F401 - the package's API
    DEFAULTS,
    Resolved,
    check_trainable,
    preset_config,
    resolve_config,
    resolve_with_origin,
    shipped_preset,
    split_config_id,
)
from gymnasium_solver.config.model import (  # noqa: F401 - the package's API
    CROSS_FIELD_LIMITS,
    MAX_ASYNC_PROCESSES,
    MAX_ENV_KWARGS,
    MAX_ENV_STEPS,
    MAX_EVAL_EPISODES,
    MAX_HIDDEN_LAYERS,
    MAX_HIDDEN_WEIGHTS,
    MAX_KEPT_CHECKPOINTS,
    MAX_LAYER_WIDTH,
    MAX_N_ENVS,
    MAX_PERIODIC_CHECKPOINTS,
    MAX_ROLLOUT_SAMPLES,
    MAX_SEED,
    MAX_TORCH_THREADS,
    Algo,
    ConfigBase,
    ConfigError,
    Schedule,
    ScheduleOrFloat,
    schedule_start,
    schedule_value,
)
from gymnasium_solver.config.native_models import (  # noqa: F401 - the package's API
    A2CConfig,
    DQNConfig,
    OffPolicyConfigBase,
    PPOConfig,
    ReinforceConfig,
)
from gymnasium_solver.config.presets import (  # noqa: F401 - the package's API
    CONFIG_DIR_ENV,
    PACKAGE_CONFIG_DIR,
    Preset,
    config_dir,
    list_env_files,
    list_variants,
    load_preset,
    parse_config_id,
    parse_overrides,
    preset_differences,
    spec_reward_threshold,
)
from gymnasium_solver.config.registry import (  # noqa: F401 - the package's API
    CONFIG_FIELDS,
    CONFIG_KEYS,
    CONFIG_MODELS,
    LOCATION_KEYS,
    NATIVE_ALGOS,
    OUTPUT_KEYS,
    Config,
    algos_for_key,
    applies_to,
    limit_reason,
)
from gymnasium_solver.config.sb3_models import (  # noqa: F401 - the package's API
    QRDQNConfig,
    SACConfig,
    SB3Config,
    TD3Config,
    TQCConfig,
)
from gymnasium_solver.config.user import USER_CONFIG_ENV, user_config_path, user_defaults  # noqa: F401
from gymnasium_solver.config.zoo_names import ZOO_NAMES, in_our_names  # noqa: F401 - the package's API
